// Long-format CSV: one row per record, every axis its own column, for spreadsheets and pandas.
import type { ResultRecord } from '../results/record.ts';

export type CsvValue = string | number | boolean | null | undefined;

// …except a plain number written as text ("-5", "+1.5e3"): a spreadsheet reads it as that number.
const PLAIN_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
// OWASP "CSV Injection": a cell a spreadsheet would run as a formula starts with `=`, `+`, `-`, `@`,
// tab, CR or LF. Quoting is not enough: a spreadsheet whose list separator is `;` (many locales)
// reads `…,"a;=1+1",…` as `…,"a` | `=1+1` | `",…` — a quote counts only at the start of a field —
// and a parser that splits lines first starts a row after a line end inside a cell. So every
// piece of a text cell is checked: the cell's start and the place after each `,`, `;`, tab or line
// end (CRLF counted as one). A piece that starts with tab/CR/LF, or whose first character other
// than spaces and quotes is a formula trigger, gets an apostrophe at its start (a tab or line end
// inside is a separator, checked on its own).
const DEFUSE_START = /^(?:[\t\r\n]|[ "]*[=+\-@])/;
const DEFUSE_AFTER_SEPARATOR = /(\r\n|\r(?!\n)|[,;\t\n])(?=[\t\r\n]|[ "]*[=+\-@])/g;
// Quoted when it holds a separator of either kind (`,` and `;`), a tab, a quote or a line end.
const NEEDS_QUOTES = /[",;\t\r\n]/;

/**
 * One CSV cell, for every CSV we write (report -f csv, results --csv, import --csv): RFC 4180
 * quoting plus OWASP's rules against formula injection, applied to every `,`/`;`/tab/line-end
 * separated piece of a text cell (see DEFUSE_AFTER_SEPARATOR; names and values come from playbooks, hosts
 * and imported files we do not trust). Numbers are written as numbers, and text that is a plain
 * decimal number is left as it is, so a negative number stays a number.
 */
export function csvField(v: CsvValue): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  let s = v;
  if (!PLAIN_NUMBER.test(v)) {
    s = v.replace(DEFUSE_AFTER_SEPARATOR, "$1'");
    if (DEFUSE_START.test(v)) s = `'${s}`;
  }
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A whole CSV document: a header and rows, CRLF line ends (RFC 4180). */
export function csvDocument(header: readonly string[], rows: ReadonlyArray<readonly CsvValue[]>): string {
  const lines = [header.map(csvField).join(',')];
  for (const row of rows) lines.push(row.map(csvField).join(','));
  return lines.join('\r\n') + '\r\n';
}

const FIXED_BEFORE = ['runId', 'permutationId'] as const;
const FIXED_AFTER = [
  'repetition',
  'testId',
  'pattern',
  'blockSizeBytes',
  'queueDepth',
  'threads',
  'readPercent',
  'iops',
  'bytesPerSecond',
  'mbPerSecond',
  'latencyMeanUs',
  'latencyP50Us',
  'latencyP95Us',
  'latencyP99Us',
  'latencyP999Us',
  'cpuPercent',
  'tool',
  'toolVersion',
] as const;

export function renderCsv(records: readonly ResultRecord[]): string {
  const axisNames: string[] = [];
  for (const r of records) for (const k of Object.keys(r.axes)) if (!axisNames.includes(k)) axisNames.push(k);
  const header = [...FIXED_BEFORE, ...axisNames, ...FIXED_AFTER];
  const rows = records.map((r): CsvValue[] => [
    r.runId,
    r.permutationId,
    ...axisNames.map((a) => r.axes[a]),
    r.repetition,
    r.test.id,
    r.test.pattern,
    r.test.blockSizeBytes,
    r.test.queueDepth,
    r.test.threads,
    r.test.readPercent,
    r.iops,
    r.bytesPerSecond,
    // decimal MB/s as CrystalDiskMark prints it; rounded so float noise does not show up in sheets
    r.bytesPerSecond === null ? null : Math.round(r.bytesPerSecond) / 1e6,
    r.latencyUs.mean,
    r.latencyUs.p50,
    r.latencyUs.p95,
    r.latencyUs.p99,
    r.latencyUs.p999,
    r.cpuPercent,
    r.tool.name,
    r.tool.version,
  ]);
  return csvDocument(header, rows);
}

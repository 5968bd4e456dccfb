// Long-format CSV: one row per record, every axis its own column, for spreadsheets and pandas; and
// the summary CSV beside it: one row per permutation × test, from the report model.
import type { EsxtopLatencies, HostIoFigures, HostMetrics, ResultRecord } from '../results/record.ts';
import { METRICS, type ComparisonRow, type MetricKey, type Report } from './model.ts';
import { referenceLabel } from './wording.ts';

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
] as const;
const FIXED_LAST = ['tool', 'toolVersion'] as const;

// The host figures (the record's `host`, results/record.ts: what vSphere's PerformanceManager or
// esxtop saw of the test from below the guest), one column each, named by their path in the
// record's JSON (`results --json`): `host.latencyUs` beside the guest's latencyMeanUs. Empty where
// a record has none (local, ssh, Hyper-V, imports); a record whose host could not be observed has
// only host.source and host.unavailable. Before tool/toolVersion, so the header still ends as
// report/marker.ts recognises a CSV report of ours.
const IO_FIELDS = ['instance', 'readIops', 'writeIops', 'readKBps', 'writeKBps', 'readLatencyMs', 'writeLatencyMs', 'latencyMs'] as const satisfies ReadonlyArray<keyof HostIoFigures>;
const ESXTOP_FIELDS = ['device', 'davgMs', 'kavgMs', 'gavgMs', 'qavgMs', 'readIops', 'writeIops'] as const satisfies ReadonlyArray<keyof EsxtopLatencies>;
const HOST_COLUMNS: ReadonlyArray<readonly [string, (h: HostMetrics) => CsvValue]> = [
  ['latencyUs', (h) => h.latencyUs],
  ['latencySpan', (h) => h.latencySpan],
  ['from', (h) => h.from],
  ['to', (h) => h.to],
  ['intervalSec', (h) => h.intervalSec],
  ['samples', (h) => h.samples],
  ['samplesInside', (h) => h.samplesInside],
  ...(['virtualDisk', 'datastore'] as const).flatMap((k) => IO_FIELDS.map((f) => [`${k}.${f}`, (h: HostMetrics) => h[k]?.[f]] as const)),
  ...ESXTOP_FIELDS.map((f) => [`esxtop.${f}`, (h: HostMetrics) => h.esxtop?.[f]] as const),
  ['notes', (h) => (h.notes?.length ? h.notes.join('; ') : null)],
];
const HOST_HEADER = ['host.source', 'host.unavailable', ...HOST_COLUMNS.map(([name]) => `host.${name}`)];

function hostCells(host: ResultRecord['host']): CsvValue[] {
  if (!host) return HOST_HEADER.map(() => null);
  if ('unavailable' in host) return [host.source, host.unavailable, ...HOST_COLUMNS.map(() => null)];
  return [host.source, null, ...HOST_COLUMNS.map(([, of]) => of(host))];
}

// A vm.count study's records (results/record.ts `vm`): which VM a member measured, or that the row
// is its pass's aggregate, so a sheet never sums or averages the two together. Only when some
// record has them: every other CSV keeps its columns.
const VM_COLUMNS: ReadonlyArray<readonly [string, (vm: NonNullable<ResultRecord['vm']>) => CsvValue]> = [
  ['role', (vm) => vm.role],
  ['count', (vm) => vm.count],
  ['index', (vm) => vm.index],
  ['name', (vm) => vm.name],
  ['startedAt', (vm) => vm.startedAt],
  ['endedAt', (vm) => vm.endedAt],
  ['startSkewMs', (vm) => vm.startSkewMs],
];

export function renderCsv(records: readonly ResultRecord[]): string {
  const axisNames: string[] = [];
  for (const r of records) for (const k of Object.keys(r.axes)) if (!axisNames.includes(k)) axisNames.push(k);
  const vmColumns = records.some((r) => r.vm !== undefined) ? VM_COLUMNS : [];
  const header = [...FIXED_BEFORE, ...axisNames, ...FIXED_AFTER, ...vmColumns.map(([name]) => `vm.${name}`), ...HOST_HEADER, ...FIXED_LAST];
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
    ...vmColumns.map(([, of]) => (r.vm ? of(r.vm) : null)),
    ...hostCells(r.host),
    r.tool.name,
    r.tool.version,
  ]);
  return csvDocument(header, rows);
}

/** Floats as a spreadsheet should see them: 7 significant digits, so float noise does not show. */
const num = (x: number | null | undefined): number | null => (x === null || x === undefined || !Number.isFinite(x) ? null : Number(x.toPrecision(7)));

/**
 * The summary CSV: one row per permutation × test (as the report lists them), every axis a column,
 * the mean and 95% CI half-width of each metric in display units (MB/s decimal as CrystalDiskMark,
 * latency in µs), CV and the noisy flag of the test's main metric, and per compared axis the Δ% of
 * that metric against the axis's baseline value, its interval and the verdict. The long CSV
 * (renderCsv) has every record.
 */
export function renderSummaryCsv(report: Report): string {
  const axisNames = report.axes.map((a) => a.name);
  const compared: string[] = [];
  for (const s of report.tests) for (const c of s.comparisons) if (!compared.includes(`${c.axis}=${String(c.baselineValue)}`)) compared.push(`${c.axis}=${String(c.baselineValue)}`);
  const header = [
    'permutationId',
    ...axisNames,
    ...SUMMARY_TEST_COLUMNS,
    ...SUMMARY_METRIC_COLUMNS,
    ...compared.flatMap((c) => [`deltaPct vs ${c}`, `deltaLowPct vs ${c}`, `deltaHighPct vs ${c}`, `verdict vs ${c}`]),
  ];
  const rows: CsvValue[][] = [];
  for (const s of report.tests) {
    const t = s.test;
    const byPerm = new Map<string, Map<string, ComparisonRow>>();
    for (const c of s.comparisons) {
      for (const r of c.rows) {
        if (r.metric !== s.primaryMetric) continue;
        let m = byPerm.get(r.permutationId);
        if (!m) byPerm.set(r.permutationId, (m = new Map<string, ComparisonRow>()));
        m.set(`${c.axis}=${String(c.baselineValue)}`, r);
      }
    }
    for (const r of s.rows) {
      const cell = (m: MetricKey) => r.cells[m]?.summary;
      const mean = (m: MetricKey) => {
        const x = cell(m)?.mean;
        return x === null || x === undefined ? null : num(x * METRICS[m].scale);
      };
      const half = (m: MetricKey) => {
        const x = cell(m)?.ci?.halfWidth;
        return x === undefined ? null : num(x * METRICS[m].scale);
      };
      const primary = r.cells[s.primaryMetric];
      const deltas = byPerm.get(r.permutationId);
      rows.push([
        r.permutationId,
        ...axisNames.map((a) => r.axes[a]),
        t.id,
        referenceLabel(t),
        t.pattern,
        t.blockSizeBytes,
        t.queueDepth,
        t.threads,
        t.readPercent,
        METRICS[s.primaryMetric].label,
        primary?.summary.n ?? 0,
        mean('bytesPerSecond'),
        half('bytesPerSecond'),
        mean('iops'),
        half('iops'),
        mean('latencyMeanUs'),
        mean('latencyP99Us'),
        mean('cpuPercent'),
        primary?.summary.cv === null || primary?.summary.cv === undefined ? null : num(primary.summary.cv * 100),
        primary ? primary.noisy : null,
        ...compared.flatMap((c) => {
          const d = deltas?.get(c)?.comparison;
          if (!d) return [null, null, null, null];
          return [num(d.delta?.pct), num(d.delta?.ci?.low), num(d.delta?.ci?.high), d.verdict];
        }),
      ]);
    }
  }
  return csvDocument(header, rows);
}

const SUMMARY_TEST_COLUMNS = ['testId', 'referenceLabel', 'pattern', 'blockSizeBytes', 'queueDepth', 'threads', 'readPercent', 'mainMetric'] as const;
const SUMMARY_METRIC_COLUMNS = ['n', 'mbPerSecond', 'mbPerSecondCi95', 'iops', 'iopsCi95', 'latencyMeanUs', 'latencyP99Us', 'cpuPercent', 'cvPct', 'noisy'] as const;

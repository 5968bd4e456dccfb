// Long-format CSV: one row per record, every axis its own column, for spreadsheets and pandas.
import type { ResultRecord } from '../results/record.ts';

/**
 * RFC 4180 quoting, plus a leading apostrophe on text that a spreadsheet would run as a formula
 * (`=`, `+`, `-`, `@`, tab, CR): axis values and names come from playbooks and hosts we do not trust.
 * Numbers are written raw, so a negative number stays a number.
 */
export function csvField(v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  let s = v;
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
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
  const lines = [header.map(csvField).join(',')];
  for (const r of records) {
    const row: Array<string | number | boolean | null | undefined> = [
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
    ];
    lines.push(row.map(csvField).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}

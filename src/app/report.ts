// The `report` use case: one report from one or more runs or imported exports.
import { UsageError } from '../errors.ts';
import { renderCsv, renderSummaryCsv } from '../report/csv.ts';
import { renderHtml } from '../report/html.ts';
import { renderJson } from '../report/json.ts';
import { renderMarkdown } from '../report/markdown.ts';
import { buildReport, parseBaseline, ReportRecords } from '../report/model.ts';
import { collectRecords, eachRecord, mergeSources, type SourceLoader } from '../report/source.ts';
import { loadSource } from './load-source.ts';
import { CORRECTIONS, type Correction, type VerdictOptions } from '../report/stats.ts';
import { checkImportedAxes } from './import-tags.ts';
import type { Notify } from './notify.ts';
import { checkReportOutput, writeReportFile } from './report-file.ts';

type Merged = ReturnType<typeof mergeSources>;

export const REPORT_FORMATS = ['md', 'html', 'csv', 'summary-csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface ReportCommandOptions {
  format: ReportFormat;
  baseline?: string;
  /** axes to pool (`--pool source`): permutations differing only in these become one sample */
  pool?: string[];
  output?: string;
  /** overwrite an existing file that is not a report of ours (never a run's own files or an input) */
  force?: boolean;
  alpha?: string;
  minEffect?: string;
  cvThreshold?: string;
  correction?: string;
}

/** Parses a number option, naming the flag and the accepted range when it is wrong. */
export function numberOption(flag: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(v) || v < min || v > max) {
    throw new UsageError(`${flag}: expected a number from ${min} to ${max}, got "${raw}"`);
  }
  return v;
}

export function verdictOptionsFrom(o: { alpha?: string; minEffect?: string; cvThreshold?: string; correction?: string }): Partial<VerdictOptions> {
  const out: Partial<VerdictOptions> = {};
  if (o.correction !== undefined) {
    if (!(CORRECTIONS as readonly string[]).includes(o.correction)) throw new UsageError(`--correction: expected one of ${CORRECTIONS.join(', ')}, got ${JSON.stringify(o.correction)}`);
    out.correction = o.correction as Correction;
  }
  const alpha = numberOption('--alpha', o.alpha, 1e-9, 0.5);
  const minEffect = numberOption('--min-effect', o.minEffect, 0, 1000);
  const cv = numberOption('--cv-threshold', o.cvThreshold, 0, 1000);
  if (alpha !== undefined) out.alpha = alpha;
  if (minEffect !== undefined) out.minEffectPct = minEffect;
  if (cv !== undefined) out.cvThresholdPct = cv;
  return out;
}

/** What `report` reads its sources with, and where it says warnings. */
export interface ReportIo {
  loadSource: SourceLoader;
  notify: Notify;
}

/** A report made: its text, and the file it was written to (`-o`), if any. */
export interface ReportOutcome {
  text: string;
  written?: string;
}

/** The `report` use case: reads the sources, builds the report, writes it to `-o` (else returns it for stdout). Throws a UsageError/ParseError. */
export async function makeReport(inputs: readonly string[], opts: ReportCommandOptions, io: ReportIo): Promise<ReportOutcome> {
  const verdict = verdictOptionsFrom(opts);
  const baseline = opts.baseline !== undefined ? parseBaseline(opts.baseline) : undefined;
  // refused before reading anything, and checked again right before the write
  if (opts.output !== undefined) checkReportOutput(opts.output, inputs, opts.force === true);
  const sources = [];
  for (const input of inputs) sources.push(await io.loadSource(input));
  const { records, info, warnings } = mergeSources(sources);
  for (const w of warnings) io.notify(`warning: ${w}\n`);
  const text = await renderReport(records, info, opts, { ...(baseline ? { baseline } : {}), ...(opts.pool?.length ? { pool: opts.pool } : {}), verdict }, inputs);
  if (!opts.output) return { text };
  writeReportFile(opts.output, text, inputs, opts.force === true);
  return { text, written: opts.output };
}

async function renderReport(records: Merged['records'], info: Merged['info'], opts: ReportCommandOptions, build: Parameters<typeof buildReport>[2], inputs: readonly string[]): Promise<string> {
  const none = () => new UsageError(`${inputs.join(', ')}: no result records to report`);
  if (opts.format === 'csv') {
    const all = await collectRecords(records);
    if (all.length === 0) throw none();
    return renderCsv(all);
  }
  // record by record into the report's columns: a run's records are never all in memory
  const table = new ReportRecords();
  await eachRecord(records, (r) => table.add(r));
  // a run whose every permutation failed has no records, but its failures are its report
  if (table.recordCount === 0 && !info.failures?.length) throw none();
  const report = buildReport(table, info, build);
  return opts.format === 'html' ? renderHtml(report) : opts.format === 'json' ? renderJson(report) : opts.format === 'summary-csv' ? renderSummaryCsv(report) : renderMarkdown(report);
}

/** Sources read as `report` reads them: an imported table's axis columns are checked as `import --set` values are. */
export const checkedSourceLoader: SourceLoader = async (path) => {
  const s = await loadSource(path);
  return s.kind === 'import' && Array.isArray(s.records) ? { ...s, records: checkImportedAxes(s.records, path) } : s;
};

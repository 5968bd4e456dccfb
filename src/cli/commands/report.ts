// `storsweep report <runDir|file...>`: one report from one or more runs or imported exports.
import { Option, type Command } from 'commander';
import { storeAwareLoader } from '../store.ts';
import { UsageError } from '../../errors.ts';
import { renderCsv, renderSummaryCsv } from '../../report/csv.ts';
import { renderHtml } from '../../report/html.ts';
import { renderJson } from '../../report/json.ts';
import { renderMarkdown } from '../../report/markdown.ts';
import { buildReport, parseBaseline, ReportRecords } from '../../report/model.ts';
import { collectRecords, eachRecord, mergeSources, type SourceLoader } from '../../report/source.ts';
import { loadSource } from '../../app/load-source.ts';
import { CORRECTIONS, type Correction, type VerdictOptions } from '../../report/stats.ts';
import { checkImportedAxes } from '../import-tags.ts';
import { terminal } from '../output.ts';
import { checkReportOutput, writeReportFile } from '../report-file.ts';

export const REPORT_FORMATS = ['md', 'html', 'csv', 'summary-csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface CommandIo {
  loadSource: SourceLoader;
  stdout(text: string): void;
  stderr(text: string): void;
}

export const defaultIo: CommandIo = {
  // an imported table's axis columns are checked as `import --set` values are
  loadSource: async (path) => {
    const s = await loadSource(path);
    return s.kind === 'import' && Array.isArray(s.records) ? { ...s, records: checkImportedAxes(s.records, path) } : s;
  },
  ...terminal,
};

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

/** Does the work of the command; returns the exit code (0) or throws a UsageError/ParseError. */
export async function runReport(inputs: readonly string[], opts: ReportCommandOptions, io: CommandIo = defaultIo): Promise<number> {
  const verdict = verdictOptionsFrom(opts);
  const baseline = opts.baseline !== undefined ? parseBaseline(opts.baseline) : undefined;
  // refused before reading anything, and checked again right before the write
  if (opts.output !== undefined) checkReportOutput(opts.output, inputs, opts.force === true);
  const sources = [];
  for (const input of inputs) sources.push(await io.loadSource(input));
  const { records, info, warnings } = mergeSources(sources);
  for (const w of warnings) io.stderr(`warning: ${w}\n`);
  const none = () => new UsageError(`${inputs.join(', ')}: no result records to report`);
  let text: string;
  if (opts.format === 'csv') {
    const all = await collectRecords(records);
    if (all.length === 0) throw none();
    text = renderCsv(all);
  } else {
    // record by record into the report's columns: a run's records are never all in memory
    const table = new ReportRecords();
    await eachRecord(records, (r) => table.add(r));
    // a run whose every permutation failed has no records, but its failures are its report
    if (table.recordCount === 0 && !info.failures?.length) throw none();
    const report = buildReport(table, info, { ...(baseline ? { baseline } : {}), ...(opts.pool?.length ? { pool: opts.pool } : {}), verdict });
    text =
      opts.format === 'html'
        ? renderHtml(report)
        : opts.format === 'json'
          ? renderJson(report)
          : opts.format === 'summary-csv'
            ? renderSummaryCsv(report)
            : renderMarkdown(report);
  }
  if (opts.output) {
    writeReportFile(opts.output, text, inputs, opts.force === true);
    io.stderr(`wrote ${opts.output}\n`);
  } else {
    io.stdout(text);
  }
  return 0;
}

export function registerReport(program: Command, io: CommandIo = defaultIo): Command {
  return program
    .command('report')
    .description('report per permutation and test (mean ± 95% CI, CV) and compare each axis value with a baseline')
    .argument('[source...]', 'run directories or result files (results .jsonl, CrystalDiskMark text, fio JSON, …); with a store (--store, -i), run ids too')
    .addOption(new Option('-f, --format <format>', 'output format: md, html, json; csv = one row per record (long); summary-csv = one row per permutation × test, axes as columns').choices([...REPORT_FORMATS]).default('md'))
    .option('-b, --baseline <axis=value>', "compare only this axis, against this value (default: every varying axis, against the playbook's baseline: value or else its first value)")
    .option('--pool <axis>', 'pool permutations that differ only in this axis into one sample (e.g. --pool source: several runs as one); repeatable', (v: string, prev: string[] = []) => [...prev, v])
    .option('-o, --output <path>', 'write to this file instead of stdout (exactly; stdout shows control characters as \\x1b)')
    .option('--force', 'overwrite an existing file that is not a storsweep report (never a run\'s own files or an input)')
    .option('--alpha <p>', 'significance level of the verdicts (default 0.05)')
    .option('--min-effect <pct>', 'smallest difference in % called faster/slower (default 5)')
    .option('--cv-threshold <pct>', 'flag cells whose coefficient of variation exceeds this % (default 10)')
    .option('--correction <method>', 'adjust the p-values of all comparisons together: holm (default: the chance of any false ▲/▼ stays at --alpha), bh (Benjamini–Hochberg, for sweeps of hundreds of cells), none')
    .option('--run <runId>', 'a run in the store (--store URL, or the inventory\'s store: with -i); repeatable', (v: string, prev: string[] = []) => [...prev, v])
    .option('--store <url>', 'the PostgreSQL store runs are read from: postgresql://USER[:${env:NAME}|${file:path}]@HOST[:PORT]/DB')
    .option('-i, --inventory <file>', 'the inventory whose store: runs are read from')
    .action(async (sources: string[], opts: ReportCommandOptions & { run?: string[]; store?: string; inventory?: string }) => {
      const inputs = [...sources, ...(opts.run ?? [])];
      if (!inputs.length) throw new UsageError('report: give run directories or result files, or --run <runId> with --store URL or -i INVENTORY');
      const store = { ...(opts.store !== undefined ? { store: opts.store } : {}), ...(opts.inventory !== undefined ? { inventory: opts.inventory } : {}) };
      process.exitCode = await runReport(inputs, opts, { ...io, loadSource: storeAwareLoader(io.loadSource, store) });
    });
}

// `storsweep report <runDir|file...>`: argv → the report use case (src/app/report.ts) → stdout or a file.
import { Option, type Command } from 'commander';
import { checkedSourceLoader, makeReport, REPORT_FORMATS, type ReportCommandOptions } from '../../app/report.ts';
import { storeAwareLoader } from '../../app/store.ts';
import type { SourceLoader } from '../../report/source.ts';
import { UsageError } from '../../errors.ts';
import { terminal } from '../output.ts';


export interface CommandIo {
  loadSource: SourceLoader;
  stdout(text: string): void;
  stderr(text: string): void;
}

export const defaultIo: CommandIo = { loadSource: checkedSourceLoader, ...terminal };

/** The command: the report on stdout, or `wrote FILE` on stderr; returns the exit code (0) or throws a UsageError/ParseError. */
export async function runReport(inputs: readonly string[], opts: ReportCommandOptions, io: CommandIo = defaultIo): Promise<number> {
  const made = await makeReport(inputs, opts, { loadSource: io.loadSource, notify: (text) => io.stderr(text) });
  if (made.written !== undefined) io.stderr(`wrote ${made.written}\n`);
  else io.stdout(made.text);
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
      const store = { env: process.env, ...(opts.store !== undefined ? { store: opts.store } : {}), ...(opts.inventory !== undefined ? { inventory: opts.inventory } : {}) };
      process.exitCode = await runReport(inputs, opts, { ...io, loadSource: storeAwareLoader(io.loadSource, store) });
    });
}

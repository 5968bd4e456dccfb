// `storsweep compare <A> <B>`: B against A by canonical test id, for CI pipelines of storage teams.
import type { Command } from 'commander';
import { storeAwareLoader } from '../../app/store.ts';
import { compareRuns, renderCompareText } from '../../report/compare.ts';
import { collectRecords } from '../../report/source.ts';
import { EXIT } from '../exit.ts';
import { jsonText } from '../output.ts';
import { numberOption, verdictOptionsFrom } from '../../app/report.ts';
import { defaultIo, type CommandIo } from './report.ts';

/** Exit code when B has a significant regression beyond --fail-on-regression. */
export const EXIT_REGRESSION = EXIT.regression;

export interface CompareCommandOptions {
  failOnRegression?: string;
  json?: boolean;
  alpha?: string;
  cvThreshold?: string;
  /** axes to pool (`--pool source`) */
  pool?: string[];
}

export async function runCompare(a: string, b: string, opts: CompareCommandOptions, io: CommandIo = defaultIo): Promise<number> {
  const threshold = numberOption('--fail-on-regression', opts.failOnRegression, 0, 100);
  const verdict = verdictOptionsFrom({ ...(opts.alpha !== undefined ? { alpha: opts.alpha } : {}), ...(opts.cvThreshold !== undefined ? { cvThreshold: opts.cvThreshold } : {}) });
  const sa = await io.loadSource(a);
  const sb = await io.loadSource(b);
  for (const w of [...sa.warnings, ...sb.warnings]) io.stderr(`warning: ${w}\n`);
  const result = compareRuns({ label: a, records: await collectRecords(sa.records), info: sa.info }, { label: b, records: await collectRecords(sb.records), info: sb.info }, {
    ...(threshold !== undefined ? { failOnRegressionPct: threshold } : {}),
    ...(opts.pool?.length ? { pool: opts.pool } : {}),
    verdict,
  });
  if (opts.json) {
    io.stdout(jsonText(result, 2, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)) + '\n');
    // Warnings also go to stderr so a pipeline reading the JSON still shows them in its log.
    for (const w of [...result.fingerprintWarnings, ...result.warnings]) io.stderr(`warning: ${w}\n`);
  } else {
    io.stdout(renderCompareText(result));
  }
  return threshold !== undefined && result.regressions > 0 ? EXIT_REGRESSION : 0;
}

export function registerCompare(program: Command, io: CommandIo = defaultIo): Command {
  return program
    .command('compare')
    .description('compare run B with run A (or imported results), permutation by permutation (same axes) and by canonical test id; Δ%, Welch p and verdict per test; lists permutations without a partner')
    .argument('<A>', 'baseline: run directory or result file (or a run id, with --store or -i)')
    .argument('<B>', 'candidate: run directory or result file (or a run id, with --store or -i)')
    .option('--fail-on-regression <pct>', `exit ${EXIT_REGRESSION} when B is significantly slower than A by at least this %`)
    .option('--json', 'print the comparison as JSON')
    .option('--pool <axis>', 'pool permutations of a side that differ only in this axis (e.g. --pool source: several exports as one sample); repeatable', (v: string, prev: string[] = []) => [...prev, v])
    .option('--alpha <p>', 'significance level (default 0.05)')
    .option('--cv-threshold <pct>', 'CV % above which a sample is flagged noisy (default 10)')
    .option('--store <url>', 'A and B may be run ids in this PostgreSQL store: postgresql://USER[:${env:NAME}|${file:path}]@HOST[:PORT]/DB')
    .option('-i, --inventory <file>', "A and B may be run ids in this inventory's store:")
    .action(async (a: string, b: string, opts: CompareCommandOptions & { store?: string; inventory?: string }) => {
      const store = { env: process.env, ...(opts.store !== undefined ? { store: opts.store } : {}), ...(opts.inventory !== undefined ? { inventory: opts.inventory } : {}) };
      process.exitCode = await runCompare(a, b, opts, { ...io, loadSource: storeAwareLoader(io.loadSource, store) });
    });
}

// results, status, cleanup: commands that read (or tidy up after) an existing run directory; the
// status and cleanup use cases live in src/app/run-dir/.
import type { Command } from 'commander';
import { cleanupRun, type CleanupOptions } from '../../app/run-dir/cleanup.ts';
import { statusCounts, statusJson, statusText } from '../../app/run-dir/status.ts';
import { openRunFor, type StoreOptions } from '../../app/store.ts';
import { renderCsv } from '../../report/csv.ts';
import type { ResultRecord } from '../../results/record.ts';
import { axesLabel } from '../../run/progress.ts';
import { visible } from '../../text/visible.ts';
import { EXIT } from '../exit.ts';
import { jsonText, keepGoingWhenOutputCloses, terminal } from '../output.ts';
import { watchStatus } from './status-watch.ts';

/** The options every command that reads a run takes besides a run directory. */
export function addRunOptions(cmd: Command): Command {
  return cmd
    .option('--run <runId>', 'a run in the store (--store URL, or the inventory\'s store: with -i) instead of a run directory')
    .option('--store <url>', 'the PostgreSQL store: postgresql://USER[:${env:NAME}|${file:path}]@HOST[:PORT]/DB (the password by reference)');
}

const fmt = (v: number | null, div = 1, digits = 1) => (v === null ? '—' : (v / div).toFixed(digits));

export function renderResultsTable(records: readonly ResultRecord[]): string {
  const rows = [['permutation', 'axes', 'rep', 'test', 'MB/s', 'IOPS', 'lat µs mean', 'p99']];
  // each cell on its one line: a record's ids come from the run directory, which may come from anyone
  for (const r of records) rows.push([visible(r.permutationId), axesLabel(r.axes), visible(r.repetition), visible(r.test.id), fmt(r.bytesPerSecond, 1e6, 2), fmt(r.iops, 1, 0), fmt(r.latencyUs.mean), fmt(r.latencyUs.p99)]);
  const widths = rows[0]!.map((_, i) => rows.reduce((w, r) => Math.max(w, r[i]!.length), 0));
  return rows.map((r) => r.map((c, i) => (i >= 4 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')).join('\n');
}
export function registerRunDirCommands(program: Command): void {
  registerResults(program);
  registerStatus(program);
  registerCleanup(program);
}

const INVENTORY_HELP = "the inventory whose store: holds the run (with --run, or a run directory whose store.json names a store: its password comes from here or --store)";

function registerResults(program: Command): void {
  addRunOptions(
    program
      .command('results')
      .description('print the normalized records of a run')
      .argument('[runDir]')
      .option('-i, --inventory <file>', INVENTORY_HELP)
      .option('--json', 'one JSON record per line')
      .option('--csv', 'CSV, one row per record'),
  ).action(async (dir: string | undefined, given: Omit<StoreOptions, 'env'> & { json?: boolean; csv?: boolean }) => {
    const o = { ...given, env: process.env };
    const opened = await openRunFor(dir, o, 'read');
    let records: ResultRecord[];
    try {
      records = await opened.store.records();
    } finally {
      await opened.close();
    }
    if (o.json) terminal.stdout(records.map((r) => jsonText(r)).join('\n') + (records.length ? '\n' : ''));
    else if (o.csv) terminal.stdout(renderCsv(records));
    else terminal.stdout(renderResultsTable(records) + '\n');
  });
}

function registerStatus(program: Command): void {
  addRunOptions(
    program
      .command('status')
      .description('done / failed / pending permutations of a run, with reasons, and objects left behind')
      .argument('[runDir]')
      .option('-i, --inventory <file>', INVENTORY_HELP)
      .option('--json', 'as JSON')
      .option('--watch [seconds]', 'show progress live, refreshed every N seconds (default 2), until the run ends or Ctrl-C'),
  ).action(async (dir: string | undefined, given: Omit<StoreOptions, 'env'> & { json?: boolean; watch?: boolean | string }) => {
    const o = { ...given, env: process.env };
    const opened = await openRunFor(dir, o, 'read');
    try {
      if (o.watch !== undefined && o.watch !== false) {
        process.exitCode = await watchStatus(opened, { intervalSec: o.watch === true ? undefined : o.watch, json: Boolean(o.json), statusText, statusCounts });
        return;
      }
      terminal.stdout((o.json ? jsonText(await statusJson(opened)) : await statusText(opened)) + '\n');
    } finally {
      await opened.close();
    }
  });
}

function registerCleanup(program: Command): void {
  addRunOptions(
    program
      .command('cleanup')
      .description("remove what a run created and left behind (idempotent; never touches anything the run did not create)")
      .argument('[runDir]')
      .option('-i, --inventory <file>', 'inventory (default: the one the run used; with --run or a store.json run directory, its store: holds the run and gives its password)')
      .option('--dry-run', 'list what would be removed and on what, as the host shows it now (read-only), or why it would not be')
      .option('--confirm-destroy <names>', 'comma-separated devices (naa.…) whose partition may go although the host shows no mark of this run on it (setptbl sent, no VMFS of the run made); --dry-run names them'),
  ).action(async (dir: string | undefined, given: Omit<CleanupOptions, 'env'>) => {
    const o: CleanupOptions = { ...given, env: process.env };
    const opened = await openRunFor(dir, o, o.dryRun ? 'read' : 'write');
    if (!o.dryRun) {
      // Removing what the run left is finished even when nobody reads the output any more
      // (`| head`, a closed terminal: its SIGHUP is ignored; Ctrl-C still stops it).
      keepGoingWhenOutputCloses();
      process.on('SIGHUP', () => undefined);
    }
    const { failed } = await cleanupRun(opened, o, terminal.stdout);
    process.exitCode = failed ? EXIT.failure : EXIT.ok;
  });
}

// results, status, cleanup: commands that read (or tidy up after) an existing run directory.
import type { Command } from 'commander';
import { loadInventory } from '../../config/index.ts';
import { redact } from '../../input/secrets.ts';
import { errorMessage } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { renderCsv } from '../../report/csv.ts';
import type { RunStore } from '../../results/port.ts';
import type { ResultRecord } from '../../results/record.ts';
import { axesLabel } from '../../run/progress.ts';
import type { Composition, Provider } from '../../contract/provider.ts';
import type { HostProcessStop } from '../../contract/host-process.ts';
import { hostStopEvent, hostStopLines } from '../../run/host-leftovers.ts';
import { runDirHolder, type RunLock } from '../../results/run-lock.ts';
import { cleanupLedger, previewLedger } from '../../run/teardown.ts';
import { composeTargets } from '../compose.ts';
import { EXIT } from '../exit.ts';
import { jsonText, keepGoingWhenOutputCloses, terminal } from '../output.ts';
import { openRunFor, type OpenedRun, type StoreOptions } from '../store.ts';
import { deleteFinishedQueues, queueState } from './queue-commands.ts';
import { parseConfirmDestroy, takeRunLock } from './run.ts';
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
  for (const r of records) rows.push([r.permutationId, axesLabel(r.axes), String(r.repetition), r.test.id, fmt(r.bytesPerSecond, 1e6, 2), fmt(r.iops, 1, 0), fmt(r.latencyUs.mean), fmt(r.latencyUs.p99)]);
  const widths = rows[0]!.map((_, i) => rows.reduce((w, r) => Math.max(w, r[i]!.length), 0));
  return rows.map((r) => r.map((c, i) => (i >= 4 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** Whether the run is in use now: the run directory's lock (SQLite); a store's run says nothing here. */
function lockOf(opened: Pick<OpenedRun, 'sqlite'>): { held: false } | { held: true; holder: { pid: number; host: string; command: string; since: string } | null } {
  return opened.sqlite ? runDirHolder(opened.sqlite.runDir, opened.sqlite.lockAnchor()) : { held: false };
}

/** The run's state in numbers: `pending` counts what is not finished (pending and running). */
export async function statusCounts(store: RunStore): Promise<{ total: number; done: number; failed: number; running: number; pending: number }> {
  const c = await store.counts();
  return { total: c.pending + c.running + c.done + c.failed, done: c.done, failed: c.failed, running: c.running, pending: c.pending + c.running };
}

export async function statusText(opened: Pick<OpenedRun, 'store' | 'sqlite'> & Partial<Pick<OpenedRun, 'backend'>>): Promise<string> {
  const { store } = opened;
  const perms = await store.permutations();
  const count = (s: string) => perms.filter((p) => p.status === s).length;
  const meta = await store.meta();
  const lock = lockOf(opened);
  const lines = [`run ${meta.runId} (${meta.playbook} → ${meta.target}), started ${meta.startedAt}${opened.sqlite ? '' : `, in ${store.where.replace(/^run \S+ in /, '')}`}`, `done ${count('done')}, failed ${count('failed')}, pending ${count('pending') + count('running')} of ${perms.length}`];
  if (lock.held) lines.push(lock.holder ? `in use now by pid ${lock.holder.pid} on host ${lock.holder.host} (storsweep ${lock.holder.command}, since ${lock.holder.since})` : 'in use now by another process');
  for (const p of perms) {
    if (p.status === 'done') continue;
    const why = p.status === 'failed' || (p.status === 'pending' && p.reason) ? `: ${p.reason}` : p.status === 'running' ? (!opened.sqlite ? ' (running now, or interrupted)' : lock.held ? ' (running now)' : ' (interrupted mid-permutation; resume redoes it)') : '';
    lines.push(`  ${p.status.padEnd(7)} ${p.permutationId} ${axesLabel(p.axes)}${why}`);
  }
  // a submitted run: unfinished permutations whose job is on no queue would never run (a worker queues them again)
  const queued = opened.backend ? await queueState(store, opened.backend).catch(() => null) : null;
  if (queued?.missing) lines.push(`warning: ${queued.missing} of ${queued.unfinished} unfinished permutation(s) have no job on the run's queues (archived by pg-boss or removed): the next worker that looks at the run (storsweep worker) queues them again`);
  const live = await store.leftovers();
  if (live.length) {
    const objects = `${live.length} object${live.length === 1 ? '' : 's'} this run created`;
    const cleanup = opened.sqlite ? `storsweep cleanup ${store.runDir}` : `storsweep cleanup --run ${meta.runId} --store …`;
    lines.push(lock.held ? `${objects} ${live.length === 1 ? 'exists or is' : 'exist or are'} being created or removed now:` : `${objects} may still exist (${cleanup}):`);
    for (const o of live) lines.push(`  ${o.state.padEnd(13)} ${o.kind} ${o.name}${o.objectId ? ` (${o.objectId})` : ''}${o.error ? `: ${o.error}` : ''}`);
  }
  return lines.join('\n');
}

export function registerRunDirCommands(program: Command): void {
  addRunOptions(
    program
      .command('results')
      .description('print the normalized records of a run')
      .argument('[runDir]')
      .option('-i, --inventory <file>', "the inventory whose store: holds the run (with --run, or a run directory whose store.json names a store: its password comes from here or --store)")
      .option('--json', 'one JSON record per line')
      .option('--csv', 'CSV, one row per record'),
  ).action(async (dir: string | undefined, o: StoreOptions & { json?: boolean; csv?: boolean }) => {
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
  addRunOptions(
    program
      .command('status')
      .description('done / failed / pending permutations of a run, with reasons, and objects left behind')
      .argument('[runDir]')
      .option('-i, --inventory <file>', "the inventory whose store: holds the run (with --run, or a run directory whose store.json names a store: its password comes from here or --store)")
      .option('--json', 'as JSON')
      .option('--watch [seconds]', 'show progress live, refreshed every N seconds (default 2), until the run ends or Ctrl-C'),
  ).action(async (dir: string | undefined, o: StoreOptions & { json?: boolean; watch?: boolean | string }) => {
      const opened = await openRunFor(dir, o, 'read');
      try {
        if (o.watch !== undefined && o.watch !== false) {
          process.exitCode = await watchStatus(opened, { intervalSec: o.watch === true ? undefined : o.watch, json: Boolean(o.json), statusText, statusCounts });
          return;
        }
        if (o.json) {
          const { store } = opened;
          const lock = lockOf(opened);
          const queued = opened.backend ? await queueState(store, opened.backend).catch(() => null) : null;
          terminal.stdout(jsonText({ runId: store.runId, ...(await statusCounts(store)), ...(queued ? { unqueued: queued.missing } : {}), permutations: await store.permutations(), leftovers: await store.leftovers(), inUseBy: lock.held ? (lock.holder ?? {}) : null }) + '\n');
        } else terminal.stdout((await statusText(opened)) + '\n');
      } finally {
        await opened.close();
      }
    });
  addRunOptions(
    program
      .command('cleanup')
      .description("remove what a run created and left behind (idempotent; never touches anything the run did not create)")
      .argument('[runDir]')
      .option('-i, --inventory <file>', 'inventory (default: the one the run used; with --run or a store.json run directory, its store: holds the run and gives its password)')
      .option('--dry-run', 'list what would be removed and on what, as the host shows it now (read-only), or why it would not be')
      .option('--confirm-destroy <names>', 'comma-separated devices (naa.…) whose partition may go although the host shows no mark of this run on it (setptbl sent, no VMFS of the run made); --dry-run names them'),
  ).action(async (dir: string | undefined, o: StoreOptions & { dryRun?: boolean; confirmDestroy?: string }) => {
      const opened = await openRunFor(dir, o, o.dryRun ? 'read' : 'write');
      const store = opened.store;
      const closeStore = () => void opened.close();
      if (!o.dryRun) {
        // Removing what the run left is finished even when nobody reads the output any more
        // (`| head`, a closed terminal: its SIGHUP is ignored; Ctrl-C still stops it).
        keepGoingWhenOutputCloses();
        process.on('SIGHUP', () => undefined);
      }
      // One writer per run directory: never remove objects under a live run (or another cleanup).
      // Taken before reading the ledger, which only the holder may act on; --dry-run only reads.
      let lock: RunLock | null = null;
      try {
        if (!o.dryRun && opened.sqlite) lock = takeRunLock(opened.sqlite, 'cleanup');
        else if (!o.dryRun && opened.backend) lock = await opened.backend.lockRun(store.runId, 'cleanup');
      } catch (err) {
        closeStore();
        throw err;
      }
      // A submitted run whose every permutation is final: its queues go (a worker deletes them
      // after the last job; this is for a run whose last worker did not)
      if (opened.backend) {
        try {
          const queues = await deleteFinishedQueues(store, opened.backend, Boolean(o.dryRun));
          if (queues.length) terminal.stdout(`${o.dryRun ? 'would delete' : 'deleted'} the run's queue${queues.length === 1 ? '' : 's'} ${queues.join(', ')}\n`);
        } catch (err) {
          lock?.release();
          closeStore();
          throw err;
        }
      }
      // A permutation left running (or failed) may have left its fio running on the guest: stop it
      // before anything of the run is removed (a disk deleted under it), and even when nothing is.
      let toolsFailed = new Map<string, string>();
      let hostFailed = 0;
      if (!o.dryRun && (await store.permutations()).some((p) => p.status === 'running' || p.status === 'failed')) {
        try {
          ({ tools: toolsFailed, hostFailed } = await stopLeftoverTools(store, o.inventory));
        } catch (err) {
          lock?.release();
          closeStore();
          throw err;
        }
      }
      const live = (await store.leftovers()).reverse();
      if (!live.length) {
        terminal.stdout('nothing to clean up\n');
        lock?.release();
        closeStore();
        if (toolsFailed.size || hostFailed) process.exitCode = EXIT.failure;
        return;
      }
      const confirmedDestroy = o.confirmDestroy === undefined ? undefined : parseConfirmDestroy(o.confirmDestroy);
      // the providers of the run's targets: for a dry run too, which reads the host as the cleanup would
      let providers: RunProviders | null = null;
      let failed = 0;
      try {
        providers = await runProviders(store, o.inventory).catch((err: unknown) => {
          if (!o.dryRun) throw err;
          // a dry run without an inventory or a host: each row is shown from the ledger, saying why
          const fail = async (): Promise<never> => {
            throw err;
          };
          return { providerFor: fail, targetOf: () => store.runId, close: async () => undefined };
        });
        if (o.dryRun) {
          await previewLedger(store, providers.providerFor, (line) => terminal.stdout(`${line}\n`), confirmedDestroy);
          return;
        }
        const meta = await store.meta();
        // the run's teardown policy, as it recorded it: the same retries and deadline per attempt
        // (older run directories: timeouts.stepSec and the default retries)
        const stepSec = meta.teardown?.stepSec ?? meta.timeouts?.stepSec;
        const retries = meta.teardown?.retries;
        // Where a tool of the run may still be running, the disks of the permutations it may be
        // writing to (those left running or failed) stay: nothing is detached or deleted under it.
        const statusOf = new Map((await store.permutations()).map((p) => [p.permutationId, p.status]));
        const targetOf = providers.targetOf;
        const heldBack = (permutationId: string): string | undefined => {
          if (!['running', 'failed'].includes(statusOf.get(permutationId) ?? '')) return undefined;
          return toolsFailed.get(targetOf(permutationId));
        };
        const policy = { ...(stepSec !== undefined ? { timeoutMs: stepSec * 1000 } : {}), ...(retries !== undefined ? { retry: { retries } } : {}), ...(confirmedDestroy ? { confirmedDestroy } : {}) };
        failed = await cleanupLedger(store, providers.providerFor, (line) => terminal.stdout(`${line}\n`), policy, heldBack);
      } finally {
        await providers?.close();
        lock?.release();
        await opened.close();
      }
      process.exitCode = failed || toolsFailed.size || hostFailed ? EXIT.failure : EXIT.ok;
    });
}

interface RunProviders {
  /** the provider of a permutation's target, connected on first use (targets on one vCenter share one session) */
  providerFor: (permutationId: string) => Promise<Provider | null>;
  /** the target a permutation ran on */
  targetOf: (permutationId: string) => string;
  close: () => Promise<void>;
}

/** Each object goes to the provider of its permutation's target (the `target` axis when the playbook lists several). */
async function runProviders(store: RunStore, inventoryFile: string | readonly string[] | undefined): Promise<RunProviders> {
  const meta = await store.meta();
  const inv = loadInventory(inventoryFile ?? meta.inventoryFiles ?? meta.inventoryFile);
  const comps = composeTargets(meta.targets ?? [meta.target], inv, store.runDir ?? undefined);
  const targets = new Map((await store.permutations()).map((p) => [p.permutationId, meta.targets ? String(p.axes.target) : meta.target]));
  const targetOf = (permutationId: string) => targets.get(permutationId) ?? meta.target;
  const providers = new Map<string, Promise<Provider | null>>();
  return {
    targetOf,
    providerFor: (permutationId) => {
      const name = targetOf(permutationId);
      let p = providers.get(name);
      if (!p) {
        const comp = comps.get(name);
        p = comp ? comp.connectProvider() : Promise.resolve(null);
        providers.set(name, p);
      }
      return p;
    },
    close: async () => {
      for (const p of providers.values()) await (await p.catch(() => null))?.close().catch(() => undefined);
    },
  };
}

/**
 * Stops, on each of the run's targets, any tool process the run left running (found by the run's
 * token: ssh/process-group.ts) and any monitor its provider left on the host (esxtop: only while the
 * host shows it ours). Prints one line per target where something was found or nothing could be
 * confirmed; returns, by target name, why a tool may still be running there (unreachable too), and
 * how many host monitors could not be confirmed stopped (they only read: nothing is held back).
 */
async function stopLeftoverTools(store: RunStore, inventoryFile: string | readonly string[] | undefined): Promise<{ tools: Map<string, string>; hostFailed: number }> {
  const meta = await store.meta();
  const inv = loadInventory(inventoryFile ?? meta.inventoryFiles ?? meta.inventoryFile);
  const comps = composeTargets(meta.targets ?? [meta.target], inv, store.runDir ?? undefined);
  const failed = new Map<string, string>();
  let hostFailed = 0;
  for (const [name, comp] of comps) {
    const why = await stopTargetTools(store, meta.runId, name, comp);
    if (why) failed.set(name, why);
    if (comp.stopHostLeftovers && !(await stopTargetHostLeftovers(store, meta.runId, name, comp.stopHostLeftovers.bind(comp)))) hostFailed++;
  }
  return { tools: failed, hostFailed };
}

/** The workload's leftovers on one target; why one may still run there, or null. */
async function stopTargetTools(store: RunStore, runId: string, name: string, comp: Composition): Promise<string | null> {
  const stop = comp.workload.stopLeftovers?.bind(comp.workload);
  if (!stop) return null;
  let runner: CommandRunner | null = null;
  try {
    runner = await comp.workload.connect();
    const r = await stop(runner, runId, name);
    const record = (event: string) => void store.appendJournal(null, 'workload leftovers', event, r).catch(() => undefined);
    if (r.outcome === 'stopped') {
      record('stopped');
      terminal.stdout(`stopped ${comp.workload.tool} left running on ${name} (pids ${r.pids?.join(', ') ?? '?'}, SIG${r.signal})\n`);
    } else if (r.outcome === 'still-running' || r.outcome === 'unknown') {
      record('stop-failed');
      const why = `could not confirm that no ${comp.workload.tool} of this run is left running on ${name}${r.detail ? `: ${r.detail}` : ''}${r.pids?.length ? ` (pids ${r.pids.join(', ')})` : ''}`;
      terminal.stdout(`${why}\n`);
      return why;
    } else record('none');
    return null;
  } catch (err) {
    const why = `could not reach ${name} to look for a ${comp.workload.tool} left running: ${redact(errorMessage(err))}`;
    terminal.stdout(`${why}\n`);
    return why;
  } finally {
    await runner?.close().catch(() => undefined);
  }
}

/** The provider's monitors left on one target's host (run/host-leftovers.ts); false when one may still run. */
async function stopTargetHostLeftovers(store: RunStore, runId: string, name: string, stop: NonNullable<Composition['stopHostLeftovers']>): Promise<boolean> {
  let r: HostProcessStop;
  try {
    r = await stop(runId, name);
  } catch (err) {
    r = { pgid: null, outcome: 'unknown', what: 'host monitor', processes: [], detail: redact(errorMessage(err)) };
  }
  await store.appendJournal(null, 'host leftovers', hostStopEvent(r), r).catch(() => undefined);
  for (const line of hostStopLines(r, name)) terminal.stdout(`${line.text}\n`);
  return hostStopEvent(r) !== 'stop-failed';
}

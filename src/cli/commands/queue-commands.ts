// Several controllers on one sweep (docs/architecture.md, "Several controllers"):
// `storsweep submit PLAYBOOK -i INV [--store URL]` plans, checks and confirms exactly as `run` does,
// records the run in the PostgreSQL store and enqueues one job per permutation;
// `storsweep worker -i INV [--store URL] [--targets a,b]` works through the jobs of the targets it
// can reach, one permutation at a time per target group across every worker. The store: `--store`,
// else the inventory's `store:` (cli/store.ts selectStore, as for every other command).
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { loadInventory, type LoadedInventory } from '../../config/index.ts';
import { redact } from '../../config/secrets.ts';
import type { RunPlan } from '../../contract/plan.ts';
import type { Provider } from '../../contract/provider.ts';
import { errorMessage, UsageError } from '../../errors.ts';
import { createEndpointPool } from '../../providers/endpoint-pool.ts';
import { DEFAULT_LEASE_SEC, endpointSlots, LeaseSession } from '../../results/pg-coordination.ts';
import { PgRunStoreBackend, type PgConnection } from '../../results/pg-store.ts';
import type { RunMeta } from '../../results/port.ts';
import type { TargetEndpoints } from '../../run/executor.ts';
import { createRunLog } from '../../run/log.ts';
import { createProgressView, type ProgressEvent } from '../../run/progress.ts';
import { workLoop, type WorkerRun } from '../../run/worker.ts';
import { queueGroups, WorkQueue, type QueueGroup } from '../../run/work-queue.ts';
import { visible } from '../../text/visible.ts';
import { composeTargets, measurementFacts, usedFacts, type Composition } from '../compose.ts';
import { EXIT } from '../exit.ts';
import { checkAgainstHostVersions } from '../host-versions.ts';
import { intOption, retriesOption, stepTimeoutOption } from '../options.ts';
import { jsonText, progressStream, terminal } from '../output.ts';
import { pgConnectionOf, selectStore } from '../store.ts';
import { collect, SET_HELP } from './config-commands.ts';
import { checkConfirmDestroy, checkStoredPlan, newRunMeta, prepareNew } from './run.ts';
import { ensureOutputDirectory } from '../out-dir.ts';

/** The run meta key holding the queue groups of a submitted run (absent: not a queued run). */
export const QUEUE_META = 'queue';

/** `--store`, else the inventory's `store:`: workers share the run through PostgreSQL, so one is needed. */
function queueStore(command: string, o: { store?: string }, inv: LoadedInventory): { connection: PgConnection; where: string } {
  const s = selectStore({ ...(o.store !== undefined ? { store: o.store } : {}) }, inv);
  if (!s) throw new UsageError(`${command}: which store? give --store postgresql://…, or a store: in ${inv.file}; workers share the run through PostgreSQL`);
  return { connection: pgConnectionOf(s), where: s.display };
}

export interface SubmitOptions {
  inventory?: string;
  store?: string;
  confirmDestroy?: string;
  set?: string[];
  json?: boolean;
}

export async function submitCommand(playbookFile: string, o: SubmitOptions): Promise<number> {
  // planned, validated and confirmed exactly as `run` does, before the store is touched
  const { plan, comps, inv, pb, timeouts } = prepareNew(playbookFile, o);
  const { connection, where } = queueStore('submit', o, inv);
  const confirmedDestroy = checkConfirmDestroy(plan, o.confirmDestroy);
  await checkAgainstHostVersions(pb, inv, comps);
  const backend = await PgRunStoreBackend.connect(connection, where);
  let queue: WorkQueue | null = null;
  try {
    const meta = newRunMeta({ plan, comps, inv, pb, playbookFile, timeouts, confirmedDestroy });
    const store = await backend.createRun(meta, plan);
    const groups = queueGroups(plan);
    await store.setMeta(QUEUE_META, { groups });
    await store.setMeta('playbookText', pb.text);
    queue = await WorkQueue.open(connection);
    const n = await queue.enqueue(plan, groups);
    await store.appendJournal(null, 'run', 'submitted', { permutations: n, queues: groups.map((g) => g.queue) });
    terminal.stderr(`run ${plan.runId}: ${n} permutation(s) queued in ${groups.length} target group(s) in ${where}; workers: storsweep worker -i INVENTORY --store URL\n`);
    if (o.json) terminal.stdout(jsonText({ runId: plan.runId, permutations: n, groups: groups.map((g) => g.targets), store: where }) + '\n' + jsonText({ runId: plan.runId }) + '\n');
    else terminal.stdout(`${plan.runId}\n`);
    return EXIT.ok;
  } finally {
    await queue?.close();
    await backend.close();
  }
}

export interface WorkerCommandOptions {
  inventory?: string;
  store?: string;
  targets?: string;
  run?: string;
  once?: boolean;
  untilIdle?: boolean;
  out: string;
  concurrency?: number;
  leaseSec?: number;
  pollMs?: number;
  retries?: number;
  stepTimeout?: number;
  json?: boolean;
}

/**
 * The inventory facts of `names` (what they measure) compared with those the run recorded: a worker
 * whose inventory describes a target differently from the submitter's would mix two configurations
 * in one run. Returns the differences as text.
 */
export function factDifferences(meta: RunMeta, names: readonly string[], plan: RunPlan, now: Record<string, string>): string[] {
  const recorded = meta.config?.facts;
  if (!recorded) return [];
  const was = usedFacts(recorded, names, plan);
  const mine = (k: string) => k in now || names.some((n) => k.startsWith(`targets.${n}.`));
  return [...new Set([...Object.keys(was).filter(mine), ...Object.keys(now)])]
    .sort()
    .filter((k) => was[k] !== now[k])
    .map((k) => `${visible(k)}: ${was[k] === undefined ? '(absent)' : visible(was[k])} → ${now[k] === undefined ? '(absent)' : visible(now[k])}`);
}

export async function workerCommand(o: WorkerCommandOptions): Promise<number> {
  if (!o.inventory) throw new UsageError('worker: -i/--inventory <file> is required');
  if (o.once && o.untilIdle) throw new UsageError('worker: --once and --until-idle exclude each other');
  const inv: LoadedInventory = loadInventory(o.inventory);
  const known = Object.keys(inv.inventory.targets);
  const allowed = o.targets ? [...new Set(o.targets.split(',').map((s) => s.trim()).filter(Boolean))] : known;
  for (const t of allowed) if (!known.includes(t)) throw new UsageError(`worker --targets: ${visible(t)} is not a target of ${inv.file} (targets: ${known.join(', ')})`);
  const { connection, where } = queueStore('worker', o, inv);
  const out = path.resolve(o.out);
  ensureOutputDirectory(o.out, '--out');

  const ac = new AbortController();
  const backend = await PgRunStoreBackend.connect(connection, where);
  const cleanups: Array<() => Promise<void>> = [async () => backend.close()];
  const providers: Array<Provider | null> = [];
  let lostLease: Error | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) process.exit(EXIT.interrupted);
    terminal.stderr(`\n${sig}: stopping after teardown of the current permutation; its job goes back to the queue (again to exit at once)\n`);
    ac.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const log = createRunLog(path.join(out, `worker-${os.hostname()}-${process.pid}.jsonl`));
  const view = createProgressView(progressStream(), { live: false });
  const onEvent = (e: ProgressEvent) => {
    view.onEvent(e);
    log.event(e);
  };
  try {
    const queue = await WorkQueue.open(connection);
    cleanups.unshift(() => queue.close());
    const lease = await LeaseSession.open(connection, {
      ...(o.leaseSec !== undefined ? { leaseSec: o.leaseSec } : {}),
      onLost: (err) => {
        lostLease = err;
        terminal.stderr(`error: lost the lease session to ${where} (${redact(errorMessage(err))}): stopping; another worker takes the permutation over\n`);
        ac.abort(err);
      },
    });
    cleanups.unshift(() => lease.close());
    // the per-vCenter provisioning limit, held across every worker (endpoint slots in PostgreSQL)
    const pool = createEndpointPool({ gate: endpointSlots(backend.pool) });
    const prepared = new Map<string, WorkerRun | null>();

    const prepareRun = async (runId: string): Promise<WorkerRun | null> => {
      const store = await backend.openRun(runId, { runDir: path.join(out, runId) });
      const q = await store.getMeta<{ groups: QueueGroup[] }>(QUEUE_META);
      if (!q) return null; // not a submitted run (`run --store`): nothing queued
      const meta = await store.meta();
      const plan = await store.plan();
      const names = meta.targets ?? [meta.target];
      const reach = names.filter((n) => allowed.includes(n));
      const groups = q.groups.filter((g) => g.targets.every((t) => reach.includes(t)));
      if (!groups.length) return null;
      const mine = groups.flatMap((g) => g.targets);
      checkStoredPlan(plan, store.where);
      const diffs = factDifferences(meta, mine, plan, measurementFacts(mine, inv, plan));
      if (diffs.length) {
        terminal.stderr(`error: run ${runId}: ${inv.file} describes its targets differently from the inventory it was submitted with (${visible(meta.inventoryFile)}); not working on it:\n  ${diffs.join('\n  ')}\n`);
        return null;
      }
      const comps: Map<string, Composition> = composeTargets(mine, inv, inv.file, pool);
      const connected = new Map<string, Promise<TargetEndpoints>>();
      const stepSec = o.stepTimeout ?? meta.timeouts?.stepSec;
      return {
        plan,
        store,
        groups,
        keys: (t) => (comps.get(t)?.sharedResources ?? []).map((r) => r.key),
        endpoints: (t) => {
          let p = connected.get(t);
          if (!p) {
            const comp = comps.get(t)!;
            p = comp.connectProvider().then((provider) => {
              providers.push(provider);
              return { provider, workload: comp.workload };
            });
            p.catch(() => connected.delete(t));
            connected.set(t, p);
          }
          return p;
        },
        execute: {
          ...(stepSec !== undefined ? { stepTimeoutMs: stepSec * 1000 } : {}),
          ...(meta.timeouts?.workloadSlackSec !== undefined ? { workloadSlackSec: meta.timeouts.workloadSlackSec } : {}),
          ...(o.retries !== undefined ? { retry: { retries: o.retries } } : {}),
        },
      };
    };

    const runs = async (): Promise<WorkerRun[]> => {
      const ids = o.run ? [o.run] : (await backend.runs()).filter((r) => r.counts.pending + r.counts.running > 0 || prepared.has(r.runId)).map((r) => r.runId);
      const out: WorkerRun[] = [];
      for (const id of ids) {
        if (!prepared.has(id)) {
          try {
            prepared.set(id, await prepareRun(id));
          } catch (err) {
            if (o.run) throw err;
            terminal.stderr(`error: run ${visible(id)}: ${redact(errorMessage(err))}; not working on it\n`);
            prepared.set(id, null);
          }
        }
        const r = prepared.get(id);
        if (r) out.push(r);
      }
      return out;
    };

    const summary = await workLoop({
      name: `${os.hostname()}:${process.pid}`,
      queue,
      lease,
      runs,
      signal: ac.signal,
      onEvent,
      ...(o.once ? { once: true } : {}),
      ...(o.untilIdle ? { untilIdle: true } : {}),
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}),
    });
    if (o.json) terminal.stdout(jsonText(summary) + '\n');
    else terminal.stderr(`worker: ${summary.done} permutation(s) done, ${summary.failed} failed, ${summary.takenOver} taken over from gone workers, ${summary.givenBack} given back\n`);
    if (lostLease) return EXIT.failure;
    if (ac.signal.aborted) return EXIT.interrupted;
    return summary.failed ? EXIT.failure : EXIT.ok;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    for (const p of providers) await p?.close().catch(() => undefined);
    for (const c of cleanups) await c().catch(() => undefined);
    view.close();
    try {
      log.close();
    } catch {
      /* best effort */
    }
  }
}

const concurrencyOption = intOption('--concurrency', 1, 64, 'a number of permutations');
const leaseOption = intOption('--lease', 2, 3600, 'whole seconds');
const pollOption = intOption('--poll-ms', 50, 60_000, 'milliseconds');

export function registerQueueCommands(program: Command): void {
  program
    .command('submit')
    .description('plan a sweep and queue every permutation in a PostgreSQL store for `storsweep worker`s')
    .argument('<playbook>', 'playbook YAML')
    .option('-i, --inventory <file>', 'inventory YAML')
    .option('--store <url>', 'postgresql://USER:${env:NAME}@HOST[:PORT]/DB (the password by reference; default: the inventory\'s store:)')
    .option('--confirm-destroy <names>', 'comma-separated: exactly the names the destructive steps destroy (as for run)')
    .option('--set <key=value>', SET_HELP, collect)
    .option('--json', 'machine-readable output; the last line is {"runId": …}')
    .action(async (playbook: string, o: SubmitOptions) => {
      process.exitCode = await submitCommand(playbook, o);
    });
  program
    .command('worker')
    .description('work through queued permutations of the targets this inventory reaches (several workers share a run)')
    .option('-i, --inventory <file>', 'inventory YAML')
    .option('--store <url>', 'postgresql://USER:${env:NAME}@HOST[:PORT]/DB (default: the inventory\'s store:)')
    .option('--targets <names>', 'comma-separated: only these targets of the inventory')
    .option('--run <runId>', 'only this run (default: every queued run with work left)')
    .option('--once', 'stop after one permutation')
    .option('--until-idle', 'stop when nothing this worker can do is left (waiting or running elsewhere)')
    .option('-o, --out <dir>', 'directory for raw tool output (<out>/<runId>/raw) and the worker log', 'runs')
    .option('--concurrency <n>', 'permutations at once, of different target groups (default 1)', concurrencyOption)
    .option('--lease <sec>', `how long a silent worker keeps its targets (keepalive on its lease session; heartbeat every third; default ${DEFAULT_LEASE_SEC})`, leaseOption)
    .option('--poll-ms <ms>', 'pause between looks at an empty queue (default 1000)', pollOption)
    .option('--retries <n>', 'retries of a transient failure per step, 0-20 (default 3)', retriesOption)
    .option('--step-timeout <sec>', 'limit for each provisioning step in whole seconds (default: the playbook timeouts.stepSec, else 1800)', stepTimeoutOption)
    .option('--json', 'print the summary as JSON')
    .action(async (o: WorkerCommandOptions & { lease?: number }) => {
      process.exitCode = await workerCommand({ ...o, ...(o.lease !== undefined ? { leaseSec: o.lease } : {}) });
    });
}

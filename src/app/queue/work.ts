// `worker`: works through the queued permutations of the targets its inventory reaches, one
// permutation at a time per target group across every worker (run/worker.ts workLoop). A lost lease
// session is replaced, with backoff. The CLI hands in the hooks that touch the process and maps the
// outcome to output and an exit code.
import os from 'node:os';
import path from 'node:path';
import { loadInventory, type LoadedInventory } from '../../config/index.ts';
import type { Env } from '../../contract/provider.ts';
import { redact } from '../../input/secrets.ts';
import { errorMessage, UsageError } from '../../errors.ts';
import { createEndpointPool } from '../../providers/endpoint-pool.ts';
import { endpointSlots, LeaseSession } from '../../results/pg-coordination.ts';
import { PgRunStoreBackend, type PgConnection } from '../../results/pg-store.ts';
import { createRunLog, type RunLog } from '../../run/log.ts';
import type { ProgressEvent } from '../../run/progress.ts';
import { workLoop, type WorkerSummary } from '../../run/worker.ts';
import { WorkQueue } from '../../run/work-queue.ts';
import { visible } from '../../text/visible.ts';
import type { Notify } from '../notify.ts';
import { ensureOutputDirectory } from '../out-dir.ts';
import { pgConnectionOf } from '../store.ts';
import { queueStore, thisMachine } from './queue-meta.ts';
import { WorkerRuns } from './worker-runs.ts';

/** A worker that lost its lease keeps trying to open a new one for this long. */
const RECONNECT_GIVE_UP_MS = 10 * 60_000;

export interface WorkOptions {
  inventory?: string;
  /** the environment as the CLI read it (`${env:…}` secrets, govc's GOVC_*): decision 0088 */
  env: Env;
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
  /** how often a running permutation's job expiry is pushed back, and to how far (WorkerOptions.renewEveryMs/renewSec); not CLI options: the defaults, or a test's */
  renewEveryMs?: number;
  renewSec?: number;
  /** how long a run whose preparation failed waits before it is tried again (WorkerContext.prepareRetryMs); not a CLI option: the default, or a test's */
  prepareRetryMs?: number;
}

/** What `worker` needs from the process it runs in. */
export interface WorkHooks {
  note: Notify;
  progressView(): { onEvent(e: ProgressEvent): void; close(): void };
  /** calls `handler` on SIGINT and SIGTERM until the returned function is called */
  onInterrupt(handler: (signal: string) => void): () => void;
  /** a second interrupt: ends the process at once */
  exitNow(): void;
}

/** How a worker ended. */
export interface WorkOutcome {
  summary: WorkerSummary;
  /** --until-idle: runs with work this worker could not prepare, and why */
  blocked: Array<[string, { error: string }]>;
  /** the lease was lost (--once: not given back by a new one) */
  leaseLost: boolean;
  interrupted: boolean;
}

/** The inventory, checked against `--targets`: the targets this worker may work. */
function allowedTargets(o: WorkOptions): { inv: LoadedInventory; allowed: string[] } {
  if (!o.inventory) throw new UsageError('worker: -i/--inventory <file> is required');
  if (o.once && o.untilIdle) throw new UsageError('worker: --once and --until-idle exclude each other');
  const inv = loadInventory(o.inventory, o.env);
  const known = Object.keys(inv.inventory.targets);
  const allowed = o.targets ? [...new Set(o.targets.split(',').map((s) => s.trim()).filter(Boolean))] : known;
  for (const t of allowed) if (!known.includes(t)) throw new UsageError(`worker --targets: ${visible(t)} is not a target of ${inv.file} (targets: ${known.join(', ')})`);
  return { inv, allowed };
}

interface Opened {
  backend: PgRunStoreBackend;
  log: RunLog;
  view: { onEvent(e: ProgressEvent): void; close(): void };
  opening: Promise<[PromiseSettledResult<WorkQueue>, PromiseSettledResult<LeaseSession>]>;
}

/**
 * The store, the queue and the lease session: three sessions of their own, opened at once, not
 * one after the other (start-up is on the wall time of every worker; bench scale.workers).
 */
async function open(o: WorkOptions, connection: PgConnection, where: string, openLease: () => Promise<LeaseSession>, hooks: WorkHooks): Promise<Opened> {
  const out = path.resolve(o.out);
  const opening = Promise.allSettled([WorkQueue.open(connection), openLease()] as const);
  try {
    const backend = await PgRunStoreBackend.connect(connection, where);
    try {
      // `--run ID` the store does not hold: "not found" now, not work this worker "could not prepare"
      if (o.run !== undefined) await backend.openRun(o.run);
      const log = createRunLog(path.join(out, `worker-${os.hostname()}-${process.pid}.jsonl`));
      return { backend, log, view: hooks.progressView(), opening };
    } catch (err) {
      await backend.close().catch(() => undefined);
      throw err;
    }
  } catch (err) {
    // what did open is closed (pg-boss's timers would keep the process alive)
    for (const r of await opening) if (r.status === 'fulfilled') await r.value.close().catch(() => undefined);
    throw err;
  }
}

export async function work(o: WorkOptions, hooks: WorkHooks): Promise<WorkOutcome> {
  const { inv, allowed } = allowedTargets(o);
  const { store: s, where } = queueStore('worker', o, inv);
  ensureOutputDirectory(o.out, '--out');
  const connection = await pgConnectionOf(s);
  // The lease session: lost (the server restarted, a DBA ended it, the network went silent), the
  // permutation in progress is left as it is for whoever takes it over (run/worker.ts), and the
  // worker opens a new one, with backoff, and goes on.
  const openLease = () =>
    LeaseSession.open(connection, {
      // what `cleanup` names when it finds this worker holding the run (pg-store.ts lockRun)
      applicationName: `storsweep worker ${os.hostname()}:${process.pid}`.slice(0, 63),
      ...(o.leaseSec !== undefined ? { leaseSec: o.leaseSec } : {}),
      onLost: (err) => hooks.note(`error: ${redact(errorMessage(err))} (${where}): the permutation in progress is left, untouched, to the worker that takes it over\n`),
    });
  const { backend, log, view, opening } = await open(o, connection, where, openLease, hooks);
  const cleanups: Array<() => Promise<void>> = [async () => backend.close()];
  const ac = new AbortController();
  const off = hooks.onInterrupt((sig) => {
    if (ac.signal.aborted) hooks.exitNow();
    hooks.note(`\n${sig}: stopping after teardown of the current permutation; its job goes back to the queue (again to exit at once)\n`);
    ac.abort(new Error(`interrupted by ${sig}`));
  });
  const onEvent = (e: ProgressEvent) => {
    view.onEvent(e);
    log.event(e);
  };
  let runs: WorkerRuns | null = null;
  try {
    const [queueOpened, leaseOpened] = await opening;
    if (queueOpened.status === 'fulfilled') cleanups.unshift(() => queueOpened.value.close());
    if (leaseOpened.status === 'rejected') throw leaseOpened.reason;
    // the current lease session (a new one replaces a lost one) is closed at the end
    cleanups.unshift(() => (runs ? runs.lease.close() : leaseOpened.value.close()));
    if (queueOpened.status === 'rejected') throw queueOpened.reason;
    const queue = queueOpened.value;
    // the per-vCenter provisioning limit, held across every worker (endpoint slots in PostgreSQL)
    // (a connection of their own: the calls they guard write the ledger through the store's pool)
    const slots = endpointSlots(connection, { applicationName: `storsweep worker ${os.hostname()}:${process.pid} slots`.slice(0, 63) });
    cleanups.unshift(() => slots.close());
    const pool = createEndpointPool({ gate: (key, max, signal) => slots.gate(key, max, signal) });
    // after the providers (cleanups run after them): a session no provider closed is logged out too
    cleanups.unshift(() => pool.close());
    const execute = { ...(o.stepTimeout !== undefined ? { stepTimeout: o.stepTimeout } : {}), ...(o.retries !== undefined ? { retries: o.retries } : {}) };
    runs = new WorkerRuns({ inv, allowed, ...(o.run !== undefined ? { run: o.run } : {}), out: path.resolve(o.out), me: thisMachine(), backend, queue, pool, execute, onEvent, note: hooks.note, ...(o.prepareRetryMs !== undefined ? { prepareRetryMs: o.prepareRetryMs } : {}) }, leaseOpened.value);
    const summary = await workAndReconnect(runs, queue, o, { signal: ac.signal, onEvent, openLease, where, note: hooks.note });
    // --until-idle: a run with work this worker could not prepare is not idle
    const blocked = o.untilIdle ? [...runs.unprepared] : [];
    return { summary, blocked, leaseLost: Boolean(runs.lease.lostReason), interrupted: ac.signal.aborted };
  } finally {
    off();
    await Promise.allSettled(runs?.fingerprints ?? []);
    for (const p of runs?.providers ?? []) await p?.close().catch(() => undefined);
    for (const c of cleanups) await c().catch(() => undefined);
    view.close();
    try {
      log.close();
    } catch {
      /* best effort */
    }
  }
}

/** The work loop, again on a new lease session after one is lost (not with --once, nor once interrupted); the summaries added up. */
async function workAndReconnect(runs: WorkerRuns, queue: WorkQueue, o: WorkOptions, a: { signal: AbortSignal; onEvent: (e: ProgressEvent) => void; openLease: () => Promise<LeaseSession>; where: string; note: Notify }): Promise<WorkerSummary> {
  const total: WorkerSummary = { done: 0, failed: 0, alreadyDone: 0, takenOver: 0, givenBack: 0, abandoned: 0, refused: 0, queueMs: 0, executeMs: 0, storeWrites: 0, storeWritesBehind: 0, storeWriteQueuedMs: 0, storeWriteMs: 0, waitMs: 0 };
  for (;;) {
    const summary = await workLoop({
      name: `${os.hostname()}:${process.pid}`,
      queue,
      lease: runs.lease,
      runs: (fresh) => runs.runs(fresh),
      signal: a.signal,
      onEvent: a.onEvent,
      ...(o.once ? { once: true } : {}),
      ...(o.untilIdle ? { untilIdle: true } : {}),
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}),
      ...(o.renewEveryMs !== undefined ? { renewEveryMs: o.renewEveryMs } : {}),
      ...(o.renewSec !== undefined ? { renewSec: o.renewSec } : {}),
    });
    for (const k of Object.keys(total) as Array<keyof WorkerSummary>) total[k] += summary[k];
    if (!runs.lease.lostReason || a.signal.aborted || o.once) return total;
    // lost: a new lease session, with backoff, then on (this worker may take its own permutation over)
    const lostAt = performance.now();
    await runs.lease.close();
    runs.lease = await newLease(a, lostAt);
    a.note(`worker: a new lease session on ${a.where}; going on\n`);
  }
}

async function newLease(a: { signal: AbortSignal; openLease: () => Promise<LeaseSession>; where: string; note: Notify }, lostAt: number): Promise<LeaseSession> {
  let delay = 500;
  for (;;) {
    try {
      return await a.openLease();
    } catch (err) {
      if (a.signal.aborted || performance.now() - lostAt > RECONNECT_GIVE_UP_MS) throw err;
      a.note(`worker: cannot open a new lease session on ${a.where} (${redact(errorMessage(err))}); trying again in ${(delay / 1000).toFixed(1)} s\n`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
}

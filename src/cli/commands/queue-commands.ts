// Several controllers on one sweep (docs/architecture.md, "Several controllers"):
// `storsweep submit PLAYBOOK -i INV [--store URL]` plans, checks and confirms exactly as `run` does,
// records the run in the PostgreSQL store and enqueues one job per permutation;
// `storsweep worker -i INV [--store URL] [--targets a,b]` works through the jobs of the targets it
// can reach, one permutation at a time per target group across every worker. The store: `--store`,
// else the inventory's `store:` (cli/store.ts selectStore, as for every other command).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { loadInventory, type LoadedInventory } from '../../config/index.ts';
import { redact } from '../../input/secrets.ts';
import type { RunPlan } from '../../contract/plan.ts';
import type { Provider } from '../../contract/provider.ts';
import { errorMessage, UsageError } from '../../errors.ts';
import { createEndpointPool } from '../../providers/endpoint-pool.ts';
import { DEFAULT_LEASE_SEC, endpointSlots, LeaseSession, sharedKey } from '../../results/pg-coordination.ts';
import { PgRunStoreBackend, runLockKey } from '../../results/pg-store.ts';
import type { RunMeta, RunStore } from '../../results/port.ts';
import { readConfirmed } from '../../results/confirmation.ts';
import type { TargetEndpoints } from '../../run/executor.ts';
import { createRunLog, type RunLog } from '../../run/log.ts';
import { createProgressView, type ProgressEvent, type ProgressView } from '../../run/progress.ts';
import { workLoop, type WorkerRun, type WorkerSummary } from '../../run/worker.ts';
import { jobId, queuedJobIds, queueGroups, WorkQueue, type QueueGroup, type Sql } from '../../run/work-queue.ts';
import { visible } from '../../text/visible.ts';
import { moduleOf } from '../../providers/index.ts';
import { composeTargets, endpointLimits, isLoopback, measurementFacts, resourceContext, usedFacts, type Composition } from '../compose.ts';
import { EXIT } from '../exit.ts';
import { checkAgainstHostVersions } from '../host-versions.ts';
import { intOption, retriesOption, stepTimeoutOption } from '../options.ts';
import { jsonText, progressStream, terminal } from '../output.ts';
import { pgConnectionOf, selectStore } from '../store.ts';
import type { ResolvedStore } from '../../config/store.ts';
import { collect, SET_HELP } from './config-commands.ts';
import { checkConfirmDestroy, checkStoredPlan, foreignTestFiles, newRunMeta, prepareNew, targetFacts } from './run.ts';
import { ensureOutputDirectory } from '../out-dir.ts';

/** A run whose preparation failed is tried again after this long (or at once before an --until-idle worker decides it is idle). */
const PREPARE_RETRY_MS = 10_000;
/** A worker that lost its lease keeps trying to open a new one for this long. */
const RECONNECT_GIVE_UP_MS = 10 * 60_000;

/** The run meta key holding the queue groups of a submitted run (absent: not a queued run). */
export const QUEUE_META = 'queue';

/** What a submitted run records about its queue (meta key QUEUE_META). */
export interface QueueMeta {
  groups: QueueGroup[];
  /** false while `submit` is still putting the jobs on the queues (absent: a run from before it was recorded) */
  enqueued?: boolean;
  /** the machine that submitted the run (thisMachine) */
  submittedFrom?: Machine;
  /** targets that are the machine running them (machineBoundTargets): worked only on submittedFrom */
  machineBound?: string[];
  /** each vCenter endpoint's provisioning limit as submitted (compose.ts endpointLimits): every worker must use the same */
  endpointLimits?: Record<string, number>;
}

/** A machine: its host name (for messages) and id (/etc/machine-id; the host name where there is none). */
export interface Machine {
  host: string;
  id: string;
}

export function thisMachine(): Machine {
  let id = '';
  for (const f of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      id = readFileSync(f, 'utf8').trim();
    } catch {
      /* not there */
    }
    if (id) break;
  }
  return { host: os.hostname(), id: id || `host ${os.hostname()}` };
}

/**
 * The targets of `names` that are whatever machine runs them: a `local` target, or one reaching an
 * SSH host, vCenter or NFS server at a loopback address (the lab's targets: 127.0.0.1). A worker on
 * another machine would measure its own disks (or its own lab) under the submitter's target name.
 */
export function machineBoundTargets(names: readonly string[], inv: LoadedInventory): string[] {
  const base = resourceContext(inv);
  return names.filter((n) => {
    const t = inv.inventory.targets[n];
    if (!t) return false;
    if (t.provider === 'local') return true;
    let bound = false;
    const vcenterHost = (name: string): string => {
      try {
        return new URL(inv.inventory.vcenters[name]?.url ?? process.env.GOVC_URL ?? '').hostname;
      } catch {
        return '';
      }
    };
    moduleOf(t).sharedResources(t, {
      machine: (h) => {
        const m = base.machine(h);
        if (m === 'this machine') bound = true;
        return m;
      },
      vcenter: (v) => {
        if (isLoopback(vcenterHost(v))) bound = true;
        return base.vcenter(v);
      },
    });
    const nfsHost = (t as { nfs?: { remoteHost?: string } }).nfs?.remoteHost;
    return bound || (nfsHost !== undefined && isLoopback(nfsHost));
  });
}

/** The store's pool as pg-boss's database (status, cleanup). */
const sqlOf = (backend: PgRunStoreBackend): Sql => (text, params) => backend.pool.query(text, params);

/**
 * A submitted run's queue as `status` shows it: its unfinished permutations and how many of them
 * have no job on any queue (a worker queues those again); null for a run that was not submitted.
 */
export async function queueState(store: RunStore, backend: PgRunStoreBackend): Promise<{ unfinished: number; missing: number } | null> {
  const q = await store.getMeta<QueueMeta>(QUEUE_META);
  if (!q || q.enqueued === false) return null;
  const unfinished = (await store.permutations()).filter((p) => p.status === 'pending' || p.status === 'running');
  if (!unfinished.length) return { unfinished: 0, missing: 0 };
  const have = await queuedJobIds(sqlOf(backend), q.groups.map((g) => g.queue), unfinished.map((p) => jobId(store.runId, p.permutationId)));
  return { unfinished: unfinished.length, missing: unfinished.filter((p) => !have.has(jobId(store.runId, p.permutationId))).length };
}

/**
 * `cleanup` of a submitted run: once every permutation is final, its queues (pg-boss partition
 * tables) are deleted, if a worker has not already; `dryRun` only names them. Returns their names.
 */
export async function deleteFinishedQueues(store: RunStore, backend: PgRunStoreBackend, dryRun: boolean): Promise<string[]> {
  const q = await store.getMeta<QueueMeta>(QUEUE_META);
  if (!q) return [];
  const c = await store.counts();
  if (c.pending + c.running > 0) return [];
  const wq = WorkQueue.over(sqlOf(backend));
  const present = await wq.existing(q.groups);
  if (dryRun) return present.map((g) => g.queue);
  const deleted = await wq.deleteQueues(present);
  if (deleted.length) await store.appendJournal(null, 'cleanup', 'queues deleted', { queues: deleted });
  return deleted;
}

/** How often a worker checks that every unfinished permutation of a run it works on still has its job. */
const RESTORE_EVERY_MS = 10 * 60_000;

/** `--store`, else the inventory's `store:`: workers share the run through PostgreSQL, so one is needed. */
function queueStore(command: string, o: { store?: string }, inv: LoadedInventory): { store: ResolvedStore; where: string } {
  const s = selectStore({ ...(o.store !== undefined ? { store: o.store } : {}) }, inv);
  if (!s) throw new UsageError(`${command}: which store? give --store postgresql://…, or a store: in ${inv.file}; workers share the run through PostgreSQL`);
  return { store: s, where: s.display };
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
  const { store: s, where } = queueStore('submit', o, inv);
  // a test file storsweep did not create, where a target's guest can be reached from here, is confirmed too
  const confirmedDestroy = checkConfirmDestroy(plan, o.confirmDestroy, await foreignTestFiles(comps));
  await checkAgainstHostVersions(pb, inv, comps);
  const connection = await pgConnectionOf(s);
  const backend = await PgRunStoreBackend.connect(connection, where);
  let queue: WorkQueue | null = null;
  try {
    const meta = newRunMeta({ plan, comps, inv, pb, playbookFile, timeouts, confirmedDestroy });
    const store = await backend.createRun(meta, plan);
    const groups = queueGroups(plan);
    const machine = thisMachine();
    const bound = machineBoundTargets(plan.targets ? plan.targets.map((t) => t.name) : [plan.target], inv);
    const limits = endpointLimits(plan.targets ? plan.targets.map((t) => t.name) : [plan.target], inv);
    const qmeta: QueueMeta = { groups, enqueued: false, submittedFrom: machine, ...(bound.length ? { machineBound: bound } : {}), ...(Object.keys(limits).length ? { endpointLimits: limits } : {}) };
    await store.setMeta(QUEUE_META, qmeta);
    await store.setMeta('playbookText', pb.text);
    queue = await WorkQueue.open(connection);
    const n = await queue.enqueue(plan, groups);
    await store.setMeta(QUEUE_META, { ...qmeta, enqueued: true });
    await store.appendJournal(null, 'run', 'submitted', { permutations: n, queues: groups.map((g) => g.queue), host: machine.host, ...(bound.length ? { machineBound: bound } : {}) });
    terminal.stderr(`run ${plan.runId}: ${n} permutation(s) queued in ${groups.length} target group(s) in ${where}; workers: storsweep worker -i INVENTORY --store URL\n`);
    if (bound.length) terminal.stderr(`note: ${bound.map(visible).join(', ')} ${bound.length === 1 ? 'is' : 'are'} this machine (a local target, or reached at a loopback address): only workers on this machine (${visible(machine.host)}) take ${bound.length === 1 ? 'its' : 'their'} permutations\n`);
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
  /** how often a running permutation's job expiry is pushed back, and to how far (WorkerOptions.renewEveryMs/renewSec); not CLI options: the defaults, or a test's */
  renewEveryMs?: number;
  renewSec?: number;
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

/** `endpoint: maxConcurrent submitted → here` for every endpoint both name with different limits. */
export function limitDifferences(submitted: Record<string, number> | undefined, here: Record<string, number>): string[] {
  if (!submitted) return []; // a run submitted before limits were recorded
  return Object.keys(here)
    .filter((k) => submitted[k] !== undefined && submitted[k] !== here[k])
    .sort()
    .map((k) => `${visible(k)}: maxConcurrent ${submitted[k]} → ${here[k]}`);
}

export async function workerCommand(o: WorkerCommandOptions): Promise<number> {
  if (!o.inventory) throw new UsageError('worker: -i/--inventory <file> is required');
  if (o.once && o.untilIdle) throw new UsageError('worker: --once and --until-idle exclude each other');
  const inv: LoadedInventory = loadInventory(o.inventory);
  const known = Object.keys(inv.inventory.targets);
  const allowed = o.targets ? [...new Set(o.targets.split(',').map((s) => s.trim()).filter(Boolean))] : known;
  for (const t of allowed) if (!known.includes(t)) throw new UsageError(`worker --targets: ${visible(t)} is not a target of ${inv.file} (targets: ${known.join(', ')})`);
  const { store: s, where } = queueStore('worker', o, inv);
  const out = path.resolve(o.out);
  ensureOutputDirectory(o.out, '--out');
  const connection = await pgConnectionOf(s);

  const ac = new AbortController();
  // The lease session: lost (the server restarted, a DBA ended it, the network went silent), the
  // permutation in progress is left as it is for whoever takes it over (run/worker.ts), and the
  // worker opens a new one, with backoff, and goes on.
  const openLease = () =>
    LeaseSession.open(connection, {
      // what `cleanup` names when it finds this worker holding the run (pg-store.ts lockRun)
      applicationName: `storsweep worker ${os.hostname()}:${process.pid}`.slice(0, 63),
      ...(o.leaseSec !== undefined ? { leaseSec: o.leaseSec } : {}),
      onLost: (err) => terminal.stderr(`error: ${redact(errorMessage(err))} (${where}): the permutation in progress is left, untouched, to the worker that takes it over\n`),
    });
  // the store, the queue and the lease session are three sessions of their own: opened at once,
  // not one after the other (start-up is on the wall time of every worker; bench scale.workers)
  const opening = Promise.allSettled([WorkQueue.open(connection), openLease()] as const);
  let backend: PgRunStoreBackend;
  let log: RunLog;
  let view: ProgressView;
  try {
    backend = await PgRunStoreBackend.connect(connection, where);
    try {
      // `--run ID` the store does not hold: "not found" now, not work this worker "could not prepare"
      if (o.run !== undefined) await backend.openRun(o.run);
      log = createRunLog(path.join(out, `worker-${os.hostname()}-${process.pid}.jsonl`));
      view = createProgressView(progressStream(), { live: false });
    } catch (err) {
      await backend.close().catch(() => undefined);
      throw err;
    }
  } catch (err) {
    // what did open is closed (pg-boss's timers would keep the process alive)
    for (const r of await opening) if (r.status === 'fulfilled') await r.value.close().catch(() => undefined);
    throw err;
  }
  const cleanups: Array<() => Promise<void>> = [async () => backend.close()];
  const providers: Array<Provider | null> = [];
  // environment fingerprints being recorded (awaited before the providers close)
  const fingerprints: Array<Promise<void>> = [];
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) process.exit(EXIT.interrupted);
    terminal.stderr(`\n${sig}: stopping after teardown of the current permutation; its job goes back to the queue (again to exit at once)\n`);
    ac.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const onEvent = (e: ProgressEvent) => {
    view.onEvent(e);
    log.event(e);
  };
  try {
    const [queueOpened, leaseOpened] = await opening;
    if (queueOpened.status === 'fulfilled') cleanups.unshift(() => queueOpened.value.close());
    if (leaseOpened.status === 'rejected') throw leaseOpened.reason;
    // the current lease session (a new one replaces a lost one below) is closed at the end
    let lease = leaseOpened.value;
    cleanups.unshift(() => lease.close());
    if (queueOpened.status === 'rejected') throw queueOpened.reason;
    const queue = queueOpened.value;
    // the per-vCenter provisioning limit, held across every worker (endpoint slots in PostgreSQL)
    // (a connection of their own: the calls they guard write the ledger through the store's pool)
    const slots = endpointSlots(connection, { applicationName: `storsweep worker ${os.hostname()}:${process.pid} slots`.slice(0, 63) });
    cleanups.unshift(() => slots.close());
    const pool = createEndpointPool({ gate: (key, max, signal) => slots.gate(key, max, signal) });
    const prepared = new Map<string, WorkerRun | null>();
    // runs whose preparation failed, and why: tried again later (a blip is not remembered for good)
    const unprepared = new Map<string, { error: string; at: number }>();
    const me = thisMachine();

    const prepareRun = async (runId: string): Promise<WorkerRun | null> => {
      const store = await backend.openRun(runId, { runDir: path.join(out, runId) });
      const q = await store.getMeta<QueueMeta>(QUEUE_META);
      if (!q) return null; // not a submitted run (`run --store`): nothing queued
      const meta = await store.meta();
      const plan = await store.plan();
      // read with the plan: each permutation is checked against it before it runs (run/executor.ts)
      const confirmation = await readConfirmed(store);
      const names = meta.targets ?? [meta.target];
      const reach = names.filter((n) => allowed.includes(n));
      let groups = q.groups.filter((g) => g.targets.every((t) => reach.includes(t)));
      // a target that is "this machine" to the submitter is worked there only (said once per run)
      const from = q.submittedFrom;
      if (from && from.id !== me.id && q.machineBound?.length) {
        const bound = new Set(q.machineBound);
        const theirs = groups.filter((g) => g.targets.some((t) => bound.has(t)));
        if (theirs.length) {
          const ts = theirs.flatMap((g) => g.targets.filter((t) => bound.has(t)));
          terminal.stderr(`note: run ${visible(runId)}: ${ts.map(visible).join(', ')} ${ts.length === 1 ? 'is' : 'are'} the submitting machine itself (${visible(from.host)}: a local target, or reached at a loopback address); only a worker there takes ${ts.length === 1 ? 'its' : 'their'} permutations, not this one (${visible(me.host)})\n`);
          groups = groups.filter((g) => !theirs.includes(g));
        }
      }
      if (!groups.length) return null;
      const mine = groups.flatMap((g) => g.targets);
      checkStoredPlan(plan, store.where);
      const diffs = factDifferences(meta, mine, plan, measurementFacts(mine, inv, plan));
      if (diffs.length) {
        terminal.stderr(`error: run ${runId}: ${inv.file} describes its targets differently from the inventory it was submitted with (${visible(meta.inventoryFile)}); not working on it:\n  ${diffs.join('\n  ')}\n`);
        return null;
      }
      // the per-vCenter limit is counted in shared slots 0..max-1: a worker with a larger max would send more
      const limits = limitDifferences(q.endpointLimits, endpointLimits(mine, inv));
      if (limits.length) {
        terminal.stderr(`error: run ${runId}: ${inv.file} sets a different provisioning limit (vcenters: maxConcurrent) from the inventory the run was submitted with (${visible(meta.inventoryFile)}); every worker must use the same, not working on it:\n  ${limits.join('\n  ')}\n`);
        return null;
      }
      const comps: Map<string, Composition> = composeTargets(mine, inv, inv.file, pool);
      const connected = new Map<string, Promise<TargetEndpoints>>();
      const stepSec = o.stepTimeout ?? meta.timeouts?.stepSec;
      await restoreJobs(runId, plan, store, q);
      allGroups.set(runId, q.groups);
      return {
        plan,
        store,
        confirmation,
        // a permutation's writes on the lease session (LeaseSession.writer): fenced by the server
        storeUnder: (writer) => backend.runWritingThrough(runId, { runDir: path.join(out, runId) }, writer),
        groups,
        // the run's lock, shared with every other worker: `cleanup` (which needs it alone) is refused
        // while any worker works the run, and no permutation is started while cleanup runs
        keys: (t) => [sharedKey(runLockKey(runId)), ...(comps.get(t)?.sharedResources ?? []).map((r) => r.key)],
        endpoints: (t) => {
          let p = connected.get(t);
          if (!p) {
            const comp = comps.get(t)!;
            p = comp.connectProvider().then(async (provider) => {
              providers.push(provider);
              // beside the work, not before it: its own guest connection and tool version call
              fingerprints.push(recordFingerprint(runId, plan, store, t, provider, comp));
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
          // a step that finds something not ours where it writes goes on only if the run was confirmed for it
          ...(meta.confirmedDestroy ? { confirmedDestroy: meta.confirmedDestroy } : {}),
        },
      };
    };

    /**
     * The run's unfinished permutations whose job is on no queue (pg-boss archived it, or it was
     * removed by hand) are queued again, and the run's journal and this worker say so. Not while
     * `submit` is still queueing.
     */
    const restoredAt = new Map<string, number>();
    const restoreJobs = async (runId: string, plan: RunPlan, store: WorkerRun['store'], q: QueueMeta): Promise<void> => {
      restoredAt.set(runId, performance.now());
      if (q.enqueued === false) return;
      try {
        const unfinished = new Set((await store.permutations()).filter((p) => p.status === 'pending' || p.status === 'running').map((p) => p.permutationId));
        const back = await queue.restore(plan, q.groups, unfinished);
        if (!back.length) return;
        await store.appendJournal(null, 'worker', 'jobs restored', { worker: `${me.host}:${process.pid}`, permutations: back });
        onEvent({ type: 'message', level: 'warn', text: `run ${runId}: ${back.length} unfinished permutation(s) had no job on the queue (archived by pg-boss or removed); queued again` });
      } catch (err) {
        // looked at again at the next check
        restoredAt.delete(runId);
        onEvent({ type: 'message', level: 'warn', text: `run ${runId}: cannot check the run's jobs on the queue: ${redact(errorMessage(err))}` });
      }
    };

    /**
     * What connecting to `target` tells of its environment, added to the run's fingerprint (as
     * `run` records it at connect), so `compare` can warn about environment differences: by the
     * first worker to connect to it (a target the fingerprint already has is not asked again); a
     * fact another worker recorded differently at the same time is reported (the run mixes both).
     */
    const recordFingerprint = async (runId: string, plan: RunPlan, store: WorkerRun['store'], target: string, provider: Provider | null, comp: Composition): Promise<void> => {
      try {
        const key = plan.targets ? `${target}/workload.tool` : 'workload.tool';
        if ((await store.meta()).fingerprint?.[key] !== undefined) return;
        const facts = await targetFacts([[plan.targets ? target : '', { provider, comp }]]);
        const kept = await backend.addFingerprint(runId, facts);
        const differ = Object.keys(facts).filter((k) => kept[k] !== facts[k]);
        if (differ.length) {
          const text = `run ${runId}: ${visible(target)} reads differently from what another worker recorded for this run: ${differ.map((k) => `${visible(k)}: ${visible(kept[k] ?? '')} (recorded) → ${visible(facts[k]!)} (here)`).join('; ')}`;
          await store.appendJournal(null, 'worker', 'environment differs', { worker: `${me.host}:${process.pid}`, target, recorded: Object.fromEntries(differ.map((k) => [k, kept[k]])), here: Object.fromEntries(differ.map((k) => [k, facts[k]])) });
          onEvent({ type: 'message', level: 'warn', text });
        }
      } catch (err) {
        // best effort, like `run`'s: the permutation goes on without it
        onEvent({ type: 'message', level: 'warn', text: `run ${runId}: the environment fingerprint of ${visible(target)} was not recorded: ${redact(errorMessage(err))}` });
      }
    };

    /**
     * A run this worker worked on whose every permutation is now final: its queues go, deleted by
     * the first worker to see it so at its next look at the runs (after the last job: at once with
     * --until-idle, within seconds otherwise); the counts come with the list of runs, so this costs
     * nothing per permutation. `cleanup` does it for a run whose workers are gone. One worker does
     * it: the others, seeing the run end at the same moment, find its key held and go on (an
     * --until-idle worker exits) instead of queueing behind the deleter's lock on the job table; a
     * deleter that dies leaves the rest to `cleanup`, as before.
     */
    const allGroups = new Map<string, QueueGroup[]>();
    const finished = new Set<string>();
    const finish = async (run: WorkerRun): Promise<void> => {
      const id = run.plan.runId;
      finished.add(id);
      try {
        const release = await lease.tryHold([`queues of ${id}`]);
        if (!release) return;
        try {
          const deleted = await queue.deleteQueues(allGroups.get(id) ?? run.groups);
          if (deleted.length) await run.store.appendJournal(null, 'worker', 'queues deleted', { worker: `${me.host}:${process.pid}`, queues: deleted });
        } finally {
          await release();
        }
      } catch (err) {
        onEvent({ type: 'message', level: 'warn', text: `run ${id}: its queues were not deleted (storsweep cleanup does it): ${redact(errorMessage(err))}` });
      }
    };

    const runs = async (fresh = false): Promise<WorkerRun[]> => {
      const listed = o.run ? null : await backend.runs();
      const ids = listed ? listed.filter((r) => r.counts.pending + r.counts.running > 0 || prepared.has(r.runId)).map((r) => r.runId) : [o.run!];
      const out: WorkerRun[] = [];
      for (const id of ids) {
        const done = prepared.get(id);
        if (done && !finished.has(id)) {
          const c = listed ? listed.find((r) => r.runId === id)?.counts : await done.store.counts();
          if (c && c.pending + c.running === 0) await finish(done);
        }
        if (finished.has(id)) continue;
        const failed = unprepared.get(id);
        if (!prepared.has(id) && (!failed || fresh || performance.now() - failed.at > PREPARE_RETRY_MS)) {
          try {
            prepared.set(id, await prepareRun(id));
            if (failed) terminal.stderr(`worker: run ${visible(id)} prepared now; working on it\n`);
            unprepared.delete(id);
          } catch (err) {
            const error = redact(errorMessage(err));
            if (failed?.error !== error) terminal.stderr(`error: run ${visible(id)}: ${error}; not working on it (trying again in ${PREPARE_RETRY_MS / 1000} s)\n`);
            unprepared.set(id, { error, at: performance.now() });
          }
        }
        const r = prepared.get(id);
        if (r && performance.now() - (restoredAt.get(id) ?? 0) > RESTORE_EVERY_MS) {
          const q = await r.store.getMeta<QueueMeta>(QUEUE_META);
          if (q) await restoreJobs(id, r.plan, r.store, q);
        }
        if (r) out.push(r);
      }
      return out;
    };

    const total: WorkerSummary = { done: 0, failed: 0, alreadyDone: 0, takenOver: 0, givenBack: 0, abandoned: 0, refused: 0, queueMs: 0, executeMs: 0, storeWrites: 0, storeWritesBehind: 0, storeWriteQueuedMs: 0, storeWriteMs: 0, waitMs: 0 };
    let lostAt: number | null = null;
    for (;;) {
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
        ...(o.renewEveryMs !== undefined ? { renewEveryMs: o.renewEveryMs } : {}),
        ...(o.renewSec !== undefined ? { renewSec: o.renewSec } : {}),
      });
      for (const k of Object.keys(total) as Array<keyof WorkerSummary>) total[k] += summary[k];
      if (!lease.lostReason || ac.signal.aborted || o.once) break;
      // lost: a new lease session, with backoff, then on (this worker may take its own permutation over)
      lostAt ??= performance.now();
      await lease.close();
      let delay = 500;
      for (;;) {
        try {
          lease = await openLease();
          break;
        } catch (err) {
          if (ac.signal.aborted || performance.now() - lostAt > RECONNECT_GIVE_UP_MS) throw err;
          terminal.stderr(`worker: cannot open a new lease session on ${where} (${redact(errorMessage(err))}); trying again in ${(delay / 1000).toFixed(1)} s\n`);
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 30_000);
        }
      }
      terminal.stderr(`worker: a new lease session on ${where}; going on\n`);
      lostAt = null;
    }
    const summary = total;
    // --until-idle: a run with work this worker could not prepare is not idle
    const blocked = o.untilIdle ? [...unprepared] : [];
    if (o.json) terminal.stdout(jsonText(summary) + '\n');
    else terminal.stderr(`worker: ${summary.done} permutation(s) done, ${summary.failed} failed, ${summary.alreadyDone} already done, ${summary.takenOver} taken over from gone workers, ${summary.givenBack} given back, ${summary.abandoned} left to a worker taking over${summary.refused ? `, ${summary.refused} job(s) refused` : ''}\n`);
    for (const [id, e] of blocked) terminal.stderr(`error: run ${visible(id)} still has work this worker could not prepare: ${e.error}\n`);
    if (blocked.length) return EXIT.failure;
    if (lease.lostReason && o.once && !ac.signal.aborted) return EXIT.failure;
    if (ac.signal.aborted) return EXIT.interrupted;
    return summary.failed ? EXIT.failure : EXIT.ok;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await Promise.allSettled(fingerprints);
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

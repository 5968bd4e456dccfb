// The runs a worker works on: each submitted run prepared once (its groups this worker reaches, its
// configuration checked against the submitter's), its lost jobs queued again, its environment
// fingerprint recorded, and its queues deleted when it is finished. run/worker.ts asks `runs()`.
import path from 'node:path';
import type { LoadedInventory } from '../../config/index.ts';
import { redact } from '../../input/secrets.ts';
import type { RunPlan } from '../../contract/plan.ts';
import type { EndpointPool, Provider } from '../../contract/provider.ts';
import { errorMessage } from '../../errors.ts';
import type { LeaseSession } from '../../results/pg-coordination.ts';
import { sharedKey } from '../../results/pg-coordination.ts';
import { runLockKey, type PgRunStoreBackend } from '../../results/pg-store.ts';
import type { RunMeta } from '../../results/port.ts';
import { readConfirmed } from '../../results/confirmation.ts';
import type { TargetEndpoints } from '../../run/executor.ts';
import type { ProgressEvent } from '../../run/progress.ts';
import type { WorkerRun } from '../../run/worker.ts';
import type { QueueGroup, WorkQueue } from '../../run/work-queue.ts';
import { visible } from '../../text/visible.ts';
import { composeTargets, endpointLimits, measurementFacts, usedFacts, type Composition } from '../compose.ts';
import type { Notify } from '../notify.ts';
import { targetFacts } from '../run/fingerprint.ts';
import { checkStoredPlan } from '../run/resume-checks.ts';
import { QUEUE_META, type Machine, type QueueMeta } from './queue-meta.ts';

/** A run whose preparation failed is tried again after this long (or at once before an --until-idle worker decides it is idle). */
const PREPARE_RETRY_MS = 10_000;
/** How often a worker checks that every unfinished permutation of a run it works on still has its job. */
const RESTORE_EVERY_MS = 10 * 60_000;

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

/** What the runs of one worker share: who it is, what it reaches, where it writes. */
export interface WorkerContext {
  inv: LoadedInventory;
  /** the targets this worker may work (`--targets`, else every target of its inventory) */
  allowed: readonly string[];
  /** `--run`: only this run */
  run?: string;
  /** where raw output goes: `<out>/<runId>` */
  out: string;
  me: Machine;
  backend: PgRunStoreBackend;
  queue: WorkQueue;
  pool: EndpointPool;
  execute: { stepTimeout?: number; retries?: number };
  onEvent: (e: ProgressEvent) => void;
  note: Notify;
  /** how long a run whose preparation failed waits before it is tried again (default PREPARE_RETRY_MS; a test's) */
  prepareRetryMs?: number;
}

type Store = WorkerRun['store'];

export class WorkerRuns {
  /** the current lease session (a new one replaces a lost one) */
  lease: LeaseSession;
  readonly providers: Array<Provider | null> = [];
  /** environment fingerprints being recorded (awaited before the providers close) */
  readonly fingerprints: Array<Promise<void>> = [];
  /** runs whose preparation failed, and why: tried again later (a blip is not remembered for good) */
  readonly unprepared = new Map<string, { error: string; at: number }>();
  private readonly prepared = new Map<string, WorkerRun | null>();
  private readonly restoredAt = new Map<string, number>();
  private readonly allGroups = new Map<string, QueueGroup[]>();
  private readonly finished = new Set<string>();

  constructor(
    private readonly c: WorkerContext,
    lease: LeaseSession,
  ) {
    this.lease = lease;
  }

  private get workerName(): string {
    return `${this.c.me.host}:${process.pid}`;
  }

  /** The runs with work this worker may do; `fresh`: a run whose preparation failed is tried again now. */
  async runs(fresh = false): Promise<WorkerRun[]> {
    const listed = this.c.run ? null : await this.c.backend.runs();
    const ids = listed ? listed.filter((r) => r.counts.pending + r.counts.running > 0 || this.prepared.has(r.runId)).map((r) => r.runId) : [this.c.run!];
    const out: WorkerRun[] = [];
    for (const id of ids) {
      const done = this.prepared.get(id);
      if (done && !this.finished.has(id)) {
        const c = listed ? listed.find((r) => r.runId === id)?.counts : await done.store.counts();
        if (c && c.pending + c.running === 0) await this.finish(done);
      }
      if (this.finished.has(id)) continue;
      await this.prepareOnce(id, fresh);
      const r = this.prepared.get(id);
      if (r && performance.now() - (this.restoredAt.get(id) ?? 0) > RESTORE_EVERY_MS) {
        const q = await r.store.getMeta<QueueMeta>(QUEUE_META);
        if (q) await this.restoreJobs(id, r.plan, r.store, q);
      }
      if (r) out.push(r);
    }
    return out;
  }

  /** A run not prepared yet is prepared (one that failed: again after prepareRetryMs, or when `fresh`). */
  private async prepareOnce(id: string, fresh: boolean): Promise<void> {
    const failed = this.unprepared.get(id);
    const retryMs = this.c.prepareRetryMs ?? PREPARE_RETRY_MS;
    if (this.prepared.has(id) || (failed && !fresh && performance.now() - failed.at <= retryMs)) return;
    try {
      this.prepared.set(id, await this.prepareRun(id));
      if (failed) this.c.note(`worker: run ${visible(id)} prepared now; working on it\n`);
      this.unprepared.delete(id);
    } catch (err) {
      const error = redact(errorMessage(err));
      if (failed?.error !== error) this.c.note(`error: run ${visible(id)}: ${error}; not working on it (trying again in ${retryMs / 1000} s)\n`);
      this.unprepared.set(id, { error, at: performance.now() });
    }
  }

  /** The groups of a submitted run this worker works: every target reached, none bound to the submitting machine elsewhere. */
  private groupsFor(runId: string, meta: RunMeta, q: QueueMeta): QueueGroup[] {
    const names = meta.targets ?? [meta.target];
    const reach = names.filter((n) => this.c.allowed.includes(n));
    const groups = q.groups.filter((g) => g.targets.every((t) => reach.includes(t)));
    // a target that is "this machine" to the submitter is worked there only (said once per run)
    const from = q.submittedFrom;
    const me = this.c.me;
    if (!from || from.id === me.id || !q.machineBound?.length) return groups;
    const bound = new Set(q.machineBound);
    const theirs = groups.filter((g) => g.targets.some((t) => bound.has(t)));
    if (!theirs.length) return groups;
    const ts = theirs.flatMap((g) => g.targets.filter((t) => bound.has(t)));
    this.c.note(`note: run ${visible(runId)}: ${ts.map(visible).join(', ')} ${ts.length === 1 ? 'is' : 'are'} the submitting machine itself (${visible(from.host)}: a local target, or reached at a loopback address); only a worker there takes ${ts.length === 1 ? 'its' : 'their'} permutations, not this one (${visible(me.host)})\n`);
    return groups.filter((g) => !theirs.includes(g));
  }

  /** Why this worker's inventory may not work the run (it measures or limits differently), or null. */
  private refusal(runId: string, meta: RunMeta, plan: RunPlan, q: QueueMeta, mine: readonly string[]): string | null {
    const inv = this.c.inv;
    const diffs = factDifferences(meta, mine, plan, measurementFacts(mine, inv, plan));
    if (diffs.length) return `error: run ${runId}: ${inv.file} describes its targets differently from the inventory it was submitted with (${visible(meta.inventoryFile)}); not working on it:\n  ${diffs.join('\n  ')}\n`;
    // the per-vCenter limit is counted in shared slots 0..max-1: a worker with a larger max would send more
    const limits = limitDifferences(q.endpointLimits, endpointLimits(mine, inv));
    if (limits.length) return `error: run ${runId}: ${inv.file} sets a different provisioning limit (an endpoint's maxConcurrent) from the inventory the run was submitted with (${visible(meta.inventoryFile)}); every worker must use the same, not working on it:\n  ${limits.join('\n  ')}\n`;
    return null;
  }

  private async prepareRun(runId: string): Promise<WorkerRun | null> {
    const { backend, out } = this.c;
    const store = await backend.openRun(runId, { runDir: path.join(out, runId) });
    const q = await store.getMeta<QueueMeta>(QUEUE_META);
    if (!q) return null; // not a submitted run (`run --store`): nothing queued
    const meta = await store.meta();
    const plan = await store.plan();
    // read with the plan: each permutation is checked against it before it runs (run/executor.ts)
    const confirmation = await readConfirmed(store);
    const groups = this.groupsFor(runId, meta, q);
    if (!groups.length) return null;
    const mine = groups.flatMap((g) => g.targets);
    checkStoredPlan(plan, store.where);
    const refused = this.refusal(runId, meta, plan, q, mine);
    if (refused) {
      this.c.note(refused);
      return null;
    }
    const comps: Map<string, Composition> = composeTargets(mine, this.c.inv, this.c.inv.file, this.c.pool);
    const stepSec = this.c.execute.stepTimeout ?? meta.timeouts?.stepSec;
    await this.restoreJobs(runId, plan, store, q);
    this.allGroups.set(runId, q.groups);
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
      endpoints: this.connector(runId, plan, store, comps),
      execute: {
        ...(stepSec !== undefined ? { stepTimeoutMs: stepSec * 1000 } : {}),
        ...(meta.timeouts?.workloadSlackSec !== undefined ? { workloadSlackSec: meta.timeouts.workloadSlackSec } : {}),
        ...(this.c.execute.retries !== undefined ? { retry: { retries: this.c.execute.retries } } : {}),
        // a step that finds something not ours where it writes goes on only if the run was confirmed for it
        ...(meta.confirmedDestroy ? { confirmedDestroy: meta.confirmedDestroy } : {}),
      },
    };
  }

  /** A target's provider and workload, connected on first use (a failed connection is tried again next time). */
  private connector(runId: string, plan: RunPlan, store: Store, comps: Map<string, Composition>): (t: string) => Promise<TargetEndpoints> {
    const connected = new Map<string, Promise<TargetEndpoints>>();
    return (t) => {
      let p = connected.get(t);
      if (!p) {
        const comp = comps.get(t)!;
        p = comp.connectProvider().then(async (provider) => {
          this.providers.push(provider);
          // beside the work, not before it: its own guest connection and tool version call
          this.fingerprints.push(this.recordFingerprint(runId, plan, store, t, provider, comp));
          return { provider, workload: comp.workload };
        });
        p.catch(() => connected.delete(t));
        connected.set(t, p);
      }
      return p;
    };
  }

  /**
   * The run's unfinished permutations whose job is on no queue (pg-boss archived it, or it was
   * removed by hand) are queued again, and the run's journal and this worker say so. Not while
   * `submit` is still queueing.
   */
  private async restoreJobs(runId: string, plan: RunPlan, store: Store, q: QueueMeta): Promise<void> {
    this.restoredAt.set(runId, performance.now());
    if (q.enqueued === false) return;
    try {
      const unfinished = new Set((await store.permutations()).filter((p) => p.status === 'pending' || p.status === 'running').map((p) => p.permutationId));
      const back = await this.c.queue.restore(plan, q.groups, unfinished);
      if (!back.length) return;
      await store.appendJournal(null, 'worker', 'jobs restored', { worker: this.workerName, permutations: back });
      this.c.onEvent({ type: 'message', level: 'warn', text: `run ${runId}: ${back.length} unfinished permutation(s) had no job on the queue (archived by pg-boss or removed); queued again` });
    } catch (err) {
      // looked at again at the next check
      this.restoredAt.delete(runId);
      this.c.onEvent({ type: 'message', level: 'warn', text: `run ${runId}: cannot check the run's jobs on the queue: ${redact(errorMessage(err))}` });
    }
  }

  /**
   * What connecting to `target` tells of its environment, added to the run's fingerprint (as
   * `run` records it at connect), so `compare` can warn about environment differences: by the
   * first worker to connect to it (a target the fingerprint already has is not asked again); a
   * fact another worker recorded differently at the same time is reported (the run mixes both).
   */
  private async recordFingerprint(runId: string, plan: RunPlan, store: Store, target: string, provider: Provider | null, comp: Composition): Promise<void> {
    try {
      const key = plan.targets ? `${target}/workload.tool` : 'workload.tool';
      if ((await store.meta()).fingerprint?.[key] !== undefined) return;
      const facts = await targetFacts([[plan.targets ? target : '', { provider, comp }]]);
      const kept = await this.c.backend.addFingerprint(runId, facts);
      const differ = Object.keys(facts).filter((k) => kept[k] !== facts[k]);
      if (differ.length) {
        const text = `run ${runId}: ${visible(target)} reads differently from what another worker recorded for this run: ${differ.map((k) => `${visible(k)}: ${visible(kept[k] ?? '')} (recorded) → ${visible(facts[k]!)} (here)`).join('; ')}`;
        await store.appendJournal(null, 'worker', 'environment differs', { worker: this.workerName, target, recorded: Object.fromEntries(differ.map((k) => [k, kept[k]])), here: Object.fromEntries(differ.map((k) => [k, facts[k]])) });
        this.c.onEvent({ type: 'message', level: 'warn', text });
      }
    } catch (err) {
      // best effort, like `run`'s: the permutation goes on without it
      this.c.onEvent({ type: 'message', level: 'warn', text: `run ${runId}: the environment fingerprint of ${visible(target)} was not recorded: ${redact(errorMessage(err))}` });
    }
  }

  /**
   * A run this worker worked on whose every permutation is now final: its queues go, deleted by
   * the first worker to see it so at its next look at the runs (after the last job: at once with
   * --until-idle, within seconds otherwise); the counts come with the list of runs, so this costs
   * nothing per permutation. `cleanup` does it for a run whose workers are gone. One worker does
   * it: the others, seeing the run end at the same moment, find its key held and go on (an
   * --until-idle worker exits) instead of queueing behind the deleter's lock on the job table; a
   * deleter that dies leaves the rest to `cleanup`, as before.
   */
  private async finish(run: WorkerRun): Promise<void> {
    const id = run.plan.runId;
    this.finished.add(id);
    try {
      const release = await this.lease.tryHold([`queues of ${id}`]);
      if (!release) return;
      try {
        const deleted = await this.c.queue.deleteQueues(this.allGroups.get(id) ?? run.groups);
        if (deleted.length) await run.store.appendJournal(null, 'worker', 'queues deleted', { worker: this.workerName, queues: deleted });
      } finally {
        await release();
      }
    } catch (err) {
      this.c.onEvent({ type: 'message', level: 'warn', text: `run ${id}: its queues were not deleted (storsweep cleanup does it): ${redact(errorMessage(err))}` });
    }
  }
}

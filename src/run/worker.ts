// `storsweep worker`'s loop: take a permutation from a target group this worker can reach, hold
// the group's lease for its whole span (provision, workload, teardown), run it with the executor
// (the same executeRun as `run`, given a plan of that one permutation), then complete its job.
// The lease is taken per permutation, not per group: every worker moves between the groups with
// work, so the groups progress together and the sweep ends within about one permutation across
// workers (a worker draining one group at a time could end a whole group after the others).
//
// Why this is safe across workers (docs/architecture.md, "Several controllers"):
// - one worker at a time per group: its lease keys (the group's queue and every resource key its
//   targets use: VM, guest, test file, LUN…) are advisory locks on the worker's lease session;
// - a job is fetched only under its group's lease, so an active job found under the lease is a
//   dead worker's: it is put back and redone. The executor sees the permutation `running` in the
//   shared store and does what `run --resume` does: stops the run's leftover tools on the target,
//   tears down what the ledger says was sent (the teardown rules apply unchanged), forgets its
//   partial results, redoes it;
// - the lease guards everything the worker does for a permutation (docs/architecture.md, "What the
//   lease guarantees"): jobs are fetched, completed and given back ON the lease session (they take
//   effect only while it holds its locks), the executor consults it before every provider call and
//   store write (ExecuteOptions.lease), and once it is lost the worker touches nothing more of that
//   permutation — no teardown, no ledger write, no give-back: the job stays active, and the worker
//   that next holds the group takes it over and cleans up from the ledger;
// - a job is run only when it belongs to the group whose lease is held (its run, its permutation's
//   target): anything else found in a queue is cancelled and journaled, never run.
import { errorMessage } from '../errors.ts';
import type { RunPlan } from '../contract/plan.ts';
import type { RunStore } from '../results/port.ts';
import type { Confirmed } from '../results/confirmation.ts';
import type { LeaseSession } from '../results/pg-coordination.ts';
import type { PgWriter } from '../results/pg-store.ts';
import { executeRun, type ExecuteOptions, type RunSummary, type TargetEndpoints } from './executor.ts';
import { KeptGuests } from './worker-guests.ts';
import type { ProgressEvent } from './progress.ts';
import type { QueueGroup, WorkQueue } from './work-queue.ts';

/** A run this worker can work on, as the composition root prepared it. */
export interface WorkerRun {
  plan: RunPlan;
  store: RunStore;
  /**
   * The run's store writing through `writer` (the lease session's, LeaseSession.writer): what the
   * worker writes for a permutation — its claim, a refusal, everything the executor records — can
   * only take effect while the session holding its lease lives. Absent: `store`.
   */
  storeUnder?(writer: PgWriter): RunStore;
  /** the groups whose every target this worker reaches */
  groups: QueueGroup[];
  /** the lease keys of a target beyond its group: what it shares with anything (its resources) */
  keys(target: string): readonly string[];
  /** a target's provider and workload endpoint, connected on first use */
  endpoints(target: string): Promise<TargetEndpoints>;
  execute?: Pick<ExecuteOptions, 'stepTimeoutMs' | 'workloadSlackSec' | 'retry' | 'sleep' | 'confirmedDestroy'>;
  /** what the run was confirmed for, read with `plan` (the executor checks each permutation against it; absent: it reads it) */
  confirmation?: Confirmed;
}

export interface WorkerOptions {
  queue: WorkQueue;
  lease: LeaseSession;
  /**
   * the runs with work this worker may do (asked again every few seconds: new submissions are
   * picked up); `fresh`: before deciding it is idle (a run whose preparation failed is tried again now)
   */
  runs(fresh?: boolean): Promise<WorkerRun[]>;
  signal: AbortSignal;
  onEvent?: (e: ProgressEvent) => void;
  /** stop after one permutation */
  once?: boolean;
  /** stop when no queue this worker can work on has anything left (waiting or active elsewhere) */
  untilIdle?: boolean;
  /** permutations at once (different groups); default 1 */
  concurrency?: number;
  pollMs?: number;
  /** who this worker is, in the run's journal (`worker claimed`): host:pid */
  name: string;
  /**
   * While a permutation runs, its job's pg-boss expiry is pushed back every `renewEveryMs` to at
   * least `renewSec` from then (WorkQueue.renew): a permutation longer than the queue's expiry is
   * never put back and redone while it runs. Defaults: every 5 minutes, 1 hour.
   */
  renewEveryMs?: number;
  renewSec?: number;
}

export interface WorkerSummary {
  /** permutations this worker ran to the end */
  done: number;
  failed: number;
  /** jobs fetched again whose permutation was done already (completed, not run again) */
  alreadyDone: number;
  /** jobs of dead workers put back to be redone */
  takenOver: number;
  /** jobs given back unfinished (interrupted), counted only when giving back succeeded */
  givenBack: number;
  /** permutations left to whoever takes over: the lease was lost, or giving back failed (the job stays active) */
  abandoned: number;
  /** jobs found in a queue that do not belong to it (another run, another group's target): cancelled, never run */
  refused: number;
  /**
   * Milliseconds spent on the queue and lease (looking for a permutation, holding its lease,
   * fetching, claiming, completing, releasing) in every pass, those that found nothing included,
   * and in the executor: the bench's overhead
   */
  queueMs: number;
  executeMs: number;
  /**
   * The permutations' store writes on the lease session (LeaseSession.writeStats): how many, how many
   * found it busy, and the ms they waited for it and ran on it — what the slots' sharing costs
   */
  storeWrites: number;
  storeWritesBehind: number;
  storeWriteQueuedMs: number;
  storeWriteMs: number;
  /**
   * Milliseconds between passes that found nothing: the pause before looking again (pollMs) and,
   * with untilIdle, the look at whether anything is left at all. Not per permutation: the time a
   * worker had nothing it could take (every group with work held by another worker, or the end).
   */
  waitMs: number;
}

/** Guest connections a worker keeps open across permutations (the least recently used beyond are closed). */
const GUESTS_KEPT = 32;

/** How long a look at every queue is used again before the next (ms). */
const STATUS_REUSE_MS = 1000;

/** How often the list of runs with work is asked again. */
const RUNS_REFRESH_MS = 5000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

export async function workLoop(o: WorkerOptions): Promise<WorkerSummary> {
  return new WorkLoop(o).run();
}

type Permutation = RunPlan['permutations'][number];
type Job = NonNullable<Awaited<ReturnType<WorkQueue['fetch']>>>;

/** One worker's loop over the queues (workLoop): its slots, its caches and what it counted. */
class WorkLoop {
  private readonly summary: WorkerSummary = { done: 0, failed: 0, alreadyDone: 0, takenOver: 0, givenBack: 0, abandoned: 0, refused: 0, queueMs: 0, executeMs: 0, storeWrites: 0, storeWritesBehind: 0, storeWriteQueuedMs: 0, storeWriteMs: 0, waitMs: 0 };
  /** the worker's own stop, or its lease lost: either ends the loop (the caller may open a new lease) */
  private readonly stop: AbortSignal;
  private finished = false;
  /** each run's permutations by id (a job names one; not a search of the plan per job) */
  private readonly index = new WeakMap<WorkerRun, Map<string, Permutation>>();
  private readonly guests = new KeptGuests<WorkerRun>(GUESTS_KEPT);
  /** the runs, asked again at most every few seconds (new submissions are picked up), not every pass */
  private runsCache: { at: number; runs: WorkerRun[] } | null = null;
  /** the last look at every queue, used again for STATUS_REUSE_MS (what it led to is counted off it) */
  private statusCache: { at: number; key: string; map: Map<string, { waiting: number; active: number }> } | null = null;

  constructor(private readonly o: WorkerOptions) {
    this.stop = AbortSignal.any([o.signal, o.lease.signal]);
  }

  private get db() {
    return this.o.lease.db;
  }

  private emit(e: ProgressEvent): void {
    try {
      this.o.onEvent?.(e);
    } catch {
      /* the view is best effort */
    }
  }

  async run(): Promise<WorkerSummary> {
    const writesBefore = { ...this.o.lease.writeStats };
    try {
      await Promise.all(Array.from({ length: Math.max(1, this.o.concurrency ?? 1) }, () => this.slot()));
    } finally {
      await this.guests.closeAll();
      const w = this.o.lease.writeStats;
      this.summary.storeWrites = w.writes - writesBefore.writes;
      this.summary.storeWritesBehind = w.behind - writesBefore.behind;
      this.summary.storeWriteQueuedMs = w.queuedMs - writesBefore.queuedMs;
      this.summary.storeWriteMs = w.runMs - writesBefore.runMs;
    }
    return this.summary;
  }

  private async slot(): Promise<void> {
    const { o, summary } = this;
    while (!this.finished && !this.stop.aborted) {
      let took = false;
      const pass = performance.now();
      // this slot's executor time in the pass (the other slots' runs at the same time are theirs)
      const spent = { ms: 0 };
      try {
        took = await this.tryOne(spent);
      } catch (err) {
        if (o.lease.lostReason || this.stop.aborted) break;
        this.emit({ type: 'message', level: 'error', text: `worker: ${errorMessage(err)}; trying again` });
      } finally {
        // a pass that found nothing is queue time too (its look at the queues, the leases it tried)
        summary.executeMs += spent.ms;
        summary.queueMs += performance.now() - pass - spent.ms;
      }
      if (took && o.once) this.finished = true;
      if (took) continue;
      const waiting = performance.now();
      if (o.untilIdle && (await this.idle())) this.finished = true;
      else await sleep(o.pollMs ?? 1000, this.stop);
      summary.waitMs += performance.now() - waiting;
    }
  }

  private byId(run: WorkerRun): Map<string, Permutation> {
    let m = this.index.get(run);
    if (!m) this.index.set(run, (m = new Map(run.plan.permutations.map((p) => [p.permutationId, p]))));
    return m;
  }

  private async currentRuns(): Promise<WorkerRun[]> {
    if (!this.runsCache || performance.now() - this.runsCache.at > RUNS_REFRESH_MS) this.runsCache = { at: performance.now(), runs: await this.o.runs() };
    return this.runsCache.runs;
  }

  private async idle(): Promise<boolean> {
    this.runsCache = { at: performance.now(), runs: await this.o.runs(true) };
    const queues = this.runsCache.runs.flatMap((r) => r.groups.map((g) => g.queue));
    if (!queues.length) return true;
    // waiting, active, and retries not yet due: all count as work (one query over every queue)
    for (const s of (await this.o.queue.status(queues)).values()) if (s.unfinished > 0) return false;
    return true;
  }

  /**
   * One permutation from a group that has work and whose lease is free; false when none. One look
   * at every queue first (what waits, what is active), so groups with nothing to do cost nothing.
   * The groups are tried most waiting work first (longest-processing-time first: a group's
   * permutations run one after the other, so the group with the most left is the one that can end
   * the sweep last; taking it first keeps the groups level and the end short, instead of a few
   * groups with several permutations left running alone while the other workers have nothing), a
   * group that shows an active job after those without (another worker most likely holds it: its
   * lease is tried last, for a dead worker's job), equal ones in random order, so workers do not
   * all contend for the same one.
   * A look less than STATUS_REUSE_MS old is used again (that query, over every queue's partition of
   * pg-boss's job table, is the costliest statement of a permutation); a group it shows with work
   * that has none (taken by another worker since) costs a lease taken and given back and an empty
   * fetch, and when the reused look leads to nothing, a fresh one is taken at once.
   */
  private async tryOne(spent: { ms: number }): Promise<boolean> {
    const runs = await this.currentRuns();
    const all = runs.flatMap((run) => run.groups.map((g) => ({ run, g })));
    if (!all.length) return false;
    const queues = all.map((x) => x.g.queue);
    const key = queues.join('\n');
    let reused = this.statusCache !== null && this.statusCache.key === key && performance.now() - this.statusCache.at < STATUS_REUSE_MS;
    for (;;) {
      if (!reused) this.statusCache = { at: performance.now(), key, map: await this.o.queue.status(queues) };
      const status = this.statusCache!.map;
      const order = all
        .map((x) => ({ ...x, st: status.get(x.g.queue), tie: Math.random() }))
        // waiting work, or an active job that may be a dead worker's (whose lease is then free)
        .filter((x) => x.st !== undefined && (x.st.waiting > 0 || x.st.active > 0))
        .sort((a, b) => Number(a.st!.active > 0) - Number(b.st!.active > 0) || b.st!.waiting - a.st!.waiting || a.tie - b.tie);
      for (const { run, g, st } of order) {
        if (this.finished || this.stop.aborted) return false;
        if (st && (await this.tryGroup(run, g, st, spent))) return true;
      }
      if (!reused) return false;
      reused = false;
    }
  }

  /** One permutation of group `g` under its lease, if the lease is free and a job waits; `st` is counted down. */
  private async tryGroup(run: WorkerRun, g: QueueGroup, st: { waiting: number; active: number }, spent: { ms: number }): Promise<boolean> {
    if (st.waiting === 0 && st.active === 0) return false;
    const keys = [`queue ${g.queue}`, ...g.targets.flatMap((t) => run.keys(t))];
    const release = await this.o.lease.tryHold(keys);
    if (!release) return false;
    try {
      if (await this.runOneOf(run, g, st.active > 0, spent)) {
        st.waiting = Math.max(0, st.waiting - 1);
        st.active = 0;
        return true;
      }
      // nothing waiting there now (and no orphan: runOneOf gave any back and fetched again)
      st.waiting = 0;
      st.active = 0;
      return false;
    } finally {
      await release();
    }
  }

  /** Under the lease: an active job here was fetched by a worker that no longer holds it; it is given back. */
  private async takeOverOrphans(run: WorkerRun, g: QueueGroup): Promise<void> {
    const orphans = await this.o.queue.active(g.queue);
    if (!orphans.length) return;
    const n = await this.o.queue.giveBack(g.queue, orphans, 'its worker lost its lease (ended or cut off); taken over', this.db);
    this.summary.takenOver += n;
    if (n) this.emit({ type: 'message', level: 'warn', text: `${run.plan.runId}: taking over ${n} permutation(s) of ${g.targets.join(', ')} whose worker is gone; what they left is cleaned up from the ledger, then they are redone` });
  }

  private async runOneOf(run: WorkerRun, g: QueueGroup, mayHaveOrphans: boolean, spent: { ms: number }): Promise<boolean> {
    const { o } = this;
    if (mayHaveOrphans) await this.takeOverOrphans(run, g);
    const job = await o.queue.fetch(g.queue, this.db);
    if (!job) return false;
    o.lease.check();
    // every write for this job on the lease session, while it holds the group (the server refuses
    // it once that session is gone: a write cannot slip in after another worker took the group over)
    const store = run.storeUnder ? run.storeUnder(o.lease.writer([`queue ${g.queue}`])) : run.store;
    const found = this.jobPermutation(run, g, job);
    if ('refused' in found) {
      this.emit({ type: 'message', level: 'error', text: `${run.plan.runId}: job ${job.id} in ${g.queue} refused, never run: ${found.refused}` });
      await store.appendJournal(null, 'worker', 'job-refused', { worker: o.name, job: job.id, queue: g.queue, reason: found.refused }).catch(() => undefined);
      await o.queue.cancel(g.queue, job.id, this.db);
      this.summary.refused++;
      return true;
    }
    const { perm, target } = found;
    // who works on it, for `status` and for whoever takes it over
    o.lease.check();
    await store.appendJournal(perm.permutationId, 'worker', 'claimed', { worker: o.name, job: job.id });
    const s = await this.execute(run, g, job, store, perm, target, spent);
    await this.guests.used(run, target);
    await this.settle(g, job, perm, s);
    return true;
  }

  /**
   * A job runs only in the group whose lease is held: its run, and its permutation's target one
   * of the group's (a job put in the wrong queue would run under another group's lease, beside
   * the worker that holds its own). Anything else is cancelled and journaled, never run.
   */
  private jobPermutation(run: WorkerRun, g: QueueGroup, job: Job): { perm: Permutation; target: string } | { refused: string } {
    const data = job.data as { runId?: unknown; permutationId?: unknown } | null;
    const perm = data && data.runId === run.plan.runId && typeof data.permutationId === 'string' ? this.byId(run).get(data.permutationId) : undefined;
    const permTarget = perm ? (run.plan.targets ? String(perm.axes.target) : run.plan.target) : undefined;
    if (perm && permTarget !== undefined && g.targets.includes(permTarget)) return { perm, target: permTarget };
    const refused = !data || data.runId !== run.plan.runId ? `it names another run (${JSON.stringify(data?.runId)})` : !perm ? `its permutation ${JSON.stringify(data.permutationId)} is not in the plan` : `its permutation's target ${permTarget} is not one of this queue's group (${g.targets.join(', ')})`;
    return { refused };
  }

  /** The permutation run by the executor (a plan of that one), its job's expiry pushed back meanwhile. */
  private async execute(run: WorkerRun, g: QueueGroup, job: Job, store: RunStore, perm: Permutation, target: string, spent: { ms: number }): Promise<RunSummary> {
    const { o } = this;
    const ends = await run.endpoints(target);
    const plan: RunPlan = { ...run.plan, permutations: [perm] };
    const started = performance.now();
    const done = this.guests.inUse(run, target);
    // its pg-boss expiry pushed back while it runs (on the lease session: only while held)
    const renew = setInterval(() => void o.queue.renew(g.queue, job.id, this.db, o.renewSec ?? 3600).catch(() => undefined), o.renewEveryMs ?? 5 * 60_000);
    try {
      return await executeRun({
        store,
        plan,
        provider: ends.provider,
        workload: ends.workload,
        ...(run.plan.targets ? { targets: { [target]: ends } } : {}),
        signal: o.signal,
        lease: o.lease,
        onEvent: (e) => this.emit(e),
        ...run.execute,
        ...(run.confirmation ? { confirmation: run.confirmation } : {}),
        // the run's leftovers are not counted per permutation (`status` says them); its guests stay connected
        countLeftovers: false,
        guests: this.guests.of(run),
      });
    } finally {
      clearInterval(renew);
      done();
      spent.ms += performance.now() - started;
    }
  }

  /** The job completed, given back, or left to whoever takes it over, as the permutation ended. */
  private async settle(g: QueueGroup, job: Job, perm: Permutation, s: RunSummary): Promise<void> {
    const { o, summary } = this;
    if (o.lease.lostReason) {
      // Nothing more is touched: the job stays active, the permutation `running`; the worker that
      // next holds this group takes it over and cleans up from the ledger.
      summary.abandoned++;
      this.emit({ type: 'message', level: 'error', permutationId: perm.permutationId, text: `${perm.permutationId}: left to the worker that takes it over (${o.lease.lostReason.message})` });
      return;
    }
    if (s.interrupted || s.fatal) {
      // Not finished here: left `running` in the store, the job goes back; the next worker under
      // this lease cleans up and redoes it.
      try {
        if ((await o.queue.giveBack(g.queue, [job.id], s.fatal ?? 'interrupted', this.db)) > 0) summary.givenBack++;
        else this.emit({ type: 'message', level: 'warn', permutationId: perm.permutationId, text: `${perm.permutationId}: its job was no longer active; not given back` });
      } catch (err) {
        summary.abandoned++;
        this.emit({ type: 'message', level: 'error', permutationId: perm.permutationId, text: `${perm.permutationId}: could not give its job back (${errorMessage(err)}); it stays active: the next worker under this group's lease takes it over` });
      }
      return;
    }
    summary.done += s.done;
    summary.alreadyDone += s.skipped;
    summary.failed += s.failed;
    if (!(await o.queue.complete(g.queue, job.id, this.db))) this.emit({ type: 'message', level: 'warn', permutationId: perm.permutationId, text: `${perm.permutationId}: its job was no longer active when completed (pg-boss expired it?); the permutation is recorded ${s.failed ? 'failed' : 'done'} in the store` });
  }
}

// Executes a plan: for each permutation, provision (recording every created object in the ledger
// before and after the call), run the workload's repetitions (each committed atomically with its
// records), and tear down in reverse order in `finally`. A failed permutation is recorded with its
// reason and the sweep goes on (unless failFast). Resuming skips permutations already done and
// cleans up and redoes a half-done one. The function always returns the state it reached.
import { redact } from '../input/secrets.ts';
import { errorLongForm, errorMessage, identityMismatchOf, InternalError, UnsafeOperation } from '../errors.ts';
import type { PermutationPlan, Replication, RunPlan } from '../contract/plan.ts';
import { storeRaw } from '../results/raw.ts';
import { VM_COUNT_AXIS, type ResultRecord } from '../results/record.ts';
import { isStoreLost, type RunStore } from '../results/port.ts';
import { checkPermutationConfirmed, readConfirmed, type Confirmed } from '../results/confirmation.ts';
import { asRunStore, type AnyRunStore } from '../results/sqlite-store.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { connectionLost } from '../ssh/connection-lost.ts';
import { stopGroup, strandedGroupOf, toolOwner, type GroupFiles, type GroupStop } from '../ssh/process-group.ts';
import type { TestOutcome } from '../workloads/passes.ts';
import type { PrefillOutcome } from '../workloads/spec.ts';
import { defaultSleep } from '../workloads/run-fio.ts';
import type { WorkloadProfile, WorkloadTest } from '../workloads/spec.ts';
import { FILL_BLOCK_BYTES } from '../workloads/prefill.ts';
import { writeDataFacts } from '../workloads/write-data.ts';
import type { ProgressEvent } from './progress.ts';
import { DEFAULT_STOP_AFTER_SAME_FAILURE, SameFailureTracker } from './same-failure.ts';
import { ResourceLocks } from './resource-locks.ts';
import { remainingEstimate } from '../plan/estimate.ts';
import { replicationOf } from '../plan/rounds.ts';
import { lastUnit, needsMore, runUnits, type UnitState } from './unit-schedule.ts';
import type { CreatedObject, MeasuredTarget, PlannedStep, Provider, ProviderContext, WorkloadEndpoint } from '../contract/provider.ts';
import type { HostMetrics, HostObserver } from '../contract/host-metrics.ts';
import { scoredWatch } from './scored-watch.ts';
import type { HostProcessStop } from '../contract/host-process.ts';
import { hostStopEvent, hostStopLines } from './host-leftovers.ts';

export type { WorkloadEndpoint } from '../contract/provider.ts';
import { DEFAULT_STEP_TIMEOUT_MS, StepTimedOut, withRetry, withTimeout, type RetryPolicy } from './retry.ts';
import { record, tearDownRow, UNSETTLED_KEY, wasSent } from './teardown.ts';
import { mixHalves } from '../results/mix-halves.ts';
import { memberTargets, memberVmsOf, runMemberWorkload, stopMemberLeftovers } from './vm-members.ts';

const ORPHAN_GRACE_MIN_MS = 60_000;
const ORPHAN_GRACE_MAX_MS = 10 * 60_000;

export interface ExecuteOptions {
  /** the run store port; the synchronous SQLite ResultStore is taken as is */
  store: AnyRunStore;
  plan: RunPlan;
  provider: Provider | null;
  workload: WorkloadEndpoint;
  /** when the plan lists targets: each one's provider and workload (`provider`/`workload` unused) */
  targets?: Record<string, TargetEndpoints>;
  signal: AbortSignal;
  onEvent?: (e: ProgressEvent) => void;
  failFast?: boolean;
  /** leave the last permutation's objects in place */
  keep?: boolean;
  /**
   * What the user confirmed the run may destroy (the run's `confirmedDestroy`, or what a resume
   * confirmed again): handed to every step (ProviderContext.confirmedDestroy). Absent: nothing.
   */
  confirmedDestroy?: readonly string[];
  stepTimeoutMs?: number;
  /**
   * How long a create that timed out after it was sent is waited for before teardown (settleOrphan).
   * Default: the step timeout, at least ORPHAN_GRACE_MIN_MS, at most ORPHAN_GRACE_MAX_MS. Not a user
   * setting: the default, or a test's.
   */
  orphanGraceMs?: number;
  workloadSlackSec?: number;
  retry?: Partial<RetryPolicy>;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Count the run's leftovers at the end (RunSummary.leftovers, the whole run's ledger read);
   * default true. A worker running one permutation of a big run says false: null then (not counted,
   * nothing said; `status` counts them).
   */
  countLeftovers?: boolean;
  /**
   * Guest connections that outlive this call (a worker's, per target, across the permutations it
   * runs, as `run` keeps one per target for the whole sweep): a connection is taken from here and left here when the call ends; one
   * that was lost is closed and removed (the next use connects, and checks, again). Absent: each
   * call connects on first use and closes at its end.
   */
  guests?: GuestConnections;
  /**
   * A worker's lease on the permutations' targets (run/worker.ts). Once it is lost, the run touches
   * nothing more: every store call is refused (LeaseLost), each provider call and guest tool is
   * checked against it right before it goes out, teardown is skipped (the worker that takes over
   * tears down from the ledger), and the run stops as if interrupted, leaving the permutation
   * `running`. Absent (`run`): nothing changes.
   */
  lease?: LeaseGuard;
  /**
   * `confirmedDestroy` was named in this command (`run`, `run --resume`), not read from a store (a
   * worker has the run's recorded set). Only then does teardown act on an object the host shows no
   * mark of the run on (run/teardown.ts): a stored confirmation never stands in for one given now.
   */
  confirmedHere?: boolean;
  /**
   * What the run was confirmed for (results/confirmation.ts), as a worker read it with the run's
   * plan; absent: read from the store. Each permutation is checked against it before anything of
   * it is sent, and refused (recorded failed, nothing touched) when it does not match.
   */
  confirmation?: Confirmed;
}

/** What the executor consults before every provider call and store write of a worker's run. */
export interface LeaseGuard {
  /** aborted, with a LeaseLost as its reason, once the lease is lost */
  readonly signal: AbortSignal;
  /** throws LeaseLost when the lease is lost or can no longer be confirmed held */
  check(): void;
}

/** True when a lease guards the run and it is lost (checked now, not only when the signal fired). */
function leaseLost(lease: LeaseGuard | undefined): boolean {
  if (!lease) return false;
  try {
    lease.check();
    return false;
  } catch {
    return true;
  }
}

/** The store as the run sees it under a lease: every call refused (LeaseLost) once the lease is lost. */
function guardStore(store: RunStore, lease: LeaseGuard): RunStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]): unknown => {
        try {
          lease.check();
        } catch (err) {
          return Promise.reject(err instanceof Error ? err : new Error(String(err)));
        }
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** Connected guests by target name, kept by the caller (ExecuteOptions.guests). */
export type GuestConnections = Map<string, CommandRunner>;

export interface RunSummary {
  done: number;
  failed: number;
  skipped: number;
  pending: number;
  interrupted: boolean;
  /** objects the run left behind; -1: the ledger could not be read; null: not counted (countLeftovers) */
  leftovers: number | null;
  /** set when the sweep stopped because the run directory cannot be written (disk full…) */
  fatal?: string;
  /** set when the sweep stopped because one step failed the same way on several permutations in a row (same-failure.ts) */
  stoppedRepeating?: string;
}

/** Where one target's permutations run: its provider and workload endpoint. */
export interface TargetEndpoints {
  provider: Provider | null;
  workload: WorkloadEndpoint;
}

export async function executeRun(given: ExecuteOptions): Promise<RunSummary> {
  const plain = asRunStore(given.store);
  const opts = {
    ...given,
    store: given.lease ? guardStore(plain, given.lease) : plain,
    // a lost lease stops the run like an interruption (and more: see ExecuteOptions.lease)
    signal: given.lease ? AbortSignal.any([given.signal, given.lease.signal]) : given.signal,
  };
  const confirmation = opts.confirmation ?? (await readConfirmed(opts.store));
  // only this plan's permutations (a worker's plan is one of a run's many)
  const statuses = new Map((await opts.store.permutations(opts.plan.permutations.map((p) => p.permutationId))).map((p) => [p.permutationId, p]));
  return new Execution(opts, confirmation, statuses).run();
}

type Guarded = ExecuteOptions & { store: RunStore; signal: AbortSignal };
type Statuses = Map<string, Awaited<ReturnType<RunStore['permutations']>>[number]>;
/** What became of one span of a permutation (RepSpan). */
type SpanOutcome = 'ok' | 'failed' | 'pending' | 'stop';

/** One executeRun: its groups of permutations (one per target), what it counted, and whether it stopped. */
class Execution {
  private readonly summary: RunSummary = { done: 0, failed: 0, skipped: 0, pending: 0, interrupted: false, leftovers: 0 };
  /** Set by --fail-fast or a fatal store error: every group stops before its next permutation. */
  private stopped = false;
  /**
   * Targets that share a resource (a VM, a guest test file, a LUN: plan.serialised) take turns:
   * each permutation holds the keys its target shares from its first step to its teardown.
   */
  private readonly locks = new ResourceLocks();
  /** Stops the sweep when one step fails the same way on several permutations in a row (same-failure.ts). */
  private readonly same: SameFailureTracker;
  private readonly sharedWhat: Map<string, string>;
  private readonly replication: ReturnType<typeof replicationOf>;

  constructor(
    private readonly opts: Guarded,
    private readonly confirmation: Awaited<ReturnType<typeof readConfirmed>>,
    private readonly statuses: Statuses,
  ) {
    this.same = new SameFailureTracker(opts.plan.stopAfterSameFailure ?? DEFAULT_STOP_AFTER_SAME_FAILURE);
    this.sharedWhat = new Map((opts.plan.serialised ?? []).map((s) => [s.key, s.what]));
    this.replication = replicationOf(opts.plan);
  }

  /** A failing progress hook (e.g. the JSON log on a full disk) must never stop teardown. */
  private readonly emit = (e: ProgressEvent): void => {
    try {
      this.opts.onEvent?.(e);
    } catch {
      /* the view and log are best effort; the database is the record */
    }
  };

  async run(): Promise<RunSummary> {
    const { plan } = this.opts;
    const left = remainingEstimate(plan, (id) => this.statuses.get(id)?.status === 'done');
    this.emit({ type: 'run-start', runId: plan.runId, total: plan.permutations.length, estimateSec: left.wallSec, ...(left.done ? { done: left.done } : {}), ...(left.workSec !== left.wallSec ? { workSec: left.workSec } : {}) });
    try {
      const groups = this.groups();
      try {
        await this.stopAllLeftovers(groups);
        await Promise.all(groups.map((g) => this.runGroup(g)));
      } finally {
        for (const g of groups) await g.releaseGuest();
      }
    } finally {
      await this.end();
    }
    return this.summary;
  }

  private async end(): Promise<void> {
    const { summary, opts } = this;
    summary.interrupted = opts.signal.aborted;
    summary.pending += opts.plan.permutations.length - summary.done - summary.failed - summary.skipped - summary.pending;
    try {
      summary.leftovers = opts.countLeftovers === false ? null : (await opts.store.leftovers()).length;
    } catch {
      summary.leftovers = -1;
    }
    this.emit({ type: 'run-end', summary });
  }

  /** One group per target: its permutations in plan order (several targets run in parallel). */
  private groups(): Group[] {
    const { plan, guests } = this.opts;
    if (!plan.targets) return [newGroup(plan.target, [], plan.permutations, { provider: this.opts.provider, workload: this.opts.workload }, guests)];
    const byTarget = new Map<string, PermutationPlan[]>();
    for (const p of plan.permutations) {
      const name = String(p.axes.target);
      byTarget.set(name, [...(byTarget.get(name) ?? []), p]);
    }
    return [...byTarget].map(([name, perms]) => {
      const endpoints = this.opts.targets?.[name];
      if (!endpoints) throw new InternalError(`executeRun: no provider or workload endpoint for target "${name}"`);
      const keys = (plan.serialised ?? []).filter((s) => s.targets.includes(name)).map((s) => s.key);
      return newGroup(name, keys, perms, endpoints, guests);
    });
  }

  /**
   * Resuming: whatever the dead process left running (fio on a half-done permutation's disk)
   * is stopped on every target first, before any of them starts a tool or tears a disk down
   * (two targets may share a guest: a target's own new fio must not be taken for a leftover).
   * Targets sharing a guest stop its leftovers one at a time, like everything else they do there.
   */
  private async stopAllLeftovers(groups: Group[]): Promise<void> {
    await Promise.all(
      groups.map(async (g) => {
        const release = await this.locks.acquire(g.keys, g.name);
        try {
          await stopLeftovers(g, this.statuses, { ...this.opts, emit: this.emit });
        } finally {
          release();
        }
      }),
    );
  }

  /** One target's permutations, one at a time (one operation at a time per VM), by the plan's replication. */
  private async runGroup(g: Group): Promise<void> {
    try {
      if (this.replication.unit === 'between-provisionings') await this.runProvisionings(g);
      else await this.runPermutations(g);
    } finally {
      await g.releaseGuest();
    }
  }

  /** One span of a permutation under its target's shared keys, its outcome said and acted on (fatal, --fail-fast). */
  private async runSpan(g: Group, perm: PermutationPlan, span: RepSpan, keepObjects: boolean): Promise<SpanOutcome> {
    const { opts } = this;
    const row = this.statuses.get(perm.permutationId);
    const release = await this.locks.acquire(g.keys, g.name, (key, heldBy) => {
      if (heldBy === g.lastWaitedFor) return; // said once per other target, not before each permutation
      g.lastWaitedFor = heldBy;
      // the waiting target leads the line (its permutation has not started): both targets named
      this.emit({ type: 'message', level: 'info', text: `waits for ${heldBy} to finish its permutation (both use ${this.sharedWhat.get(key) ?? key})`, permutationId: perm.permutationId, target: g.name });
    });
    let outcome: Awaited<ReturnType<typeof runPermutation>>;
    let c: PermContext | undefined;
    try {
      if (this.stopped) return 'stop';
      if (opts.signal.aborted) return 'pending';
      // left running or failed by an earlier process: what it left is torn down first
      const resumed = span.starts && (row?.status === 'running' || row?.status === 'failed');
      // a tool the interrupted run left may still write to a resumed permutation's disk
      c = { ...opts, ...g.endpoints, confirmation: this.confirmation, emit: this.emit, guest: g.guest, dropGuest: g.dropGuest, keepObjects, owner: toolOwner(opts.plan.runId, g.name), resumed, toolMayRun: resumed ? g.toolMayRun : undefined };
      outcome = await runPermutation(perm, c, span);
    } finally {
      release();
    }
    return this.spanOutcome(perm, outcome, c?.failedAt);
  }

  private spanOutcome(perm: PermutationPlan, outcome: boolean | { fatal: string }, failedAt: PermContext['failedAt']): SpanOutcome {
    const { summary, opts } = this;
    if (typeof outcome === 'object') {
      // Nothing more can be recorded: stop; what was committed stays, resume continues later.
      summary.fatal ??= outcome.fatal;
      summary.failed++;
      if (!this.stopped) this.emit({ type: 'message', level: 'error', permutationId: perm.permutationId, text: `stopping: the run directory cannot be written (${outcome.fatal}); records committed so far are kept` });
      this.stopped = true;
      return 'stop';
    }
    if (outcome) {
      this.same.ok();
      return 'ok';
    }
    if (opts.signal.aborted) return 'pending';
    summary.failed++;
    const repeated = failedAt ? this.same.failed(failedAt.step, failedAt.reason) : null;
    if (repeated && !this.stopped) {
      this.emit({ type: 'message', level: 'error', permutationId: perm.permutationId, text: repeated });
      summary.stoppedRepeating = repeated;
      this.stopped = true;
    }
    if (opts.failFast) {
      if (!this.stopped) this.emit({ type: 'message', level: 'warn', permutationId: perm.permutationId, text: 'stopping after the first failure (--fail-fast)' });
      this.stopped = true;
    }
    return 'failed';
  }

  /** Within one provisioning: each permutation in plan order, all its repetitions on one provisioning. */
  private async runPermutations(g: Group): Promise<void> {
    const { replication, opts, summary } = this;
    const last = g.perms[g.perms.length - 1];
    const until = replication.until;
    const span: RepSpan = {
      first: 1,
      last: replication.max,
      starts: true,
      finishes: () => true,
      ...(until ? { enough: (stored: readonly ResultRecord[]) => !needsMore({ recorded: new Set(stored.map((r) => r.repetition)).size, records: [...stored] }, replication) } : {}),
    };
    for (const perm of g.perms) {
      if (this.stopped || opts.signal.aborted) break;
      if (this.statuses.get(perm.permutationId)?.status === 'done') {
        summary.skipped++;
        continue;
      }
      const r = await this.runSpan(g, perm, span, Boolean(opts.keep && perm === last));
      if (r === 'ok') summary.done++;
      if (r === 'stop' || this.stopped) break;
    }
  }

  /** Each repetition on a provisioning of its own, in the plan's order (run/unit-schedule.ts). */
  private async runProvisionings(g: Group): Promise<void> {
    const { replication, opts } = this;
    const states = await unitStates(g.perms, this.statuses, replication, opts.store);
    const state = (p: PermutationPlan) => states.get(p.permutationId)!;
    const keep = opts.keep ? lastUnit(replication, g.perms) : undefined;
    for (const perm of g.perms) await this.finishInterrupted(g, perm, state(perm));
    await runUnits({
      replication,
      perms: g.perms,
      state,
      stopped: () => this.stopped || opts.signal.aborted,
      runUnit: async (perm, rep) => {
        const st = state(perm);
        const starts = !st.started;
        st.started = true;
        const span: RepSpan = { first: rep, last: rep, starts, unit: true, finishes: (stored) => ((st.recorded = rep), replication.until && st.records.push(...stored), !needsMore(st, replication)) };
        const r = await this.runSpan(g, perm, span, Boolean(keep === perm && rep === replication.max));
        if (r === 'ok' && !needsMore(st, replication)) {
          st.finished = true;
          this.summary.done++;
        }
        if (r === 'failed') st.finished = true;
        return r === 'stop' || this.stopped ? 'stop' : 'go';
      },
    });
  }

  /**
   * A permutation done is skipped; one left by an interrupted run: what it left is torn down before
   * any unit provisions (its datastore may hold the LUN the next one formats), and it is done if
   * nothing is missing.
   */
  private async finishInterrupted(g: Group, perm: PermutationPlan, st: RunUnitState): Promise<void> {
    const status = this.statuses.get(perm.permutationId)?.status;
    if (status === 'done') {
      this.summary.skipped++;
      return;
    }
    if ((status !== 'running' && status !== 'failed') || this.stopped || this.opts.signal.aborted) return;
    st.started = true;
    const r = await this.runSpan(g, perm, { first: st.recorded + 1, last: st.recorded, starts: true, unit: true, finishes: () => !needsMore(st, this.replication) }, false);
    st.finished = r === 'failed' || (r === 'ok' && !needsMore(st, this.replication));
    if (r === 'ok' && st.finished) this.summary.done++;
  }
}

/** A permutation's units as the executor tracks them: the schedule's state, and whether this process started it. */
type RunUnitState = UnitState & { started: boolean };

/**
 * Each permutation's units so far: done ones finished; the others with the repetitions the store
 * holds (a resume keeps them: each is a whole sample of its own provisioning), and, to decide
 * repeat-until-stable, their records.
 */
async function unitStates(perms: readonly PermutationPlan[], statuses: ReadonlyMap<string, { status: string; completedRepetitions: number }>, r: Replication, store: RunStore): Promise<Map<string, RunUnitState>> {
  const out = new Map<string, RunUnitState>();
  for (const p of perms) {
    const row = statuses.get(p.permutationId);
    out.set(p.permutationId, { recorded: row?.completedRepetitions ?? 0, records: [], finished: row?.status === 'done', started: false });
  }
  if (r.until && [...out.values()].some((s) => !s.finished && s.recorded > 0)) {
    await store.eachRecord((rec) => {
      const s = out.get(rec.permutationId);
      if (s && !s.finished) s.records.push(rec);
    });
  }
  return out;
}

/** One target's permutations and its (lazily connected, reconnectable) workload runner. */
interface Group {
  /** the target's name */
  name: string;
  /** what it shares with other targets (plan.serialised): held while each permutation runs */
  keys: string[];
  perms: PermutationPlan[];
  endpoints: TargetEndpoints;
  guest: () => Promise<CommandRunner>;
  /** closes the connection (lost, or in doubt): the next guest() connects again */
  dropGuest: () => Promise<void>;
  /** the call is done with it: closed, or left to the caller's GuestConnections */
  releaseGuest: () => Promise<void>;
  /** set when the leftovers of an interrupted run could not be confirmed stopped: why */
  toolMayRun?: string;
  /** the target this group last said it waits for (said once per other target) */
  lastWaitedFor?: string;
}

function newGroup(name: string, keys: string[], perms: PermutationPlan[], endpoints: TargetEndpoints, kept?: GuestConnections): Group {
  let runner: CommandRunner | null = null;
  return {
    name,
    keys,
    perms,
    endpoints,
    guest: async () => {
      if (!runner) {
        runner = kept?.get(name) ?? (await endpoints.workload.connect());
        kept?.set(name, runner);
      }
      return runner;
    },
    dropGuest: async () => {
      const r = runner;
      runner = null;
      if (r && kept?.get(name) === r) kept.delete(name);
      await r?.close().catch(() => undefined);
    },
    releaseGuest: async () => {
      const r = runner;
      runner = null;
      if (r && kept?.get(name) === r) return; // the caller's to keep (and close)
      await r?.close().catch(() => undefined);
    },
  };
}

/**
 * On resume, before anything else on a target: stop every process an earlier run process left
 * there (found by the run's token in their environment, not by a pidfile: process-group.ts), and
 * what it left on the host (a provider's monitor, esxtop: only while the host shows it ours).
 * Only where a permutation was left running or failed: a tool can only have been started there.
 */
async function stopLeftovers(g: Group, statuses: Map<string, { status: string }>, c: LeftoverContext): Promise<void> {
  const perm = g.perms.find((p) => ['running', 'failed'].includes(statuses.get(p.permutationId)?.status ?? ''));
  if (!perm) return;
  await stopWorkloadLeftovers(g, perm.permutationId, c);
  if (vmCount(perm) !== undefined) await stopCloneLeftovers(g, perm.permutationId, c);
  await stopHostLeftovers(g, perm.permutationId, c);
}

/** A `vm.count` permutation's VMs (clones, named VMs with a disk of ours): the tools the interrupted run left in their guests (vm-members.ts), journaled like the target's. */
async function stopCloneLeftovers(g: Group, permutationId: string, c: LeftoverContext): Promise<void> {
  c.lease?.check();
  const vms = memberVmsOf(await c.store.ledger({ permutationId, live: true }));
  for (const { vm, stop } of await stopMemberLeftovers(g.endpoints.workload, vms, c.plan.runId, g.name)) {
    const failed = stop.outcome === 'still-running' || stop.outcome === 'unknown';
    await record(() => c.store.appendJournal(permutationId, `workload leftovers ${vm}`, failed ? 'stop-failed' : stop.outcome === 'stopped' ? 'stopped' : 'none', stop));
    if (failed) {
      g.toolMayRun ??= `could not confirm that no ${g.endpoints.workload.tool} of this run is left running in ${vm}'s guest${stop.detail ? `: ${stop.detail}` : ''}`;
      c.emit({ type: 'message', level: 'error', permutationId, text: `${g.toolMayRun}; the interrupted permutation is neither torn down nor redone` });
    } else if (stop.outcome === 'stopped') c.emit({ type: 'message', level: 'warn', permutationId, text: `stopped ${g.endpoints.workload.tool} left running by the interrupted run in ${vm}'s guest (pids ${stop.pids?.join(', ') ?? '?'})` });
  }
}

type LeftoverContext = { store: RunStore; plan: RunPlan; signal: AbortSignal; emit: (e: ProgressEvent) => void; lease?: LeaseGuard | undefined };

async function stopWorkloadLeftovers(g: Group, permutationId: string, c: LeftoverContext): Promise<void> {
  const stop = g.endpoints.workload.stopLeftovers?.bind(g.endpoints.workload);
  if (!stop) return;
  const tool = g.endpoints.workload.tool;
  let outcome: GroupStop;
  let target = 'the guest';
  try {
    c.lease?.check();
    const runner = await g.guest();
    target = runner.target;
    c.lease?.check();
    outcome = await stop(runner, c.plan.runId, g.name);
  } catch (err) {
    await g.dropGuest();
    outcome = { pgid: null, outcome: 'unknown', detail: `cannot reach the guest: ${redact(errorMessage(err))}` };
  }
  const failed = outcome.outcome === 'still-running' || outcome.outcome === 'unknown';
  await record(() => c.store.appendJournal(permutationId, 'workload leftovers', failed ? 'stop-failed' : outcome.outcome === 'stopped' ? 'stopped' : 'none', outcome));
  if (failed) {
    const why = `could not confirm that no ${tool} of this run is left running on ${target}${outcome.detail ? `: ${outcome.detail}` : ''}${outcome.pids?.length ? ` (pids ${outcome.pids.join(', ')})` : ''}`;
    g.toolMayRun = why;
    c.emit({ type: 'message', level: 'error', permutationId, text: `${why}; the interrupted permutations are neither torn down nor redone (their disks may still be written to)` });
  }
  else if (outcome.outcome === 'stopped') c.emit({ type: 'message', level: 'warn', permutationId, text: `stopped ${tool} left running by the interrupted run on ${target} (pids ${outcome.pids?.join(', ') ?? '?'}, SIG${outcome.signal})` });
}

/**
 * The provider's own leftovers on the host (esxtop): journaled and said like the workload's. A
 * monitor only reads, so one that could not be confirmed stopped holds nothing back; cleanup tries
 * again.
 */
async function stopHostLeftovers(g: Group, permutationId: string, c: LeftoverContext): Promise<void> {
  const provider = g.endpoints.provider;
  if (!provider?.stopLeftovers) return;
  let outcome: HostProcessStop;
  try {
    c.lease?.check();
    outcome = await provider.stopLeftovers(c.plan.runId, g.name);
  } catch (err) {
    outcome = { pgid: null, outcome: 'unknown', what: 'host monitor', processes: [], detail: redact(errorMessage(err)) };
  }
  await record(() => c.store.appendJournal(permutationId, 'host leftovers', hostStopEvent(outcome), outcome));
  for (const line of hostStopLines(outcome, g.name)) c.emit({ type: 'message', level: line.level, permutationId, text: line.text });
}

interface PermContext extends ExecuteOptions {
  store: RunStore;
  confirmation: Confirmed;
  emit: (e: ProgressEvent) => void;
  guest: () => Promise<CommandRunner>;
  dropGuest: () => Promise<void>;
  keepObjects: boolean;
  /** whose tool processes this permutation starts: the run and its target (process-group.ts toolOwner) */
  owner: string;
  resumed: boolean;
  /**
   * Why our tool may still be running on this permutation's disk (a stop that could not be
   * confirmed): then nothing of it is torn down — a disk is never detached or deleted under a
   * writer — and its ledger rows stay open with that reason for `storsweep cleanup`.
   */
  toolMayRun?: string | undefined;
  /** set by runPermutation when a step failed: which one, and why (the same-failure rule) */
  failedAt?: { step: string; reason: string };
}

/**
 * Which repetitions one call of runPermutation runs on its provisioning: all of them (within one
 * provisioning: first 1, last max), or one (each repetition provisions anew: first = last).
 */
interface RepSpan {
  first: number;
  last: number;
  /** after each repetition: enough of them (repeat-until-stable within one provisioning) */
  enough?: (stored: readonly ResultRecord[]) => boolean;
  /** after the span succeeded: whether the permutation is done (marked so), given what it recorded */
  finishes: (stored: readonly ResultRecord[]) => boolean;
  /** the permutation's first span in this process: marked running (one attempt more) */
  starts: boolean;
  /** set when the span is one repetition of several provisionings (progress events name it) */
  unit?: boolean;
}

async function runPermutation(perm: PermutationPlan, c: PermContext, span: RepSpan): Promise<boolean | { fatal: string }> {
  const { ctx, measured, members } = permutationContext(perm, c);
  // a unit names its repetition; an empty span (a resume's teardown of what was left) none
  const settling = span.first > span.last;
  const rep = span.unit && !settling ? { repetition: span.first } : {};
  const estimateSec = settling ? 0 : span.unit ? Math.round(perm.estimateSec / perm.repetitions) : perm.estimateSec;
  c.emit({ type: 'permutation-start', index: perm.index, total: c.plan.permutations.length, permutationId: perm.permutationId, axes: perm.axes, estimateSec, ...rep });
  try {
    // before anything of it is sent, a takeover's teardown included: the plan the run was confirmed for
    checkPermutationConfirmed(c.plan, perm, c.confirmation);
  } catch (err) {
    return refused(perm, c, err);
  }
  if (c.resumed && !(await redoFromLeftovers(perm, c, ctx, span))) return false;
  const done = await provision(perm, c, ctx, span, measured, members);
  return settlePermutation(perm, c, span, rep, done);
}

/** The provider context of one permutation, and what a provisioning step found for the workload to measure (ctx.measure). */
function permutationContext(perm: PermutationPlan, c: PermContext): { ctx: ProviderContext; measured: () => MeasuredTarget | undefined; members: Map<number, MeasuredTarget> } {
  const members = new Map<number, MeasuredTarget>();
  const ctx: ProviderContext = {
    runId: c.plan.runId,
    permutationId: perm.permutationId,
    axes: perm.axes,
    owner: c.owner,
    signal: c.signal,
    log: (message, fields) => c.emit({ type: 'message', level: 'info', text: redact(message), fields, permutationId: perm.permutationId }),
    // runStep gives each step its own; outside a step nothing may be sent
    sent: () => {
      throw new InternalError('ctx.sent called outside a provisioning step');
    },
    ...(c.confirmedDestroy ? { confirmedDestroy: c.confirmedDestroy } : {}),
  };
  let target: MeasuredTarget | undefined;
  ctx.measure = (t) => {
    // a vm.count member's disk (run/vm-members.ts); the last word of each member counts
    if (t.member) members.set(t.member.index, t);
    else target = t;
    // a synchronous callback: the store keeps call order (results/port.ts)
    void record(() => c.store.appendJournal(perm.permutationId, 'measure', 'found', t));
    c.emit({ type: 'message', level: 'info', text: `${perm.permutationId}: measuring ${t.device} (${t.identity}${t.filesystem === 'raw' ? `, raw: ${t.path}` : `, ${t.filesystem}: ${t.path}`})` });
  };
  ctx.measured = () => target;
  return { ctx, measured: () => target, members };
}

/**
 * A permutation an earlier process left: what it left behind is removed and the results of the
 * provisioning it was on forgotten, to be redone from there (repetitions on provisionings of their
 * own are whole samples: kept). False: its tool may still run on its disk, so everything is left in
 * place and it is recorded failed (cleanup retries the stop first).
 */
async function redoFromLeftovers(perm: PermutationPlan, c: PermContext, ctx: ProviderContext, span: RepSpan): Promise<boolean> {
  const { store } = c;
  await teardown(perm, c, ctx);
  if (c.toolMayRun) {
    const reason = `not redone: ${c.toolMayRun}`;
    await record(() => store.markFinished(perm.permutationId, 'failed', reason));
    c.emit({ type: 'permutation-end', permutationId: perm.permutationId, status: 'failed', reason });
    return false;
  }
  const dropped = await store.discardRepetitionsAfter(perm.permutationId, span.first - 1);
  await store.appendJournal(perm.permutationId, 'permutation', 'redo', { discardedRecords: dropped, ...(span.first > 1 ? { keptRepetitions: span.first - 1 } : {}) });
  return true;
}

interface Provisioned {
  failure: string | null;
  fatal: string | null;
  stored: ResultRecord[];
}

/** The permutation's steps (the workload among them), then its teardown — or, --keep, its objects kept. */
async function provision(perm: PermutationPlan, c: PermContext, ctx: ProviderContext, span: RepSpan, measured: () => MeasuredTarget | undefined, members: ReadonlyMap<number, MeasuredTarget>): Promise<Provisioned> {
  const { store } = c;
  const out: Provisioned = { failure: null, fatal: null, stored: [] };
  try {
    if (span.starts) await store.markRunning(perm.permutationId);
    // an empty span (a resume's first look at an interrupted permutation) provisions nothing
    for (const step of span.first > span.last ? [] : perm.steps) {
      if (c.signal.aborted) throw new Error('interrupted');
      c.failedAt = { step: step.step, reason: '' };
      // the VMs a vm.count permutation's steps made, each measuring its own disk (none said: the target's)
      if (step.step === 'workload') out.stored = vmCount(perm) !== undefined && members.size > 0 ? await runMembers(perm, c, members, span, ctx) : await runWorkload(perm, c, measured(), ctx, span);
      else await runStep(step, perm, c, ctx);
    }
    c.failedAt = undefined;
  } catch (err) {
    out.failure = c.signal.aborted ? 'interrupted' : redact(errorMessage(err));
    if (c.failedAt) c.failedAt.reason = out.failure;
    if (isStoreLost(err)) out.fatal = out.failure;
    const detail = errorLongForm(err);
    // beside 'measure found': the identity expected and the ones seen, as fields (preflight's canary reads them)
    const mismatch = identityMismatchOf(err);
    if (mismatch) await record(() => store.appendJournal(perm.permutationId, 'measure', 'not-found', mismatch));
    if (!c.signal.aborted) c.emit({ type: 'failure', permutationId: perm.permutationId, axes: perm.axes, reason: out.failure, ...(detail ? { detail: redact(detail) } : {}) });
  } finally {
    if (!c.keepObjects || leaseLost(c.lease)) await teardown(perm, c, ctx);
    else {
      for (const o of await store.ledger({ permutationId: perm.permutationId, live: true })) if (wasSent(o)) await record(() => store.ledgerState(o, 'kept'));
      c.emit({ type: 'message', level: 'info', text: `--keep: leaving the objects of ${perm.permutationId} in place` });
    }
  }
  return out;
}

/** The permutation recorded done, failed, or (interrupted) left running for resume. */
async function settlePermutation(perm: PermutationPlan, c: PermContext, span: RepSpan, rep: { repetition?: number }, { failure, fatal: lost, stored }: Provisioned): Promise<boolean | { fatal: string }> {
  const { store } = c;
  let fatal = lost;
  if (failure === null) {
    try {
      if (span.finishes(stored)) await store.markFinished(perm.permutationId, 'done', null);
    } catch (err) {
      if (!isStoreLost(err)) throw err;
      return { fatal: redact(errorMessage(err)) };
    }
    c.emit({ type: 'permutation-end', permutationId: perm.permutationId, status: 'done', ...rep });
    return true;
  }
  if (c.signal.aborted) {
    // Leave it 'running': resume will clean it up and redo it.
    await record(() => store.appendJournal(perm.permutationId, 'permutation', 'interrupted', null));
    return false;
  }
  try {
    await store.markFinished(perm.permutationId, 'failed', failure);
  } catch (err) {
    if (!isStoreLost(err)) throw err;
    fatal ??= redact(errorMessage(err));
  }
  c.emit({ type: 'permutation-end', permutationId: perm.permutationId, status: 'failed', reason: failure, ...rep });
  return fatal ? { fatal } : false;
}

/** A permutation refused before anything of it was sent: recorded failed with the reason, nothing touched. */
async function refused(perm: PermutationPlan, c: PermContext, err: unknown): Promise<false | { fatal: string }> {
  const reason = redact(errorMessage(err));
  c.emit({ type: 'failure', permutationId: perm.permutationId, axes: perm.axes, reason });
  try {
    await c.store.appendJournal(perm.permutationId, 'permutation', 'refused', { reason });
    await c.store.markFinished(perm.permutationId, 'failed', reason);
  } catch (e) {
    if (!isStoreLost(e)) throw e;
    return { fatal: redact(errorMessage(e)) };
  }
  c.emit({ type: 'permutation-end', permutationId: perm.permutationId, status: 'failed', reason });
  return false;
}

async function runStep(step: PlannedStep, perm: PermutationPlan, c: PermContext, ctx: ProviderContext): Promise<void> {
  const provider = c.provider;
  if (!provider) throw new InternalError(`step ${step.step} needs a provider, and target has none`);
  c.emit({ type: 'step', permutationId: perm.permutationId, step: step.step, operation: step.operation });
  const started = Date.now();
  // Durable before apply is called (the store resolves once committed): an intent precedes every send.
  if (step.creates) await c.store.ledgerIntent(perm.permutationId, step.provider, step.creates, { operation: step.operation, arguments: step.arguments });
  else await c.store.appendJournal(perm.permutationId, step.step, 'intent', { operation: step.operation });
  // The provider calls sent() after its guards, right before its first mutating command. A write
  // that fails here throws inside apply, before anything is sent: fail closed. So does a send
  // after the attempt gave up (timed out, interrupted): nothing is created behind teardown's back.
  // The provider awaits it: the 'sent' row (with what proves the object ours) is durable before
  // the mutating command goes out. An attempt that gave up while the row was being written is
  // refused after it too (the row then says sent; teardown still proves ownership before removing).
  let sent = false;
  let sentData: Record<string, unknown> = {};
  const sendFor = (signal: AbortSignal) => async (data: Record<string, unknown>) => {
    signal.throwIfAborted();
    c.lease?.check();
    if (step.creates) await c.store.ledgerSent(perm.permutationId, step.creates, data);
    else await c.store.appendJournal(perm.permutationId, step.step, 'sent', null);
    signal.throwIfAborted();
    // the mutating command goes out right after this: only under the lease
    c.lease?.check();
    sent = true;
    sentData = data; // as the ledger: a later sent() replaces the data
  };
  const attempt = async (n: number): Promise<CreatedObject | null> => {
    // After an ambiguous failure of a mutating call, look before reissuing: the first call may
    // have created the object before the connection dropped.
    if (n > 1 && step.creates && sent) {
      c.lease?.check();
      const found = await provider.find(step.creates, sentData);
      if (found) return found;
    }
    c.lease?.check();
    return withTimeout((signal) => provider.apply(step, { ...ctx, signal, sent: sendFor(signal) }), c.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS, `${step.step} (${step.operation})`, c.signal);
  };
  let created: CreatedObject | null;
  try {
    // What is worth another attempt is the provider's call (a busy object, a dropped connection).
    const transient = (err: unknown) => provider.isTransient?.(err) ?? false;
    created = await withRetry(attempt, transient, { ...c.retry, signal: c.signal, onRetry: (err, n) => c.emit({ type: 'message', level: 'warn', permutationId: perm.permutationId, text: `retrying ${step.step} (attempt ${n + 1}): ${redact(errorMessage(err))}` }) });
  } catch (err) {
    if (err instanceof StepTimedOut && err.pending && step.creates && sent && !leaseLost(c.lease)) await settleOrphan(err.pending, perm, step, c);
    // Nothing went out: the step is marked so and teardown never touches it.
    if (step.creates && !sent) await record(() => c.store.ledgerState(step.creates!, err instanceof UnsafeOperation ? 'refused' : 'not-sent', redact(errorMessage(err))));
    throw err;
  }
  if (step.creates && created) await c.store.ledgerCreated(perm.permutationId, created);
  else if (step.creates && !created) await c.store.ledgerState(step.creates, 'absent');
  else await c.store.appendJournal(perm.permutationId, step.step, 'done', null);
  // One read-back for whatever the step yielded, made or found after a retry: the object is
  // recorded first, so a mismatch fails the permutation and teardown removes it.
  if (created && provider.verify) {
    c.lease?.check();
    const verify = provider.verify.bind(provider);
    await withTimeout((signal) => verify(step, created, { ...ctx, signal, sent: () => { throw new Error(`verify of ${step.step} must not send`); } }), c.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS, `${step.step} (read back)`, c.signal);
  }
  c.emit({ type: 'step-end', permutationId: perm.permutationId, step: step.step, durationMs: Date.now() - started });
}

/**
 * A create that was sent and timed out keeps running on the server and may still produce its
 * object after teardown looked for it. Wait (bounded) for the call to settle and record what it
 * created, so teardown removes it instead of leaving it behind. If it never settles, the row is
 * marked unsettled (UNSETTLED_KEY): teardown then keeps it open even when it finds nothing, and
 * `storsweep cleanup` looks again (teardown.ts tearDownRow).
 */
async function settleOrphan(pending: Promise<unknown>, perm: PermutationPlan, step: PlannedStep, c: PermContext): Promise<void> {
  const graceMs = c.orphanGraceMs ?? Math.min(Math.max(c.stepTimeoutMs ?? 0, ORPHAN_GRACE_MIN_MS), ORPHAN_GRACE_MAX_MS);
  c.emit({ type: 'message', level: 'warn', permutationId: perm.permutationId, text: `${step.step} (${step.operation}) timed out; waiting up to ${Math.round(graceMs / 1000)} s for the call to settle before teardown` });
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    pending.then(
      (v) => ({ settled: true as const, value: v }),
      () => ({ settled: true as const, value: null }),
    ),
    new Promise<{ settled: false }>((resolve) => (timer = setTimeout(() => resolve({ settled: false }), graceMs))),
  ]);
  clearTimeout(timer);
  if (!outcome.settled) {
    const row = await c.store.ledgerRow(step.creates!.kind, step.creates!.name);
    if (row?.state === 'sent') await record(() => c.store.ledgerSent(perm.permutationId, row, { ...row.data, [UNSETTLED_KEY]: new Date().toISOString() }));
    c.emit({ type: 'message', level: 'error', permutationId: perm.permutationId, text: `${step.step} (${step.operation}) still has not returned; ${step.creates!.name} may appear later: it stays in the ledger, and \`storsweep cleanup\` looks for it again and removes it` });
    return;
  }
  const v = outcome.value as CreatedObject | null;
  if (v && typeof v === 'object' && typeof v.id === 'string') await record(() => c.store.ledgerCreated(perm.permutationId, v));
}

async function teardown(perm: PermutationPlan, c: PermContext, ctx: ProviderContext): Promise<void> {
  // no provider: nothing was provisioned, nothing to tear down (the ledger is not read for nothing)
  const provider = c.provider;
  if (!provider) return;
  if (leaseLost(c.lease)) {
    // Another worker may hold these targets now and be tearing down or provisioning on them: touch
    // nothing, write nothing. The permutation stays `running`; whoever takes it over tears down
    // what the ledger says was sent, then redoes it.
    c.emit({ type: 'message', level: 'error', permutationId: perm.permutationId, text: `${perm.permutationId}: the lease is lost; nothing is torn down here: the worker that takes the permutation over removes what the ledger records` });
    return;
  }
  let live;
  try {
    live = (await c.store.ledger({ permutationId: perm.permutationId, live: true })).reverse();
  } catch (err) {
    c.emit({ type: 'message', level: 'error', text: `cannot read the ledger for teardown of ${perm.permutationId}: ${redact(errorMessage(err))} (run \`storsweep cleanup\` later)` });
    return;
  }
  if (!live.length) return;
  if (c.toolMayRun) {
    // Never detach or delete a disk our tool may still be writing to: keep every row open with the
    // reason; `storsweep cleanup` stops the run's leftover tools first and removes them after.
    const reason = `left in place: ${c.toolMayRun}; once it has ended, run \`storsweep cleanup\` (it stops the run's leftover tools first)`;
    for (const obj of live) {
      if (obj.state === 'intent') continue; // never sent: nothing can exist, cleanup decides by owned name
      await record(() => c.store.ledgerState(obj, 'remove-failed', reason));
      await record(() => c.store.appendJournal(perm.permutationId, `${obj.kind}:${obj.name}`, 'teardown-held', { reason: c.toolMayRun }));
    }
    c.emit({ type: 'message', level: 'error', text: `${perm.permutationId}: ${reason}` });
    return;
  }
  // The same routine as `storsweep cleanup` (teardown.ts): same retries, deadline and journal. It
  // runs even when the sweep was interrupted (its own signal).
  for (const obj of live) {
    if (leaseLost(c.lease)) {
      c.emit({ type: 'message', level: 'error', permutationId: perm.permutationId, text: `${perm.permutationId}: the lease was lost during teardown; the rest is left to the worker that takes the permutation over` });
      return;
    }
    c.emit({ type: 'step', permutationId: perm.permutationId, step: `teardown ${obj.kind}`, operation: 'destroy' });
    const r = await tearDownRow(c.store, provider, obj, { runId: ctx.runId, permutationId: ctx.permutationId, axes: ctx.axes, ...(c.confirmedHere && c.confirmedDestroy ? { confirmedDestroy: c.confirmedDestroy } : {}) }, {
      ...(c.retry ? { retry: c.retry } : {}),
      ...(c.stepTimeoutMs !== undefined ? { timeoutMs: c.stepTimeoutMs } : {}),
      prefix: '',
      ...(c.lease ? { guard: () => c.lease?.check() } : {}),
      onNote: (text) => ctx.log(text),
      onRetry: (err, n) => c.emit({ type: 'message', level: 'warn', permutationId: perm.permutationId, text: `retrying removal of ${obj.kind} ${obj.name} (attempt ${n + 1}): ${redact(errorMessage(err))}` }),
    });
    if ('failed' in r) c.emit({ type: 'message', level: 'error', permutationId: perm.permutationId, text: `could not remove ${obj.kind} ${obj.name}: ${r.failed} (run \`storsweep cleanup\` later)` });
  }
}

/** Where raw tool output goes: the run's local directory (a store opened by id to be read has none). */
function rawDirOf(store: RunStore): string {
  if (store.runDir === null) throw new InternalError(`${store.where}: executing a run needs a local directory for its raw output`);
  return store.runDir;
}

type Facts = NonNullable<ResultRecord['metadata']>;

/**
 * What every record of a permutation says about its pre-fill: done or not, bytes, wall-clock
 * seconds, the throughput the tool measured (the first write of the region: report/conditions.ts
 * reads it as the "first write" result) and when it started (one fill per provisioning: records
 * of one fill share it, so a report counts each fill once, never once per repetition).
 */
function prefillFacts(fill: PrefillOutcome | null, at: string | null): Facts {
  if (!fill) return { prefill: false };
  if (!fill.filled) return { prefill: false };
  return {
    prefill: true,
    prefillBytes: fill.bytes,
    prefillSeconds: Math.round(fill.seconds * 1000) / 1000,
    ...(fill.bytesPerSecond !== undefined ? { prefillBytesPerSecond: Math.round(fill.bytesPerSecond) } : {}),
    ...(at !== null ? { prefillAt: at } : {}),
  };
}

/**
 * How every record of a permutation was measured, beside its profile name, passes and score rule:
 * the test region's size, the seconds of a pass, the warm-up, the pause between tests, the cache
 * flag, and each `--set` the run was given (`set:<key>`). Reports print them and warn when two
 * compared sources differ (report/conditions.ts).
 */
function conditionFacts(profile: WorkloadProfile, overrides: readonly string[] | undefined): Facts {
  const facts: Facts = { fileSizeBytes: profile.fileSizeBytes, passSec: profile.runtimeSec, rampSec: profile.rampSec, warmupPass: profile.warmupPass, ...(profile.warmupPass ? { warmupPassSec: profile.warmupPassSec ?? profile.runtimeSec } : {}), intervalSec: profile.intervalSec, direct: profile.direct };
  for (const text of overrides ?? []) {
    const eq = text.indexOf('=');
    if (eq > 0) facts[`set:${text.slice(0, eq).trim()}`] = text.slice(eq + 1);
  }
  return facts;
}

/** What every record of a permutation says about the disk it measured (a step found it in the guest). */
function targetFacts(t: MeasuredTarget | undefined): Record<string, string | number> {
  return t ? { ...t.facts } : {};
}

function recordFor(perm: PermutationPlan, runId: string, repetition: number, test: WorkloadTest, o: TestOutcome, tool: string, facts: Facts): ResultRecord {
  return {
    runId,
    permutationId: perm.permutationId,
    axes: perm.axes,
    repetition,
    test: { id: test.id, pattern: test.pattern, blockSizeBytes: test.blockSizeBytes, queueDepth: test.queueDepth, threads: test.threads, readPercent: test.readPercent },
    iops: o.iops,
    bytesPerSecond: o.bytesPerSecond,
    latencyUs: o.latencyUs,
    // kept where the VMs of a pass are merged (results/vm-aggregate.ts); elsewhere it would only grow every record by kilobytes
    ...(o.latencyHistogram && VM_COUNT_AXIS in perm.axes ? { latencyHistogram: o.latencyHistogram } : {}),
    cpuPercent: o.cpuPercent,
    tool: { name: tool, version: o.toolVersion },
    rawPath: o.rawPath,
    metadata: { profile: perm.workload, passes: o.passes, ...o.metadata, ...facts },
  };
}

/**
 * The test's first measured pass started on a region nothing had written in this provisioning: no
 * pre-fill, no unscored pass before it, the first test of the first repetition on the disk (each
 * span is one provisioning: with reprovision every repetition is on a new disk), and a test that
 * writes (a read of a file target makes fio lay the file out first). What `settings.prefill: false`
 * with a write test first measures on purpose: the cost of first writes (thin, lazy-zeroed, dynamic).
 */
function startsUnwritten(fill: PrefillOutcome | null, profile: WorkloadProfile, firstOnDisk: boolean, index: number, test: WorkloadTest): boolean {
  return !fill?.filled && !profile.warmupPass && firstOnDisk && index === 0 && test.readPercent < 100;
}

/** A `vm.count` permutation's VM count (the axis the vSphere planner read), or undefined. */
function vmCount(perm: PermutationPlan): number | undefined {
  const v = perm.axes['vm.count'];
  return typeof v === 'number' ? v : undefined;
}

/** The workload on every VM of a `vm.count` permutation at once (run/vm-members.ts); records made as runTest makes them. */
async function runMembers(perm: PermutationPlan, c: PermContext, members: ReadonlyMap<number, MeasuredTarget>, span: RepSpan, hostCtx: ProviderContext): Promise<ResultRecord[]> {
  const profile = c.plan.profiles[perm.workload];
  if (!profile) throw new InternalError(`plan has no profile "${perm.workload}"`);
  const targets = memberTargets(members, vmCount(perm)!);
  const created = await createdForHost(perm, c);
  return runMemberWorkload(
    {
      perm,
      profile,
      store: c.store,
      workload: c.workload,
      signal: c.signal,
      owner: c.owner,
      timeoutSlackSec: c.workloadSlackSec,
      emit: c.emit,
      sleep: c.sleep ?? defaultSleep,
      storeRaw: async (rel, raw) => storeRaw(rawDirOf(c.store), rel, raw),
      // each VM's own disk: the objects the steps created in that clone (its disk's row names it)
      observe: (t) => c.provider?.observeHost?.(created.filter((o) => o.data.vm === t.member.vm), hostCtx) ?? null,
      onStopped: (test, stop, where) => void record(() => c.store.appendJournal(perm.permutationId, `workload ${test.id} on ${where}`, stop.outcome === 'still-running' || stop.outcome === 'unknown' ? 'stop-failed' : 'stopped', stop)),
      makeRecord: (rep, i, test, o, target, fill) => {
        const filled = prefillFacts(fill.outcome, fill.at);
        const facts: Facts = { aggregate: profile.aggregate, ...conditionFacts(profile, c.plan.overrides), ...filled, ...writeDataFacts(c.workload.tool, profile, filled['prefill'] === true, FILL_BLOCK_BYTES), ...targetFacts(target), ...(startsUnwritten(fill.outcome, profile, rep === span.first, i, test) ? { unwrittenAtStart: true } : {}) };
        return recordFor(perm, c.plan.runId, rep, test, o, c.workload.tool, facts);
      },
    },
    targets,
    span,
  );
}

async function runWorkload(perm: PermutationPlan, c: PermContext, target: MeasuredTarget | undefined, hostCtx: ProviderContext, span: RepSpan): Promise<ResultRecord[]> {
  const profile = c.plan.profiles[perm.workload];
  if (!profile) throw new InternalError(`plan has no profile "${perm.workload}"`);
  // the disk the provider attached, found in the guest by a step: never a path in its place
  if (c.workload.measuresAttachedDisk && !target) throw new InternalError(`${perm.permutationId}: no step found the attached disk in the guest; nothing is measured`);
  // the host's view of each test (vSphere counters, esxtop), when the provider offers one
  // given what the permutation's steps created, as recorded (the disk it watches)
  // (read only for a provider that observes: the ledger is not read for nothing)
  const observer = c.provider?.observeHost?.(await createdForHost(perm, c), hostCtx) ?? null;
  return new WorkloadRun(perm, c, profile, target, observer).run(span);
}

/**
 * What the permutation's steps created, as recorded, for the provider's host observer (the disk it
 * watches); read only for a provider that observes: the ledger is not read for nothing.
 */
async function createdForHost(perm: PermutationPlan, c: PermContext): Promise<CreatedObject[]> {
  if (!c.provider?.observeHost) return [];
  const rows = await c.store.ledger({ permutationId: perm.permutationId });
  return rows.filter((r) => r.state === 'created' && r.objectId !== null).map((r) => ({ kind: r.kind, name: r.name, provider: r.provider, id: r.objectId!, data: r.data }));
}

/** One permutation's workload: its repetitions, each test with its retries on a lost connection, the pre-fill once. */
class WorkloadRun {
  // The pre-fill: once per permutation (the disk is new), before the first pass of the first
  // repetition. It runs inside the first test's attempt, so a connection lost during the fill is
  // handled like one lost during a pass: the fio it left is stopped, and the fill is done again.
  private fill: PrefillOutcome | null = null;
  private fillAt: string | null = null;
  private fillPending: boolean;
  /** the span's first repetition: the first on its provisioning's disk */
  private firstRep = 1;
  /** what the host saw of each test of the repetition, settling while the next test runs */
  private readonly hostPending: Array<Promise<void>> = [];

  constructor(
    private readonly perm: PermutationPlan,
    private readonly c: PermContext,
    private readonly profile: WorkloadProfile,
    private readonly target: MeasuredTarget | undefined,
    private readonly observer: HostObserver | null,
  ) {
    this.fillPending = c.workload.prepare !== undefined;
  }

  /** The span's repetitions, each stored as it ends; returns what this span recorded (repeat-until-stable decides on it). */
  async run(span: RepSpan): Promise<ResultRecord[]> {
    const { c, perm } = this;
    const sleep = c.sleep ?? defaultSleep;
    const stored: ResultRecord[] = [];
    this.firstRep = span.first;
    for (let rep = span.first; rep <= span.last; rep++) {
      const records: ResultRecord[] = [];
      for (const [i, test] of this.profile.tests.entries()) {
        if (c.signal.aborted) throw new Error('interrupted');
        c.lease?.check();
        if (i > 0 && this.profile.intervalSec > 0) await sleep(this.profile.intervalSec * 1000, c.signal);
        c.emit({ type: 'step', permutationId: perm.permutationId, step: `rep ${rep}/${perm.repetitions} ${test.id}`, operation: c.workload.tool });
        const rec = await this.runTest(rep, i, test);
        records.push(rec);
        // a mixed job's read and write halves, as records of their own beside its total
        for (const half of mixHalves(rec)) records.push(half);
        c.emit({ type: 'result', permutationId: perm.permutationId, repetition: rep, testId: test.id, iops: rec.iops, bytesPerSecond: rec.bytesPerSecond });
      }
      await Promise.all(this.hostPending.splice(0));
      await c.store.addRepetition(perm.permutationId, rep, records);
      stored.push(...records);
      if (span.enough?.(stored)) break;
    }
    return stored;
  }

  private async prefill(runner: CommandRunner, onStopped: (stop: GroupStop) => void): Promise<void> {
    const { c, perm, profile } = this;
    if (!this.fillPending || !c.workload.prepare) return;
    c.emit({ type: 'step', permutationId: perm.permutationId, step: profile.prefill === false ? 'prepare' : 'prefill', operation: c.workload.tool });
    this.fillAt = new Date().toISOString();
    this.fill = await c.workload.prepare(runner, profile, { signal: c.signal, owner: c.owner, timeoutSlackSec: c.workloadSlackSec, onStopped, ...(this.target ? { target: this.target } : {}) });
    this.fillPending = false;
    const done = this.fill;
    await record(() => c.store.appendJournal(perm.permutationId, 'prefill', done ? (done.filled ? 'filled' : 'created') : 'skipped', done));
    if (done?.filled) c.emit({ type: 'message', level: 'info', text: `${perm.permutationId}: pre-filled ${done.bytes} bytes in ${done.seconds.toFixed(1)} s (${done.method})` });
  }

  /** Recorded before anything else runs there (a retry, teardown): the journal shows fio stopped first. */
  private recordStop(test: WorkloadTest, stop: GroupStop, target: string): void {
    const { c, perm } = this;
    // a synchronous callback (the workload's onStopped): the store keeps call order (results/port.ts)
    void record(() => c.store.appendJournal(perm.permutationId, `workload ${test.id}`, stop.outcome === 'still-running' || stop.outcome === 'unknown' ? 'stop-failed' : 'stopped', stop));
    const where = `${c.workload.tool}${stop.pids?.length ? ` (pids ${stop.pids.join(', ')})` : ''} on ${target}`;
    if (stop.outcome === 'still-running' || stop.outcome === 'unknown') {
      c.toolMayRun ??= `could not confirm that ${where} ended${stop.detail ? `: ${stop.detail}` : ''}`;
      c.emit({ type: 'message', level: 'error', permutationId: perm.permutationId, text: `could not confirm that ${where} ended${stop.detail ? `: ${stop.detail}` : ''}; its disk is left in place (not torn down under a writer)` });
    } else c.emit({ type: 'message', level: 'info', permutationId: perm.permutationId, text: stop.outcome === 'stopped' ? `stopped ${where} with SIG${stop.signal}` : `${where} had already ended` });
  }

  /**
   * One test of repetition `rep`, its record made. A lost SSH connection (RemoteCommandFailed
   * reason 'connection') is transient: reconnect and run the test again; its raw output is simply
   * rewritten.
   */
  private async runTest(rep: number, i: number, test: WorkloadTest): Promise<ResultRecord> {
    const { c, perm, profile } = this;
    const t: TestAttempts = { test, rep, firstError: null };
    const outcome = await withRetry(() => this.attempt(t), connectionLost, {
      ...c.retry,
      // one reconnect by default: a guest that stays unreachable fails the permutation quickly
      retries: c.retry?.retries ?? 1,
      signal: c.signal,
      onRetry: (err, n) => {
        t.firstError ??= err;
        c.emit({ type: 'message', level: 'warn', permutationId: perm.permutationId, text: `retrying ${test.id} (attempt ${n + 1}): ${redact(errorMessage(err))}` });
      },
    }).catch((err: unknown) => this.giveUp(t, err));
    const filled = prefillFacts(this.fill, this.fillAt);
    // what the tests and the fill wrote (write-data.ts): dedup and compression measure data, not only I/O
    const facts: Facts = { aggregate: profile.aggregate, ...conditionFacts(profile, c.plan.overrides), ...filled, ...writeDataFacts(c.workload.tool, profile, filled['prefill'] === true, FILL_BLOCK_BYTES), ...targetFacts(this.target), ...(startsUnwritten(this.fill, profile, rep === this.firstRep, i, test) ? { unwrittenAtStart: true } : {}) };
    const rec = recordFor(perm, c.plan.runId, rep, test, outcome, c.workload.tool, facts);
    if (t.hostSeen !== undefined && this.observer) {
      const source = this.observer.source;
      this.hostPending.push(t.hostSeen.then((h) => void (rec.host = typeof h === 'string' ? { source, unavailable: redact(h) } : h)));
    }
    return rec;
  }

  /** A test whose connection was lost may still run on the guest: stopped through the next connection before a retry starts a second one on the same file, or teardown removes its disk. */
  private async stopStranded(t: TestAttempts, runner: CommandRunner): Promise<void> {
    const g = t.strandedGroup;
    t.strandedGroup = undefined;
    if (g) this.recordStop(t.test, await stopGroup(runner, g), runner.target);
  }

  /** One attempt at a test: a connection (the kept one, or a new one), the pre-fill if still due, the test watched by the host. */
  private async attempt(t: TestAttempts): Promise<TestOutcome> {
    const { c } = this;
    let runner: CommandRunner;
    try {
      runner = await c.guest();
    } catch (err) {
      await c.dropGuest();
      throw err;
    }
    c.lease?.check();
    await this.stopStranded(t, runner);
    const onStopped = (stop: GroupStop) => this.recordStop(t.test, stop, runner.target);
    return this.prefill(runner, onStopped)
      .then(() => this.watchedTest(t, runner, onStopped))
      .catch(async (err: unknown) => {
        // A lost connection poisons the runner; the next attempt reconnects.
        t.strandedGroup = strandedGroupOf(err) ?? t.strandedGroup;
        await c.dropGuest();
        throw err;
      });
  }

  /** The test itself, the host watching its scored passes only (not the fill, pass 0 or the pause between tests). */
  private async watchedTest(t: TestAttempts, runner: CommandRunner, onStopped: (stop: GroupStop) => void): Promise<TestOutcome> {
    const { c, perm, observer } = this;
    c.lease?.check();
    const watch = observer ? scoredWatch(observer, c.signal) : null;
    const outcome = await c.workload
      .runTest(runner, t.test, this.profile, {
        signal: c.signal,
        owner: c.owner,
        timeoutSlackSec: c.workloadSlackSec,
        onStopped,
        ...(this.target ? { target: this.target } : {}),
        ...(watch ? { scored: watch.span } : {}),
        onRaw: async (test, pass, raw) => storeRaw(rawDirOf(c.store), `raw/${perm.permutationId}/rep${t.rep}/${test.id}.pass${pass}.${c.workload.tool === 'diskspd' ? 'xml' : 'json'}`, raw),
      })
      .catch(async (err: unknown) => {
        // a failed or interrupted test still ends its observation (esxtop would run on for up to 2 h)
        await watch?.abandon();
        throw err;
      });
    t.hostSeen = watch?.seen();
    return outcome;
  }

  /** No attempt is left, or the run was interrupted: one more connection to stop what the lost one left; the reason names what went wrong first. */
  private async giveUp(t: TestAttempts, err: unknown): Promise<never> {
    const { c } = this;
    if (t.strandedGroup) {
      try {
        await this.stopStranded(t, await c.guest());
      } catch (e) {
        await c.dropGuest();
        this.recordStop(t.test, { pgid: null, outcome: 'unknown', detail: `cannot reach the guest again: ${redact(errorMessage(e))}` }, 'the guest');
      }
    }
    // The reason names what went wrong first (the lost connection), then why retrying failed.
    if (t.firstError === null || t.firstError === err || errorMessage(t.firstError) === errorMessage(err)) throw err;
    throw new Error(`${errorMessage(t.firstError)}; retrying failed: ${errorMessage(err)}`, { cause: err });
  }
}

/** One test's attempts: the first error (named in the reason), a group a lost connection left, what the host saw. */
interface TestAttempts {
  test: WorkloadTest;
  rep: number;
  firstError: unknown;
  strandedGroup?: GroupFiles;
  hostSeen?: Promise<HostMetrics | string>;
}

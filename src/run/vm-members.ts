// The workload of a `vm.count` permutation (issue 32; docs/decisions/0091-vm-count.md): N VMs, each
// measuring its own disk in its own guest (MeasuredTarget.member), started together and measured
// over the same window. Every VM is prepared (connected, pre-filled) first; then each test's scored
// passes start behind a barrier: no VM's pass starts before every VM reached it, and all are sent at
// once. Each VM's actual start is what its fio says (the JSON's `timestamp_ms` less the job's
// runtime: when its I/O began, by the guest's clock); the largest difference is the pass's start
// skew. Over the bound (VM_START_SKEW_BOUND_MS, or a twentieth of the pass) the test is run once
// more; still over, its aggregate says so (`startSkewExceeded`). One member record per VM, pass and
// test, and one aggregate (results/vm-aggregate.ts) beside them. Where the provider watches the
// host, each VM's scored passes are watched on its own clone's disk (its member record's `host`), and
// the aggregate sums the shared datastore's figures (results/vm-host.ts).
//
// A connection lost to one VM's guest fails the permutation (no reconnect: the others' window would
// no longer be the same); teardown removes everything, and a resume redoes it whole.
import { errorMessage } from '../errors.ts';
import { redact } from '../input/secrets.ts';
import type { HostMetrics, HostObserver } from '../contract/host-metrics.ts';
import type { MeasuredTarget, WorkloadEndpoint } from '../contract/provider.ts';
import type { PermutationPlan } from '../contract/plan.ts';
import type { LedgerRow, RunStore } from '../results/port.ts';
import type { ResultRecord, VmShare } from '../results/record.ts';
import { aggregateVmPass } from '../results/vm-aggregate.ts';
import { aggregateVmHost } from '../results/vm-host.ts';
import { mixHalves } from '../results/mix-halves.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import type { GroupStop } from '../ssh/process-group.ts';
import type { ScoredSpan, TestOutcome } from '../workloads/passes.ts';
import type { PrefillOutcome, WorkloadProfile, WorkloadTest } from '../workloads/spec.ts';
import type { ProgressEvent } from './progress.ts';
import { scoredWatch } from './scored-watch.ts';

/** The start skew a pass may have (ms), or a twentieth of the pass when that is longer. */
export const VM_START_SKEW_BOUND_MS = 1000;

export function skewBoundMs(profile: Pick<WorkloadProfile, 'runtimeSec'>): number {
  return Math.max(VM_START_SKEW_BOUND_MS, (profile.runtimeSec * 1000) / 20);
}

/** What the member run needs of the executor: its context, and how a record is made (executor.ts recordFor and facts). */
export interface MemberRunContext {
  perm: PermutationPlan;
  profile: WorkloadProfile;
  store: RunStore;
  workload: WorkloadEndpoint;
  signal: AbortSignal;
  owner: string;
  timeoutSlackSec?: number | undefined;
  emit: (e: ProgressEvent) => void;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  storeRaw: (relPath: string, raw: string) => Promise<string | null>;
  onStopped: (test: WorkloadTest, stop: GroupStop, where: string) => void;
  /**
   * How the host watches one VM's disk (its clone's disk under test: Provider.observeHost given
   * that clone's objects); null or absent when the provider does not watch the host
   */
  observe?: ((target: Member['target']) => HostObserver | null) | undefined;
  /** the record of one VM's test, with everything the executor puts in every record */
  makeRecord: (rep: number, index: number, test: WorkloadTest, outcome: TestOutcome, target: MeasuredTarget, fill: { outcome: PrefillOutcome | null; at: string | null }) => ResultRecord;
}

/** A barrier of `n` parties: arrive() resolves when all arrived; broken, every waiter rejects. */
export class Barrier {
  private arrived = 0;
  private readonly waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private broken: unknown = null;
  constructor(private readonly n: number) {}

  arrive(): Promise<void> {
    if (this.broken !== null) return Promise.reject(this.broken instanceof Error ? this.broken : new Error(errorMessage(this.broken)));
    this.arrived++;
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.arrived >= this.n) for (const w of this.waiters.splice(0)) w.resolve();
    return p;
  }

  break(err: unknown): void {
    this.broken ??= err;
    for (const w of this.waiters.splice(0)) w.reject(err);
  }
}

/**
 * When fio's I/O began and ended by the guest's clock (ms since the epoch): its JSON's timestamp_ms
 * (written when the jobs ended) less the longest job's runtime; null when the output says neither.
 */
export function fioIoSpanMs(raw: string): { start: number; end: number } | null {
  try {
    const j = JSON.parse(raw.slice(raw.indexOf('{'))) as { timestamp_ms?: unknown; jobs?: Array<{ job_runtime?: unknown }> };
    const runtimes = (j.jobs ?? []).map((x) => x.job_runtime).filter((x): x is number => typeof x === 'number');
    if (typeof j.timestamp_ms !== 'number' || !runtimes.length) return null;
    return { start: j.timestamp_ms - Math.max(...runtimes), end: j.timestamp_ms };
  } catch {
    return null;
  }
}

/** A guest's clock against this machine's: `offsetMs` = guest − here, within ± `uncertaintyMs` (half the round trip). */
export interface GuestClock {
  offsetMs: number;
  uncertaintyMs: number;
}

/**
 * The guest's clock read once (`date +%s%N`, GNU date: ns since the epoch) and set against this
 * machine's midpoint of the call. Each VM's start is read by its own guest's clock (fioIoSpanMs): two
 * guests whose clocks differ by 3 s would show 3 s of start skew that is not there, or hide one that
 * is. Null when the guest cannot say (another date, no answer): its starts are then taken as they are.
 */
export async function guestClock(runner: CommandRunner, now: () => number = Date.now): Promise<GuestClock | null> {
  const t0 = now();
  try {
    const r = await runner.run('date +%s%N');
    const t1 = now();
    const m = /^(\d{16,20})$/.exec(r.stdout.trim());
    if (r.exitCode !== 0 || !m) return null;
    return { offsetMs: Number(BigInt(m[1]!) / 1_000_000n) - (t0 + t1) / 2, uncertaintyMs: (t1 - t0) / 2 };
  } catch {
    return null;
  }
}

/** One VM of the pass: its target, its guest connection, its pre-fill, its guest's clock. */
interface Member {
  target: MeasuredTarget & { member: { index: number; vm: string } };
  runner: CommandRunner;
  fill: PrefillOutcome | null;
  fillAt: string | null;
  clock: GuestClock | null;
  /** the host's watch of this VM's disk, made once per permutation */
  observer: HostObserver | null;
}

/** What one VM's attempt at a test saw: its outcome, when each scored pass began (tool, else controller), its window. */
interface MemberTest {
  outcome: TestOutcome;
  passStarts: number[];
  startedAt: number;
  endedAt: number;
  /** what the host saw of this VM's disk over its scored passes, or why not; absent when not watched */
  host?: Promise<HostMetrics | string>;
}

/** The members' targets in member order, each with its member (refused when one is missing or said twice). */
export function memberTargets(targets: ReadonlyMap<number, MeasuredTarget>, count: number): Member['target'][] {
  const out: Member['target'][] = [];
  for (let k = 1; k <= count; k++) {
    const t = targets.get(k);
    if (!t?.member) throw new Error(`vm.count ${count}: no step found the disk of VM ${k} in its guest; nothing is measured`);
    out.push(t as Member['target']);
  }
  return out;
}

export async function runMemberWorkload(c: MemberRunContext, targets: Member['target'][], span: { first: number; last: number; enough?: (stored: readonly ResultRecord[]) => boolean }): Promise<ResultRecord[]> {
  const connectTo = c.workload.connectTo?.bind(c.workload);
  if (!connectTo) throw new Error(`${c.perm.permutationId}: the target's workload cannot reach the guests of the VMs it cloned`);
  const opened = await Promise.allSettled(targets.map((t) => connectTo(t.member.vm)));
  const members: Member[] = [];
  try {
    for (const [k, o] of opened.entries()) {
      if (o.status === 'rejected') throw new Error(`cannot reach the guest of VM ${targets[k]!.member.vm}: ${redact(errorMessage(o.reason))}`, { cause: o.reason });
      members.push({ target: targets[k]!, runner: o.value, fill: null, fillAt: null, clock: null, observer: c.observe?.(targets[k]!) ?? null });
    }
    // each guest's clock against this machine's: the starts fio reports are put on one clock
    await Promise.all(members.map(async (m) => void (m.clock = await guestClock(m.runner))));
    await prefillAll(c, members);
    return await runRepetitions(c, members, span);
  } finally {
    await Promise.all(opened.map((o) => (o.status === 'fulfilled' ? o.value.close().catch(() => undefined) : Promise.resolve())));
  }
}

/** Every VM's pre-fill, at once (each writes its own disk), before any pass. */
async function prefillAll(c: MemberRunContext, members: Member[]): Promise<void> {
  const prepare = c.workload.prepare?.bind(c.workload);
  if (!prepare) return;
  c.emit({ type: 'step', permutationId: c.perm.permutationId, step: `${c.profile.prefill === false ? 'prepare' : 'prefill'} ${members.length} VMs`, operation: c.workload.tool });
  await Promise.all(
    members.map(async (m) => {
      m.fillAt = new Date().toISOString();
      m.fill = await prepare(m.runner, c.profile, { signal: c.signal, owner: c.owner, timeoutSlackSec: c.timeoutSlackSec, onStopped: (s) => c.onStopped({ id: 'prefill' } as WorkloadTest, s, m.runner.target), target: m.target });
    }),
  );
  await c.store.appendJournal(c.perm.permutationId, 'prefill', 'members', members.map((m) => ({ vm: m.target.member.vm, fill: m.fill })));
}

async function runRepetitions(c: MemberRunContext, members: Member[], span: { first: number; last: number; enough?: (stored: readonly ResultRecord[]) => boolean }): Promise<ResultRecord[]> {
  const stored: ResultRecord[] = [];
  for (let rep = span.first; rep <= span.last; rep++) {
    const records: ResultRecord[] = [];
    // what the host saw of each test, settling while the next test runs (as executor.ts WorkloadRun)
    const hostPending: Array<Promise<void>> = [];
    for (const [i, test] of c.profile.tests.entries()) {
      c.signal.throwIfAborted();
      if (i > 0 && c.profile.intervalSec > 0) await c.sleep(c.profile.intervalSec * 1000, c.signal);
      c.emit({ type: 'step', permutationId: c.perm.permutationId, step: `rep ${rep}/${c.perm.repetitions} ${test.id} on ${members.length} VMs`, operation: c.workload.tool });
      const pass = await measuredTogether(c, members, rep, i, test);
      records.push(...pass.records);
      hostPending.push(pass.host);
    }
    await Promise.all(hostPending);
    await c.store.addRepetition(c.perm.permutationId, rep, records);
    stored.push(...records);
    if (span.enough?.(stored.filter((r) => r.vm?.role === 'aggregate'))) break;
  }
  return stored;
}

/**
 * One test on every VM at once, run again once when its start skew is over the bound; its member
 * records and aggregate, and `host`: settles once the host's figures are in those records.
 */
async function measuredTogether(c: MemberRunContext, members: Member[], rep: number, i: number, test: WorkloadTest): Promise<{ records: ResultRecord[]; host: Promise<void> }> {
  const bound = skewBoundMs(c.profile);
  let seen = await attemptTogether(c, members, rep, test);
  let skew = startSkew(seen);
  if (skew > bound) {
    c.emit({ type: 'message', level: 'warn', permutationId: c.perm.permutationId, text: `${test.id}: the ${members.length} VMs started ${skew} ms apart (bound ${bound} ms); running it again` });
    seen = await attemptTogether(c, members, rep, test);
    skew = startSkew(seen);
  }
  const out: ResultRecord[] = [];
  const whole: ResultRecord[] = [];
  for (const [k, m] of members.entries()) {
    const s = seen[k]!;
    const rec = c.makeRecord(rep, i, test, s.outcome, m.target, { outcome: m.fill, at: m.fillAt });
    const share: VmShare = { role: 'member', count: members.length, index: m.target.member.index, name: m.target.member.vm, startedAt: iso(s.startedAt), endedAt: iso(s.endedAt) };
    rec.vm = share;
    whole.push(rec);
    out.push(rec, ...mixHalves(rec).map((h) => ({ ...h, vm: share })));
  }
  const agg = aggregateVmPass(whole);
  const shared = { startedAt: Math.max(...seen.map((s) => s.startedAt)), endedAt: Math.min(...seen.map((s) => s.endedAt)) };
  agg.vm = { ...agg.vm, role: 'aggregate', count: members.length, startedAt: iso(shared.startedAt), endedAt: iso(shared.endedAt), startSkewMs: skew };
  // what names one VM's disk (its device, WWN, VM) is no fact of the aggregate
  const perVm = new Set(members.flatMap((m) => Object.keys(m.target.facts)));
  const facts = Object.fromEntries(Object.entries(agg.metadata ?? {}).filter(([k]) => !perVm.has(k)));
  // two guests' clocks each known within ± their uncertainty: the skew between them within the two largest
  const unc = members.map((m) => m.clock?.uncertaintyMs ?? null);
  const clocks: Record<string, string | number> = unc.every((u): u is number => u !== null) ? { startSkewClockUncertaintyMs: Math.round([...unc].sort((a, b) => b - a).slice(0, 2).reduce((a, b) => a + b, 0)) } : { startSkewClock: 'a guest\'s clock could not be read: its starts are by its own clock' };
  agg.metadata = { ...facts, startSkewBoundMs: bound, ...clocks, ...(skew > bound ? { startSkewExceeded: true } : {}) };
  c.emit({ type: 'result', permutationId: c.perm.permutationId, repetition: rep, testId: test.id, iops: agg.iops, bytesPerSecond: agg.bytesPerSecond });
  return { records: [...out, agg], host: hostOfPass(members, seen, whole, agg) };
}

/** Each member record's `host` (its own clone's disk), then the aggregate's (the shared datastore, summed: results/vm-host.ts). */
async function hostOfPass(members: readonly Member[], seen: readonly MemberTest[], whole: readonly ResultRecord[], agg: ResultRecord): Promise<void> {
  if (!seen.some((s) => s.host !== undefined)) return;
  await Promise.all(
    seen.map(async (s, k) => {
      const source = members[k]!.observer?.source;
      if (s.host === undefined || source === undefined) return;
      const h = await s.host;
      whole[k]!.host = typeof h === 'string' ? { source, unavailable: redact(h) } : h;
    }),
  );
  const host = aggregateVmHost(whole);
  if (host) agg.host = host;
}

/** The largest difference between the VMs' starts of one scored pass, over the passes (ms). */
function startSkew(seen: readonly MemberTest[]): number {
  const passes = Math.min(...seen.map((s) => s.passStarts.length));
  let skew = 0;
  for (let p = 0; p < passes; p++) {
    const starts = seen.map((s) => s.passStarts[p]!);
    skew = Math.max(skew, Math.max(...starts) - Math.min(...starts));
  }
  return Math.round(skew);
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Every VM runs the test; each scored pass starts behind a barrier of all of them. One failing breaks the barrier: all fail. */
async function attemptTogether(c: MemberRunContext, members: Member[], rep: number, test: WorkloadTest): Promise<MemberTest[]> {
  const barriers = new Map<number, Barrier>();
  const barrier = (pass: number) => barriers.get(pass) ?? barriers.set(pass, new Barrier(members.length)).get(pass)!;
  const runs = members.map((m) => memberTest(c, m, rep, test, barrier));
  const settled = await Promise.allSettled(runs.map((r) => r.catch((err: unknown) => { for (const b of [...barriers.values(), barrier(1)]) b.break(err); throw err; })));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<MemberTest>).value);
}

function memberTest(c: MemberRunContext, m: Member, rep: number, test: WorkloadTest, barrier: (pass: number) => Barrier): Promise<MemberTest> {
  const sent: number[] = [];
  const tool: Array<{ start: number; end: number } | null> = [];
  let endedAt = 0;
  // this VM's disk watched from the host over its scored passes: started before the barrier (the
  // host's clock read before any VM's pass begins), stopped right after its last pass
  const watch = m.observer ? scoredWatch(m.observer, c.signal) : null;
  const scored: ScoredSpan = {
    start: async () => {
      await watch?.span.start();
      await barrier(1).arrive();
      sent.push(Date.now());
    },
    pass: async (n) => {
      await barrier(n).arrive();
      sent.push(Date.now());
    },
    end: async () => {
      endedAt = Date.now();
      await watch?.span.end();
    },
  };
  const k = m.target.member.index;
  return c.workload
    .runTest(m.runner, test, c.profile, {
      signal: c.signal,
      owner: c.owner,
      timeoutSlackSec: c.timeoutSlackSec,
      onStopped: (s) => c.onStopped(test, s, m.runner.target),
      target: m.target,
      scored,
      onRaw: async (t, pass, raw) => {
        if (pass >= 1) tool[pass - 1] = c.workload.tool === 'fio' ? fioIoSpanMs(raw) : null;
        return c.storeRaw(`raw/${c.perm.permutationId}/rep${rep}/vm${k}/${t.id}.pass${pass}.${c.workload.tool === 'diskspd' ? 'xml' : 'json'}`, raw);
      },
    })
    .then(
      (outcome) => {
        // the tool's own start where it says one (by the guest's clock, set to this machine's), else when the pass was sent
        const shift = m.clock?.offsetMs ?? 0;
        const passStarts = sent.map((at, p) => (tool[p] ? tool[p].start - shift : at));
        const end = tool[sent.length - 1]?.end;
        const last = end === undefined ? undefined : end - shift;
        return { outcome, passStarts, startedAt: passStarts[0] ?? Date.now(), endedAt: last ?? (endedAt || Date.now()), ...(watch ? { host: watch.seen() } : {}) };
      },
      async (err: unknown) => {
        // a failed test still ends its observation
        await watch?.abandon();
        throw err;
      },
    );
}

/** A member's disk: `<prefix>-vm<k>-disk` (providers/vsphere/vm-count.ts memberSteps). */
const MEMBER_DISK = /-vm\d+-disk$/;

/**
 * The VMs whose guests a killed `vm.count` permutation may have left a tool running in, from the
 * live ledger rows: its clones (the `vm` rows created) and the existing VMs the inventory names
 * (`scaleVms`) that got a member disk of the run (a created member disk row whose VM the run did not
 * make: no `ss-` name). A named VM with no disk of the run ran nothing of it.
 */
export function memberVmsOf(rows: readonly LedgerRow[]): string[] {
  const clones = rows.filter((r) => r.kind === 'vm' && r.state === 'created').map((r) => r.name);
  const named = rows
    .filter((r) => r.kind === 'disk' && r.state === 'created' && MEMBER_DISK.test(r.name))
    .map((r) => r.data.vm)
    .filter((vm): vm is string => typeof vm === 'string' && !vm.startsWith('ss-'));
  return [...new Set([...clones, ...named])];
}

/**
 * Resuming a `vm.count` permutation: what the dead process left running in each clone's guest
 * (its fio, by the run's token: process-group.ts), stopped before teardown detaches any clone's
 * disk. The VMs are memberVmsOf the live ledger rows; one whose guest cannot be
 * reached is said so ('unknown'), and nothing of the permutation is torn down under it.
 */
export async function stopMemberLeftovers(workload: WorkloadEndpoint, vms: readonly string[], runId: string, target: string): Promise<Array<{ vm: string; stop: GroupStop }>> {
  const stop = workload.stopLeftovers?.bind(workload);
  const connectTo = workload.connectTo?.bind(workload);
  if (!stop || !vms.length) return [];
  return Promise.all(
    vms.map(async (vm) => {
      if (!connectTo) return { vm, stop: { pgid: null, outcome: 'unknown' as const, detail: `the workload cannot reach the guest of ${vm}` } };
      let runner: CommandRunner | undefined;
      try {
        runner = await connectTo(vm);
        return { vm, stop: await stop(runner, runId, target) };
      } catch (err) {
        return { vm, stop: { pgid: null, outcome: 'unknown' as const, detail: `cannot reach the guest of ${vm}: ${redact(errorMessage(err))}` } };
      } finally {
        await runner?.close().catch(() => undefined);
      }
    }),
  );
}

// The plan is data: every permutation with its id, axes, workload and provisioning steps, in run
// order, with a duration estimate. Building it does no I/O; `run` consumes only the plan.
import { InternalError } from '../errors.ts';
import type { Playbook } from '../config/playbook.ts';
import { matrixAxes } from '../config/playbook.ts';
import type { Axes } from '../contract/axis.ts';
import type { PlannedStep, ProviderName } from '../contract/provider.ts';
import type { AxisDef, PermutationPlan, Replication, RunPlan, SerialisedResource } from '../contract/plan.ts';
import type { SharedResource } from '../contract/provider.ts';
import { resolveWorkload } from '../workloads/custom.ts';
import { rawTestTarget } from '../workloads/test-target.ts';
import type { WorkloadProfile } from '../workloads/spec.ts';
import { parseSize } from '../config/size.ts';
import { ASSUMED_FILL_MB_PER_SEC } from '../workloads/prefill.ts';
import { estimatePermutationSec, provisionSec } from './estimate.ts';
import { axesKey, expandMatrix, shuffle } from './matrix.ts';
import { countPermutations, MAX_PERMUTATIONS } from '../config/matrix-size.ts';
import { CORE_AXES } from '../contract/axis.ts';
import { ownedPrefix, permutationId } from './permutation.ts';

export { rawTestTarget } from '../workloads/test-target.ts';

export type StepPlanner = (axes: Axes, names: { prefix: string }) => PlannedStep[];

/** What the planner needs to know of one target. */
export interface TargetPlanOptions {
  provider: ProviderName;
  /** the provisioning steps of one permutation (from the target's provider); none for local/ssh */
  planSteps?: StepPlanner;
  /** describes where the workload runs, for the workload step's arguments */
  workloadTarget?: Record<string, unknown>;
  /** where the workload step runs (default: the target's provider) */
  workloadProvider?: ProviderName;
  /** the benchmark tool (default fio) */
  workloadTool?: 'fio' | 'diskspd';
  /** what the target uses that another target may use too (ProviderModule.sharedResources) */
  resources?: readonly SharedResource[];
  /** the matrix axes its provider takes (AxisSpec names); with several targets, the others it lacks (playbook lackingAxes) */
  axes?: readonly string[];
}

export interface PlanOptions extends TargetPlanOptions {
  runId: string;
  /** the round orders' seed when the playbook sets none (repeat.seed); the caller draws it */
  seed?: number;
  /** for a playbook that lists targets: each one's options by name (the top-level ones are unused) */
  targets?: Record<string, TargetPlanOptions>;
}

/** A matrix workload value → the profile to run, with the playbook's timing overrides applied. */
export function resolveProfiles(pb: Playbook): Record<string, WorkloadProfile> {
  const out: Record<string, WorkloadProfile> = {};
  const s = pb.settings ?? {};
  for (const name of pb.matrix.workload.profile) {
    const base = resolveWorkload(pb.workloads?.[name] ?? name);
    out[name] = {
      ...base,
      fileSizeBytes: s.fileSize !== undefined ? parseSize(s.fileSize) : base.fileSizeBytes,
      runtimeSec: s.runtimeSec ?? base.runtimeSec,
      rampSec: s.rampSec ?? base.rampSec,
      passes: s.passes ?? base.passes,
      warmupPass: s.warmupPass ?? base.warmupPass,
      prefill: s.prefill ?? base.prefill ?? true,
      ...(s.writeData !== undefined ? { writeData: s.writeData } : base.writeData !== undefined ? { writeData: base.writeData } : {}),
      intervalSec: s.intervalSec ?? base.intervalSec,
      direct: s.direct ?? base.direct,
      aggregate: s.aggregate ?? base.aggregate,
    };
  }
  return out;
}

/**
 * The playbook's axes and permutations in playbook order (before any shuffle): the matrix, with a
 * listed `target` as the first axis, `exclude` and `include` applied. `validate` dry-plans exactly these.
 * `takes`: for a list of targets, the axes each one's provider takes (else every axis): a target
 * that lacks an axis another takes runs once, without it (`lackingAxes: once`, the default), or
 * once per value (`perValue`).
 */
export function expandPlaybook(
  pb: Pick<Playbook, 'matrix' | 'include' | 'exclude' | 'lackingAxes'>,
  target: string | string[],
  takes?: (target: string) => readonly string[] | undefined,
): { axes: AxisDef[]; permutations: Axes[] } {
  const axes: AxisDef[] = typeof target !== 'string' ? [{ name: 'target', values: target }, ...matrixAxes(pb.matrix)] : matrixAxes(pb.matrix);
  // validate refuses this at the playbook's line; here it only keeps a plan from exhausting memory
  const count = countPermutations(axes, { include: pb.include, exclude: pb.exclude });
  if (count > BigInt(MAX_PERMUTATIONS)) throw new InternalError(`expandPlaybook: ${count} permutations exceed the limit of ${MAX_PERMUTATIONS} (validate refuses this first)`);
  const permutations = expandMatrix(axes, { include: pb.include, exclude: pb.exclude });
  if (typeof target === 'string' || !takes || (pb.lackingAxes ?? 'once') !== 'once') return { axes, permutations };
  return { axes, permutations: withoutLackedAxes(permutations, axes, takes) };
}

/** Each permutation without the axes its target lacks; the ones that then repeat another, dropped. */
function withoutLackedAxes(perms: readonly Axes[], axes: readonly AxisDef[], takes: (target: string) => readonly string[] | undefined): Axes[] {
  const lacked = new Map<string, string[]>();
  const lackedBy = (t: string): string[] => {
    let l = lacked.get(t);
    if (!l) {
      const own = takes(t);
      l = own ? axes.map((a) => a.name).filter((n) => n !== 'target' && !CORE_AXES.includes(n) && !own.includes(n)) : [];
      lacked.set(t, l);
    }
    return l;
  };
  const seen = new Set<string>();
  const out: Axes[] = [];
  for (const p of perms) {
    const drop = lackedBy(String(p.target));
    const kept = drop.length ? Object.fromEntries(Object.entries(p).filter(([k]) => !drop.includes(k))) : p;
    const key = axesKey(kept);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(kept);
  }
  return out;
}

/**
 * What two or more of the listed targets share, by key, with the targets in the given order:
 * those targets run one after the other (the executor holds each key while a permutation runs).
 */
export function serialisedResources(targets: ReadonlyArray<{ name: string; resources?: readonly SharedResource[] | undefined }>): SerialisedResource[] {
  const byKey = new Map<string, SerialisedResource>();
  for (const t of targets) {
    for (const r of t.resources ?? []) {
      const entry = byKey.get(r.key) ?? { key: r.key, what: r.what, targets: [] };
      if (!entry.targets.includes(t.name)) entry.targets.push(t.name);
      byKey.set(r.key, entry);
    }
  }
  return [...byKey.values()].filter((e) => e.targets.length > 1);
}

export function buildPlan(pb: Playbook, target: string | string[], opts: PlanOptions): RunPlan {
  // Several targets: `target` becomes the first axis, so each target's permutations get their own
  // ids and reports compare targets like any other axis. One target adds no axis (ids unchanged).
  const listed = typeof target !== 'string';
  const targetOpts = (name: string): TargetPlanOptions => {
    const t = opts.targets?.[name];
    if (!t) throw new InternalError(`buildPlan: no options for target "${name}"`);
    return t;
  };
  const { axes, permutations: expanded } = expandPlaybook(pb, target, (name) => opts.targets?.[name]?.axes);
  const profiles = resolveProfiles(pb);
  let perms = expanded;
  if (pb.order?.randomize) perms = shuffle(perms, pb.order.seed ?? 1);
  // One list of test ids per profile, shared by its permutations' workload steps (a plan is
  // read-only data): 100,000 permutations would otherwise hold 100,000 copies.
  const testIds = new Map(Object.entries(profiles).map(([name, p]) => [name, p.tests.map((t) => t.id)]));
  // The workload step depends on the profile and the target only: one frozen step per pair, shared
  // by their permutations (a plan is read-only data; 100,000 copies were ~10% of a large plan's heap).
  const workloadSteps = new Map<string, PlannedStep>();
  const workloadStep = (workload: string, targetName: string, t: TargetPlanOptions): PlannedStep => {
    const key = JSON.stringify([workload, targetName]);
    let step = workloadSteps.get(key);
    if (!step) {
      const profile = profiles[workload]!;
      // writing to a raw device destroys what it holds: the workload step is destructive then
      const raw = rawTestTarget(t.workloadTarget?.testFile, t.workloadTool ?? 'fio');
      step = deepFreeze({
        step: 'workload',
        provider: t.workloadProvider ?? t.provider,
        operation: t.workloadTool ?? 'fio',
        // in run order (CrystalDiskMark 5–8: every read, then every write), each after an unscored pass
        // when warmupPass; the test region pre-filled once first when prefill (workloads/prefill.ts)
        arguments: { profile: workload, prefill: profile.prefill !== false, warmupPass: profile.warmupPass, tests: testIds.get(workload)!, repetitions: pb.repeat.max, ...(t.workloadTarget ?? {}) },
        destructive: raw !== undefined,
        ...(raw !== undefined ? { destroys: [raw] } : {}),
      });
      workloadSteps.set(key, step);
    }
    return step;
  };
  const fillMBps = pb.settings?.prefillMBps ?? ASSUMED_FILL_MB_PER_SEC;
  const { repeat } = pb;
  const sums = { total: 0, best: 0, provision: 0 };
  const permutations: PermutationPlan[] = perms.map((a, index) => {
    const id = permutationId(a);
    const workload = String(a['workload.profile']);
    const profile = profiles[workload]!;
    const t = listed ? targetOpts(String(a.target)) : opts;
    const steps = t.planSteps ? t.planSteps(a, { prefix: ownedPrefix(opts.runId, id) }) : [];
    steps.push(workloadStep(workload, listed ? String(a.target) : '', t));
    // the worst case: every permutation runs to max (repeat-until-stable may stop at min)
    const estimateSec = estimatePermutationSec(profile, repeat.max, steps, a, fillMBps, repeat.reprovision);
    sums.total += estimateSec;
    sums.best += estimatePermutationSec(profile, repeat.min, steps, a, fillMBps, repeat.reprovision);
    if (repeat.reprovision) sums.provision += (repeat.max - 1) * provisionSec(profile, steps, a, fillMBps);
    return { index, permutationId: id, axes: a, workload, steps, repetitions: repeat.max, estimateSec };
  });
  const replication: Replication = {
    unit: repeat.reprovision ? 'between-provisionings' : 'within-provisioning',
    order: repeat.order,
    seed: repeat.seed ?? opts.seed ?? 0,
    min: repeat.min,
    max: repeat.max,
    until: repeat.until,
    extraProvisionSec: Math.round(sums.provision),
    ...(repeat.until ? { bestCaseSec: sums.best } : {}),
  };
  const total = sums.total;
  return {
    version: 1,
    runId: opts.runId,
    playbook: pb.name,
    target: listed ? target.join(', ') : target,
    provider: listed ? targetOpts(target[0]!).provider : opts.provider,
    ...(listed ? { targets: target.map((name) => ({ name, provider: targetOpts(name).provider })), serialised: serialisedResources(target.map((name) => ({ name, resources: targetOpts(name).resources }))) } : {}),
    axes,
    baseline: pb.baseline ?? null,
    profiles,
    permutations,
    replication,
    totalEstimateSec: total,
    ...(pb.settings?.stopAfterSameFailure !== undefined ? { stopAfterSameFailure: pb.settings.stopAfterSameFailure } : {}),
    estimateBasis: { prefillMBps: fillMBps, prefillMBpsFrom: pb.settings?.prefillMBps !== undefined ? 'settings.prefillMBps' : 'assumed' },
  };
}

/** Freezes a plan entry and everything in it (shared entries must not be changed through one permutation). */
function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

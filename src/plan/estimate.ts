// Duration estimate of a permutation: the workload's own time is exact (passes × runtime + ramp,
// warm-up, intervals); the pre-fill is the test region at an assumed (or the playbook's
// `settings.prefillMBps`) write throughput, once per provisioning; provisioning is each provider's
// rough figure (ProviderModule.estimateSec: per operation, eager zeroing scaled by size), once per
// permutation, or once per repetition when each repetition provisions anew (repeat.reprovision).
import type { Axes } from '../contract/axis.ts';
import type { RunPlan } from '../contract/plan.ts';
import type { PlannedStep, ProviderName } from '../contract/provider.ts';
import { providerModule } from '../providers/index.ts';
import { ASSUMED_FILL_MB_PER_SEC, prefillSec } from '../workloads/prefill.ts';
import type { WorkloadProfile } from '../workloads/spec.ts';

export function workloadSec(profile: WorkloadProfile, repetitions: number): number {
  const warmup = profile.warmupPass ? (profile.warmupPassSec ?? profile.runtimeSec) + profile.rampSec : 0;
  const perTest = profile.passes * (profile.runtimeSec + profile.rampSec) + warmup;
  const intervals = Math.max(0, profile.tests.length - 1) * profile.intervalSec;
  return repetitions * (profile.tests.length * perTest + intervals);
}

/** The pre-fill's share of a permutation's estimate: once per permutation, by the workload step's tool. */
export function fillSec(profile: WorkloadProfile, steps: readonly PlannedStep[], fillMBps = ASSUMED_FILL_MB_PER_SEC): number {
  const workload = steps.find((s) => s.step === 'workload');
  if (!workload) return 0;
  return prefillSec(profile, workload.operation === 'diskspd' ? 'diskspd' : 'fio', fillMBps * 1e6);
}

/** What provisioning a permutation costs once: its provider steps and the pre-fill of its new disk. */
export function provisionSec(profile: WorkloadProfile, steps: PlannedStep[], axes: Axes, fillMBps = ASSUMED_FILL_MB_PER_SEC): number {
  let sec = fillSec(profile, steps, fillMBps);
  const byProvider = new Map<ProviderName, PlannedStep[]>();
  for (const s of steps) {
    if (s.step === 'workload') continue;
    byProvider.set(s.provider, [...(byProvider.get(s.provider) ?? []), s]);
  }
  for (const [provider, own] of byProvider) sec += providerModule(provider).estimateSec(own, axes);
  return sec;
}

/**
 * A permutation's estimate: its repetitions' workload, and its provisioning once, or once per
 * repetition when each repetition provisions anew (`reprovision`).
 */
export function estimatePermutationSec(profile: WorkloadProfile, repetitions: number, steps: PlannedStep[], axes: Axes, fillMBps = ASSUMED_FILL_MB_PER_SEC, reprovision = false): number {
  return Math.round(workloadSec(profile, repetitions) + (reprovision ? repetitions : 1) * provisionSec(profile, steps, axes, fillMBps));
}

/**
 * What is left of a plan (a resume skips what is done), in seconds: `workSec` the sum of the
 * estimates, `wallSec` until the end with listed targets in parallel — targets that share a
 * resource (plan.serialised) take turns, so each set of them linked by sharing is one lane; the
 * longest lane is the run's time.
 */
export function remainingEstimate(plan: Pick<RunPlan, 'permutations' | 'targets' | 'serialised'>, isDone: (permutationId: string) => boolean): { workSec: number; wallSec: number; done: number } {
  const lane = new Map<string, string>();
  const find = (t: string): string => {
    const up = lane.get(t) ?? t;
    if (up === t) return t;
    const root = find(up);
    lane.set(t, root);
    return root;
  };
  for (const s of plan.serialised ?? []) for (const t of s.targets.slice(1)) lane.set(find(t), find(s.targets[0]!));
  const perLane = new Map<string, number>();
  let workSec = 0;
  let done = 0;
  for (const p of plan.permutations) {
    if (isDone(p.permutationId)) {
      done++;
      continue;
    }
    workSec += p.estimateSec;
    const key = plan.targets ? find(String(p.axes.target)) : '';
    perLane.set(key, (perLane.get(key) ?? 0) + p.estimateSec);
  }
  return { workSec, wallSec: Math.max(0, ...perLane.values()), done };
}

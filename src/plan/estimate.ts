// Duration estimate of a permutation: the workload's own time is exact (passes × runtime + ramp,
// warm-up, intervals); provisioning is each provider's rough figure (ProviderModule.estimateSec:
// per operation, eager zeroing scaled by size).
import type { Axes } from '../contract/axis.ts';
import type { RunPlan } from '../contract/plan.ts';
import type { PlannedStep, ProviderName } from '../contract/provider.ts';
import { providerModule } from '../providers/index.ts';
import type { WorkloadProfile } from '../workloads/spec.ts';

export function workloadSec(profile: WorkloadProfile, repetitions: number): number {
  const passes = profile.passes + (profile.warmupPass ? 1 : 0);
  const perTest = passes * (profile.runtimeSec + profile.rampSec);
  const intervals = Math.max(0, profile.tests.length - 1) * profile.intervalSec;
  return repetitions * (profile.tests.length * perTest + intervals);
}

export function estimatePermutationSec(profile: WorkloadProfile, repetitions: number, steps: PlannedStep[], axes: Axes): number {
  let sec = workloadSec(profile, repetitions);
  const byProvider = new Map<ProviderName, PlannedStep[]>();
  for (const s of steps) {
    if (s.step === 'workload') continue;
    byProvider.set(s.provider, [...(byProvider.get(s.provider) ?? []), s]);
  }
  for (const [provider, own] of byProvider) sec += providerModule(provider).estimateSec(own, axes);
  return Math.round(sec);
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

// Duration estimate of a permutation: the workload's own time is exact (passes × runtime + ramp,
// warm-up, intervals); provisioning is each provider's rough figure (ProviderModule.estimateSec:
// per operation, eager zeroing scaled by size).
import type { Axes } from '../contract/axis.ts';
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

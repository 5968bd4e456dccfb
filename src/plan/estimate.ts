// Duration estimate of a permutation: the workload's own time is exact (passes × runtime + ramp,
// warm-up, intervals); provisioning uses rough per-operation figures, eager zeroing scaled by size.
import type { Axes } from '../contract/axis.ts';
import type { PlannedStep } from '../contract/provider.ts';
import type { WorkloadProfile } from '../workloads/spec.ts';

/** seconds per provisioning operation (create + its teardown), from typical lab hosts */
const STEP_SEC: Record<string, number> = {
  CreateVmfsDatastore: 15,
  CreateNasDatastore: 5,
  ReconfigVM_Task: 5,
};
/** eager zeroing writes the whole disk; ~500 MB/s on a typical array */
const ZERO_BYTES_PER_SEC = 500e6;

export function workloadSec(profile: WorkloadProfile, repetitions: number): number {
  const passes = profile.passes + (profile.warmupPass ? 1 : 0);
  const perTest = passes * (profile.runtimeSec + profile.rampSec);
  const intervals = Math.max(0, profile.tests.length - 1) * profile.intervalSec;
  return repetitions * (profile.tests.length * perTest + intervals);
}

export function estimatePermutationSec(profile: WorkloadProfile, repetitions: number, steps: PlannedStep[], axes: Axes): number {
  let sec = workloadSec(profile, repetitions);
  for (const s of steps) {
    if (s.step === 'workload') continue;
    sec += STEP_SEC[s.operation] ?? 5;
  }
  const sizeGb = Number(axes['disk.sizeGb'] ?? 0);
  if (axes['disk.format'] === 'eagerzeroedthick' || axes['disk.format'] === 'vhdx-fixed') sec += (sizeGb * 1024 ** 3) / ZERO_BYTES_PER_SEC;
  return Math.round(sec);
}

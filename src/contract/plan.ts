// The plan as data: what plan/ builds, run/ executes and results/ stores in run.sqlite (and reads
// back on `--resume`). Types only, so that results/ and run/ need nothing from plan/.
import type { Axes, AxisValue } from './axis.ts';
import type { PlannedStep, ProviderName } from './provider.ts';
import type { WorkloadProfile } from '../workloads/spec.ts';

/** One matrix axis in playbook order: its flat name and its values. */
export interface AxisDef {
  name: string;
  values: AxisValue[];
}

export interface PermutationPlan {
  /** 0-based position in run order */
  index: number;
  permutationId: string;
  axes: Axes;
  /** key into RunPlan.profiles */
  workload: string;
  steps: PlannedStep[];
  repetitions: number;
  estimateSec: number;
}

/**
 * Something two or more listed targets use (a VM, a guest test file, a LUN…: ProviderModule
 * .sharedResources): their permutations never run at the same time (run/executor.ts holds `key`).
 */
export interface SerialisedResource {
  key: string;
  /** the resource in words */
  what: string;
  /** the targets that use it, in playbook order */
  targets: string[];
}

export interface RunPlan {
  version: 1;
  runId: string;
  playbook: string;
  /** the target's name; several joined by ", " when the playbook lists them (see `targets`) */
  target: string;
  /** the provider of `target`, or of the first listed target */
  provider: ProviderName;
  /** present only when the playbook lists targets: each permutation's `target` axis names one */
  targets?: Array<{ name: string; provider: ProviderName }>;
  /**
   * With listed targets: what several of them share, so that they run one after the other; absent
   * or empty, every target runs in parallel (a plan stored before this existed: `run --resume`
   * computes it from the inventory).
   */
  serialised?: SerialisedResource[];
  /**
   * Playbook values given on the command line (`--set key=value`, as given) and already in this
   * plan; `run --resume` uses them and refuses a different set. Absent: none.
   */
  overrides?: string[];
  axes: AxisDef[];
  baseline: Record<string, string | number | boolean> | null;
  profiles: Record<string, WorkloadProfile>;
  permutations: PermutationPlan[];
  totalEstimateSec: number;
  /** what the estimates assume beyond the playbook's timing (absent in plans stored before it was added) */
  estimateBasis?: EstimateBasis;
}

export interface EstimateBasis {
  /** write throughput the pre-fill is estimated at, MB/s (10^6 bytes) */
  prefillMBps: number;
  /** where that figure comes from: storsweep's conservative default, or the playbook */
  prefillMBpsFrom: 'assumed' | 'settings.prefillMBps';
}

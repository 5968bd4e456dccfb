// The plan as data: what plan/ builds, run/ executes and results/ stores in run.sqlite (and reads
// back on `--resume`). Types only, so that results/ and run/ need nothing from plan/.
import type { Axes, AxisValue } from './axis.ts';
import type { PlannedStep, ProviderName } from './provider.ts';
import type { WorkloadProfile } from './workload.ts';

/** One matrix axis in playbook order: its flat name and its values. */
export interface AxisDef {
  name: string;
  values: AxisValue[];
}

/**
 * What a repetition is a sample of, and in which order repetitions run (the playbook's `repeat:`).
 * Absent (a plan stored before it existed): within one provisioning, each permutation's
 * repetitions back to back, `repetitions` of them.
 */
export interface Replication {
  /** within-provisioning: every repetition on one provisioning; between-provisionings: each provisions anew */
  unit: 'within-provisioning' | 'between-provisionings';
  /** rounds: repetition k of every permutation before any k+1, each round in its own seeded order; permutation: back to back */
  order: 'rounds' | 'permutation';
  /** the seed of the round orders (plan/rounds.ts roundOrder); recorded so that a resume keeps the order */
  seed: number;
  /** repetitions every permutation gets */
  min: number;
  /** repetitions at most (PermutationPlan.repetitions) */
  max: number;
  /** repeat until the main metric's 95 % interval is within ±ciPct % of its mean, from min up to max */
  until: { ciPct: number } | null;
  /** the estimate's provisioning beyond one per permutation (reprovisioning), seconds; at max repetitions */
  extraProvisionSec: number;
  /** with until: the estimate if every permutation stops at min (totalEstimateSec is at max, the worst case) */
  bestCaseSec?: number;
}

export interface PermutationPlan {
  /** 0-based position in run order */
  index: number;
  permutationId: string;
  axes: Axes;
  /** key into RunPlan.profiles */
  workload: string;
  steps: PlannedStep[];
  /** repetitions at most (with repeat-until-stable, fewer may run: RunPlan.replication) */
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
  /** the repetitions' unit and order (absent in plans stored before it was added: see Replication) */
  replication?: Replication;
  totalEstimateSec: number;
  /** stop after this many permutations in a row failed at one step with one cause (settings.stopAfterSameFailure; absent: 3, 0: never) */
  stopAfterSameFailure?: number;
  /** what the estimates assume beyond the playbook's timing (absent in plans stored before it was added) */
  estimateBasis?: EstimateBasis;
}

export interface EstimateBasis {
  /** write throughput the pre-fill is estimated at, MB/s (10^6 bytes) */
  prefillMBps: number;
  /** where that figure comes from: storsweep's conservative default, or the playbook */
  prefillMBpsFrom: 'assumed' | 'settings.prefillMBps';
}

// The order repetitions run in (the playbook's `repeat:`, RunPlan.replication). In rounds, every
// permutation's repetition k runs before any permutation's k+1, each round in a fresh random order
// drawn from the run's seed and the round's number: drift of the array or host over a night spreads
// over all configurations instead of landing on one, and a resume computes the same orders. Pure.
import type { PermutationPlan, Replication, RunPlan } from '../contract/plan.ts';
import { shuffle } from './matrix.ts';

/** A round's own seed: the run's seed mixed with the round number (golden-ratio step, 32 bits). */
function roundSeed(seed: number, round: number): number {
  return (seed ^ Math.imul(round, 0x9e3779b1)) >>> 0;
}

/** The items of round `round` (1-based) in run order: shuffled by the run's seed and the round. */
export function roundOrder<T>(items: readonly T[], seed: number, round: number): T[] {
  return shuffle(items, roundSeed(seed, round));
}

/** The plan's replication; a plan stored before it existed: back to back on one provisioning. */
export function replicationOf(plan: Pick<RunPlan, 'replication' | 'permutations'>): Replication {
  if (plan.replication) return plan.replication;
  const n = Math.max(1, ...plan.permutations.map((p: PermutationPlan) => p.repetitions));
  return { unit: 'within-provisioning', order: 'permutation', seed: 0, min: n, max: n, until: null, extraProvisionSec: 0 };
}

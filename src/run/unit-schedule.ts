// The order of the repetitions when each provisions anew (RunPlan.replication, unit
// 'between-provisionings'): one unit = provision, one repetition, tear down. In rounds, unit k of
// every permutation runs before any unit k+1, each round in its seeded order (plan/rounds.ts);
// otherwise each permutation's units run back to back. A permutation gets units until it has
// `min`, then (repeat-until-stable) while its main metric's interval is wider than asked, up to
// `max`. What a permutation already recorded (a resume) counts: only the missing units run.
import type { PermutationPlan, Replication } from '../contract/plan.ts';
import { roundOrder } from '../plan/rounds.ts';
import type { ResultRecord } from '../results/record.ts';
import { stabilityOf } from '../results/stability.ts';

/** What the schedule knows of one permutation. */
export interface UnitState {
  /** repetitions recorded (1…recorded: each unit records the next) */
  recorded: number;
  /** their records (kept only with repeat-until-stable, which decides on them) */
  records: ResultRecord[];
  /** done or failed: no more units */
  finished: boolean;
}

/** Whether a permutation needs another repetition: fewer than min, or not yet stable below max. */
export function needsMore(s: Pick<UnitState, 'recorded' | 'records'>, r: Pick<Replication, 'min' | 'max' | 'until'>): boolean {
  if (s.recorded < r.min) return true;
  if (s.recorded >= r.max || !r.until) return false;
  return !stabilityOf(s.records, r.until.ciPct).reached;
}

export interface UnitSchedule {
  replication: Replication;
  /** the permutations still to run, in plan order */
  perms: readonly PermutationPlan[];
  state: (perm: PermutationPlan) => UnitState;
  /** runs repetition `rep` of `perm` on its own provisioning; 'stop' ends the schedule */
  runUnit: (perm: PermutationPlan, rep: number) => Promise<'stop' | 'go'>;
  /** checked before each unit: interrupted, --fail-fast, a store that cannot be written */
  stopped: () => boolean;
}

/** Runs the units of `perms` in the plan's order until each needs no more (or the schedule stops). */
export async function runUnits(s: UnitSchedule): Promise<void> {
  const r = s.replication;
  const due = (perm: PermutationPlan): boolean => {
    const st = s.state(perm);
    return !st.finished && needsMore(st, r);
  };
  if (r.order === 'rounds') {
    for (let round = 1; round <= r.max; round++) {
      for (const perm of roundOrder(s.perms, r.seed, round)) {
        if (s.stopped()) return;
        // a permutation that has this round's repetition already (a resume) waits for the next round
        if (s.state(perm).recorded >= round || !due(perm)) continue;
        if ((await s.runUnit(perm, s.state(perm).recorded + 1)) === 'stop') return;
      }
    }
    return;
  }
  for (const perm of s.perms) {
    while (due(perm)) {
      if (s.stopped()) return;
      if ((await s.runUnit(perm, s.state(perm).recorded + 1)) === 'stop') return;
    }
  }
}

/** The unit `run --keep` leaves in place: the last one, if every permutation runs to max. */
export function lastUnit(r: Replication, perms: readonly PermutationPlan[]): PermutationPlan | undefined {
  return r.order === 'rounds' ? roundOrder(perms, r.seed, r.max).at(-1) : perms.at(-1);
}

// How many permutations a playbook's matrix expands to, counted without expanding it, and the most
// one plan may hold. Config refuses a larger matrix at validate (config/index.ts) and the planner
// checks the same count again (plan/plan.ts): the rule is config's, so config calls no planner.
import type { AxisValue } from '../contract/axis.ts';
import type { AxisDef } from '../contract/plan.ts';

/**
 * Most permutations one plan may hold. bench/ measures plan, store and report at 100,000 (plan
 * ~250 MB, report ~300 MB); beyond that nothing is measured, and expanding 10^7 exhausts V8's heap.
 */
export const MAX_PERMUTATIONS = 100_000;

/** Inclusion–exclusion over exclude rules visits at most this many rule combinations. */
const EXCLUDE_BUDGET = 100_000;

/**
 * How many permutations expandMatrix (plan/matrix.ts) would return, computed without expanding (BigInt: 3e19 is
 * exact). Exclude rules are counted exactly by inclusion–exclusion when that stays within a budget,
 * otherwise not subtracted (an upper bound); every include counts as one more (an upper bound too).
 */
export function countPermutations(axes: readonly AxisDef[], rules: { include?: Record<string, AxisValue>[]; exclude?: Record<string, AxisValue>[] } = {}): bigint {
  const product = axes.reduce((n, a) => n * BigInt(a.values.length), 1n);
  const index = new Map(axes.map((a, i) => [a.name, i]));
  // each rule as axis index → value text; a rule naming a non-axis or an absent value matches nothing
  const constraints: Array<Map<number, string>> = [];
  for (const rule of rules.exclude ?? []) {
    const c = new Map<number, string>();
    let matchesSome = true;
    for (const [k, v] of Object.entries(rule)) {
      const i = index.get(k);
      if (i === undefined || !axes[i]!.values.some((x) => String(x) === String(v))) matchesSome = false;
      else c.set(i, String(v));
    }
    if (matchesSome) constraints.push(c);
  }
  const size = (c: Map<number, string>) =>
    axes.reduce((n, a, i) => n * BigInt(c.has(i) ? a.values.filter((x) => String(x) === c.get(i)).length : a.values.length), 1n);
  let visits = 0;
  let excluded = 0n;
  // Σ over non-empty consistent rule sets S of (-1)^(|S|+1) · |∩S|; a conflicting set (two values for
  // one axis) is empty, and so is every superset of it, so the search stops there.
  const dfs = (from: number, merged: Map<number, string>, depth: number): boolean => {
    for (let r = from; r < constraints.length; r++) {
      if (++visits > EXCLUDE_BUDGET) return false;
      const next = new Map(merged);
      let conflict = false;
      for (const [i, v] of constraints[r]!) {
        const have = next.get(i);
        if (have !== undefined && have !== v) conflict = true;
        next.set(i, v);
      }
      if (conflict) continue;
      excluded += (depth % 2 === 0 ? 1n : -1n) * size(next);
      if (!dfs(r + 1, next, depth + 1)) return false;
    }
    return true;
  };
  if (!dfs(0, new Map(), 0)) excluded = 0n;
  return product - excluded + BigInt(rules.include?.length ?? 0);
}

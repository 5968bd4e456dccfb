// Axes → permutations: cartesian product in playbook order, `exclude` rules drop matches,
// `include` entries add permutations, an optional seeded shuffle. Pure.
import type { Axes, AxisValue } from '../contract/axis.ts';
import type { AxisDef } from '../contract/plan.ts';

export function cartesian(axes: readonly AxisDef[]): Axes[] {
  let out: Axes[] = [{}];
  for (const axis of axes) {
    const next: Axes[] = new Array<Axes>(out.length * axis.values.length);
    let i = 0;
    for (const partial of out) for (const v of axis.values) next[i++] = { ...partial, [axis.name]: v };
    out = next;
  }
  return out;
}

/** A rule matches when every key it names has the same value (compared as strings: YAML 1 vs "1"). */
export function matches(axes: Axes, rule: Record<string, AxisValue>): boolean {
  for (const [k, v] of Object.entries(rule)) if (String(axes[k]) !== String(v)) return false;
  return true;
}

export function expandMatrix(axes: readonly AxisDef[], rules: { include?: Record<string, AxisValue>[]; exclude?: Record<string, AxisValue>[] } = {}): Axes[] {
  let perms = cartesian(axes);
  const exclude = rules.exclude ?? [];
  if (exclude.length) perms = perms.filter((p) => !exclude.some((r) => matches(p, r)));
  const include = rules.include ?? [];
  if (include.length === 0) return perms;
  const seen = new Set(perms.map(axesKey));
  for (const inc of include) {
    // An include names a full permutation; axes it leaves out take the first value of the axis.
    const full: Axes = {};
    for (const a of axes) full[a.name] = inc[a.name] ?? a.values[0]!;
    for (const [k, v] of Object.entries(inc)) full[k] = v;
    const key = axesKey(full);
    if (!seen.has(key)) {
      seen.add(key);
      perms.push(full);
    }
  }
  return perms;
}

/**
 * Most permutations one plan may hold. bench/ measures plan, store and report at 100,000 (plan
 * ~250 MB, report ~300 MB); beyond that nothing is measured, and expanding 10^7 exhausts V8's heap.
 */
export const MAX_PERMUTATIONS = 100_000;

/** Inclusion–exclusion over exclude rules visits at most this many rule combinations. */
const EXCLUDE_BUDGET = 100_000;

/**
 * How many permutations expandMatrix would return, computed without expanding (BigInt: 3e19 is
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

/** Canonical text of an axis map: keys sorted, values typed. Same axes → same text → same id. */
export function axesKey(axes: Axes): string {
  return JSON.stringify(Object.keys(axes).sort().map((k) => [k, axes[k]]));
}

/** mulberry32: tiny, fast, good enough to shuffle run order reproducibly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const rnd = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

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

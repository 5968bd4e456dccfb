// Whether a scaling curve's bend (vm-scaling.ts findBend: a fixed threshold crossed by the means)
// is more than noise. The replication unit is the repetition: each gives one aggregate per VM
// count, on the same clones (within one provisioning). A bend is a one-sided test of its rule on
// those samples — throughput: the count's mean below the previous count's plus half the linear
// increment; latency: the count's mean above twice the smallest count's — Welch's t on the linear
// contrast (Satterthwaite degrees of freedom). Every step of every curve that the rule checks is
// one family, adjusted by Holm as the report's comparisons are (stats.ts adjustPValues). Fewer than
// two samples at either count leaves no variance to test against: the bend is then indicative only. Pure.
import { adjustPValues, mean, studentTCdf, variance } from './stats.ts';

/** What the report says of a bend's support. */
export interface BendEvidence {
  /** 'supported': adjusted p under alpha; 'not-significant': tested, not under it; 'untested': under two samples at a count */
  status: 'supported' | 'not-significant' | 'untested';
  /** the fewest samples (repetitions) at the two counts the bend compares */
  n: number;
  pAdjusted: number | null;
  /** how many step tests the family holds (Holm) */
  family: number;
}

export const BEND_ALPHA = 0.05;

/**
 * One-sided p of `a − c·b < 0` (lower) or `> 0` (upper) from samples a and b, Welch–Satterthwaite;
 * null when either has under two samples or both have no variance.
 */
export function contrastP(a: readonly number[], b: readonly number[], c: number, tail: 'lower' | 'upper'): number | null {
  if (a.length < 2 || b.length < 2) return null;
  const va = variance(a) / a.length;
  const vb = (c * c * variance(b)) / b.length;
  const se2 = va + vb;
  const d = mean(a) - c * mean(b);
  if (!(se2 > 0)) return d === 0 ? null : (tail === 'lower' ? d < 0 : d > 0) ? 0 : 1;
  const df = (se2 * se2) / ((va * va) / (a.length - 1) + (vb * vb) / (b.length - 1));
  const t = d / Math.sqrt(se2);
  const lower = studentTCdf(t, df);
  return tail === 'lower' ? lower : 1 - lower;
}

/** One step a bend rule checks: the samples at the count and what they are held against. */
export interface StepTest {
  key: string;
  p: number | null;
  n: number;
}

/** The adjusted p of every tested step (Holm over the family of tested steps), by key. */
export function adjustSteps(steps: readonly StepTest[]): { adjusted: Map<string, number>; family: number } {
  const tested = steps.filter((s): s is StepTest & { p: number } => s.p !== null);
  const adj = adjustPValues(tested.map((s) => s.p), 'holm');
  return { adjusted: new Map(tested.map((s, i) => [s.key, adj[i]!])), family: tested.length };
}

/** The evidence of one bend from its step's test (null p: untested). */
export function evidenceOf(step: StepTest | undefined, adjusted: ReadonlyMap<string, number>, family: number): BendEvidence {
  const p = step ? (adjusted.get(step.key) ?? null) : null;
  if (!step || p === null) return { status: 'untested', n: step?.n ?? 0, pAdjusted: null, family };
  return { status: p < BEND_ALPHA ? 'supported' : 'not-significant', n: step.n, pAdjusted: p, family };
}

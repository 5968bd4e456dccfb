// Pure statistics for benchmark samples: descriptive summaries, Student t and normal distributions,
// Welch's t-test, Mann–Whitney U, % delta with a Fieller interval, and the per-cell verdict.
// No dependency: the distributions come from the regularized incomplete beta/gamma functions, which
// are accurate to ~1e-12 here and keep the report reproducible across machines.

import { incompleteBeta, lnGamma, normalCdf, studentTCdf, studentTQuantile, studentTTwoSidedP } from '../stats/distributions.ts';

export { incompleteBeta, lnGamma, normalCdf, studentTCdf, studentTQuantile, studentTTwoSidedP };

// ───────────────────────── descriptive ─────────────────────────

export interface Summary {
  n: number;
  mean: number | null;
  median: number | null;
  /** sample standard deviation (n − 1); null when n < 2 */
  stddev: number | null;
  /** coefficient of variation stddev/|mean| as a fraction; null when undefined */
  cv: number | null;
  min: number | null;
  max: number | null;
  /** confidence interval of the mean (t distribution); null when n < 2 */
  ci: { level: number; low: number; high: number; halfWidth: number } | null;
}

export function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 1) return xs[0]!;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Sample variance (n − 1 denominator), two-pass for numerical stability. */
export function variance(xs: readonly number[]): number {
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return s / (xs.length - 1);
}

export function summarize(values: readonly number[], level = 0.95): Summary {
  const xs = values.filter((v) => Number.isFinite(v));
  const n = xs.length;
  if (n === 0) return { n, mean: null, median: null, stddev: null, cv: null, min: null, max: null, ci: null };
  const m = mean(xs);
  let min = xs[0]!;
  let max = min;
  for (const x of xs) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const med = median(xs);
  // Literal objects with one key order (JSON reports print it): a spread followed by more keys
  // gives every object a hidden class of its own in V8, which costs ~1 KB each in a large report.
  if (n < 2) return { n, mean: m, median: med, min, max, stddev: null, cv: null, ci: null };
  const sd = Math.sqrt(variance(xs));
  const halfWidth = studentTQuantile((1 + level) / 2, n - 1) * (sd / Math.sqrt(n));
  return {
    n,
    mean: m,
    median: med,
    min,
    max,
    stddev: sd,
    cv: m !== 0 ? sd / Math.abs(m) : null,
    ci: { level, low: m - halfWidth, high: m + halfWidth, halfWidth },
  };
}

/**
 * Smallest n whose CI half-width (at `level`) is at most `relativeHalfWidth` × |mean|, given the
 * observed stddev as the estimate of the true one. null when it is not reachable below `cap`.
 */
export function repetitionsNeeded(
  stddev: number,
  meanValue: number,
  relativeHalfWidth: number,
  level = 0.95,
  cap = 10000,
): number | null {
  if (stddev === 0) return 2;
  const target = relativeHalfWidth * Math.abs(meanValue);
  if (!(target > 0)) return null;
  // Start from the normal approximation, then walk up with the exact t quantile.
  const z = studentTQuantile((1 + level) / 2, 1e9);
  let n = Math.max(2, Math.floor(((z * stddev) / target) ** 2));
  while (n <= cap) {
    if (studentTQuantile((1 + level) / 2, n - 1) * (stddev / Math.sqrt(n)) <= target) return n;
    n++;
  }
  return null;
}

// ───────────────────────── two-sample tests ─────────────────────────

export interface WelchResult {
  /** (mean(a) − mean(b)) / se — same orientation as R's t.test(a, b) */
  t: number;
  df: number;
  /** two-sided */
  p: number;
  meanDifference: number;
  /** CI of mean(a) − mean(b) */
  ci: { level: number; low: number; high: number };
}

/** Welch's unequal-variance t-test with Welch–Satterthwaite df. Needs n ≥ 2 on both sides. */
export function welchTTest(a: readonly number[], b: readonly number[], level = 0.95): WelchResult {
  if (a.length < 2 || b.length < 2) throw new RangeError(`Welch's t-test needs at least 2 values per side, got ${a.length} and ${b.length}`);
  const ma = mean(a);
  const mb = mean(b);
  const va = variance(a) / a.length;
  const vb = variance(b) / b.length;
  const se2 = va + vb;
  const diff = ma - mb;
  if (se2 === 0) {
    // Both samples constant: the difference is exact, not estimated.
    const df = a.length + b.length - 2;
    return { t: diff === 0 ? 0 : Math.sign(diff) * Infinity, df, p: diff === 0 ? 1 : 0, meanDifference: diff, ci: { level, low: diff, high: diff } };
  }
  const se = Math.sqrt(se2);
  const t = diff / se;
  const df = (se2 * se2) / ((va * va) / (a.length - 1) + (vb * vb) / (b.length - 1));
  const q = studentTQuantile((1 + level) / 2, df);
  return { t, df, p: studentTTwoSidedP(t, df), meanDifference: diff, ci: { level, low: diff - q * se, high: diff + q * se } };
}

export interface MannWhitneyResult {
  /** U of the first sample: number of pairs (a_i, b_j) with a_i > b_j, ties counting ½ */
  u: number;
  /** two-sided */
  p: number;
  method: 'exact' | 'normal';
}

/** Average ranks (1-based) over the pooled sample, plus the tie group sizes. */
function rank(pooled: readonly number[]): { ranks: number[]; ties: number[] } {
  const idx = pooled.map((v, i) => [v, i] as const).sort((x, y) => x[0] - y[0]);
  const ranks = new Array<number>(pooled.length);
  const ties: number[] = [];
  for (let i = 0; i < idx.length; ) {
    let j = i;
    while (j + 1 < idx.length && idx[j + 1]![0] === idx[i]![0]) j++;
    const r = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) ranks[idx[k]![1]] = r;
    if (j > i) ties.push(j - i + 1);
    i = j + 1;
  }
  return { ranks, ties };
}

/**
 * Counts of U = 0..n1·n2 over all C(n1+n2, n1) arrangements, from the generating function
 * ∏_{i=1..n1} (1 − q^{n2+i}) / (1 − q^i).
 */
function exactUCounts(n1: number, n2: number): number[] {
  const max = n1 * n2;
  const c = new Array<number>(max + 1).fill(0);
  c[0] = 1;
  for (let i = 1; i <= n1; i++) {
    const k = n2 + i;
    for (let u = max; u >= k; u--) c[u]! -= c[u - k]!;
    for (let u = i; u <= max; u++) c[u]! += c[u - i]!;
  }
  return c;
}

/** Largest pooled size for which the exact distribution is used (counts stay well inside doubles). */
export const MANN_WHITNEY_EXACT_MAX_N = 50;

/**
 * Mann–Whitney U (Wilcoxon rank-sum), two-sided. Exact when there are no ties and the pooled size is
 * at most MANN_WHITNEY_EXACT_MAX_N; otherwise the normal approximation with tie-corrected variance
 * and a 0.5 continuity correction (the same choices as scipy.stats.mannwhitneyu, method auto/asymptotic).
 */
export function mannWhitneyU(a: readonly number[], b: readonly number[]): MannWhitneyResult {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 === 0 || n2 === 0) throw new RangeError('Mann–Whitney U needs at least one value per side');
  const { ranks, ties } = rank([...a, ...b]);
  let r1 = 0;
  for (let i = 0; i < n1; i++) r1 += ranks[i]!;
  const u = r1 - (n1 * (n1 + 1)) / 2;
  const n = n1 + n2;
  if (ties.length === 0 && n <= MANN_WHITNEY_EXACT_MAX_N) {
    const counts = exactUCounts(n1, n2);
    const total = counts.reduce((s, x) => s + x, 0);
    const uMax = Math.max(u, n1 * n2 - u);
    let upper = 0;
    for (let k = uMax; k <= n1 * n2; k++) upper += counts[k]!;
    return { u, p: Math.min(1, (2 * upper) / total), method: 'exact' };
  }
  const tieTerm = ties.reduce((s, t) => s + (t * t * t - t), 0);
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  if (sigma === 0) return { u, p: 1, method: 'normal' };
  const z = Math.max(0, Math.abs(u - (n1 * n2) / 2) - 0.5) / sigma;
  return { u, p: Math.min(1, 2 * (1 - normalCdf(z))), method: 'normal' };
}

// ───────────────────────── % delta against a baseline ─────────────────────────

export interface PercentDelta {
  /** 100 × (mean(candidate) / mean(baseline) − 1) */
  pct: number;
  /**
   * Fieller's interval for the ratio of two independent means, as %; null when the baseline
   * mean is not significantly different from zero (the interval is then unbounded).
   */
  ci: { level: number; low: number; high: number } | null;
}

/**
 * % delta of candidate against baseline with Fieller's CI. Fieller (rather than the delta method)
 * because it stays correct when the baseline's relative error is large, and reduces to the delta
 * method when it is small. Degrees of freedom: Welch–Satterthwaite, as in the t-test.
 */
export function percentDelta(candidate: readonly number[], baseline: readonly number[], level = 0.95): PercentDelta | null {
  if (candidate.length === 0 || baseline.length === 0) return null;
  const a = mean(candidate);
  const b = mean(baseline);
  if (b === 0) return null;
  const r = a / b;
  const pct = 100 * (r - 1);
  if (candidate.length < 2 || baseline.length < 2) return { pct, ci: null };
  const v11 = variance(candidate) / candidate.length;
  const v22 = variance(baseline) / baseline.length;
  if (v11 + v22 === 0) return { pct, ci: { level, low: pct, high: pct } };
  const df = ((v11 + v22) * (v11 + v22)) / ((v11 * v11) / (candidate.length - 1) + (v22 * v22) / (baseline.length - 1));
  const t = studentTQuantile((1 + level) / 2, df);
  const g = (t * t * v22) / (b * b);
  if (g >= 1) return { pct, ci: null };
  const half = (Math.abs(t / b) * Math.sqrt(v11 + r * r * v22 - g * v11)) / (1 - g);
  const centre = r / (1 - g);
  return { pct, ci: { level, low: 100 * (centre - half - 1), high: 100 * (centre + half - 1) } };
}

// ───────────────────────── verdict ─────────────────────────

export type Verdict = 'faster' | 'slower' | 'within-noise' | 'insufficient-data';

/**
 * How the p-values of a report's family of comparisons are adjusted before any verdict: Holm's
 * step-down (the family-wise error rate stays at alpha: among all the ▲/▼ of a report, the chance
 * that even one is a false alarm is at most alpha), Benjamini–Hochberg's step-up (the expected share
 * of false alarms among the ▲/▼ stays at alpha: for sweeps of hundreds of cells, where Holm would
 * call almost nothing), or none (each comparison on its own, as before; one in twenty of a null
 * sweep's cells is then coloured).
 */
export type Correction = 'holm' | 'bh' | 'none';
export const CORRECTIONS: readonly Correction[] = ['holm', 'bh', 'none'];
export const CORRECTION_NAMES: Record<Correction, string> = { holm: 'Holm', bh: 'Benjamini–Hochberg', none: 'no correction' };

export interface VerdictOptions {
  /** significance level for Welch's test; default 0.05 */
  alpha: number;
  /** smallest |Δ%| worth calling a difference; default 5 */
  minEffectPct: number;
  /** CV (as %) above which a cell is flagged noisy; default 10 */
  cvThresholdPct: number;
  /** confidence level of every interval; default 0.95 */
  level: number;
  /** multiple-comparison adjustment over the report's family (default Holm) */
  correction: Correction;
}

export const DEFAULT_VERDICT_OPTIONS: VerdictOptions = Object.freeze({ alpha: 0.05, minEffectPct: 5, cvThresholdPct: 10, level: 0.95, correction: 'holm' });

export interface Comparison {
  baseline: Summary;
  candidate: Summary;
  delta: PercentDelta | null;
  welch: WelchResult | null;
  /** null where the rank test cannot reach alpha at these sample sizes (see rankFloor) */
  mannWhitney: MannWhitneyResult | null;
  /** the smallest two-sided p Mann–Whitney could give with these sample sizes (2 / C(n₁+n₂, n₁)) */
  rankFloor: number | null;
  /** Welch's p after the family's adjustment (VerdictOptions.correction); the verdict uses it */
  pAdjusted: number | null;
  verdict: Verdict;
  /** one short sentence saying why, for the report */
  reason: string;
}

/**
 * Compares a candidate sample with a baseline sample of the same metric. `higherIsBetter` is true for
 * throughput (IOPS, bytes/s) and false for latency, so "faster" always means "better for the user".
 * A difference is called only when Welch's p < alpha AND |Δ%| ≥ minEffectPct; a statistically
 * significant but tiny difference is noise for a storage study, and a large one that is not
 * significant cannot be told apart from noise.
 */
export function compareSamples(
  candidate: readonly number[],
  baseline: readonly number[],
  higherIsBetter: boolean,
  options: Partial<VerdictOptions> = {},
  /** Welch's p of this comparison after the family's adjustment (default: its own p, a family of one) */
  pAdjusted?: number,
): Comparison {
  const o = { ...DEFAULT_VERDICT_OPTIONS, ...options };
  const c = candidate.filter(Number.isFinite);
  const b = baseline.filter(Number.isFinite);
  const cs = summarize(c, o.level);
  const bs = summarize(b, o.level);
  const rankFloor = c.length > 0 && b.length > 0 ? mannWhitneyFloor(c.length, b.length) : null;
  // a rank test that cannot reach alpha at these sizes says nothing: not shown (n = 3 per side: p ≥ 0.1)
  const mannWhitney = rankFloor !== null && rankFloor < o.alpha ? mannWhitneyU(c, b) : null;
  const j = judgeFinite(c, b, higherIsBetter, o, pAdjusted);
  return { baseline: bs, candidate: cs, delta: j.delta, welch: j.welch, mannWhitney, rankFloor, pAdjusted: j.pAdjusted, verdict: j.verdict, reason: j.reason };
}

export type Judgement = Pick<Comparison, 'delta' | 'welch' | 'pAdjusted' | 'verdict' | 'reason'>;

/** The verdict and Δ of compareSamples alone, without the summaries and Mann–Whitney: for ranking many comparisons. */
export function judge(candidate: readonly number[], baseline: readonly number[], higherIsBetter: boolean, options: Partial<VerdictOptions> = {}, pAdjusted?: number): Judgement {
  return judgeFinite(candidate.filter(Number.isFinite), baseline.filter(Number.isFinite), higherIsBetter, { ...DEFAULT_VERDICT_OPTIONS, ...options }, pAdjusted);
}

/** Welch's p of a comparison that can reach a verdict (n ≥ 2 per side, a non-zero baseline), else null: a member of the family. */
export function familyP(candidate: readonly number[], baseline: readonly number[]): number | null {
  const c = candidate.filter(Number.isFinite);
  const b = baseline.filter(Number.isFinite);
  if (c.length < 2 || b.length < 2 || mean(b) === 0) return null;
  return welchTTest(c, b).p;
}

/**
 * One rule decides the verdict and what a renderer may show: a difference is called (▲/▼) only
 * when the family-adjusted p < alpha, |Δ| ≥ minEffectPct, and Δ's interval says something (an
 * unbounded or wider-than-the-value interval is "too noisy to tell", never ▲/▼).
 */
function judgeFinite(c: readonly number[], b: readonly number[], higherIsBetter: boolean, o: VerdictOptions, adjusted?: number): Judgement {
  const delta = percentDelta(c, b, o.level);
  if (c.length < 2 || b.length < 2) {
    return { delta, welch: null, pAdjusted: null, verdict: 'insufficient-data', reason: `need ≥ 2 repetitions per side (have ${c.length} vs ${b.length})` };
  }
  const welch = welchTTest(c, b, o.level);
  const pAdjusted = Math.max(welch.p, adjusted ?? welch.p);
  if (delta === null) return { delta, welch, pAdjusted, verdict: 'insufficient-data', reason: 'baseline mean is zero' };
  const adj = pAdjusted !== welch.p ? ` (${CORRECTION_NAMES[o.correction]}-adjusted ${formatP(pAdjusted)})` : '';
  if (deltaUninformative(delta, c.length, b.length)) return { delta, welch, pAdjusted, verdict: 'within-noise', reason: `too noisy to tell: Δ's ${Math.round(o.level * 100)}% interval is unbounded or wider than the baseline` };
  const significant = pAdjusted < o.alpha;
  const large = Math.abs(delta.pct) >= o.minEffectPct;
  if (!significant || !large) {
    const why = !significant ? `p = ${formatP(welch.p)}${adj} ≥ ${o.alpha}` : `|Δ| = ${Math.abs(delta.pct).toFixed(1)}% < ${o.minEffectPct}%`;
    return { delta, welch, pAdjusted, verdict: 'within-noise', reason: why };
  }
  const better = higherIsBetter ? delta.pct > 0 : delta.pct < 0;
  return { delta, welch, pAdjusted, verdict: better ? 'faster' : 'slower', reason: `Δ = ${delta.pct.toFixed(1)}%, p = ${formatP(welch.p)}${adj}` };
}

/**
 * Whether a Δ's interval says nothing: unbounded (the baseline is too noisy for Fieller's interval
 * to close) with n ≥ 2 per side, or wider than the baseline value itself on either side (below
 * −100%, or more than 100 points from end to centre) — where [-571%, +805%] would only look like an
 * answer. The renderers' "too noisy to tell" is this same test.
 */
export function deltaUninformative(delta: PercentDelta | null, nCandidate: number, nBaseline: number): boolean {
  if (!delta) return false;
  const ci = delta.ci;
  if (!ci) return nBaseline >= 2 && nCandidate >= 2;
  return ci.low < -100 || ci.high - ci.low > 200;
}

/** The smallest two-sided p Mann–Whitney U can give for sizes n1, n2: all of one side above the other, 2 / C(n1+n2, n1). */
export function mannWhitneyFloor(n1: number, n2: number): number {
  // C(n1+n2, n1) as a product of ratios; beyond ~1e300 the floor is 0 for any purpose here
  let c = 1;
  const k = Math.min(n1, n2);
  for (let i = 1; i <= k; i++) c = (c * (n1 + n2 - k + i)) / i;
  return Math.min(1, 2 / c);
}

/**
 * Adjusted p-values of a family (same order as given): Holm's step-down — p(i) × (m − i + 1) over
 * the sorted p, made monotone upwards — or Benjamini–Hochberg's step-up — p(i) × m / i, made
 * monotone downwards from the largest; capped at 1. With 'none' the p-values are returned as they
 * are. (Holm 1979, Scand. J. Statist. 6:65–70; Benjamini & Hochberg 1995, JRSS B 57:289–300; the
 * same as R's p.adjust(method = "holm" | "BH").)
 */
export function adjustPValues(ps: ArrayLike<number>, method: Correction): Float64Array {
  const m = ps.length;
  const out = Float64Array.from(ps);
  if (method === 'none' || m < 2) return out;
  const order = Array.from({ length: m }, (_, i) => i).sort((a, b) => ps[a]! - ps[b]! || a - b);
  if (method === 'holm') {
    let running = 0;
    order.forEach((idx, i) => {
      running = Math.max(running, Math.min(1, (m - i) * ps[idx]!));
      out[idx] = running;
    });
  } else {
    let running = 1;
    for (let i = m - 1; i >= 0; i--) {
      const idx = order[i]!;
      running = Math.min(running, (m / (i + 1)) * ps[idx]!);
      out[idx] = Math.min(1, running);
    }
  }
  return out;
}

export function isNoisy(s: Summary, cvThresholdPct = DEFAULT_VERDICT_OPTIONS.cvThresholdPct): boolean {
  return s.cv !== null && s.cv * 100 > cvThresholdPct;
}

/** p-values as papers print them: 3 significant digits, and "< 0.001" below that. */
export function formatP(p: number): string {
  if (p < 0.001) return '< 0.001';
  return p.toPrecision(3).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
}

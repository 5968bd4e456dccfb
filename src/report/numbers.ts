// Numbers as every report prints them (Markdown, HTML, charts): rounded to significant digits, not
// to a fixed number of decimals — CrystalDiskMark's 1.585 MB/s stays 1.585, not "1.6", and 3512.884
// MB/s is 3513 — latency in µs or ms by its magnitude, and an interval wider than the value itself
// said in words ("too noisy to tell") instead of printed as [-571%, +805%].
import { METRICS, type MetricCell, type MetricKey } from './metrics.ts';
import { deltaUninformative, type Comparison, type Summary } from './stats.ts';

/** Digits a measured value keeps: CrystalDiskMark prints MB/s with 3 decimals, so 1.585 and 61.93 keep 4. */
export const SIGNIFICANT_DIGITS = 4;

const byDecimals = new Map<number, Intl.NumberFormat>();
function fixed(decimals: number): Intl.NumberFormat {
  let f = byDecimals.get(decimals);
  if (!f) byDecimals.set(decimals, (f = new Intl.NumberFormat('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })));
  return f;
}

/**
 * Decimals that give `x` `digits` significant digits; a whole part longer than that is kept whole
 * (149513.7 IOPS is 149,514, never 149,500). Counted on the rounded value, so 9.9996 → 10.00.
 */
export function decimalsFor(x: number, digits = SIGNIFICANT_DIGITS): number {
  const abs = Math.abs(x);
  if (!Number.isFinite(abs) || abs === 0) return 0;
  const rounded = Math.abs(Number(abs.toPrecision(digits)));
  const whole = Math.floor(Math.log10(rounded)) + 1;
  return Math.min(12, Math.max(0, digits - whole));
}

/** `x` with `digits` significant digits (at least its whole part), thousands grouped: 1.585, 828.0, 3,513. */
export function roundSig(x: number, digits = SIGNIFICANT_DIGITS): string {
  if (!Number.isFinite(x)) return '–';
  if (x === 0) return '0';
  return fixed(decimalsFor(x, digits)).format(x);
}

/** `x` with exactly `decimals` decimals (a half-width printed to its mean's precision). */
export function withDecimals(x: number, decimals: number): string {
  return fixed(decimals).format(x);
}

/** The unit a latency of this many µs is shown in: µs below 1 ms, ms below 10 s, else s. */
export function latencyUnit(us: number): { unit: 'µs' | 'ms' | 's'; scale: number } {
  const abs = Math.abs(us);
  if (abs >= 1e7) return { unit: 's', scale: 1e-6 };
  if (abs >= 1000) return { unit: 'ms', scale: 1e-3 };
  return { unit: 'µs', scale: 1 };
}

/** 66.14 µs, 2.388 ms, 12.00 s. */
export function formatLatency(us: number | null): string {
  if (us === null || !Number.isFinite(us)) return '–';
  const { unit, scale } = latencyUnit(us);
  return `${roundSig(us * scale)} ${unit}`;
}

const isLatency = (m: MetricKey): boolean => METRICS[m].unit === 'µs';

/** A metric's raw value for a table cell: MB/s and IOPS bare (the header names the unit), latency with its unit, CPU as a share. */
export function formatValue(m: MetricKey, raw: number | null): string {
  if (raw === null || !Number.isFinite(raw)) return '–';
  if (isLatency(m)) return formatLatency(raw);
  return roundSig(raw * METRICS[m].scale, m === 'cpuPercent' ? 3 : SIGNIFICANT_DIGITS);
}

/** The header of a metric's column: `MB/s`, `IOPS`, `lat mean`, `CPU %`. */
export function metricHeader(m: MetricKey): string {
  const d = METRICS[m];
  if (isLatency(m)) return d.label;
  return d.unit === d.label ? d.label : `${d.label} ${d.unit}`;
}

/** A confidence interval wider than the value itself: its lower end is below zero. */
export function meanTooNoisy(s: Summary): boolean {
  return s.mean !== null && s.ci !== null && s.ci.halfWidth > Math.abs(s.mean);
}

export const TOO_NOISY = 'too noisy to tell';

/**
 * `mean ± half-width` in the metric's display unit, the half-width to the mean's decimals
 * (latency: `2.388 ± 0.012 ms`); the bare mean when n = 1; "too noisy to tell" beside the mean
 * when the interval is wider than the mean.
 */
export function formatMeanCi(cell: MetricCell | undefined): string {
  if (!cell || cell.summary.mean === null) return '–';
  const s = cell.summary;
  const m = cell.metric;
  if (meanTooNoisy(s)) return `${formatValue(m, s.mean)} (${TOO_NOISY})`;
  if (!s.ci) return formatValue(m, s.mean);
  if (isLatency(m)) {
    const { unit, scale } = latencyUnit(s.mean!);
    const d = decimalsFor(s.mean! * scale);
    return `${withDecimals(s.mean! * scale, d)} ± ${withDecimals(s.ci.halfWidth * scale, d)} ${unit}`;
  }
  const scale = METRICS[m].scale;
  const d = decimalsFor(s.mean! * scale, m === 'cpuPercent' ? 3 : SIGNIFICANT_DIGITS);
  return `${withDecimals(s.mean! * scale, d)} ± ${withDecimals(s.ci.halfWidth * scale, d)}`;
}

/** A percentage for a Δ: whole above 10% (+38%), one decimal below (-4.5%), always signed. */
export function formatPct(x: number): string {
  if (!Number.isFinite(x)) return '–';
  let t = Math.abs(x) >= 9.95 ? x.toFixed(0) : x.toFixed(1);
  if (/^-0(\.0)?$/.test(t)) t = t.slice(1);
  return `${x > 0 && Number(t) !== 0 ? '+' : ''}${t}%`;
}

/** Whether a Δ's interval says nothing: the verdict's own rule (stats.ts deltaUninformative), so a cell never shows ▲/▼ beside it. */
export function deltaTooNoisy(c: Comparison): boolean {
  return deltaUninformative(c.delta, c.candidate.n, c.baseline.n);
}

/** `+38% [+21%, +57%]`; `+12%` without an interval (n = 1); `too noisy to tell (+12%)`. */
export function formatDelta(c: Comparison): string {
  if (!c.delta) return '–';
  if (deltaTooNoisy(c)) return `${TOO_NOISY} (${formatPct(c.delta.pct)})`;
  const ci = c.delta.ci;
  return ci ? `${formatPct(c.delta.pct)} [${formatPct(ci.low)}, ${formatPct(ci.high)}]` : formatPct(c.delta.pct);
}

/**
 * Chart labels: significant digits, with k/M/G from 10,000 on (149.5k); `trim` drops trailing
 * zeros, for axis ticks (0.5, not 0.500).
 */
export function compactSig(v: number, digits = SIGNIFICANT_DIGITS, trim = false): string {
  const abs = Math.abs(v);
  const [x, suffix] = abs >= 1e9 ? [v / 1e9, 'G'] : abs >= 1e6 ? [v / 1e6, 'M'] : abs >= 1e4 ? [v / 1e3, 'k'] : [v, ''];
  let s = roundSig(x, digits);
  if (trim && s.includes('.')) s = s.replace(/\.?0+$/, '');
  return `${s}${suffix}`;
}

// Order statistics for benchmark samples. Medians, not means: one slow outlier (a page-cache
// flush, a GC pause) must not move a figure.

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

export function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

/** min–max spread relative to the median, in percent: how noisy the samples were. */
export function spreadPct(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  return ((Math.max(...xs) - Math.min(...xs)) / median(xs)) * 100;
}

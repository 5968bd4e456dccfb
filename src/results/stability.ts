// Repeat until stable (the playbook's `repeat.until`): a permutation is stable once, for each of its
// tests, the main metric's 95 % interval of the mean (t distribution, as the report prints it) is
// within ±ciPct % of the mean. The run decides with it after each repetition or round; the report
// says with it which permutations reached it.
import { studentTQuantile } from '../stats/distributions.ts';
import type { ResultRecord } from './record.ts';

/** The interval the rule uses: 95 %, whatever level a report is asked for. */
export const STABILITY_LEVEL = 0.95;

/** A test's main metric: IOPS for a random test (`rnd-…`) that has IOPS, else MB/s (report/model.ts primaryMetricOf). */
export function mainMetricOf(testId: string, records: readonly ResultRecord[]): 'iops' | 'bytesPerSecond' {
  if (testId.startsWith('rnd-') && records.some((r) => r.iops !== null)) return 'iops';
  if (records.some((r) => r.bytesPerSecond !== null)) return 'bytesPerSecond';
  return 'iops';
}

/** The 95 % interval's half-width as a % of |mean|, from n, mean and sample stddev; null when n < 2 or the mean is 0. */
export function halfWidthPctOf(n: number, mean: number | null, stddev: number | null): number | null {
  if (n < 2 || mean === null || stddev === null || mean === 0) return null;
  return ((studentTQuantile((1 + STABILITY_LEVEL) / 2, n - 1) * stddev) / Math.sqrt(n) / Math.abs(mean)) * 100;
}

/** halfWidthPctOf of a sample. */
export function halfWidthPct(values: readonly number[]): number | null {
  const n = values.length;
  if (n < 2) return null;
  const mean = values.reduce((a, v) => a + v, 0) / n;
  const ss = values.reduce((a, v) => a + (v - mean) ** 2, 0);
  return halfWidthPctOf(n, mean, Math.sqrt(ss / (n - 1)));
}

export interface Stability {
  /** every test's interval is within ±ciPct % */
  reached: boolean;
  /** repetitions recorded */
  repetitions: number;
  /** the widest test's half-width, % of its mean (null: fewer than 2 repetitions, or a zero mean) */
  widestPct: number | null;
}

/** Whether one permutation's records (all its repetitions) are stable at ±ciPct %. */
export function stabilityOf(records: readonly ResultRecord[], ciPct: number): Stability {
  const byTest = new Map<string, ResultRecord[]>();
  for (const r of records) byTest.set(r.test.id, [...(byTest.get(r.test.id) ?? []), r]);
  const repetitions = new Set(records.map((r) => r.repetition)).size;
  let widest: number | null = null;
  let reached = byTest.size > 0;
  for (const [testId, own] of byTest) {
    const metric = mainMetricOf(testId, own);
    const values = own.map((r) => r[metric]).filter((v): v is number => v !== null && Number.isFinite(v));
    const pct = halfWidthPct(values);
    if (pct === null) {
      reached = false;
      continue;
    }
    widest = widest === null ? pct : Math.max(widest, pct);
    if (pct > ciPct) reached = false;
  }
  return { reached, repetitions, widestPct: widest };
}

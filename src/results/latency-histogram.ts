// A record's latency histogram (record.ts `latencyHistogram`): what lets the latency of several
// measurements be merged exactly. The VMs of a `vm.count` pass each measure their own I/Os; the
// pass's p99 is the p99 of all of them together, which is read from the summed histograms, never
// from the mean (or any mix) of the VMs' own p99s. Pure.
//
// What fio prints (fio 3.33, stat.c add_ddir_lat_json): with `--output-format=json+` each latency
// block whose percentiles are printed carries `bins` (bucket value in ns → I/O count). The `lat_ns`
// block's percentiles, and so its bins, exist only with `lat_percentiles=1`; its histogram is then
// filled per I/O from issue to completion (stat.c add_lat_sample → add_lat_percentile_sample
// FIO_LAT). storsweep's fio passes both (workloads/fio.ts), so its histogram covers the same span as
// every other latency in a record (record.ts LATENCY_SPAN). fio's HOWTO still calls json+ "a full
// dump of the completion latency bins": that is true of `clat_ns.bins`, which storsweep never keeps.
//
// A bucket's value is the midpoint of its range (stat.c plat_idx_to_val); fio's own percentiles
// are bucket values too, so a percentile from the histogram is within 1/128 of the true value
// (stat.h FIO_IO_U_PLAT_BITS 6). fio has 29 × 64 = 1,856 buckets (stat.h FIO_IO_U_PLAT_NR): a
// histogram with more bins is not fio's and is refused on read.
import { lazy } from '../lazy.ts';
import { z } from 'zod';
import type { LatencyHistogram, LatencyUs } from '../contract/workload.ts';

export type { LatencyHistogram } from '../contract/workload.ts';

/** The span of a histogram storsweep keeps: fio's total latency (lat = slat + clat), per I/O. */
export const HISTOGRAM_SPAN = 'issue→completion (fio lat_ns.bins, json+ with lat_percentiles=1)';

/** fio's bucket count (stat.h FIO_IO_U_PLAT_NR = FIO_IO_U_PLAT_GROUP_NR 29 × 2^FIO_IO_U_PLAT_BITS 6). */
export const MAX_HISTOGRAM_BINS = 29 * 64;

/** Longest `span` text a record may carry (HISTOGRAM_SPAN is ~70 characters). */
const MAX_SPAN_CHARS = 200;

/**
 * A histogram from fio's bins (bucket value → count): ascending, zero counts left out. Null when
 * there are none, or more than fio has buckets (not fio's output: never kept).
 */
export function histogramOf(bins: ReadonlyMap<number, number>, span: string = HISTOGRAM_SPAN): LatencyHistogram | null {
  const pairs: Array<[number, number]> = [];
  for (const [value, count] of bins) if (count > 0) pairs.push([value, count]);
  if (pairs.length === 0 || pairs.length > MAX_HISTOGRAM_BINS) return null;
  pairs.sort((a, b) => a[0] - b[0]);
  return { span, unit: 'ns', bins: pairs };
}

/** How many I/Os the histogram counts. */
export function histogramTotal(h: LatencyHistogram): number {
  let n = 0;
  for (const [, c] of h.bins) n += c;
  return n;
}

/**
 * Several histograms as one: the counts of each bucket summed (the union of their I/Os). Null when
 * there is none, or when they count different spans (they cannot be one distribution).
 */
export function mergeHistograms(parts: readonly LatencyHistogram[]): LatencyHistogram | null {
  const first = parts[0];
  if (first === undefined || parts.some((p) => p.span !== first.span || p.unit !== first.unit)) return null;
  if (parts.length === 1) return first;
  const sum = new Map<number, number>();
  for (const p of parts) for (const [v, c] of p.bins) sum.set(v, (sum.get(v) ?? 0) + c);
  return histogramOf(sum, first.span);
}

/**
 * The value at percentile `p` (0–100] of ascending bins, as fio computes its own (stat.c
 * calc_clat_percentiles): the first bucket whose running count reaches p % of all I/Os.
 */
export function binsPercentile(bins: ReadonlyArray<readonly [number, number]>, p: number): number | null {
  let total = 0;
  for (const [, c] of bins) total += c;
  if (total === 0) return null;
  const want = (p / 100) * total;
  let sum = 0;
  for (const [v, c] of bins) {
    sum += c;
    if (sum >= want) return v;
  }
  return bins[bins.length - 1]?.[0] ?? null;
}

/** The record's percentiles (µs) from a histogram, beside a mean obtained elsewhere. */
export function histogramLatencyUs(h: LatencyHistogram, meanUs: number | null): LatencyUs {
  const at = (p: number) => {
    const ns = binsPercentile(h.bins, p);
    return ns === null ? null : ns / 1000;
  };
  return { mean: meanUs, p50: at(50), p95: at(95), p99: at(99), p999: at(99.9) };
}

/**
 * The check of a record's `latencyHistogram` as read back from a file (app/load-source.ts
 * checkRecord): fio's shape and fio's size, so a crafted line can neither exhaust memory nor feed a
 * merge values that are no counts.
 */
export const latencyHistogramSchema = lazy(() => z
  .object({
    span: z.string().max(MAX_SPAN_CHARS),
    unit: z.literal('ns'),
    bins: z
      .array(z.tuple([z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.number().int().positive().max(Number.MAX_SAFE_INTEGER)]))
      .min(1)
      .max(MAX_HISTOGRAM_BINS, `at most ${MAX_HISTOGRAM_BINS} bins (fio's bucket count)`),
  })
  .strict()
  .superRefine((h, ctx) => {
    for (let i = 1; i < h.bins.length; i++) {
      if (h.bins[i]![0] <= h.bins[i - 1]![0]) {
        ctx.addIssue({ code: 'custom', path: ['bins', i], message: 'bins must ascend by value, each value once' });
        return;
      }
    }
  }));

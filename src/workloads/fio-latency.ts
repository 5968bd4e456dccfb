// Latency out of fio's JSON, on the span every tool shares: issue → completion. diskspd times each I/O
// from issue to completion (`-L`; CrystalDiskMark shows the same average), which in fio is `lat`
// (= slat + clat: "total latency", fio HOWTO "lat"); `clat` alone leaves out the submission time.
// Percentiles: fio prints them under `lat_ns` only with `lat_percentiles=1` (fio stat.c
// add_ddir_status_json), which the runner passes. With `--output-format=json+` each block also carries
// `bins` (latency value in ns → I/O count), from which the percentiles of several jobs are merged exactly,
// the way fio computes them (stat.c calc_clat_percentiles: the first bucket whose cumulative count
// reaches p% of all I/Os). Pure.
import { binsPercentile } from '../results/latency-histogram.ts';
import type { LatencyUs } from '../results/record.ts';
export { LATENCY_SPAN } from '../results/record.ts';

type Json = Record<string, unknown>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null);

function obj(v: unknown): Json | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
}

/** One direction's latency as read from fio, in ns, before it is turned into µs. */
export interface LatencyDistribution {
  /** number of I/Os the mean and bins describe */
  n: number;
  meanNs: number | null;
  /** fio's own percentiles (p → ns) of the issue→completion span, when fio printed them for it */
  percentilesNs: Map<number, number> | null;
  /** json+ histogram of the issue→completion span: bucket value in ns → count */
  bins: Map<number, number> | null;
  /** why a part is missing or where it came from; empty when everything is `lat` as fio printed it */
  notes: string[];
}

const WANT = [50, 95, 99, 99.9] as const;

function percentileMap(p: Json | null, scale: number): Map<number, number> | null {
  if (!p) return null;
  const out = new Map<number, number>();
  for (const [k, v] of Object.entries(p)) {
    const key = Number(k);
    const val = num(v);
    if (Number.isFinite(key) && val !== null) out.set(key, val * scale);
  }
  return out.size > 0 ? out : null;
}

/**
 * fio's bins as they can only be: bucket values are whole nanoseconds (stat.c plat_idx_to_val, an
 * unsigned 64-bit value), counts whole I/Os. Anything else is not fio's output (a hostile or broken
 * guest's): the histogram is refused whole (null, with why), never cleaned into something plausible.
 */
function binMap(b: Json | null): { bins: Map<number, number> | null; refused?: string } {
  if (!b) return { bins: null };
  const out = new Map<number, number>();
  for (const [k, v] of Object.entries(b)) {
    const key = Number(k);
    const count = num(v);
    if (!/^\d+$/.test(k) || !Number.isSafeInteger(key) || count === null || !Number.isSafeInteger(count) || count < 0) {
      return { bins: null, refused: `a bin ${JSON.stringify(k.slice(0, 40))}: ${JSON.stringify(v)} is not a whole nanosecond value with a whole count` };
    }
    if (count > 0) out.set(key, count);
  }
  return { bins: out.size > 0 ? out : null };
}

/** The bins, when they count exactly the I/Os the block reports (fio fills both per I/O: stat.c add_lat_sample); else null and why. */
function checkedBins(lat: Json, n: number): { bins: Map<number, number> | null; refused?: string } {
  const got = binMap(obj(lat.bins));
  if (!got.bins) return got;
  let total = 0;
  for (const c of got.bins.values()) total += c;
  const samples = num(lat.N) ?? n;
  if (total !== samples) return { bins: null, refused: `its bins count ${total} I/Os where it reports ${samples}` };
  return got;
}

/** The issue→completion distribution of one direction block (`read`, `write`) of a fio job. */
export function latencyDistribution(dir: Json): LatencyDistribution {
  const notes: string[] = [];
  const n = num(dir.total_ios) ?? 0;
  // fio ≥ 3.0: *_ns in ns; fio 2.x: `lat`/`clat` in µs
  const latNs = obj(dir.lat_ns);
  const lat = latNs ?? obj(dir.lat);
  const clat = obj(dir.clat_ns) ?? obj(dir.clat);
  const scale = latNs || obj(dir.clat_ns) ? 1 : 1000;
  if (!lat) {
    if (clat) notes.push('fio printed no total latency (lat); latency left empty rather than reporting completion latency (clat) as if it were');
    return { n, meanNs: null, percentilesNs: null, bins: null, notes };
  }
  const meanNs = n > 0 || num(dir.iops) ? (num(lat.mean) === null ? null : num(lat.mean)! * scale) : null;
  let percentilesNs = percentileMap(obj(lat.percentile), scale);
  const checked = checkedBins(lat, n);
  const bins = checked.bins;
  if (checked.refused) notes.push(`fio's latency histogram left out, not fio's output: ${checked.refused}`);
  if (!percentilesNs && !bins && clat && obj(clat.percentile)) {
    // A sync engine (psync…) has no submission step: fio reports slat N = 0 and lat = clat per I/O.
    const slat = obj(dir.slat_ns) ?? obj(dir.slat);
    const slatN = slat ? (num(slat.N) ?? 0) : 0;
    if (slatN === 0) {
      percentilesNs = percentileMap(obj(clat.percentile), scale);
      notes.push('percentiles from clat: a synchronous engine has no submission latency, so clat is the issue→completion time');
    } else {
      notes.push('fio printed percentiles for completion latency (clat) only (no lat_percentiles=1): percentiles left empty');
    }
  }
  return { n, meanNs, percentilesNs, bins, notes };
}

/** The value at percentile `p` of a histogram, as fio computes it from its buckets (results/latency-histogram.ts binsPercentile). */
export function histogramPercentile(bins: Map<number, number>, p: number): number | null {
  return binsPercentile([...bins].sort((a, b) => a[0] - b[0]), p);
}

/**
 * Several distributions as one: the union of their I/Os. The mean is weighted by I/O count (exact);
 * percentiles come from the summed histograms when every part has one, else they are left empty (the
 * percentiles of a union cannot be derived from the parts' percentiles). One part is returned as is.
 */
export function mergeDistributions(parts: LatencyDistribution[], what: string): LatencyDistribution {
  const live = parts.filter((p) => p.n > 0);
  if (live.length === 0) return parts[0] ?? { n: 0, meanNs: null, percentilesNs: null, bins: null, notes: [] };
  if (live.length === 1) return live[0]!;
  const n = live.reduce((a, p) => a + p.n, 0);
  const notes = [...new Set(live.flatMap((p) => p.notes))];
  const meanNs = live.every((p) => p.meanNs !== null) ? live.reduce((a, p) => a + p.meanNs! * p.n, 0) / n : null;
  let bins: Map<number, number> | null = null;
  if (live.every((p) => p.bins)) {
    bins = new Map();
    for (const p of live) for (const [k, c] of p.bins!) bins.set(k, (bins.get(k) ?? 0) + c);
  } else {
    notes.push(`latency of ${what}: mean weighted by I/O count; percentiles left empty (they cannot be merged without fio's histograms, --output-format=json+)`);
  }
  return { n, meanNs, percentilesNs: null, bins, notes };
}

/** A distribution in the record's units (µs): fio's own percentiles, else the histogram's. */
export function toLatencyUs(d: LatencyDistribution): LatencyUs {
  const us = (ns: number | null | undefined) => (ns === null || ns === undefined ? null : ns / 1000);
  const at = (p: number): number | null => {
    for (const [k, v] of d.percentilesNs ?? []) if (Math.abs(k - p) < 1e-9) return us(v);
    return d.bins ? us(histogramPercentile(d.bins, p)) : null;
  };
  const [p50, p95, p99, p999] = WANT.map(at) as [number | null, number | null, number | null, number | null];
  return { mean: us(d.meanNs), p50, p95, p99, p999 };
}

// How several measured passes of one test become one value. CrystalDiskMark keeps the best pass
// for throughput/IOPS and the lowest latency; KDiskMark's default averages. Pure.
import { InternalError } from '../errors.ts';
import type { Aggregated, Aggregation, LatencyUs, PassMeasurement } from '../contract/workload.ts';
import { mergeHistograms } from '../results/latency-histogram.ts';

export type { Aggregated, PassMeasurement } from '../contract/workload.ts';

function pick(values: (number | null)[], rule: Aggregation, lowerIsBetter = false): number | null {
  const v = values.filter((x): x is number => x !== null);
  if (v.length === 0) return null;
  switch (rule) {
    case 'max':
      return lowerIsBetter ? Math.min(...v) : Math.max(...v);
    case 'mean':
      return v.reduce((a, b) => a + b, 0) / v.length;
    case 'median': {
      const s = [...v].sort((a, b) => a - b);
      const m = s.length >> 1;
      return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
    }
    case 'last':
      return v[v.length - 1]!;
  }
}

export function aggregatePasses(passes: PassMeasurement[], rule: Aggregation): Aggregated {
  if (passes.length === 0) throw new InternalError('aggregatePasses: no passes');
  const lat = (k: keyof LatencyUs) => pick(passes.map((p) => p.latencyUs[k]), rule, true);
  let representativePass = rule === 'last' ? passes.length - 1 : 0;
  if (rule === 'max') {
    let best = -Infinity;
    passes.forEach((p, i) => {
      const score = p.bytesPerSecond ?? p.iops ?? -Infinity;
      if (score > best) {
        best = score;
        representativePass = i;
      }
    });
  }
  // The histogram holds every scored pass's I/Os, whatever the rule picks for the figures: a
  // distribution that merges exactly (the VMs of a vm.count pass); absent unless every pass has one.
  const histograms = passes.flatMap((p) => (p.latencyHistogram ? [p.latencyHistogram] : []));
  const latencyHistogram = histograms.length === passes.length ? mergeHistograms(histograms) : null;
  return {
    ...(latencyHistogram ? { latencyHistogram } : {}),
    iops: pick(passes.map((p) => p.iops), rule),
    bytesPerSecond: pick(passes.map((p) => p.bytesPerSecond), rule),
    latencyUs: { mean: lat('mean'), p50: lat('p50'), p95: lat('p95'), p99: lat('p99'), p999: lat('p999') },
    cpuPercent: pick(passes.map((p) => p.cpuPercent), rule === 'max' ? 'mean' : rule),
    representativePass,
  };
}

// A mixed job's read and write halves over several measured passes (results/mix-halves.ts): each
// half is aggregated by the profile's rule like the job's total (aggregate.ts), so with `mean` the
// halves are means too and still add up to the total, not one pass's figures beside a mean. With
// `max` and `last` the total is one pass's (the best by MB/s, or the last): its halves are that pass's.
import { halfFacts, type HalfFigures } from '../results/mix-halves.ts';
import type { ResultRecord } from '../results/record.ts';
import { aggregatePasses } from './aggregate.ts';
import type { Aggregation } from './spec.ts';

type Metadata = NonNullable<ResultRecord['metadata']>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function figures(m: Metadata, dir: 'read' | 'write'): HalfFigures | null {
  const iops = num(m[`half.${dir}.iops`]);
  const bytesPerSecond = num(m[`half.${dir}.bytesPerSecond`]);
  if (iops === null || bytesPerSecond === null) return null;
  const lat = (k: string) => num(m[`half.${dir}.latencyUs.${k}`]);
  return { iops, bytesPerSecond, latencyUs: { mean: lat('mean'), p50: lat('p50'), p95: lat('p95'), p99: lat('p99'), p999: lat('p999') } };
}

/** The halves of every pass aggregated by `rule`; empty when a pass has none (not a mixed job). */
export function aggregateHalves(metas: ReadonlyArray<Metadata | undefined>, rule: Aggregation): Metadata {
  if (metas.length < 2 || rule === 'max' || rule === 'last') return {};
  const out: Partial<Record<'read' | 'write', HalfFigures>> = {};
  for (const dir of ['read', 'write'] as const) {
    const per = metas.map((m) => (m ? figures(m, dir) : null));
    if (per.some((f) => f === null)) return {};
    const agg = aggregatePasses(per.map((f) => ({ ...f!, cpuPercent: null })), rule);
    out[dir] = { iops: agg.iops ?? 0, bytesPerSecond: agg.bytesPerSecond ?? 0, latencyUs: agg.latencyUs };
  }
  return halfFacts(out.read!, out.write!);
}

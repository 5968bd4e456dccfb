// The read and write halves of a mixed job (fio rw/randrw with rwmixread, diskspd -w<pct>): both
// tools report each direction of the one job, and a study such as IOMeter's publishes both. The
// tool's side puts each half's figures in the record's metadata (`halfFacts`); `mixHalves` turns
// them into records of their own, tagged as halves of that job (test.half, metadata.halfOf), so a
// report shows them beside the job's total. The total record stays what it was.
import { testIdentity, type LatencyUs, type ResultRecord } from './record.ts';

export interface HalfFigures {
  iops: number;
  bytesPerSecond: number;
  latencyUs: LatencyUs;
}

type Metadata = NonNullable<ResultRecord['metadata']>;

const LATENCY_KEYS = ['mean', 'p50', 'p95', 'p99', 'p999'] as const;

/** A mixed job's halves as flat metadata (`half.read.iops`, `half.write.latencyUs.p99`, …). */
export function halfFacts(read: HalfFigures, write: HalfFigures): Metadata {
  const out: Metadata = {};
  for (const [dir, f] of [['read', read], ['write', write]] as const) {
    out[`half.${dir}.iops`] = f.iops;
    out[`half.${dir}.bytesPerSecond`] = f.bytesPerSecond;
    for (const k of LATENCY_KEYS) out[`half.${dir}.latencyUs.${k}`] = f.latencyUs[k];
  }
  return out;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** True for a test that mixes reads and writes in one job. */
export function isMixed(t: ResultRecord['test']): boolean {
  return (t.pattern === 'rw' || t.pattern === 'randrw') && t.readPercent > 0 && t.readPercent < 100 && t.half === undefined;
}

/** The two half records of a mixed job's record whose metadata holds `halfFacts`; none otherwise. */
export function mixHalves(rec: ResultRecord): ResultRecord[] {
  const m = rec.metadata;
  if (!m || !isMixed(rec.test)) return [];
  const out: ResultRecord[] = [];
  for (const dir of ['read', 'write'] as const) {
    const iops = num(m[`half.${dir}.iops`]);
    const bytesPerSecond = num(m[`half.${dir}.bytesPerSecond`]);
    if (iops === null && bytesPerSecond === null) continue;
    const latencyUs = Object.fromEntries(LATENCY_KEYS.map((k) => [k, num(m[`half.${dir}.latencyUs.${k}`])])) as unknown as LatencyUs;
    const { id: _id, ...shape } = rec.test;
    // the host's figures (when observed) are the job's, and arrive after this is built; so is the
    // latency histogram (reads and writes together), which is no half's
    const { host: _host, latencyHistogram: _histogram, ...base } = rec;
    const metadata: Metadata = Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('half.')));
    out.push({
      ...base,
      test: testIdentity({ ...shape, half: dir }),
      iops,
      bytesPerSecond,
      latencyUs,
      // CPU is the job's, not a half's
      cpuPercent: null,
      metadata: { ...metadata, halfOf: rec.test.id },
    });
  }
  return out;
}

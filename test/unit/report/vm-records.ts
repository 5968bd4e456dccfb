// Records of a vm.count study as the run writes them: per VM, pass and test a member record (with
// its json+ latency histogram), and after each pass the aggregate aggregateVmPass makes of them.
// The figures follow a curve the caller states (aggregate IOPS and latency per VM count).
import { testIdentity, type ResultRecord, type TestIdentity } from '../../../src/results/record.ts';
import { aggregateVmPass } from '../../../src/results/vm-aggregate.ts';

const KiB = 1024;
const MiB = 1024 * 1024;

export const RANDOM_TEST = testIdentity({ pattern: 'randread', blockSizeBytes: 4 * KiB, queueDepth: 32, threads: 1, readPercent: 100 });
export const SEQUENTIAL_TEST = testIdentity({ pattern: 'read', blockSizeBytes: MiB, queueDepth: 8, threads: 1, readPercent: 100 });

/** A test's curve: per VM count, the aggregate IOPS and the typical latency (µs) of one I/O. */
export interface Curve {
  test: TestIdentity;
  points: Record<number, { iops: number; latencyUs: number }>;
}

export interface VmStudy {
  runId?: string;
  counts: readonly number[];
  curves: readonly Curve[];
  repetitions?: number;
  /** members without a histogram (diskspd) */
  noHistogram?: boolean;
}

/** One VM's histogram: most I/Os near `us`, a tail at 4×, all over one second at `iops`. */
function histogram(us: number, iops: number): ResultRecord['latencyHistogram'] {
  const n = Math.max(100, Math.round(iops));
  const ns = Math.round(us * 1000);
  const tail = Math.max(1, Math.round(n * 0.02));
  return { span: 'issue→completion (fio lat_ns.bins, json+ with lat_percentiles=1)', unit: 'ns', bins: [[Math.round(ns * 0.8), Math.round(n * 0.5)], [ns, n - Math.round(n * 0.5) - tail], [ns * 4, tail]] };
}

/** The member records of one pass: `count` VMs sharing the aggregate's IOPS (VM 1 a little faster), started 2 ms apart. */
export function memberRecords(s: VmStudy, curve: Curve, count: number, repetition: number): ResultRecord[] {
  const p = curve.points[count]!;
  const start = Date.parse('2026-12-06T02:00:00.000Z') + repetition * 60_000;
  return Array.from({ length: count }, (_, i): ResultRecord => {
    const share = count === 1 ? 1 : (i === 0 ? 1.1 : (count - 1.1) / (count - 1)) / count;
    const iops = p.iops * share * (1 + 0.003 * repetition);
    const lat = p.latencyUs * (i === 0 ? 0.95 : 1.05);
    const h = histogram(lat, iops);
    return {
      runId: s.runId ?? 'vm-run',
      permutationId: `p-vm${count}`,
      axes: { 'vm.count': count, 'datastore.name': 'ds1' },
      repetition,
      test: curve.test,
      iops,
      bytesPerSecond: iops * curve.test.blockSizeBytes,
      latencyUs: { mean: lat * 1.1, p50: lat, p95: lat * 2, p99: lat * 4, p999: lat * 4 },
      ...(s.noHistogram ? {} : { latencyHistogram: h }),
      cpuPercent: 10,
      tool: { name: s.noHistogram ? 'diskspd' : 'fio', version: null },
      rawPath: null,
      vm: { role: 'member', count, index: i + 1, name: `ss-vm-${i + 1}`, startedAt: new Date(start + i * 2).toISOString(), endedAt: new Date(start + 1000 + i).toISOString() },
      metadata: { profile: 'vm-scaling', passes: 1, passSec: 1, pass: 1 },
    };
  });
}

/** Every record of the study, in the order a run writes them: per permutation, repetition and test, the members then their aggregate. */
export function vmStudyRecords(s: VmStudy): ResultRecord[] {
  const out: ResultRecord[] = [];
  for (const count of s.counts) {
    for (let rep = 1; rep <= (s.repetitions ?? 3); rep++) {
      for (const curve of s.curves) {
        const members = memberRecords(s, curve, count, rep);
        out.push(...members, aggregateVmPass(members));
      }
    }
  }
  return out;
}

/** Random 4k IOPS bend at 4 VMs (2 → 4 adds 3,500 of a linear 19,500); sequential 1m scales on. */
export const BENDS_AT_4: Curve = { test: RANDOM_TEST, points: { 1: { iops: 10_000, latencyUs: 200 }, 2: { iops: 19_500, latencyUs: 210 }, 4: { iops: 23_000, latencyUs: 300 } } };
export const NO_BEND: Curve = { test: SEQUENTIAL_TEST, points: { 1: { iops: 400, latencyUs: 20_000 }, 2: { iops: 790, latencyUs: 20_500 }, 4: { iops: 1_560, latencyUs: 21_000 } } };

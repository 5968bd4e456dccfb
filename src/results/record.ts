// The normalized result record: one per permutation × repetition × test. Every importer and every
// runner produces exactly this shape; reports read nothing else. Unknown values are null.
import { z } from 'zod';
import { lazy } from '../lazy.ts';
import type { Axes } from '../contract/axis.ts';
import type { HostMetrics, HostUnavailable } from '../contract/host-metrics.ts';
import type { LatencyHistogram, LatencyUs, Pattern, TestIdentity } from '../contract/workload.ts';

export type { LatencyHistogram, LatencyUs, Pattern, TestIdentity } from '../contract/workload.ts';

export type { HostIoFigures, HostMetrics, HostUnavailable, EsxtopLatencies } from '../contract/host-metrics.ts';

// The shape of `host` as a record read back from a file must have it (results.jsonl, an imported
// JSON Lines file): every field the reports compute with is checked, so a crafted or damaged line
// is refused at its line, never a TypeError or a string concatenated into a number.
// Built on first use (src/lazy.ts): `validate` loads this file (workloads/profiles.ts names its
// tests with testIdentity), and only a command reading records back checks a `host`.
const hostSchemas = lazy(() => {
  const figure = z.number().finite().nullable();
  const hostIoFigures = z.object({ instance: z.string(), readIops: figure, writeIops: figure, readKBps: figure, writeKBps: figure, readLatencyMs: figure, writeLatencyMs: figure, latencyMs: figure });
  const esxtopLatencies = z.object({ device: z.string(), davgMs: figure, kavgMs: figure, gavgMs: figure, qavgMs: figure, readIops: figure, writeIops: figure });
  const hostSource = z.enum(['vsphere-perf', 'esxtop']);
  const count = z.number().int().nonnegative();
  return {
    unavailable: z.object({ source: hostSource, unavailable: z.string() }),
    metrics: z.object({
      source: hostSource,
      from: z.string(),
      to: z.string(),
      entity: z.string().max(256).optional(),
      intervalSec: z.number().finite().nonnegative(),
      samples: count,
      samplesInside: count,
      virtualDisk: hostIoFigures.optional(),
      datastore: hostIoFigures.optional(),
      esxtop: esxtopLatencies.optional(),
      latencyUs: figure,
      latencySpan: z.string(),
      latencyResolutionUs: z.number().finite().positive().optional(),
      window: z.literal('scored-passes').optional(),
      notes: z.array(z.string()).optional(),
    }),
  };
});
/** The check for a record's `host` (one of the two shapes, told apart by `unavailable`, so a refusal names the field). */
export const hostRecordSchema = (v: unknown) => (typeof v === 'object' && v !== null && 'unavailable' in v ? hostSchemas().unavailable : hostSchemas().metrics);

export const PATTERNS: readonly Pattern[] = ['read', 'write', 'randread', 'randwrite', 'rw', 'randrw'];


/**
 * The span every latency in a record covers, whatever tool measured it: from the I/O's issue to its
 * completion — fio's `lat` (slat + clat, JSON `lat_ns`), diskspd's per-I/O latency (`-L`), the average
 * CrystalDiskMark shows. fio's `clat` alone would leave out the submission time.
 */
export const LATENCY_SPAN = 'issue→completion (fio lat_ns = slat + clat; diskspd -L; CrystalDiskMark)';


export interface ResultRecord {
  runId: string;
  permutationId: string;
  axes: Axes;
  /** 1-based */
  repetition: number;
  test: TestIdentity;
  iops: number | null;
  /** decimal bytes per second; MB/s as CrystalDiskMark prints it = bytesPerSecond / 1e6 */
  bytesPerSecond: number | null;
  latencyUs: LatencyUs;
  /**
   * The I/Os of the test's scored passes as a histogram (results/latency-histogram.ts), where the
   * tool printed one (fio json+) and a later merge needs it: a `vm.count` member, and the aggregate
   * made from the members. Absent elsewhere (diskspd, imports, ordinary records).
   */
  latencyHistogram?: LatencyHistogram;
  cpuPercent: number | null;
  tool: { name: string; version: string | null };
  /** path of the raw tool output, relative to the run directory (or the imported file) */
  rawPath: string | null;
  /**
   * What the hypervisor saw of this test from below the guest (vSphere PerformanceManager, esxtop),
   * beside the guest's figures above; absent where nothing observes the host (local, ssh, Hyper-V,
   * imports, records written before it existed).
   */
  host?: HostMetrics | HostUnavailable;
  /**
   * A `vm.count` permutation's share (issue 32): one VM of the pass (`member`), or the pass's
   * aggregate over its VMs (`aggregate`); absent on every other record.
   */
  vm?: VmShare;
  /** free-form facts: imported file footer (test size, passes, date, OS), aggregation rule… */
  metadata?: Record<string, string | number | boolean | null>;
}

/** The axis of a study of VM count (issue 32): how many VMs run each pass at once. */
export const VM_COUNT_AXIS = 'vm.count';

/**
 * Which VM of a `vm.count` pass a record measured, or that it is the pass's aggregate. Members are
 * written by the run (one per VM, pass and test); the aggregate (src/results/vm-aggregate.ts) sums
 * their IOPS and bytes/s and takes latency from the merged distribution, never the mean of means.
 */
export interface VmShare {
  role: 'member' | 'aggregate';
  /** how many VMs ran the pass at once: the permutation's `vm.count` */
  count: number;
  /** a member's VM, 1-based; absent on the aggregate */
  index?: number;
  /** a member's VM name on the host; absent on the aggregate */
  name?: string;
  /** a member's measured window (ISO 8601); on the aggregate, the window every member shares */
  startedAt?: string;
  endedAt?: string;
  /** the aggregate: the largest difference between the members' start times, ms */
  startSkewMs?: number;
  /** the aggregate: the spread of the members' figures (e.g. iopsMin, iopsMax, iopsCv, p99MaxUs) */
  spread?: Record<string, number | null>;
}

const VM_TEXT_CHARS = 256;
/** The check for a record's `vm` as read back from a file: every field a report reads, with its type and range. */
export const vmShareSchema = lazy(() => z
  .object({
    role: z.enum(['member', 'aggregate']),
    count: z.number().int().positive().max(10_000),
    index: z.number().int().positive().max(10_000).optional(),
    name: z.string().max(VM_TEXT_CHARS).optional(),
    startedAt: z.string().max(VM_TEXT_CHARS).optional(),
    endedAt: z.string().max(VM_TEXT_CHARS).optional(),
    startSkewMs: z.number().finite().nonnegative().optional(),
    spread: z
      .record(z.string().max(VM_TEXT_CHARS), z.number().finite().nullable())
      .refine((o) => Object.keys(o).length <= 64, 'at most 64 spread figures')
      .optional(),
  }));

export const NULL_LATENCY: LatencyUs = Object.freeze({ mean: null, p50: null, p95: null, p99: null, p999: null });

/** `4096` → `4k`, `1048576` → `1m`, `131072` → `128k`, `512` → `512b`. Binary units, as every tool labels blocks. */
export function blockSizeLabel(bytes: number): string {
  if (bytes >= 1048576 && bytes % 1048576 === 0) return `${bytes / 1048576}m`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024}k`;
  return `${bytes}b`;
}

export function isRandom(pattern: Pattern): boolean {
  return pattern === 'randread' || pattern === 'randwrite' || pattern === 'randrw';
}

/** The direction suffix of a canonical id: read, write, or mix<readPercent>. */
export function directionOf(pattern: Pattern, readPercent: number): string {
  if (pattern === 'read' || pattern === 'randread') return 'read';
  if (pattern === 'write' || pattern === 'randwrite') return 'write';
  if (readPercent >= 100) return 'read';
  if (readPercent <= 0) return 'write';
  return `mix${readPercent}`;
}

export function canonicalTestId(t: Omit<TestIdentity, 'id'>): string {
  const partly = t.randomPercent !== undefined && t.randomPercent > 0 && t.randomPercent < 100;
  const kind = partly ? `rnd${t.randomPercent}` : isRandom(t.pattern) ? 'rnd' : 'seq';
  return `${kind}-${blockSizeLabel(t.blockSizeBytes)}-q${t.queueDepth}t${t.threads}-${directionOf(t.pattern, t.readPercent)}${t.half ? `-${t.half}` : ''}`;
}

export function testIdentity(t: Omit<TestIdentity, 'id'>): TestIdentity {
  return { id: canonicalTestId(t), ...t };
}

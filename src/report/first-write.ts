// The first write of the test region as a result of its own. The pre-fill (workloads/prefill.ts)
// writes the region once, sequentially, before pass 0, so that the scored passes of a thin and an
// eager-zeroed disk measure the same written blocks — right for CrystalDiskMark fidelity, but the
// cost of those first writes is what a disk-format study asks about. Every record of a fill says how
// fast the tool wrote it (`prefillBytesPerSecond`) and when the fill started (`prefillAt`); the
// report turns each fill into one sample of a test of its own, "first write", compared like any
// other test and inside the same family of adjusted p-values. One sample per fill, never one per
// record: the repetitions of one provisioning share one fill.
import { NULL_LATENCY, type ResultRecord, type TestIdentity } from '../results/record.ts';

export const FIRST_WRITE_ID = 'first-write';

/** The fill's shape (fio and diskspd alike: sequential writes of 1 MiB, 8 outstanding, one thread). */
export const FIRST_WRITE_TEST: TestIdentity = Object.freeze({ id: FIRST_WRITE_ID, pattern: 'write', blockSizeBytes: 1024 * 1024, queueDepth: 8, threads: 1, readPercent: 0 });

export const FIRST_WRITE_LABEL = 'first write (pre-fill)';

export const FIRST_WRITE_DESCRIPTION =
  'the pre-fill: the test region written once, sequentially, 1 MiB blocks, queue depth 8, before the first pass, on space nothing had written in that provisioning (MB/s as the tool measured it); one sample per fill, so repetitions within one provisioning are one sample';

export function isFirstWrite(t: Pick<TestIdentity, 'id'>): boolean {
  return t.id === FIRST_WRITE_ID;
}

/** The fill's throughput a record carries (bytes/s), or null: the tool's figure, else bytes over wall-clock seconds (records written before the tool's figure was kept). */
export function fillBytesPerSecond(r: Pick<ResultRecord, 'metadata'>): number | null {
  const m = r.metadata;
  if (!m || m['prefill'] !== true) return null;
  const measured = m['prefillBytesPerSecond'];
  if (typeof measured === 'number' && Number.isFinite(measured) && measured > 0) return measured;
  const bytes = m['prefillBytes'];
  const sec = m['prefillSeconds'];
  return typeof bytes === 'number' && typeof sec === 'number' && bytes > 0 && sec > 0 ? bytes / sec : null;
}

/** Which fill a record belongs to: its source, run, permutation and the fill's start (absent in older records: one fill per permutation then). */
export function fillKey(r: Pick<ResultRecord, 'metadata' | 'runId' | 'permutationId'>, source: string): string {
  const at = r.metadata?.['prefillAt'];
  return JSON.stringify([source, r.runId, r.permutationId, typeof at === 'string' ? at : null]);
}

/** The fill of `r` as a record of the first-write test (what the report's columns read). */
export function firstWriteRecord(r: ResultRecord, bytesPerSecond: number): ResultRecord {
  return { ...r, test: FIRST_WRITE_TEST, iops: null, bytesPerSecond, latencyUs: NULL_LATENCY, cpuPercent: null };
}

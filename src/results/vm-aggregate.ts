// One pass of a `vm.count` permutation as one record: the aggregate of its VMs' member records
// (issue 32). The run writes a member record per VM, pass and test, then this aggregate; ordinary
// verdicts of a VM-count study compare aggregates, never members (report/vm-scaling.ts). Pure.
//
// - IOPS and bytes/s: the sum over the VMs (they ran at once, over one window).
// - Mean latency: weighted by each VM's I/O count (the histogram's total where every VM has one,
//   else its IOPS: the VMs' windows are equally long). Exact either way.
// - Percentiles: from the VMs' histograms summed (results/latency-histogram.ts), never the mean of
//   their percentiles. Where a VM has no histogram (diskspd prints none) they are null, with a note.
// - The spread between VMs (min, max, coefficient of variation of IOPS and of p99) and the window
//   they all shared.
// - The host's view: the shared datastore's counters summed over the VMs (results/vm-host.ts); each
//   member keeps its own disk's.
import { InternalError } from '../errors.ts';
import type { LatencyUs } from '../contract/workload.ts';
import { histogramLatencyUs, histogramTotal, mergeHistograms, type LatencyHistogram } from './latency-histogram.ts';
import type { ResultRecord, VmShare } from './record.ts';
import { aggregateVmHost } from './vm-host.ts';

type Metadata = NonNullable<ResultRecord['metadata']>;

/** What the aggregate's metadata says of how it was made (`vmAggregate`). */
export const VM_AGGREGATE_RULE = 'sum of the VMs\' IOPS and bytes/s; latency mean weighted by I/O count; percentiles from the VMs\' merged latency histograms';

/** The aggregate of one pass of a `vm.count` permutation: `members` are that pass's member records, one per VM. */
export function aggregateVmPass(members: readonly ResultRecord[]): ResultRecord {
  const count = checkMembers(members);
  const first = members[0]!;
  const { latencyUs, histogram, notes } = mergedLatency(members);
  const cpu = members.flatMap((m) => (m.cpuPercent === null ? [] : [m.cpuPercent]));
  const vm: VmShare = { role: 'aggregate', count, ...sharedWindow(members), spread: spreadOf(members) };
  const host = aggregateVmHost(members);
  return {
    runId: first.runId,
    permutationId: first.permutationId,
    axes: first.axes,
    repetition: first.repetition,
    test: first.test,
    iops: sumOrNull(members.map((m) => m.iops)),
    bytesPerSecond: sumOrNull(members.map((m) => m.bytesPerSecond)),
    latencyUs,
    ...(histogram ? { latencyHistogram: histogram } : {}),
    // each VM's guest CPU: the aggregate is their mean, not a sum of different machines' shares
    cpuPercent: cpu.length === 0 ? null : cpu.reduce((a, b) => a + b, 0) / cpu.length,
    tool: first.tool,
    rawPath: null,
    ...(host ? { host } : {}),
    vm,
    metadata: { ...commonMetadata(members), vmAggregate: VM_AGGREGATE_RULE, ...(notes.length > 0 ? { vmLatencyNote: notes.join('; ') } : {}) },
  };
}

/** The members are one pass of one permutation, test and repetition, one record per VM: their count, or InternalError naming what differs. */
function checkMembers(members: readonly ResultRecord[]): number {
  const refuse = (why: string): never => {
    throw new InternalError(`aggregateVmPass: ${why}`, { members: members.length });
  };
  const first = members[0];
  if (first === undefined) return refuse('no member records');
  for (const [i, m] of members.entries()) {
    if (m.vm?.role !== 'member') refuse(`record ${i + 1} is not a member record (vm.role ${JSON.stringify(m.vm?.role ?? null)})`);
    const differs = (['runId', 'permutationId', 'repetition'] as const).find((k) => m[k] !== first[k]) ?? (m.test.id !== first.test.id ? 'test' : m.vm!.count !== first.vm!.count ? 'vm.count' : m.metadata?.['pass'] !== first.metadata?.['pass'] ? 'pass' : null);
    if (differs !== null) refuse(`record ${i + 1} is of another ${differs} than record 1: members of different permutations, tests, repetitions or passes are never one aggregate`);
  }
  const count = first.vm!.count;
  // an aggregate of 3 of 4 VMs would understate the sum: every VM or no aggregate
  if (members.length !== count) refuse(`${members.length} member records for vm.count ${count}`);
  const indexes = members.flatMap((m) => (m.vm!.index === undefined ? [] : [m.vm!.index]));
  if (new Set(indexes).size !== indexes.length) refuse('two member records of one VM');
  return count;
}

function sumOrNull(values: ReadonlyArray<number | null>): number | null {
  let sum = 0;
  for (const v of values) {
    if (v === null) return null;
    sum += v;
  }
  return sum;
}

/** The members' latency as one distribution: the mean weighted by I/O count; percentiles from the merged histograms, or null with a note. */
function mergedLatency(members: readonly ResultRecord[]): { latencyUs: LatencyUs; histogram: LatencyHistogram | null; notes: string[] } {
  const only = members[0]!;
  // one VM's distribution is its own: its figures stand as they are
  if (members.length === 1) return { latencyUs: only.latencyUs, histogram: only.latencyHistogram ?? null, notes: [] };
  const notes: string[] = [];
  const histograms = members.flatMap((m) => (m.latencyHistogram ? [m.latencyHistogram] : []));
  const histogram = histograms.length === members.length ? mergeHistograms(histograms) : null;
  const weights = histogram ? histograms.map(histogramTotal) : members.map((m) => m.iops);
  if (!histogram) notes.push('mean latency weighted by IOPS (the VMs share one window, so IOPS are in proportion to I/O counts)');
  const mean = weightedMean(members.map((m) => m.latencyUs.mean), weights);
  if (histogram) return { latencyUs: histogramLatencyUs(histogram, mean), histogram, notes };
  const lacking = members.flatMap((m, i) => (m.latencyHistogram ? [] : [m.vm?.index ?? i + 1]));
  notes.push(
    lacking.length > 0
      ? `percentiles left empty: VM ${lacking.join(', ')} ${lacking.length === 1 ? 'has' : 'have'} no latency histogram (diskspd -L prints percentiles only), and percentiles of several VMs cannot be merged from their percentiles`
      : 'percentiles left empty: the VMs\' histograms count different latency spans',
  );
  return { latencyUs: { mean, p50: null, p95: null, p99: null, p999: null }, histogram: null, notes };
}

function weightedMean(values: ReadonlyArray<number | null>, weights: ReadonlyArray<number | null>): number | null {
  let sum = 0;
  let total = 0;
  for (const [i, v] of values.entries()) {
    const w = weights[i];
    if (v === null || w === null || w === undefined) return null;
    sum += v * w;
    total += w;
  }
  return total > 0 ? sum / total : null;
}

/** The window every member measured in: from the latest start to the earliest end, and how far apart the starts were. */
function sharedWindow(members: readonly ResultRecord[]): Pick<VmShare, 'startedAt' | 'endedAt' | 'startSkewMs'> {
  const starts = members.map((m) => Date.parse(m.vm?.startedAt ?? ''));
  const ends = members.map((m) => Date.parse(m.vm?.endedAt ?? ''));
  const out: Pick<VmShare, 'startedAt' | 'endedAt' | 'startSkewMs'> = {};
  if (starts.every(Number.isFinite)) {
    const latest = Math.max(...starts);
    out.startedAt = new Date(latest).toISOString();
    out.startSkewMs = latest - Math.min(...starts);
  }
  if (ends.every(Number.isFinite)) out.endedAt = new Date(Math.min(...ends)).toISOString();
  return out;
}

/** The spread between the VMs: IOPS and p99 min, max and coefficient of variation (population: the VMs are all of them). */
function spreadOf(members: readonly ResultRecord[]): Record<string, number | null> {
  const all = <T>(xs: ReadonlyArray<T | null>): T[] | null => (xs.every((v): v is T => v !== null) ? (xs as T[]) : null);
  const iops = all(members.map((m) => m.iops));
  const p99 = members.flatMap((m) => (m.latencyUs.p99 === null ? [] : [m.latencyUs.p99]));
  // a CV of some VMs' p99 would be no spread of the pass: every VM's, or none
  const p99All = all(members.map((m) => m.latencyUs.p99));
  return {
    iopsMin: iops ? Math.min(...iops) : null,
    iopsMax: iops ? Math.max(...iops) : null,
    iopsCv: iops ? cvOf(iops) : null,
    p99MinUs: p99.length > 0 ? Math.min(...p99) : null,
    p99MaxUs: p99.length > 0 ? Math.max(...p99) : null,
    p99Cv: p99All ? cvOf(p99All) : null,
  };
}

/** The population coefficient of variation (standard deviation over mean); null when the mean is not positive. */
export function cvOf(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (!(mean > 0)) return null;
  return Math.sqrt(xs.reduce((a, v) => a + (v - mean) ** 2, 0) / xs.length) / mean;
}

/** The members' metadata entries that every member has with the same value (how the pass was measured); a VM's own facts are left out. */
function commonMetadata(members: readonly ResultRecord[]): Metadata {
  const out: Metadata = {};
  for (const [k, v] of Object.entries(members[0]!.metadata ?? {})) {
    if (members.every((m) => m.metadata !== undefined && k in m.metadata && m.metadata[k] === v)) out[k] = v;
  }
  return out;
}

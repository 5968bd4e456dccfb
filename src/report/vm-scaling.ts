// How far a datastore scales with VMs (issue 32): per test and configuration, the aggregate of each
// `vm.count` pass against the VM count, and where the curve bends. The report's ordinary model
// (model.ts) reads the aggregates only; member records are counted here and never pooled with them,
// save their host latency: each VM's own disk as the host saw it, shown per count beside the
// aggregate's (the shared datastore's, results/vm-host.ts).
// Kept as numbers per aggregate record (a few doubles), like the rest of the report.
import type { Axes } from '../contract/axis.ts';
import { VM_COUNT_AXIS, type HostMetrics, type ResultRecord, type TestIdentity } from '../results/record.ts';
import { adjustSteps, contrastP, evidenceOf, type BendEvidence, type StepTest } from './vm-scaling-evidence.ts';

/** One VM's record of a vm.count pass: never pooled with its pass's aggregate (every report path leaves it out of its samples). */
export function isVmMember(r: Pick<ResultRecord, 'vm'>): boolean {
  return r.vm?.role === 'member';
}

/** The bend rule's two thresholds; BEND_RULE_TEXT states them in words on the page. */
export const BEND_RULE = { minShareOfLinear: 0.5, maxLatencyFactor: 2 } as const;

export const BEND_RULE_TEXT =
  `A curve bends at the first VM count where the VMs added bring less than ${BEND_RULE.minShareOfLinear * 100}% of linear scaling ` +
  "(the previous count's per-VM figure times the VMs added), or where latency (p99, else the mean) exceeds " +
  `${BEND_RULE.maxLatencyFactor}× its value at the smallest count.`;

/** Most curves a report lists (tests × other configurations); the rest are counted. */
export const MAX_SCALING_CURVES = 100;

export type ScalingMetric = 'iops' | 'bytesPerSecond';

/** One aggregate record's figures. */
interface Sample {
  count: number;
  iops: number | null;
  bytesPerSecond: number | null;
  meanUs: number | null;
  p50Us: number | null;
  p99Us: number | null;
  p99MinUs: number | null;
  p99MaxUs: number | null;
  iopsMin: number | null;
  iopsMax: number | null;
  iopsCv: number | null;
  p99Cv: number | null;
  skewMs: number | null;
  /** the aggregate's host latency: the shared datastore's, µs */
  hostDatastoreUs: number | null;
}

/** One VM count of a curve: the means over its aggregates (repetitions, passes), and the spread between VMs over all of them. */
export interface ScalingPoint {
  count: number;
  /** aggregate records behind the point */
  n: number;
  iops: number | null;
  bytesPerSecond: number | null;
  /** the main metric per VM: the aggregate's divided by the count */
  perVm: number | null;
  latencyMeanUs: number | null;
  p50Us: number | null;
  p99Us: number | null;
  /** the VMs' own p99: the lowest and the highest of any VM */
  p99MinUs: number | null;
  p99MaxUs: number | null;
  /** the VMs' own IOPS: the lowest and highest of any VM, and the mean of the passes' coefficients of variation */
  iopsMinPerVm: number | null;
  iopsMaxPerVm: number | null;
  iopsCv: number | null;
  /** the mean of the passes' coefficients of variation of the VMs' own p99 */
  p99Cv: number | null;
  /** the largest start skew of a pass, ms */
  startSkewMs: number | null;
  /** host latency of one VM's disk under test (virtualDisk, each member's own): mean, lowest and highest over the VMs and passes, µs */
  hostVdiskMeanUs: number | null;
  hostVdiskMinUs: number | null;
  hostVdiskMaxUs: number | null;
  /** host latency of the shared datastore over the pass (the aggregates'), mean over the passes, µs */
  hostDatastoreUs: number | null;
}

export interface Bend {
  /** the VM count where the curve bends, and the count before it */
  count: number;
  from: number;
  reason: 'throughput' | 'latency';
  /** throughput: the share of the linear increment the added VMs brought (0.23 = 23 %) */
  shareOfLinear?: number;
  /** latency: the point's latency over the smallest count's */
  latencyFactor?: number;
}

export interface ScalingCurve {
  test: TestIdentity;
  /** the configuration's other varying axes (`format=thin`), '' when only vm.count varies */
  label: string;
  axes: Axes;
  metric: ScalingMetric;
  /** which latency the rule reads: p99 where every point has it, else the mean */
  latencyBasis: 'p99' | 'mean';
  points: ScalingPoint[];
  bend: Bend | null;
  /** whether the bend is more than noise (vm-scaling-evidence.ts); null when there is no bend */
  bendEvidence: BendEvidence | null;
  /** some point has host latency (its columns are shown) */
  host: boolean;
}

export interface VmScaling {
  rule: string;
  memberRecords: number;
  aggregateRecords: number;
  curves: ScalingCurve[];
  /** how many curves there are (more than listed when over MAX_SCALING_CURVES) */
  curvesTotal: number;
  /** what each host latency covers, in words (HostMetrics.latencySpan), each said once */
  hostSpans: { vdisk: string[]; datastore: string[] };
}

/** A record's place in the scaling curves: its axes without vm.count (canonical), and its test. */
function curveKey(r: ResultRecord): string {
  const rest = Object.keys(r.axes)
    .filter((k) => k !== VM_COUNT_AXIS)
    .sort()
    .map((k) => [k, String(r.axes[k])]);
  return JSON.stringify([rest, r.test.id]);
}

/**
 * The `vm.count` records of a report, one record at a time (report/model.ts ReportRecords.add):
 * members counted, aggregates kept as their figures by curve.
 */
export class VmScalingRecords {
  memberRecords = 0;
  aggregateRecords = 0;
  readonly curves = new Map<string, { axes: Axes; test: TestIdentity; samples: Sample[] }>();
  /** the members' own host latency (µs), by curve and VM count */
  readonly memberHost = new Map<string, Map<number, number[]>>();
  readonly hostSpans = { vdisk: new Set<string>(), datastore: new Set<string>() };

  add(r: ResultRecord): void {
    if (r.vm === undefined) return;
    const host = r.host !== undefined && !('unavailable' in r.host) && r.host.latencyUs !== null ? r.host : undefined;
    if (r.vm.role === 'member') {
      this.memberRecords++;
      if (host) this.addMemberHost(r, r.vm.count, host);
      return;
    }
    if (host) this.hostSpans.datastore.add(host.latencySpan);
    this.aggregateRecords++;
    const key = curveKey(r);
    let c = this.curves.get(key);
    if (!c) this.curves.set(key, (c = { axes: r.axes, test: r.test, samples: [] }));
    const s = r.vm.spread ?? {};
    const f = (k: string) => (typeof s[k] === 'number' ? s[k] : null);
    c.samples.push({
      count: r.vm.count,
      iops: r.iops,
      bytesPerSecond: r.bytesPerSecond,
      meanUs: r.latencyUs.mean,
      p50Us: r.latencyUs.p50,
      p99Us: r.latencyUs.p99,
      p99MinUs: f('p99MinUs'),
      p99MaxUs: f('p99MaxUs'),
      iopsMin: f('iopsMin'),
      iopsMax: f('iopsMax'),
      iopsCv: f('iopsCv'),
      p99Cv: f('p99Cv'),
      skewMs: r.vm.startSkewMs ?? null,
      hostDatastoreUs: host?.latencyUs ?? null,
    });
  }

  /** One VM's own disk as the host saw it, kept by its curve and VM count. */
  private addMemberHost(r: ResultRecord, count: number, host: HostMetrics): void {
    const key = curveKey(r);
    let byCount = this.memberHost.get(key);
    if (!byCount) this.memberHost.set(key, (byCount = new Map<number, number[]>()));
    byCount.set(count, [...(byCount.get(count) ?? []), host.latencyUs!]);
    this.hostSpans.vdisk.add(host.latencySpan);
  }
}

const known = (xs: ReadonlyArray<number | null>): number[] => xs.filter((x): x is number => x !== null && Number.isFinite(x));
const meanOf = (xs: ReadonlyArray<number | null>): number | null => {
  const k = known(xs);
  return k.length === 0 ? null : k.reduce((a, b) => a + b, 0) / k.length;
};
const minOf = (xs: ReadonlyArray<number | null>): number | null => (known(xs).length === 0 ? null : Math.min(...known(xs)));
const maxOf = (xs: ReadonlyArray<number | null>): number | null => (known(xs).length === 0 ? null : Math.max(...known(xs)));

function pointOf(count: number, samples: readonly Sample[], metric: ScalingMetric, memberHostUs: readonly number[]): ScalingPoint {
  const iops = meanOf(samples.map((s) => s.iops));
  const bytesPerSecond = meanOf(samples.map((s) => s.bytesPerSecond));
  const main = metric === 'iops' ? iops : bytesPerSecond;
  return {
    count,
    n: samples.length,
    iops,
    bytesPerSecond,
    perVm: main === null ? null : main / count,
    latencyMeanUs: meanOf(samples.map((s) => s.meanUs)),
    p50Us: meanOf(samples.map((s) => s.p50Us)),
    p99Us: meanOf(samples.map((s) => s.p99Us)),
    p99MinUs: minOf(samples.map((s) => s.p99MinUs)),
    p99MaxUs: maxOf(samples.map((s) => s.p99MaxUs)),
    iopsMinPerVm: minOf(samples.map((s) => s.iopsMin)),
    iopsMaxPerVm: maxOf(samples.map((s) => s.iopsMax)),
    iopsCv: meanOf(samples.map((s) => s.iopsCv)),
    p99Cv: meanOf(samples.map((s) => s.p99Cv)),
    startSkewMs: maxOf(samples.map((s) => s.skewMs)),
    hostVdiskMeanUs: meanOf(memberHostUs),
    hostVdiskMinUs: minOf(memberHostUs),
    hostVdiskMaxUs: maxOf(memberHostUs),
    hostDatastoreUs: meanOf(samples.map((s) => s.hostDatastoreUs)),
  };
}

/** The main metric of a test, as the report's (model.ts primaryMetricOf): IOPS for a random test that has them, else bytes/s. */
function metricOf(test: TestIdentity, samples: readonly Sample[]): ScalingMetric {
  if (test.id.startsWith('rnd-') && samples.some((s) => s.iops !== null)) return 'iops';
  return samples.some((s) => s.bytesPerSecond !== null) ? 'bytesPerSecond' : 'iops';
}

/**
 * Where a curve bends (BEND_RULE_TEXT): the first count whose added VMs bring less than
 * minShareOfLinear of the previous count's per-VM figure times the VMs added, or whose latency is
 * above maxLatencyFactor times the smallest count's. Null when neither happens.
 */
export function findBend(points: readonly ScalingPoint[], metric: ScalingMetric, latencyBasis: 'p99' | 'mean'): Bend | null {
  const lat = (p: ScalingPoint) => (latencyBasis === 'p99' ? p.p99Us : p.latencyMeanUs);
  const base = points[0] ? lat(points[0]) : null;
  for (let i = 1; i < points.length; i++) {
    const prev = points[i - 1]!;
    const cur = points[i]!;
    const before = metric === 'iops' ? prev.iops : prev.bytesPerSecond;
    const now = metric === 'iops' ? cur.iops : cur.bytesPerSecond;
    if (before !== null && now !== null && before > 0) {
      const linear = (before / prev.count) * (cur.count - prev.count);
      const share = (now - before) / linear;
      if (share < BEND_RULE.minShareOfLinear) return { count: cur.count, from: prev.count, reason: 'throughput', shareOfLinear: share };
    }
    const l = lat(cur);
    if (base !== null && base > 0 && l !== null && l > BEND_RULE.maxLatencyFactor * base) {
      return { count: cur.count, from: prev.count, reason: 'latency', latencyFactor: l / base };
    }
  }
  return null;
}

/**
 * Every step the bend rule checks on a curve, as a one-sided test on the repetitions' aggregates
 * (vm-scaling-evidence.ts): throughput at a count below the previous count's plus half the linear
 * increment; latency above twice the smallest count's. Keyed `<curve>:<count>:<reason>`.
 */
function stepTests(curve: number, samples: readonly Sample[], counts: readonly number[], metric: ScalingMetric, latencyBasis: 'p99' | 'mean'): StepTest[] {
  const at = (n: number, f: (s: Sample) => number | null) => known(samples.filter((s) => s.count === n).map(f));
  const main = (s: Sample) => (metric === 'iops' ? s.iops : s.bytesPerSecond);
  const lat = (s: Sample) => (latencyBasis === 'p99' ? s.p99Us : s.meanUs);
  const out: StepTest[] = [];
  for (let i = 1; i < counts.length; i++) {
    const prev = counts[i - 1]!;
    const cur = counts[i]!;
    const [now, before] = [at(cur, main), at(prev, main)];
    out.push({ key: `${curve}:${cur}:throughput`, p: contrastP(now, before, 1 + (BEND_RULE.minShareOfLinear * (cur - prev)) / prev, 'lower'), n: Math.min(now.length, before.length) });
    const [l, base] = [at(cur, lat), at(counts[0]!, lat)];
    out.push({ key: `${curve}:${cur}:latency`, p: contrastP(l, base, BEND_RULE.maxLatencyFactor, 'upper'), n: Math.min(l.length, base.length) });
  }
  return out;
}

/** The scaling curves (those with two VM counts or more), or null when no record is of a vm.count pass. */
export function buildVmScaling(t: VmScalingRecords): VmScaling | null {
  const all = [...t.curves.values()];
  const hostAt = (key: string, n: number) => t.memberHost.get(key)?.get(n) ?? [];
  const varying = otherVaryingAxes(all.map((c) => c.axes));
  const curves: ScalingCurve[] = [];
  const steps: StepTest[] = [];
  for (const [key, c] of t.curves) {
    const counts = [...new Set(c.samples.map((s) => s.count))].sort((a, b) => a - b);
    if (counts.length < 2) continue;
    const metric = metricOf(c.test, c.samples);
    const points = counts.map((n) => pointOf(n, c.samples.filter((s) => s.count === n), metric, hostAt(key, n)));
    const latencyBasis = points.every((p) => p.p99Us !== null) ? 'p99' : 'mean';
    const label = varying.filter((a) => a in c.axes).map((a) => `${a}=${String(c.axes[a])}`).join(', ');
    const host = points.some((p) => p.hostVdiskMeanUs !== null || p.hostDatastoreUs !== null);
    steps.push(...stepTests(curves.length, c.samples, counts, metric, latencyBasis));
    curves.push({ test: c.test, label, axes: c.axes, metric, latencyBasis, points, bend: findBend(points, metric, latencyBasis), bendEvidence: null, host });
  }
  // one family: every step the rule checked, on every curve (Holm, as the report's comparisons)
  const { adjusted, family } = adjustSteps(steps);
  for (const [i, c] of curves.entries()) if (c.bend) c.bendEvidence = evidenceOf(steps.find((s) => s.key === `${i}:${c.bend!.count}:${c.bend!.reason}`), adjusted, family);
  if (t.memberRecords + t.aggregateRecords === 0) return null;
  const hostSpans = { vdisk: [...t.hostSpans.vdisk], datastore: [...t.hostSpans.datastore] };
  return { rule: BEND_RULE_TEXT, memberRecords: t.memberRecords, aggregateRecords: t.aggregateRecords, curves: curves.slice(0, MAX_SCALING_CURVES), curvesTotal: curves.length, hostSpans };
}

/** The axes besides vm.count whose value differs between curves: what tells two curves of one test apart. */
function otherVaryingAxes(list: readonly Axes[]): string[] {
  const values = new Map<string, Set<string>>();
  for (const axes of list) {
    for (const [k, v] of Object.entries(axes)) {
      if (k === VM_COUNT_AXIS) continue;
      let s = values.get(k);
      if (!s) values.set(k, (s = new Set()));
      s.add(String(v));
    }
  }
  return [...values].filter(([k, s]) => s.size > 1 || list.some((a) => !(k in a))).map(([k]) => k);
}

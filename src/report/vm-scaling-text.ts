// The scaling section in words and table cells, said alike by Markdown and HTML (report/vm-scaling.ts
// computes it): the one-line answer per curve, where it bends, and a row per VM count.
import { METRICS } from './metrics.ts';
import { formatLatency, formatValue, metricHeader, roundSig } from './numbers.ts';
import type { ScalingCurve, ScalingPoint, VmScaling } from './vm-scaling.ts';
import { referenceLabel } from './wording.ts';

const vms = (n: number): string => `${n} VM${n === 1 ? '' : 's'}`;

/** `RND4K Q32T1 read (rnd-4k-q32t1-read), format=thin`. */
export function curveTitle(c: ScalingCurve): string {
  return `${referenceLabel(c.test)} (${c.test.id})${c.label ? `, ${c.label}` : ''}`;
}

function mainOf(c: ScalingCurve, p: ScalingPoint): number | null {
  return c.metric === 'iops' ? p.iops : p.bytesPerSecond;
}

/** Where the curve bends, by the stated rule, or that it does not up to its largest count. */
export function bendText(c: ScalingCurve): string {
  const b = c.bend;
  const last = c.points[c.points.length - 1]!;
  if (!b) return `No bend up to ${vms(last.count)}.`;
  if (b.reason === 'throughput') {
    return `Bends at ${vms(b.count)}: going from ${b.from} to ${b.count} VMs added ${Math.round((b.shareOfLinear ?? 0) * 100)}% of linear scaling.`;
  }
  return `Bends at ${vms(b.count)}: ${c.latencyBasis === 'p99' ? 'p99' : 'mean'} latency is ${roundSig(b.latencyFactor ?? 0, 3)}× its value at ${vms(c.points[0]!.count)}.`;
}

/** Whether the bend is more than noise (vm-scaling-evidence.ts), in words; '' without a bend. */
export function bendEvidenceText(c: ScalingCurve): string {
  const e = c.bendEvidence;
  if (!c.bend || !e) return '';
  const per = `n = ${e.n} repetition${e.n === 1 ? '' : 's'} per count`;
  if (e.status === 'untested') return `Indicative only: ${per} leaves no variance to test it against; repeat the study 3 or more times.`;
  const p = `Holm-adjusted p = ${roundSig(e.pAdjusted ?? 1, 2)} over ${e.family} step test${e.family === 1 ? '' : 's'}, ${per}`;
  return e.status === 'supported' ? `Supported: ${p}.` : `Not significant: ${p}; it may be noise.`;
}

/** The answer line: the main metric at each VM count, then the bend and its support. */
export function scalingAnswer(c: ScalingCurve): string {
  const m = METRICS[c.metric];
  const values = c.points.map((p) => `${vms(p.count)} ${formatValue(c.metric, mainOf(c, p))}`).join(' → ');
  const evidence = bendEvidenceText(c);
  return `${curveTitle(c)}: ${m.label} ${values}. ${bendText(c)}${evidence ? ` ${evidence}` : ''}`;
}

/** What the section says before its curves: the rule, and that members are shown through their aggregates only. */
export function scalingIntro(v: VmScaling): string[] {
  const out = [v.rule];
  out.push(
    'The replication unit is the repetition: each gives one aggregate per VM count, on the same clones. ' +
      'A bend is tested one-sided on those aggregates (Welch), all steps of all curves as one family (Holm, alpha 0.05).',
  );
  out.push(
    `A point is the mean of its count's pass aggregates (${v.aggregateRecords} in all). An aggregate sums its VMs' IOPS and MB/s; its latency percentiles come from their merged histograms. ` +
      `The ${v.memberRecords} per-VM record${v.memberRecords === 1 ? '' : 's'} show only as the spread between VMs; they are never pooled with the aggregates.`,
  );
  if (v.curvesTotal > v.curves.length) out.push(`Showing ${v.curves.length} of ${v.curvesTotal} curves.`);
  return out;
}

/** ` (+ 14 per-VM records, each counted in its pass's aggregate)`: the members a vm.count study's samples leave out. */
export function memberNote(v: VmScaling | undefined): string {
  const n = v?.memberRecords ?? 0;
  return n > 0 ? ` (+ ${n} per-VM record${n === 1 ? '' : 's'}, each counted in its pass's aggregate)` : '';
}

export const SCALING_HEADER = ['VMs', 'n', 'IOPS', 'MB/s', 'per VM', 'lat mean', 'p50', 'p99', 'p99 of one VM (min–max)', 'p99 CV between VMs', 'IOPS of one VM (min–max)', 'IOPS CV between VMs', 'start skew'] as const;

/** The host's columns, where a curve has host figures: each VM's own disk, and the datastore they share. */
export const SCALING_HOST_HEADER = ["host lat, one VM's disk (mean; min – max)", 'host lat, datastore'] as const;

/** A curve's table header: SCALING_HEADER, then the host's columns when the curve has host figures. */
export function scalingHeader(c: ScalingCurve): string[] {
  return c.host ? [...SCALING_HEADER, ...SCALING_HOST_HEADER] : [...SCALING_HEADER];
}

const range = (lo: string, hi: string): string => (lo === '–' && hi === '–' ? '–' : `${lo} – ${hi}`);
const percent = (x: number | null): string => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);

/** One row per VM count, scalingHeader's columns; `per VM` is the main metric divided by the count. */
export function scalingRows(c: ScalingCurve): string[][] {
  return c.points.map((p) => [
    String(p.count),
    String(p.n),
    formatValue('iops', p.iops),
    formatValue('bytesPerSecond', p.bytesPerSecond),
    `${formatValue(c.metric, p.perVm)} ${metricHeader(c.metric)}`,
    formatLatency(p.latencyMeanUs),
    formatLatency(p.p50Us),
    formatLatency(p.p99Us),
    range(formatLatency(p.p99MinUs), formatLatency(p.p99MaxUs)),
    percent(p.p99Cv),
    range(formatValue('iops', p.iopsMinPerVm), formatValue('iops', p.iopsMaxPerVm)),
    percent(p.iopsCv),
    p.startSkewMs === null ? '–' : `${roundSig(p.startSkewMs, 3)} ms`,
    ...(c.host ? [hostVdiskCell(p), formatLatency(p.hostDatastoreUs)] : []),
  ]);
}

function hostVdiskCell(p: ScalingPoint): string {
  if (p.hostVdiskMeanUs === null) return '–';
  return `${formatLatency(p.hostVdiskMeanUs)} (${range(formatLatency(p.hostVdiskMinUs), formatLatency(p.hostVdiskMaxUs))})`;
}

/** What the host columns cover, in words (under the scaling tables); nothing when no record has host figures. */
export function scalingHostLegend(v: VmScaling): string[] {
  if (!v.curves.some((c) => c.host)) return [];
  return [
    ...v.hostSpans.vdisk.map((s) => `host lat, one VM's disk: ${s}; each VM's own disk under test, over its own scored passes`),
    ...v.hostSpans.datastore.map((s) => `host lat, datastore: ${s}`),
    'lat mean, p50 and p99 are the guest\u2019s (its benchmark tool). vSphere counts datastore latency in whole ms: a guest − host difference under 1 ms is its rounding.',
  ];
}

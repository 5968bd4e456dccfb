// The report model: records grouped into tests × permutations, summarized, and compared against a
// baseline value of each axis. Every output format (markdown, html, csv, json) renders this model,
// so the numbers are computed once and agree everywhere.
import { UsageError } from '../errors.ts';
import type { ResultRecord, TestIdentity } from '../results/record.ts';
import type { AxisValue, Axes } from '../contract/axis.ts';
import {
  compareSamples,
  DEFAULT_VERDICT_OPTIONS,
  judge,
  isNoisy,
  mean,
  repetitionsNeeded,
  variance,
  summarize,
  type Comparison,
  type Summary,
  type Verdict,
  type VerdictOptions,
} from './stats.ts';

export interface RunInfo {
  runId: string;
  playbook?: string;
  startedAt?: string;
  /** environment facts: host versions, datastore type, guest OS, tool versions… */
  fingerprint?: Record<string, string>;
  /** what the playbook's `environment:` states about the setup (array, RAID level, protocol, QoS, VM spec) */
  environment?: Record<string, string>;
  /** endpoints contacted without TLS/host-key verification; every report warns about them */
  insecureEndpoints?: string[];
  failures?: Array<{ permutationId: string; axes: Record<string, unknown>; reason: string }>;
}

export type MetricKey = 'bytesPerSecond' | 'iops' | 'latencyMeanUs' | 'latencyP99Us' | 'cpuPercent';

export interface MetricDef {
  key: MetricKey;
  label: string;
  unit: string;
  higherIsBetter: boolean;
  /** raw record value */
  get: (r: ResultRecord) => number | null;
  /** raw → displayed unit (bytes/s → MB/s, decimal as CrystalDiskMark prints it) */
  scale: number;
  digits: number;
}

export const METRICS: Record<MetricKey, MetricDef> = {
  bytesPerSecond: { key: 'bytesPerSecond', label: 'MB/s', unit: 'MB/s', higherIsBetter: true, get: (r) => r.bytesPerSecond, scale: 1e-6, digits: 1 },
  iops: { key: 'iops', label: 'IOPS', unit: 'IOPS', higherIsBetter: true, get: (r) => r.iops, scale: 1, digits: 0 },
  latencyMeanUs: { key: 'latencyMeanUs', label: 'lat mean', unit: 'µs', higherIsBetter: false, get: (r) => r.latencyUs.mean, scale: 1, digits: 1 },
  latencyP99Us: { key: 'latencyP99Us', label: 'lat p99', unit: 'µs', higherIsBetter: false, get: (r) => r.latencyUs.p99, scale: 1, digits: 1 },
  // the tool's CPU use (fio usr+sys, diskspd's average): what the I/O cost the guest, lower is better
  cpuPercent: { key: 'cpuPercent', label: 'CPU', unit: '%', higherIsBetter: false, get: (r) => r.cpuPercent, scale: 1, digits: 1 },
};
export const METRIC_ORDER: readonly MetricKey[] = ['bytesPerSecond', 'iops', 'latencyMeanUs', 'latencyP99Us', 'cpuPercent'];

export interface AxisInfo {
  name: string;
  /** first-seen order, which is playbook order for records written by a run */
  values: AxisValue[];
  varies: boolean;
}

export interface PermutationInfo {
  permutationId: string;
  axes: Axes;
  /** the varying axes as `name=value, …` (the id when nothing varies) */
  label: string;
}

export interface MetricCell {
  metric: MetricKey;
  summary: Summary;
  noisy: boolean;
  /** repetitions for the CI half-width to reach the minimum effect; null when n < 2 or unreachable */
  repetitionsNeeded: number | null;
}

export interface TestRow {
  permutationId: string;
  axes: Axes;
  label: string;
  cells: Partial<Record<MetricKey, MetricCell>>;
}

export interface ComparisonRow {
  permutationId: string;
  label: string;
  value: AxisValue;
  baselinePermutationId: string;
  metric: MetricKey;
  comparison: Comparison;
}

export interface AxisComparison {
  axis: string;
  baselineValue: AxisValue;
  rows: ComparisonRow[];
}

export interface TestSection {
  test: TestIdentity;
  /** what the test is judged by: MB/s for sequential tests, IOPS for random ones */
  primaryMetric: MetricKey;
  /** metrics with at least one value, in METRIC_ORDER */
  metrics: MetricKey[];
  rows: TestRow[];
  comparisons: AxisComparison[];
  /**
   * Set only when the results have more permutations than the detail limit: `rows`, `comparisons`
   * and the charts then hold the `shown` permutations with the largest |Δ| of the primary metric
   * against a baseline (the first ones in run order when nothing is compared). Verdict counts
   * still cover every permutation; the CSV has every record.
   */
  truncated?: { shown: number; total: number; by: 'largest-delta' | 'run-order' };
}

export interface Report {
  info: RunInfo;
  runIds: string[];
  recordCount: number;
  options: VerdictOptions;
  axes: AxisInfo[];
  permutations: PermutationInfo[];
  tests: TestSection[];
  summary: {
    verdicts: Record<Verdict, number>;
    noisy: Array<{ testId: string; label: string; metric: MetricKey; cvPct: number; repetitionsNeeded: number | null }>;
    /** set when `noisy` was cut to the detail limit (the cells with the largest CV): how many there are */
    noisyTotal?: number;
    warnings: string[];
  };
}

export interface BaselineChoice {
  axis: string;
  value: string;
}

export interface ReportOptions {
  /** compare only this axis, against this value; default: every varying axis against its first value */
  baseline?: BaselineChoice;
  verdict?: Partial<VerdictOptions>;
  /** most permutations a test's tables and charts list (default DEFAULT_DETAIL_LIMIT); see TestSection.truncated */
  detailLimit?: number;
}

/**
 * A sweep of more permutations than this takes days on real hardware; its report lists the most
 * telling ones rather than tables nobody can read (and renderers cannot hold in memory).
 */
export const DEFAULT_DETAIL_LIMIT = 200;

/** Parses `axis=value` (the value may itself contain `=`). */
export function parseBaseline(spec: string): BaselineChoice {
  const eq = spec.indexOf('=');
  if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--baseline: expected axis=value (e.g. datastore.blockSizeMb=1), got "${spec}"`);
  return { axis: spec.slice(0, eq).trim(), value: spec.slice(eq + 1).trim() };
}

const sameValue = (a: AxisValue | undefined, b: AxisValue | string): boolean => a !== undefined && String(a) === String(b);

function collectAxes(records: readonly ResultRecord[]): AxisInfo[] {
  const byName = new Map<string, { values: AxisValue[]; seen: Set<string> }>();
  for (const r of records) {
    for (const name in r.axes) {
      const value = r.axes[name]!;
      let a = byName.get(name);
      if (!a) byName.set(name, (a = { values: [], seen: new Set() }));
      const text = String(value);
      if (!a.seen.has(text)) {
        a.seen.add(text);
        a.values.push(value);
      }
    }
  }
  return [...byName].map(([name, { values }]) => ({ name, values, varies: values.length > 1 }));
}

export function permutationLabel(axes: Axes, varying: readonly string[], fallback: string): string {
  const parts = varying.filter((a) => a in axes).map((a) => `${a}=${String(axes[a])}`);
  return parts.length > 0 ? parts.join(', ') : fallback;
}

function keyWithout(axes: Axes, axis: string): string {
  return JSON.stringify(
    Object.entries(axes)
      .filter(([k]) => k !== axis)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, String(v)]),
  );
}

export function primaryMetricOf(test: TestIdentity, records: readonly ResultRecord[]): MetricKey {
  const random = test.id.startsWith('rnd-');
  if (random && records.some((r) => r.iops !== null)) return 'iops';
  if (records.some((r) => r.bytesPerSecond !== null)) return 'bytesPerSecond';
  return 'iops';
}

function runIdsOf(records: readonly ResultRecord[]): string[] {
  const ids = new Set<string>();
  for (const r of records) ids.add(r.runId);
  return [...ids];
}

interface SectionContext {
  permutations: readonly PermutationInfo[];
  /** per compared axis: each permutation's baseline permutation (an index into permutations), or -1 */
  baseOf: Int32Array[];
  compared: Array<{ axis: string; baselineValue: AxisValue }>;
  o: VerdictOptions;
  limit: number;
  /** counts of the primary metric's verdicts, over every permutation */
  verdicts: Record<Verdict, number>;
  noisy: Report['summary']['noisy'];
}

function finiteValues(recs: readonly ResultRecord[], m: MetricKey): number[] {
  const get = METRICS[m].get;
  const out: number[] = [];
  for (const r of recs) {
    const v = get(r);
    if (v !== null && Number.isFinite(v)) out.push(v);
  }
  return out;
}

/** summarize(...).cv > threshold, without building the summary (same arithmetic). */
function isNoisyCv(recs: readonly ResultRecord[], m: MetricKey, cvThresholdPct: number): boolean {
  if (recs.length < 2) return false;
  const xs = finiteValues(recs, m);
  if (xs.length < 2) return false;
  const mu = mean(xs);
  if (mu === 0) return false;
  return (Math.sqrt(variance(xs)) / Math.abs(mu)) * 100 > cvThresholdPct;
}

function buildSection(test: TestIdentity, byPerm: Map<number, ResultRecord[]>, ctx: SectionContext): TestSection {
  const { permutations, compared, baseOf, o, limit, verdicts } = ctx;
  const all: ResultRecord[] = [];
  for (const recs of byPerm.values()) for (const r of recs) all.push(r);
  const metrics = METRIC_ORDER.filter((m) => all.some((r) => METRICS[m].get(r) !== null));
  const primaryMetric = primaryMetricOf(test, all);
  type Entry = { index: number; permutationId: string; recs: ResultRecord[]; axes: Axes; primaryValues?: number[] };
  const entries: Entry[] = [...byPerm].map(([index, recs]) => ({ index, permutationId: permutations[index]!.permutationId, recs, axes: recs[0]!.axes }));
  const primaryValues = (e: Entry): number[] => (e.primaryValues ??= finiteValues(e.recs, primaryMetric));
  const entryAt: Array<Entry | undefined> = new Array<Entry | undefined>(permutations.length);
  for (const e of entries) entryAt[e.index] = e;

  // Above the limit only some permutations are listed, chosen by |Δ|: the primary metric is first
  // judged for every permutation, to count verdicts and rank, but full comparisons are made (and
  // kept) only for the listed ones, so a large report never holds one per permutation.
  const capped = entries.length > limit;
  const higher = METRICS[primaryMetric].higherIsBetter;
  const counted = metrics.includes(primaryMetric);
  const pairs = compared.map(({ axis, baselineValue }, k) => {
    const baseIndex = baseOf[k]!;
    const matched: Array<{ e: Entry; value: AxisValue; base: Entry; absDelta: number; primary: Comparison | null }> = [];
    for (const e of entries) {
      const b = baseIndex[e.index]!;
      const base = b < 0 ? undefined : entryAt[b];
      if (base === undefined) continue;
      const value = e.axes[axis]!;
      const cv = primaryValues(e);
      const bv = primaryValues(base);
      const primary = capped ? null : compareSamples(cv, bv, higher, o);
      const j = primary ?? judge(cv, bv, higher, o);
      if (counted) verdicts[j.verdict]++;
      const d = j.delta ? Math.abs(j.delta.pct) : NaN;
      matched.push({ e, value, base, absDelta: Number.isFinite(d) ? d : -1, primary });
    }
    return { axis, baselineValue, matched };
  });

  let shown: Set<string> | null = null;
  let truncated: TestSection['truncated'];
  if (capped) {
    const score = new Map<string, number>();
    for (const { matched } of pairs) {
      for (const { e, absDelta } of matched) if (absDelta > (score.get(e.permutationId) ?? -1)) score.set(e.permutationId, absDelta);
    }
    const order = entries.map((e, i) => ({ id: e.permutationId, i, d: score.get(e.permutationId) ?? -1 }));
    order.sort((a, b) => b.d - a.d || a.i - b.i);
    shown = new Set(order.slice(0, limit).map((x) => x.id));
    truncated = { shown: limit, total: entries.length, by: score.size > 0 ? 'largest-delta' : 'run-order' };
  }

  // Every cell is summarized, for the noisy list; rows are kept for the listed permutations.
  const rows: TestRow[] = [];
  const rowOf = new Map<string, TestRow>();
  for (const { index, permutationId, recs, axes } of entries) {
    const p = permutations[index]!;
    const listed = !shown || shown.has(permutationId);
    const cells: TestRow['cells'] = {};
    for (const m of metrics) {
      // An unlisted cell matters only if noisy: its CV first, the full summary only when it is.
      if (!listed && !isNoisyCv(recs, m, o.cvThresholdPct)) continue;
      const summary = summarize(finiteValues(recs, m), o.level);
      const flag = isNoisy(summary, o.cvThresholdPct);
      const need =
        summary.stddev !== null && summary.mean !== null ? repetitionsNeeded(summary.stddev, summary.mean, o.minEffectPct / 100, o.level) : null;
      cells[m] = { metric: m, summary, noisy: flag, repetitionsNeeded: need };
      if (flag) ctx.noisy.push({ testId: test.id, label: p.label, metric: m, cvPct: summary.cv! * 100, repetitionsNeeded: need });
    }
    if (!listed) continue;
    const row: TestRow = { permutationId, axes, label: p.label, cells };
    rows.push(row);
    rowOf.set(permutationId, row);
  }

  const comparisons: AxisComparison[] = [];
  for (const { axis, baselineValue, matched } of pairs) {
    const out: ComparisonRow[] = [];
    for (const { e, value, base, primary } of matched) {
      const row = rowOf.get(e.permutationId);
      if (!row) continue;
      for (const m of metrics) {
        const comparison =
          m === primaryMetric && primary ? primary : compareSamples(finiteValues(e.recs, m), finiteValues(base.recs, m), METRICS[m].higherIsBetter, o);
        out.push({ permutationId: e.permutationId, label: row.label, value, baselinePermutationId: base.permutationId, metric: m, comparison });
      }
    }
    if (out.length > 0) comparisons.push({ axis, baselineValue, rows: out });
  }
  return { test, primaryMetric, metrics, rows, comparisons, ...(truncated ? { truncated } : {}) };
}

export function buildReport(records: readonly ResultRecord[], info: RunInfo, options: ReportOptions = {}): Report {
  const o: VerdictOptions = { ...DEFAULT_VERDICT_OPTIONS, ...options.verdict };
  const limit = options.detailLimit ?? DEFAULT_DETAIL_LIMIT;
  const axes = collectAxes(records);
  const varying = axes.filter((a) => a.varies).map((a) => a.name);

  const permutations = new Map<string, PermutationInfo>();
  const permIndex = new Map<string, number>();
  const permList: PermutationInfo[] = [];
  const tests = new Map<string, { test: TestIdentity; byPerm: Map<number, ResultRecord[]> }>();
  let lastId: string | undefined;
  let lastIndex = -1;
  for (const r of records) {
    // Records arrive grouped by permutation: skip the lookups while the permutation stays the same.
    if (r.permutationId !== lastId) {
      lastId = r.permutationId;
      let i = permIndex.get(r.permutationId);
      if (i === undefined) {
        const info = { permutationId: r.permutationId, axes: r.axes, label: permutationLabel(r.axes, varying, r.permutationId) };
        permutations.set(r.permutationId, info);
        permIndex.set(r.permutationId, (i = permList.length));
        permList.push(info);
      }
      lastIndex = i;
    }
    let t = tests.get(r.test.id);
    if (!t) tests.set(r.test.id, (t = { test: r.test, byPerm: new Map() }));
    let list = t.byPerm.get(lastIndex);
    if (!list) t.byPerm.set(lastIndex, (list = []));
    list.push(r);
  }

  let compared: Array<{ axis: string; baselineValue: AxisValue }>;
  if (options.baseline) {
    const { axis, value } = options.baseline;
    const found = axes.find((a) => a.name === axis);
    if (!found) {
      throw new UsageError(`--baseline ${axis}=${value}: no axis "${axis}" in these results (axes: ${axes.map((a) => a.name).join(', ') || 'none'})`);
    }
    const v = found.values.find((x) => sameValue(x, value));
    if (v === undefined) {
      throw new UsageError(`--baseline ${axis}=${value}: axis "${axis}" has no value "${value}" (values: ${found.values.map(String).join(', ')})`);
    }
    compared = [{ axis, baselineValue: v }];
  } else {
    compared = axes.filter((a) => a.varies).map((a) => ({ axis: a.name, baselineValue: a.values[0]! }));
  }

  // Each compared axis: the permutation that differs from a permutation in that axis only and has
  // the baseline value there. Permutations (not tests) are matched, once.
  const baseOf = compared.map(({ axis, baselineValue }) => {
    const baseByKey = new Map<string, number>();
    permList.forEach((p, i) => {
      if (sameValue(p.axes[axis], baselineValue)) baseByKey.set(keyWithout(p.axes, axis), i);
    });
    const out = new Int32Array(permList.length).fill(-1);
    permList.forEach((p, i) => {
      const value = p.axes[axis];
      if (value === undefined || sameValue(value, baselineValue)) return;
      out[i] = baseByKey.get(keyWithout(p.axes, axis)) ?? -1;
    });
    return out;
  });

  const verdicts: Record<Verdict, number> = { faster: 0, slower: 0, 'within-noise': 0, 'insufficient-data': 0 };
  const noisy: Report['summary']['noisy'] = [];
  const sections: TestSection[] = [];

  for (const { test, byPerm } of tests.values()) {
    const section = buildSection(test, byPerm, { permutations: permList, baseOf, compared, o, limit, verdicts, noisy });
    sections.push(section);
  }

  let noisyTotal: number | undefined;
  let noisyShown = noisy;
  if (noisy.length > limit && sections.some((s) => s.truncated)) {
    // The cells that most need more repetitions, listed in report order.
    const keep = new Set([...noisy].sort((a, b) => b.cvPct - a.cvPct).slice(0, limit));
    noisyShown = noisy.filter((n) => keep.has(n));
    noisyTotal = noisy.length;
  }

  const warnings: string[] = [];
  if (info.insecureEndpoints && info.insecureEndpoints.length > 0) {
    warnings.push(`Insecure connections (TLS certificate / SSH host key not verified): ${info.insecureEndpoints.join(', ')}`);
  }
  for (const f of info.failures ?? []) warnings.push(`Permutation ${f.permutationId} failed: ${f.reason}`);
  if (options.baseline === undefined && compared.length === 0 && permutations.size > 1) {
    warnings.push('No axis varies across these results, so nothing is compared.');
  }

  return {
    info,
    runIds: runIdsOf(records),
    recordCount: records.length,
    options: o,
    axes,
    permutations: [...permutations.values()],
    tests: sections,
    summary: { verdicts, noisy: noisyShown, ...(noisyTotal !== undefined ? { noisyTotal } : {}), warnings },
  };
}

/** Formats a raw metric value in its display unit. */
const formatters = new Map<number, Intl.NumberFormat>();

export function formatMetric(m: MetricKey, raw: number | null): string {
  if (raw === null) return '–';
  const d = METRICS[m];
  // What toLocaleString does, without building a formatter per call.
  let f = formatters.get(d.digits);
  if (!f) formatters.set(d.digits, (f = new Intl.NumberFormat('en-US', { minimumFractionDigits: d.digits, maximumFractionDigits: d.digits })));
  return f.format(raw * d.scale);
}

/** `mean ± half-width` in display units; the bare mean when there is no interval. */
export function formatMeanCi(cell: MetricCell | undefined): string {
  if (!cell || cell.summary.mean === null) return '–';
  const s = cell.summary;
  const m = formatMetric(cell.metric, s.mean);
  return s.ci ? `${m} ± ${formatMetric(cell.metric, s.ci.halfWidth)}` : m;
}

export function formatPct(x: number, digits = 1): string {
  const s = x.toFixed(digits);
  return x > 0 ? `+${s}%` : `${s}%`;
}

export function formatDelta(c: Comparison): string {
  if (!c.delta) return '–';
  // With n ≥ 2 on both sides a missing interval means Fieller's is unbounded: the baseline is
  // too noisy to bound the ratio at all, which the reader should see rather than a bare number.
  const unbounded = c.baseline.n >= 2 && c.candidate.n >= 2 ? ' [unbounded]' : '';
  const ci = c.delta.ci ? ` [${formatPct(c.delta.ci.low)}, ${formatPct(c.delta.ci.high)}]` : unbounded;
  return `${formatPct(c.delta.pct)}${ci}`;
}

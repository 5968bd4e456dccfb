// The report model: records grouped into tests × permutations, summarized, and compared against a
// baseline value of each axis. Every output format (markdown, html, csv, json) renders this model,
// so the numbers are computed once and agree everywhere.
import { UsageError } from '../errors.ts';
import type { AxisValue, Axes, ResultRecord, TestIdentity } from '../results/record.ts';
import {
  compareSamples,
  DEFAULT_VERDICT_OPTIONS,
  isNoisy,
  repetitionsNeeded,
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
  /** endpoints contacted without TLS/host-key verification; every report warns about them */
  insecureEndpoints?: string[];
  failures?: Array<{ permutationId: string; axes: Record<string, unknown>; reason: string }>;
}

export type MetricKey = 'bytesPerSecond' | 'iops' | 'latencyMeanUs' | 'latencyP99Us';

export interface MetricDef {
  key: MetricKey;
  label: string;
  unit: string;
  higherIsBetter: boolean;
  /** raw record value */
  get(r: ResultRecord): number | null;
  /** raw → displayed unit (bytes/s → MB/s, decimal as CrystalDiskMark prints it) */
  scale: number;
  digits: number;
}

export const METRICS: Record<MetricKey, MetricDef> = {
  bytesPerSecond: { key: 'bytesPerSecond', label: 'MB/s', unit: 'MB/s', higherIsBetter: true, get: (r) => r.bytesPerSecond, scale: 1e-6, digits: 1 },
  iops: { key: 'iops', label: 'IOPS', unit: 'IOPS', higherIsBetter: true, get: (r) => r.iops, scale: 1, digits: 0 },
  latencyMeanUs: { key: 'latencyMeanUs', label: 'lat mean', unit: 'µs', higherIsBetter: false, get: (r) => r.latencyUs.mean, scale: 1, digits: 1 },
  latencyP99Us: { key: 'latencyP99Us', label: 'lat p99', unit: 'µs', higherIsBetter: false, get: (r) => r.latencyUs.p99, scale: 1, digits: 1 },
};
export const METRIC_ORDER: readonly MetricKey[] = ['bytesPerSecond', 'iops', 'latencyMeanUs', 'latencyP99Us'];

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
}

/** Parses `axis=value` (the value may itself contain `=`). */
export function parseBaseline(spec: string): BaselineChoice {
  const eq = spec.indexOf('=');
  if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--baseline: expected axis=value (e.g. datastore.blockSizeMb=1), got "${spec}"`);
  return { axis: spec.slice(0, eq).trim(), value: spec.slice(eq + 1).trim() };
}

const sameValue = (a: AxisValue | undefined, b: AxisValue | string): boolean => a !== undefined && String(a) === String(b);

function collectAxes(records: readonly ResultRecord[]): AxisInfo[] {
  const byName = new Map<string, AxisValue[]>();
  for (const r of records) {
    for (const [name, value] of Object.entries(r.axes)) {
      let values = byName.get(name);
      if (!values) byName.set(name, (values = []));
      if (!values.some((v) => sameValue(v, value))) values.push(value);
    }
  }
  return [...byName].map(([name, values]) => ({ name, values, varies: values.length > 1 }));
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

export function buildReport(records: readonly ResultRecord[], info: RunInfo, options: ReportOptions = {}): Report {
  const o: VerdictOptions = { ...DEFAULT_VERDICT_OPTIONS, ...options.verdict };
  const axes = collectAxes(records);
  const varying = axes.filter((a) => a.varies).map((a) => a.name);

  const permutations = new Map<string, PermutationInfo>();
  const tests = new Map<string, { test: TestIdentity; byPerm: Map<string, ResultRecord[]> }>();
  for (const r of records) {
    if (!permutations.has(r.permutationId)) {
      permutations.set(r.permutationId, { permutationId: r.permutationId, axes: r.axes, label: permutationLabel(r.axes, varying, r.permutationId) });
    }
    let t = tests.get(r.test.id);
    if (!t) tests.set(r.test.id, (t = { test: r.test, byPerm: new Map() }));
    let list = t.byPerm.get(r.permutationId);
    if (!list) t.byPerm.set(r.permutationId, (list = []));
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

  const verdicts: Record<Verdict, number> = { faster: 0, slower: 0, 'within-noise': 0, 'insufficient-data': 0 };
  const noisy: Report['summary']['noisy'] = [];
  const sections: TestSection[] = [];

  for (const { test, byPerm } of tests.values()) {
    const all = [...byPerm.values()].flat();
    const metrics = METRIC_ORDER.filter((m) => all.some((r) => METRICS[m].get(r) !== null));
    const primaryMetric = primaryMetricOf(test, all);
    const values = (perm: string, m: MetricKey): number[] =>
      (byPerm.get(perm) ?? []).map((r) => METRICS[m].get(r)).filter((v): v is number => v !== null && Number.isFinite(v));

    const rows: TestRow[] = [];
    for (const [permutationId, recs] of byPerm) {
      const p = permutations.get(permutationId)!;
      const cells: TestRow['cells'] = {};
      for (const m of metrics) {
        const summary = summarize(values(permutationId, m), o.level);
        const flag = isNoisy(summary, o.cvThresholdPct);
        const need =
          summary.stddev !== null && summary.mean !== null ? repetitionsNeeded(summary.stddev, summary.mean, o.minEffectPct / 100, o.level) : null;
        cells[m] = { metric: m, summary, noisy: flag, repetitionsNeeded: need };
        if (flag) noisy.push({ testId: test.id, label: p.label, metric: m, cvPct: summary.cv! * 100, repetitionsNeeded: need });
      }
      rows.push({ permutationId, axes: recs[0]!.axes, label: p.label, cells });
    }

    const comparisons: AxisComparison[] = [];
    for (const { axis, baselineValue } of compared) {
      const baseByKey = new Map<string, string>();
      for (const row of rows) if (sameValue(row.axes[axis], baselineValue)) baseByKey.set(keyWithout(row.axes, axis), row.permutationId);
      const out: ComparisonRow[] = [];
      for (const row of rows) {
        const value = row.axes[axis];
        if (value === undefined || sameValue(value, baselineValue)) continue;
        const basePerm = baseByKey.get(keyWithout(row.axes, axis));
        if (basePerm === undefined) continue;
        for (const m of metrics) {
          const comparison = compareSamples(values(row.permutationId, m), values(basePerm, m), METRICS[m].higherIsBetter, o);
          if (m === primaryMetric) verdicts[comparison.verdict]++;
          out.push({ permutationId: row.permutationId, label: row.label, value, baselinePermutationId: basePerm, metric: m, comparison });
        }
      }
      if (out.length > 0) comparisons.push({ axis, baselineValue, rows: out });
    }
    sections.push({ test, primaryMetric, metrics, rows, comparisons });
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
    runIds: [...new Set(records.map((r) => r.runId))],
    recordCount: records.length,
    options: o,
    axes,
    permutations: [...permutations.values()],
    tests: sections,
    summary: { verdicts, noisy, warnings },
  };
}

/** Formats a raw metric value in its display unit. */
export function formatMetric(m: MetricKey, raw: number | null): string {
  if (raw === null) return '–';
  const d = METRICS[m];
  return (raw * d.scale).toLocaleString('en-US', { minimumFractionDigits: d.digits, maximumFractionDigits: d.digits });
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

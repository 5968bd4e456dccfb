// The report model: records grouped into tests × permutations, summarized, and compared against a
// baseline value of each axis. Every output format (markdown, html, csv, json) renders this model,
// so the numbers are computed once and agree everywhere.
import { UsageError } from '../errors.ts';
import type { ResultRecord, TestIdentity } from '../results/record.ts';
import { hostLatencyRows, type HostLatencyRow } from './host-latency.ts';
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
  /** the run's target (several joined by ", " when the playbook lists them) */
  target?: string;
  /**
   * the playbook's `baseline:` (axis → value): the value each named axis is compared against when
   * no `--baseline` is given; other varying axes are compared against their first value
   */
  baseline?: Record<string, AxisValue>;
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

/**
 * The axis every record has in a report: which run (its id) or imported export (the file name, or
 * `file#N` for the N-th export of a file holding several) it came from. Sources are never pooled
 * unless the report is asked to (`ReportOptions.pool`).
 */
export const SOURCE_AXIS = 'source';

export interface PermutationInfo {
  /**
   * unique within the report: the records' permutation id, or `<id>@<source>` when several sources
   * use that id (two runs of one playbook), or the ids joined by `+` for a pooled permutation
   */
  permutationId: string;
  /** the source its records came from (the sources joined by `+` when pooled over source) */
  source: string;
  /** its axes, `source` included (pooled axes left out) */
  axes: Axes;
  /** the varying axes as `name=value, …` (the id when nothing varies) */
  label: string;
  /** the permutations merged into this one when the report pools axes (`ReportOptions.pool`) */
  pooledFrom?: string[];
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

/**
 * Permutations with another value of a compared axis that have no partner: no permutation with the
 * baseline value and the same other varying axes (e.g. an import not tagged with the run's block
 * size). They are listed, never compared against something else.
 */
export interface UnpairedPermutations {
  axis: string;
  value: AxisValue;
  baselineValue: AxisValue;
  permutationIds: string[];
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
  /** the source of each permutation, in first-seen order (also the `source` axis's values) */
  sources: string[];
  /** axes pooled on request (ReportOptions.pool): left out of `axes`, their values merged per permutation */
  pooled: AxisInfo[];
  /** per compared axis: the baseline value it was compared against and where that came from */
  baselines: Array<{ axis: string; value: AxisValue; from: 'option' | 'playbook' | 'first-value' }>;
  unpaired: UnpairedPermutations[];
  tests: TestSection[];
  /** guest vs host latency per permutation and test, where records carry host figures (host-latency.ts) */
  hostLatency: HostLatencyRow[];
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
  /**
   * compare only this axis, against this value (`--baseline`); default: every varying axis, against
   * the playbook's baseline value (RunInfo.baseline) where it names one, else its first value
   */
  baseline?: BaselineChoice;
  /** axes to pool (`--pool source`): permutations that differ only in these become one sample */
  pool?: readonly string[];
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

/** Axis names and values over a list of axes objects, in first-seen order. */
function collectAxes(list: Iterable<Axes>): AxisInfo[] {
  const byName = new Map<string, { values: AxisValue[]; seen: Set<string> }>();
  for (const axes of list) {
    for (const name in axes) {
      const value = axes[name]!;
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

/** The source a record came from: its `source` axis (imports, loaded runs), else its run id. */
export function sourceOf(r: ResultRecord): string {
  const s = r.axes[SOURCE_AXIS];
  return s === undefined ? r.runId : String(s);
}

export function permutationLabel(axes: Axes, varying: readonly string[], fallback: string): string {
  const parts = varying.filter((a) => a in axes).map((a) => `${a}=${String(axes[a])}`);
  return parts.length > 0 ? parts.join(', ') : fallback;
}

/**
 * What a permutation is besides `axis`: its values of the axes it must match on (`matchingAxes`:
 * varying ones; null where it has none). Axes that do not vary are left out, so an import that
 * does not state the run's constant axes (its workload profile, its target) still lines up.
 */
function keyWithout(axes: Axes, axis: string, matchBy: readonly string[]): string {
  return JSON.stringify(matchBy.filter((k) => k !== axis).map((k) => (k in axes ? String(axes[k]) : null)));
}

/** Whether every permutation with the same value of `x` has the same value of `y` (a missing value counts as one). */
function functionOf(perms: readonly PermutationInfo[], y: string, x: string): boolean {
  const seen = new Map<string, string>();
  for (const p of perms) {
    const kx = x in p.axes ? `=${String(p.axes[x])}` : '';
    const ky = y in p.axes ? `=${String(p.axes[y])}` : '';
    const before = seen.get(kx);
    if (before === undefined) seen.set(kx, ky);
    else if (before !== ky) return false;
  }
  return true;
}

/**
 * The varying axes two permutations must agree on to be compared along `axis`. Along `source`, an
 * axis each source has one value of (a run's target) is a fact of the source, not a configuration
 * to line up; along another axis, `source` is left out when each value of that axis comes from one
 * source (two runs that differ only by target).
 */
function matchingAxes(perms: readonly PermutationInfo[], axis: string, varying: readonly string[]): string[] {
  if (axis === SOURCE_AXIS) return varying.filter((y) => y !== axis && !functionOf(perms, y, SOURCE_AXIS));
  return varying.filter((y) => y !== axis && !(y === SOURCE_AXIS && functionOf(perms, SOURCE_AXIS, axis)));
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
  const entries: Entry[] = [...byPerm].map(([index, recs]) => ({ index, permutationId: permutations[index]!.permutationId, recs, axes: permutations[index]!.axes }));
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

interface PermutationGroup {
  axes: Axes;
  source: string;
  /** the records' permutation ids (several when pooled) and sources */
  ids: Set<string>;
  sources: Set<string>;
}

/**
 * Groups records into permutations: one per source and permutation id, so two runs of one
 * playbook (or two exports of one file) stay apart; with `pool`, permutations whose axes differ
 * only in the pooled axes become one.
 */
function groupPermutations(records: readonly ResultRecord[], pool: ReadonlySet<string>) {
  const groups: PermutationGroup[] = [];
  const index = new Map<string, number>();
  const of: number[] = new Array<number>(records.length);
  const pooledAxes: Axes[] = [];
  let lastAxes: Axes | undefined;
  let lastId: string | undefined;
  let lastRun: string | undefined;
  let lastIndex = -1;
  records.forEach((r, n) => {
    // Records arrive grouped by permutation: skip the lookups while the permutation stays the same.
    if (r.axes !== lastAxes || r.permutationId !== lastId || r.runId !== lastRun) {
      lastAxes = r.axes;
      lastId = r.permutationId;
      lastRun = r.runId;
      const source = sourceOf(r);
      const axes: Axes = { ...r.axes, [SOURCE_AXIS]: source };
      let key: string;
      if (pool.size === 0) key = JSON.stringify([source, r.permutationId]);
      else {
        const dropped: Axes = {};
        for (const k of pool) {
          if (k in axes) dropped[k] = axes[k]!;
          delete axes[k];
        }
        pooledAxes.push(dropped);
        key = JSON.stringify(Object.keys(axes).sort().map((k) => [k, String(axes[k])]));
      }
      let i = index.get(key);
      if (i === undefined) {
        index.set(key, (i = groups.length));
        groups.push({ axes, source, ids: new Set(), sources: new Set() });
      }
      const g = groups[i]!;
      g.ids.add(r.permutationId);
      g.sources.add(source);
      lastIndex = i;
    }
    of[n] = lastIndex;
  });
  return { groups, of, pooledAxes };
}

/** Unique display ids: the permutation id, qualified by the source where several sources share it. */
function permutationIds(groups: readonly PermutationGroup[]): string[] {
  const base = groups.map((g) => [...g.ids].join('+'));
  const sourcesOf = new Map<string, Set<string>>();
  base.forEach((id, i) => {
    let s = sourcesOf.get(id);
    if (!s) sourcesOf.set(id, (s = new Set()));
    s.add([...groups[i]!.sources].join('+'));
  });
  const used = new Set<string>();
  return base.map((id, i) => {
    let out = sourcesOf.get(id)!.size > 1 ? `${id}@${[...groups[i]!.sources].join('+')}` : id;
    for (let k = 2; used.has(out); k++) out = `${id}#${k}`;
    used.add(out);
    return out;
  });
}

/** The guest vs host rows, when any record carries host figures (one pass over the records). */
function hostLatencyOf(records: readonly ResultRecord[], of: ArrayLike<number>, perms: readonly PermutationInfo[]): HostLatencyRow[] {
  if (!records.some((r) => r.host !== undefined)) return [];
  const byPerm = perms.map(() => [] as ResultRecord[]);
  records.forEach((r, n) => byPerm[of[n]!]?.push(r));
  return hostLatencyRows(perms.map((p, i) => ({ permutationId: p.permutationId, label: p.label, records: byPerm[i]! })));
}

export function buildReport(records: readonly ResultRecord[], info: RunInfo, options: ReportOptions = {}): Report {
  const o: VerdictOptions = { ...DEFAULT_VERDICT_OPTIONS, ...options.verdict };
  const limit = options.detailLimit ?? DEFAULT_DETAIL_LIMIT;
  const pool = new Set(options.pool ?? []);
  const { groups, of, pooledAxes } = groupPermutations(records, pool);
  const axes = collectAxes(groups.map((g) => g.axes));
  const pooled = collectAxes(pooledAxes);
  for (const name of pool) {
    if (!pooled.some((a) => a.name === name)) {
      const names = [...axes, ...pooled].map((a) => a.name);
      throw new UsageError(`--pool ${name}: no axis "${name}" in these results (axes: ${names.join(', ') || 'none'})`);
    }
  }
  const varying = axes.filter((a) => a.varies).map((a) => a.name);

  const ids = permutationIds(groups);
  const permList: PermutationInfo[] = groups.map((g, i) => {
    const permutationId = ids[i]!;
    const p: PermutationInfo = { permutationId, source: [...g.sources].join('+'), axes: g.axes, label: permutationLabel(g.axes, varying, permutationId) };
    if (g.ids.size > 1 || g.sources.size > 1) p.pooledFrom = [...g.ids];
    return p;
  });
  const tests = new Map<string, { test: TestIdentity; byPerm: Map<number, ResultRecord[]> }>();
  records.forEach((r, n) => {
    let t = tests.get(r.test.id);
    if (!t) tests.set(r.test.id, (t = { test: r.test, byPerm: new Map() }));
    const i = of[n]!;
    let list = t.byPerm.get(i);
    if (!list) t.byPerm.set(i, (list = []));
    list.push(r);
  });

  const warnings: string[] = [];
  const baselines: Report['baselines'] = [];
  if (options.baseline) {
    const { axis, value } = options.baseline;
    const found = axes.find((a) => a.name === axis);
    if (!found) {
      const why = pool.has(axis) ? `axis "${axis}" is pooled (--pool)` : `no axis "${axis}" in these results`;
      throw new UsageError(`--baseline ${axis}=${value}: ${why} (axes: ${axes.map((a) => a.name).join(', ') || 'none'})`);
    }
    const v = found.values.find((x) => sameValue(x, value));
    if (v === undefined) {
      throw new UsageError(`--baseline ${axis}=${value}: axis "${axis}" has no value "${value}" (values: ${found.values.map(String).join(', ')})`);
    }
    baselines.push({ axis, value: v, from: 'option' });
  } else {
    const playbook = info.baseline ?? {};
    // Two runs against two targets: target and source say the same; compare by target only.
    const sourceTwin = varying.some((y) => y !== SOURCE_AXIS && functionOf(permList, y, SOURCE_AXIS) && functionOf(permList, SOURCE_AXIS, y));
    for (const a of axes) {
      if (!a.varies || (a.name === SOURCE_AXIS && sourceTwin)) continue;
      const wanted = playbook[a.name];
      const v = wanted === undefined ? undefined : a.values.find((x) => sameValue(x, wanted));
      if (wanted !== undefined && v === undefined) {
        warnings.push(`The playbook's baseline ${a.name}=${String(wanted)} is not in these results (values: ${a.values.map(String).join(', ')}); compared against ${String(a.values[0])} instead.`);
      }
      baselines.push(v !== undefined ? { axis: a.name, value: v, from: 'playbook' } : { axis: a.name, value: a.values[0]!, from: 'first-value' });
    }
  }
  const compared = baselines.map(({ axis, value }) => ({ axis, baselineValue: value }));

  // Each compared axis: the permutation that has the baseline value there and the same values of
  // the other varying axes. Permutations (not tests) are matched, once. A permutation with no such
  // partner, or with two (ambiguous), is listed as unpaired and compared with nothing.
  const unpaired: UnpairedPermutations[] = [];
  const matchedBy = new Map<string, string[]>();
  const baseOf = compared.map(({ axis, baselineValue }) => {
    const matchBy = matchingAxes(permList, axis, varying);
    matchedBy.set(axis, matchBy);
    const baseByKey = new Map<string, number>();
    permList.forEach((p, i) => {
      if (!sameValue(p.axes[axis], baselineValue)) return;
      const k = keyWithout(p.axes, axis, matchBy);
      baseByKey.set(k, baseByKey.has(k) ? -2 : i);
    });
    const out = new Int32Array(permList.length).fill(-1);
    const missing = new Map<string, UnpairedPermutations>();
    permList.forEach((p, i) => {
      const value = p.axes[axis];
      if (value === undefined || sameValue(value, baselineValue)) return;
      const b = baseByKey.get(keyWithout(p.axes, axis, matchBy)) ?? -1;
      out[i] = b < 0 ? -1 : b;
      if (b >= 0) return;
      let u = missing.get(String(value));
      if (!u) missing.set(String(value), (u = { axis, value, baselineValue, permutationIds: [] }));
      u.permutationIds.push(p.permutationId);
    });
    unpaired.push(...missing.values());
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

  if (info.insecureEndpoints && info.insecureEndpoints.length > 0) {
    warnings.push(`Insecure connections (TLS certificate / SSH host key not verified): ${info.insecureEndpoints.join(', ')}`);
  }
  for (const f of info.failures ?? []) warnings.push(`Permutation ${f.permutationId} failed: ${f.reason}`);
  if (options.baseline === undefined && compared.length === 0 && permList.length > 1) {
    warnings.push('No axis varies across these results, so nothing is compared.');
  }
  // Sources put side by side that do not line up are the mistake a user makes most: say so.
  for (const u of unpaired) {
    if (u.axis !== SOURCE_AXIS) continue;
    const others = matchedBy.get(SOURCE_AXIS) ?? [];
    const n = u.permutationIds.length;
    const shown = u.permutationIds.slice(0, 5).join(', ') + (n > 5 ? `, … (${n - 5} more)` : '');
    warnings.push(
      `source ${String(u.value)}: ${n} permutation${n === 1 ? ' has' : 's have'} no partner in source ${String(u.baselineValue)} with the same ${others.join(', ') || 'axes'} (${shown}); ` +
        'tag an import with `storsweep import FILE --set axis=value`, or pool sources with --pool source',
    );
  }

  return {
    info,
    runIds: runIdsOf(records),
    recordCount: records.length,
    options: o,
    axes,
    permutations: permList,
    sources: [...new Set(groups.flatMap((g) => [...g.sources]))],
    pooled,
    baselines,
    unpaired,
    tests: sections,
    hostLatency: hostLatencyOf(records, of, permList),
    summary: { verdicts, noisy: noisyShown, ...(noisyTotal !== undefined ? { noisyTotal } : {}), warnings },
  };
}

// The report model: records grouped into tests × permutations, summarized, and compared against a
// baseline value of each axis. Every output format (markdown, html, csv, json) renders this model,
// so the numbers are computed once and agree everywhere.
import { UsageError } from '../errors.ts';
import type { ResultRecord, TestIdentity } from '../results/record.ts';
import { hostLatencyRows, type HostLatencyRow, type HostLatencySample } from './host-latency.ts';
import { conditionDifferences, conditionsOf, conditionWarning, sourceConditions, type Conditions, type SourceConditions } from './conditions.ts';
import { fillBytesPerSecond, fillKey, firstWriteRecord, FIRST_WRITE_TEST, isFirstWrite } from './first-write.ts';
import type { AxisValue, Axes } from '../contract/axis.ts';
import { METRIC_ORDER, METRICS, type MetricCell, type MetricKey } from './metrics.ts';
import type { RunInfo } from './run-info.ts';
import { pairAlong } from './pairing.ts';
import { buildVmScaling, VmScalingRecords, type VmScaling } from './vm-scaling.ts';
import {
  adjustPValues,
  compareSamples,
  DEFAULT_VERDICT_OPTIONS,
  familyP,
  judge,
  isNoisy,
  mean,
  repetitionsNeeded,
  variance,
  summarize,
  type Comparison,
  type Correction,
  type Verdict,
  type VerdictOptions,
} from './stats.ts';

// the metric definitions and the run's facts, named here too for the renderers that read the model
export { METRIC_ORDER, METRICS, type MetricCell, type MetricDef, type MetricKey } from './metrics.ts';
export type { RunInfo } from './run-info.ts';
export type { VmScaling } from './vm-scaling.ts';

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
  /** its records came from `storsweep import` (published numbers, not measured by this toolkit) */
  imported?: boolean;
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
  /**
   * Rows that compare permutations of two sources measured under different conditions (file size,
   * passes, warm-up, pre-fill, tool): one warning per pair of sources, naming each difference.
   */
  conditionWarnings?: string[];
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
  /** why they have no partner (report/pairing.ts) */
  why?: string;
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
  /** how each source was measured (report/conditions.ts), in source order */
  conditions: SourceConditions[];
  /**
   * A study of VM count (issue 32): the aggregates against the VM count, and where each curve
   * bends (report/vm-scaling.ts); its curves are those with two VM counts or more. Absent when no
   * record is of a vm.count pass.
   * The rest of the report holds the aggregates only: a VM's member record is counted here, never
   * pooled with them (`memberRecords`).
   */
  vmScaling?: VmScaling;
  summary: {
    verdicts: Record<Verdict, number>;
    noisy: Array<{ testId: string; label: string; metric: MetricKey; cvPct: number; repetitionsNeeded: number | null }>;
    /** set when `noisy` was cut to the detail limit (the cells with the largest CV): how many there are */
    noisyTotal?: number;
    warnings: string[];
    /** the comparisons whose p-values were adjusted together (every verdict-capable one), and how */
    family: { correction: Correction; size: number };
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
export function sourceOf(r: Pick<ResultRecord, 'axes' | 'runId'>): string {
  const s = r.axes[SOURCE_AXIS];
  return s === undefined ? r.runId : String(s);
}

export function permutationLabel(axes: Axes, varying: readonly string[], fallback: string): string {
  const parts = varying.filter((a) => a in axes).map((a) => `${a}=${String(axes[a])}`);
  return parts.length > 0 ? parts.join(', ') : fallback;
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

// ───────────────────────── the records, as the report keeps them ─────────────────────────
// A report never holds the record objects: each record is read once (ReportRecords.add) into
// columns per test — its permutation, its place in the input and its metric values as doubles —
// so a 100,000-record run costs a few MB here, not the records' ~150 MB, and the records can come
// one at a time from the store (results/port.ts eachRecord) without ever being all in memory.

const METRIC_COUNT = METRIC_ORDER.length;
const METRIC_GETS = METRIC_ORDER.map((m) => METRICS[m].get);
const METRIC_INDEX = Object.fromEntries(METRIC_ORDER.map((m, k) => [m, k])) as Record<MetricKey, number>;

function grownI32(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

function grownF64(a: Float64Array): Float64Array {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Consecutive records of one permutation (same axes object, permutation id and run id): records
 * arrive grouped by permutation, so a run has about one span per permutation. Permutations are
 * formed from spans (groupPermutations), exactly as they would be from the records.
 */
interface Span {
  axes: Axes;
  permutationId: string;
  runId: string;
}

/** One test's records: per record its span, its place in the input and its metric values (METRIC_ORDER). */
class TestColumns {
  /** per metric (METRIC_ORDER): whether some record has a value there (not null) */
  readonly present: boolean[] = METRIC_ORDER.map(() => false);
  n = 0;
  span: Int32Array = new Int32Array(64);
  seq: Int32Array = new Int32Array(64);
  /** METRIC_COUNT per record; null (or anything not a number) is NaN, which no summary counts */
  values: Float64Array = new Float64Array(64 * METRIC_COUNT);

  constructor(readonly test: TestIdentity) {}

  push(span: number, seq: number, r: ResultRecord): void {
    const i = this.n++;
    if (i === this.span.length) {
      this.span = grownI32(this.span);
      this.seq = grownI32(this.seq);
      this.values = grownF64(this.values);
    }
    this.span[i] = span;
    this.seq[i] = seq;
    for (let k = 0; k < METRIC_COUNT; k++) {
      const v = METRIC_GETS[k]!(r);
      if (v !== null) this.present[k] = true;
      this.values[i * METRIC_COUNT + k] = typeof v === 'number' ? v : NaN;
    }
  }
}

/**
 * What buildReport needs of the records, read one record at a time: add() keeps the numbers and
 * the objects records of one permutation share (axes, test identity, host figures), never the
 * record. buildReport(records) does this itself; a caller reading a store hands each record to
 * add() as it is read, so the records are never all in memory.
 */
export class ReportRecords {
  /** how many records were added */
  recordCount = 0;
  /** run ids, first seen first */
  readonly runIds = new Set<string>();
  readonly spans: Span[] = [];
  /** by test id, first seen first */
  readonly tests = new Map<string, TestColumns>();
  /** the host figures (results/record.ts `host`) of the records that carry them, by their place in the input */
  readonly hosts = new Map<number, ResultRecord['host']>();
  /** per span: what its first record says about how it was measured, and its tests that started on never-written space */
  readonly spanFacts: Array<{ metadata: ResultRecord['metadata']; tool: ResultRecord['tool']; unwritten: string[] }> = [];
  /** one sample per pre-fill (first-write.ts), when some record names one */
  firstWrite: TestColumns | null = null;
  /** the records of vm.count passes: members counted, aggregates' figures by curve (vm-scaling.ts) */
  readonly vm = new VmScalingRecords();
  private readonly fills = new Set<string>();
  private last: Span | undefined;

  add(r: ResultRecord): void {
    if (r.vm !== undefined) {
      this.vm.add(r);
      // One VM of a pass: its pass's aggregate is the sample (sum of IOPS, merged latency). A member
      // beside it would be pooled into the same permutation's samples, so every verdict, table,
      // chart and CSV summary built from here leaves it out.
      if (r.vm.role === 'member') return;
    }
    const n = this.recordCount++;
    this.runIds.add(r.runId);
    const last = this.last;
    if (last === undefined || r.axes !== last.axes || r.permutationId !== last.permutationId || r.runId !== last.runId) {
      this.last = { axes: r.axes, permutationId: r.permutationId, runId: r.runId };
      this.spans.push(this.last);
      this.spanFacts.push({ metadata: r.metadata, tool: r.tool, unwritten: [] });
    }
    const span = this.spans.length - 1;
    let t = this.tests.get(r.test.id);
    if (!t) this.tests.set(r.test.id, (t = new TestColumns(r.test)));
    t.push(span, n, r);
    if (r.host !== undefined) this.hosts.set(n, r.host);
    if (r.metadata?.['unwrittenAtStart'] === true && !this.spanFacts[span]!.unwritten.includes(r.test.id)) this.spanFacts[span]!.unwritten.push(r.test.id);
    const fill = fillBytesPerSecond(r);
    if (fill !== null) {
      const key = fillKey(r, sourceOf(r));
      if (!this.fills.has(key)) {
        this.fills.add(key);
        // a negative place: no host figures, never a record's own
        (this.firstWrite ??= new TestColumns(FIRST_WRITE_TEST)).push(span, -1 - n, firstWriteRecord(r, fill));
      }
    }
  }

  static of(records: Iterable<ResultRecord>): ReportRecords {
    const table = new ReportRecords();
    for (const r of records) table.add(r);
    return table;
  }
}

/**
 * One test's records by permutation: entry e (the permutations with records of this test, first
 * seen first) is permutation perm[e], its records are start[e] … start[e + 1] − 1 in input order.
 */
interface TestCells {
  perm: number[];
  start: Int32Array;
  seq: Int32Array;
  values: Float64Array;
  present: readonly boolean[];
}

function cellsOf(t: TestColumns, spanGroup: Int32Array): TestCells {
  const entryOf = new Map<number, number>();
  const perm: number[] = [];
  const count: number[] = [];
  const entryAt = new Int32Array(t.n);
  for (let i = 0; i < t.n; i++) {
    const g = spanGroup[t.span[i]!]!;
    let e = entryOf.get(g);
    if (e === undefined) {
      entryOf.set(g, (e = perm.length));
      perm.push(g);
      count.push(0);
    }
    count[e]!++;
    entryAt[i] = e;
  }
  const start = new Int32Array(perm.length + 1);
  for (let e = 0; e < perm.length; e++) start[e + 1] = start[e]! + count[e]!;
  const next = start.slice(0, perm.length);
  const values = new Float64Array(t.n * METRIC_COUNT);
  const seq = new Int32Array(t.n);
  for (let i = 0; i < t.n; i++) {
    const j = next[entryAt[i]!]!++;
    seq[j] = t.seq[i]!;
    values.set(t.values.subarray(i * METRIC_COUNT, (i + 1) * METRIC_COUNT), j * METRIC_COUNT);
  }
  return { perm, start, seq, values, present: t.present };
}

/** primaryMetricOf, from which metrics have a value in some record of the test */
function primaryOf(test: TestIdentity, present: readonly boolean[]): MetricKey {
  const random = test.id.startsWith('rnd-');
  if (random && present[METRIC_INDEX.iops]) return 'iops';
  if (present[METRIC_INDEX.bytesPerSecond]) return 'bytesPerSecond';
  return 'iops';
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
  /** the family-adjusted p of this section's comparison (compared axis k, candidate permutation, metric), when it is in the family */
  adjusted: (k: number, permIndex: number, m: MetricKey) => number | undefined;
}

/**
 * The report's family of comparisons: every (test, compared axis, permutation, metric) whose
 * Welch test can reach a verdict (n ≥ 2 per side), whether its table is listed or not. Their
 * p-values are adjusted together (VerdictOptions.correction) before any verdict is made, so a
 * sweep where nothing differs colours no cell, however many cells it has.
 */
function familyOf(tests: ReadonlyArray<{ cells: TestCells }>, permutations: number, baseOf: Int32Array[], o: VerdictOptions) {
  const keys: number[] = [];
  const ps: number[] = [];
  const key = (t: number, k: number, permIndex: number, m: number) => ((t * Math.max(1, baseOf.length) + k) * permutations + permIndex) * METRIC_COUNT + m;
  tests.forEach(({ cells }, t) => {
    const slotOf = new Map<number, number>();
    cells.perm.forEach((index, slot) => slotOf.set(index, slot));
    baseOf.forEach((baseIndex, k) => {
      cells.perm.forEach((index, slot) => {
        const b = baseIndex[index]!;
        const bs = b < 0 ? undefined : slotOf.get(b);
        if (bs === undefined) return;
        METRIC_ORDER.forEach((m, mi) => {
          if (!cells.present[mi]) return;
          const p = familyP(finiteValues(cells, slot, m), finiteValues(cells, bs, m));
          if (p === null) return;
          keys.push(key(t, k, index, mi));
          ps.push(p);
        });
      });
    });
  });
  const adjusted = adjustPValues(ps, o.correction);
  const byKey = new Map<number, number>();
  keys.forEach((k, i) => byKey.set(k, adjusted[i]!));
  return {
    size: ps.length,
    forTest: (t: number) => (k: number, permIndex: number, m: MetricKey) => byKey.get(key(t, k, permIndex, METRIC_INDEX[m])),
  };
}

/** The finite values of metric m in entry e's records, in input order. */
function finiteValues(cells: TestCells, e: number, m: MetricKey): number[] {
  const k = METRIC_INDEX[m];
  const out: number[] = [];
  for (let j = cells.start[e]!, end = cells.start[e + 1]!; j < end; j++) {
    const v = cells.values[j * METRIC_COUNT + k]!;
    if (Number.isFinite(v)) out.push(v);
  }
  return out;
}

/** summarize(...).cv > threshold, without building the summary (same arithmetic). */
function isNoisyCv(cells: TestCells, e: number, m: MetricKey, cvThresholdPct: number): boolean {
  if (cells.start[e + 1]! - cells.start[e]! < 2) return false;
  const xs = finiteValues(cells, e, m);
  if (xs.length < 2) return false;
  const mu = mean(xs);
  if (mu === 0) return false;
  return (Math.sqrt(variance(xs)) / Math.abs(mu)) * 100 > cvThresholdPct;
}

function buildSection(test: TestIdentity, cols: TestCells, ctx: SectionContext): TestSection {
  const metrics = METRIC_ORDER.filter((_, k) => cols.present[k]);
  const primaryMetric = primaryOf(test, cols.present);
  // The permutations with records of this test are its slots (cols.perm[slot]); what lives while
  // the section is built is kept in typed arrays by slot, not in an object per permutation: a
  // 12,500-permutation section would otherwise leave megabytes of short-lived objects in V8's
  // old space, eight sections over.
  const n = cols.perm.length;
  const slotOf = new Int32Array(ctx.permutations.length).fill(-1);
  cols.perm.forEach((index, slot) => (slotOf[index] = slot));
  const sc: Section = { test, cols, ctx, metrics, primaryMetric, n, slotOf, perm: (slot) => ctx.permutations[cols.perm[slot]!]! };
  // Above the limit only some permutations are listed, chosen by |Δ|: the primary metric is first
  // judged for every permutation, to count verdicts and rank, but full comparisons are made (and
  // kept) only for the listed ones, so a large report never holds one per permutation.
  const capped = n > ctx.limit;
  const pairs = judgePairs(sc, capped);
  const { shown, truncated } = capped ? listedSlots(sc, pairs) : { shown: null, truncated: undefined };
  const { rows, rowOf } = sectionRows(sc, shown);
  const comparisons = sectionComparisons(sc, pairs, rowOf);
  return { test, primaryMetric, metrics, rows, comparisons, ...(truncated ? { truncated } : {}) };
}

/** One section as it is built: its test's cells by slot and what the report knows. */
interface Section {
  test: TestIdentity;
  cols: TestCells;
  ctx: SectionContext;
  metrics: MetricKey[];
  primaryMetric: MetricKey;
  /** slots: the permutations with records of this test */
  n: number;
  /** a permutation's slot, by its index in the report (-1: none) */
  slotOf: Int32Array;
  perm(slot: number): PermutationInfo;
}

interface Pairs {
  axis: string;
  baselineValue: AxisValue;
  count: number;
  /** match i: slot cand[i] against slot base[i] */
  cand: Int32Array;
  base: Int32Array;
  absDelta: Float64Array;
  primary: Comparison[] | null;
}

/** Each compared axis: every slot judged against its baseline's on the primary metric (verdicts counted; full comparisons kept unless capped). */
function judgePairs(sc: Section, capped: boolean): Pairs[] {
  const { cols, ctx, n, slotOf, primaryMetric } = sc;
  const { o, verdicts } = ctx;
  const higher = METRICS[primaryMetric].higherIsBetter;
  const counted = sc.metrics.includes(primaryMetric);
  return ctx.compared.map(({ axis, baselineValue }, k) => {
    const baseIndex = ctx.baseOf[k]!;
    const cand = new Int32Array(n);
    const base = new Int32Array(n);
    const absDelta = new Float64Array(n);
    const primary: Comparison[] | null = capped ? null : [];
    let count = 0;
    for (let slot = 0; slot < n; slot++) {
      const b = baseIndex[cols.perm[slot]!]!;
      const bs = b < 0 ? -1 : slotOf[b]!;
      if (bs < 0) continue;
      const cv = finiteValues(cols, slot, primaryMetric);
      const bv = finiteValues(cols, bs, primaryMetric);
      const adj = ctx.adjusted(k, cols.perm[slot]!, primaryMetric);
      const full = capped ? null : compareSamples(cv, bv, higher, o, adj);
      const j = full ?? judge(cv, bv, higher, o, adj);
      if (counted) verdicts[j.verdict]++;
      const d = j.delta ? Math.abs(j.delta.pct) : NaN;
      cand[count] = slot;
      base[count] = bs;
      absDelta[count] = Number.isFinite(d) ? d : -1;
      if (primary && full) primary.push(full);
      count++;
    }
    return { axis, baselineValue, count, cand, base, absDelta, primary };
  });
}

/** Above the limit: the slots listed, largest |Δ| first (run order when nothing was compared). */
function listedSlots(sc: Section, pairs: readonly Pairs[]): { shown: Uint8Array; truncated: NonNullable<TestSection['truncated']> } {
  const { n } = sc;
  const limit = sc.ctx.limit;
  const score = new Float64Array(n).fill(-1);
  let scored = false;
  for (const p of pairs) {
    for (let i = 0; i < p.count; i++) {
      const s = p.cand[i]!;
      if (p.absDelta[i]! > score[s]!) {
        score[s] = p.absDelta[i]!;
        scored = true;
      }
    }
  }
  const order = new Int32Array(n).map((_, i) => i);
  order.sort((a, b) => score[b]! - score[a]! || a - b);
  const shown = new Uint8Array(n);
  for (const s of order.subarray(0, limit)) shown[s] = 1;
  return { shown, truncated: { shown: limit, total: n, by: scored ? 'largest-delta' : 'run-order' } };
}

/** Every cell is summarized, for the noisy list; rows are kept for the listed permutations. */
function sectionRows(sc: Section, shown: Uint8Array | null): { rows: TestRow[]; rowOf: Array<TestRow | undefined> } {
  const { cols, ctx, n, metrics, test } = sc;
  const { o } = ctx;
  const rows: TestRow[] = [];
  const rowOf = new Array<TestRow | undefined>(n);
  for (let slot = 0; slot < n; slot++) {
    const p = sc.perm(slot);
    const listed = !shown || shown[slot] === 1;
    const cells: TestRow['cells'] = {};
    for (const m of metrics) {
      // An unlisted cell matters only if noisy: its CV first, the full summary only when it is.
      if (!listed && !isNoisyCv(cols, slot, m, o.cvThresholdPct)) continue;
      const summary = summarize(finiteValues(cols, slot, m), o.level);
      const flag = isNoisy(summary, o.cvThresholdPct);
      const need =
        summary.stddev !== null && summary.mean !== null ? repetitionsNeeded(summary.stddev, summary.mean, o.minEffectPct / 100, o.level) : null;
      cells[m] = { metric: m, summary, noisy: flag, repetitionsNeeded: need };
      if (flag) ctx.noisy.push({ testId: test.id, label: p.label, metric: m, cvPct: summary.cv! * 100, repetitionsNeeded: need });
    }
    if (!listed) continue;
    const row: TestRow = { permutationId: p.permutationId, axes: p.axes, label: p.label, cells };
    rows.push(row);
    rowOf[slot] = row;
  }
  return { rows, rowOf };
}

/** The listed permutations compared with their baselines, metric by metric, per compared axis. */
function sectionComparisons(sc: Section, pairs: readonly Pairs[], rowOf: ReadonlyArray<TestRow | undefined>): AxisComparison[] {
  const { cols, ctx, metrics, primaryMetric } = sc;
  const comparisons: AxisComparison[] = [];
  for (const [k, { axis, baselineValue, count, cand, base, primary }] of pairs.entries()) {
    const out: ComparisonRow[] = [];
    for (let i = 0; i < count; i++) {
      const s = cand[i]!;
      const row = rowOf[s];
      if (!row) continue;
      const bs = base[i]!;
      const value = sc.perm(s).axes[axis]!;
      for (const m of metrics) {
        const comparison =
          m === primaryMetric && primary ? primary[i]! : compareSamples(finiteValues(cols, s, m), finiteValues(cols, bs, m), METRICS[m].higherIsBetter, ctx.o, ctx.adjusted(k, cols.perm[s]!, m));
        out.push({ permutationId: sc.perm(s).permutationId, label: row.label, value, baselinePermutationId: sc.perm(bs).permutationId, metric: m, comparison });
      }
    }
    if (out.length > 0) comparisons.push({ axis, baselineValue, rows: out });
  }
  return comparisons;
}

interface PermutationGroup {
  axes: Axes;
  source: string;
  /** the records' permutation ids (several when pooled) and sources */
  ids: Set<string>;
  sources: Set<string>;
  /** every record came from `storsweep import` (runId `import:…`): published numbers */
  imported: boolean;
}

/**
 * Groups records into permutations: one per source and permutation id, so two runs of one
 * playbook (or two exports of one file) stay apart; with `pool`, permutations whose axes differ
 * only in the pooled axes become one. Works on spans (consecutive records of one permutation),
 * which is what a record-by-record pass would look at: `spanGroup` is each span's permutation.
 */
function groupPermutations(spans: readonly Span[], pool: ReadonlySet<string>) {
  const groups: PermutationGroup[] = [];
  const index = new Map<string, number>();
  const spanGroup = new Int32Array(spans.length);
  const pooledAxes: Axes[] = [];
  spans.forEach((r, n) => {
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
      groups.push({ axes, source, ids: new Set(), sources: new Set(), imported: true });
    }
    const g = groups[i]!;
    if (!r.runId.startsWith('import:')) g.imported = false;
    g.ids.add(r.permutationId);
    g.sources.add(source);
    spanGroup[n] = i;
  });
  return { groups, spanGroup, pooledAxes };
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

/**
 * The guest vs host rows, when any record carries host figures: the records of each permutation
 * that has some (test, guest mean latency, host figures), in input order, rebuilt from the columns.
 */
function hostLatencyOf(table: ReportRecords, all: ReadonlyArray<{ test: TestIdentity; cells: TestCells }>, perms: readonly PermutationInfo[]): HostLatencyRow[] {
  if (table.hosts.size === 0) return [];
  const tests = all.filter((t) => !isFirstWrite(t.test));
  const withHost = new Set<number>();
  for (const { cells } of tests) {
    cells.perm.forEach((g, e) => {
      for (let j = cells.start[e]!; j < cells.start[e + 1]!; j++) if (table.hosts.has(cells.seq[j]!)) withHost.add(g);
    });
  }
  const byPerm = new Map<number, Array<HostLatencySample & { seq: number }>>();
  for (const { test, cells } of tests) {
    cells.perm.forEach((g, e) => {
      if (!withHost.has(g)) return;
      let list = byPerm.get(g);
      if (!list) byPerm.set(g, (list = []));
      for (let j = cells.start[e]!; j < cells.start[e + 1]!; j++) {
        const seq = cells.seq[j]!;
        const host = table.hosts.get(seq);
        list.push({ seq, test, latencyUs: { mean: cells.values[j * METRIC_COUNT + METRIC_INDEX.latencyMeanUs]! }, ...(host !== undefined ? { host } : {}) });
      }
    });
  }
  for (const list of byPerm.values()) list.sort((a, b) => a.seq - b.seq);
  return hostLatencyRows(perms.map((p, i) => ({ permutationId: p.permutationId, label: p.label, records: byPerm.get(i) ?? [] })));
}

/** Each permutation's conditions (report/conditions.ts): its first span's facts, its fills, the tests that started on never-written space. */
function groupConditions(table: ReportRecords, tests: ReadonlyArray<{ test: TestIdentity; cells: TestCells }>, spanGroup: Int32Array, count: number, info: RunInfo): Conditions[] {
  const first = new Int32Array(count).fill(-1);
  const unwritten: string[][] = Array.from({ length: count }, () => []);
  spanGroup.forEach((g, span) => {
    if (first[g] === -1) first[g] = span;
    for (const id of table.spanFacts[span]!.unwritten) if (!unwritten[g]!.includes(id)) unwritten[g]!.push(id);
  });
  const fills: number[][] = Array.from({ length: count }, () => []);
  const fw = tests.find((t) => isFirstWrite(t.test));
  fw?.cells.perm.forEach((g, slot) => fills[g]!.push(...finiteValues(fw.cells, slot, 'bytesPerSecond')));
  return Array.from({ length: count }, (_, g) => {
    const span = first[g]!;
    const facts = table.spanFacts[span]!;
    const runId = table.spans[span]!.runId;
    const fallback = info.replication === 'between-provisionings' ? info.replication : 'within-provisioning';
    const replication = typeof facts.metadata?.['format'] === 'string' ? 'unknown' : (info.replicationOf?.[runId] ?? fallback);
    return conditionsOf({ metadata: facts.metadata, tool: facts.tool, fills: fills[g]!, unwritten: unwritten[g]!, replication });
  });
}

/**
 * Comparisons between permutations of two sources measured under different conditions: each such
 * comparison gets the warning for its pair of sources (AxisComparison.conditionWarnings); returns
 * every distinct warning, for the report's warnings.
 */
function markConditionDifferences(sections: TestSection[], compared: ReadonlyArray<{ axis: string }>, baseOf: readonly Int32Array[], perms: readonly PermutationInfo[], conditions: readonly Conditions[]): string[] {
  const all = new Set<string>();
  const byAxis = new Map<string, Map<string, string>>();
  compared.forEach(({ axis }, k) => {
    const warned = new Map<string, string>();
    baseOf[k]!.forEach((b, i) => {
      if (b < 0 || perms[i]!.source === perms[b]!.source) return;
      const diff = conditionDifferences(conditions[i]!, conditions[b]!);
      if (diff.length === 0) return;
      const text = conditionWarning(perms[i]!.source, perms[b]!.source, diff);
      warned.set(perms[i]!.permutationId, text);
      all.add(text);
    });
    byAxis.set(axis, warned);
  });
  for (const s of sections) {
    for (const c of s.comparisons) {
      const warned = byAxis.get(c.axis);
      const texts = [...new Set(c.rows.flatMap((r) => warned?.get(r.permutationId) ?? []))];
      if (texts.length > 0) c.conditionWarnings = texts;
    }
  }
  return [...all];
}

/** The conditions of each source, over its permutations, in source order. */
function sourcesConditions(perms: readonly PermutationInfo[], conditions: readonly Conditions[]): SourceConditions[] {
  const bySource = new Map<string, Conditions[]>();
  perms.forEach((p, i) => {
    let list = bySource.get(p.source);
    if (!list) bySource.set(p.source, (list = []));
    list.push(conditions[i]!);
  });
  return [...bySource].map(([source, list]) => sourceConditions(source, list));
}

/**
 * The report of `records`: an iterable of records (read once, in order; the report keeps none of
 * them), or a ReportRecords the caller filled one record at a time.
 */
export function buildReport(records: Iterable<ResultRecord> | ReportRecords, info: RunInfo, options: ReportOptions = {}): Report {
  const table = records instanceof ReportRecords ? records : ReportRecords.of(records);
  const o: VerdictOptions = { ...DEFAULT_VERDICT_OPTIONS, ...options.verdict };
  const limit = options.detailLimit ?? DEFAULT_DETAIL_LIMIT;
  const pool = new Set(options.pool ?? []);
  const { groups, spanGroup, pooledAxes } = groupPermutations(table.spans, pool);
  const axes = collectAxes(groups.map((g) => g.axes));
  const pooled = collectAxes(pooledAxes);
  checkPooled(pool, axes, pooled);
  const varying = axes.filter((a) => a.varies).map((a) => a.name);
  const permList = permutationInfos(groups, varying);
  // the first write (one sample per pre-fill) is a test of its own, listed last
  const tests = [...table.tests.values(), ...(table.firstWrite ? [table.firstWrite] : [])].map((t) => ({ test: t.test, cells: cellsOf(t, spanGroup) }));
  const conditions = groupConditions(table, tests, spanGroup, groups.length, info);

  const warnings: string[] = [];
  const baselines = chooseBaselines(options, info, axes, varying, permList, pool, warnings);
  const compared = baselines.map(({ axis, value }) => ({ axis, baselineValue: value }));
  const { baseOf, unpaired, matchedBy } = pairWithBaselines(compared, permList, varying);

  const verdicts: Record<Verdict, number> = { faster: 0, slower: 0, 'within-noise': 0, 'insufficient-data': 0 };
  const noisy: Report['summary']['noisy'] = [];
  const family = familyOf(tests, permList.length, baseOf, o);
  const sections: TestSection[] = tests.map(({ test, cells }, t) => buildSection(test, cells, { permutations: permList, baseOf, compared, o, limit, verdicts, noisy, adjusted: family.forTest(t) }));
  warnings.push(...markConditionDifferences(sections, compared, baseOf, permList, conditions));
  warnings.push(...reportWarnings(info, options, compared, permList, unpaired, matchedBy));

  return {
    info,
    runIds: [...table.runIds],
    recordCount: table.recordCount,
    options: o,
    axes,
    permutations: permList,
    sources: [...new Set(groups.flatMap((g) => [...g.sources]))],
    pooled,
    baselines,
    unpaired,
    tests: sections,
    hostLatency: hostLatencyOf(table, tests, permList),
    conditions: sourcesConditions(permList, conditions),
    ...vmScalingOf(table),
    summary: { verdicts, ...noisyShown(noisy, limit, sections), warnings, family: { correction: o.correction, size: family.size } },
  };
}

type Grouped = ReturnType<typeof groupPermutations>['groups'];

function vmScalingOf(table: ReportRecords): { vmScaling?: VmScaling } {
  const vmScaling = buildVmScaling(table.vm);
  return vmScaling ? { vmScaling } : {};
}

/** `--pool AXIS` names an axis of these results. */
function checkPooled(pool: ReadonlySet<string>, axes: readonly AxisInfo[], pooled: readonly AxisInfo[]): void {
  for (const name of pool) {
    if (!pooled.some((a) => a.name === name)) {
      const names = [...axes, ...pooled].map((a) => a.name);
      throw new UsageError(`--pool ${name}: no axis "${name}" in these results (axes: ${names.join(', ') || 'none'})`);
    }
  }
}

function permutationInfos(groups: Grouped, varying: readonly string[]): PermutationInfo[] {
  const ids = permutationIds(groups);
  return groups.map((g, i) => {
    const permutationId = ids[i]!;
    const p: PermutationInfo = { permutationId, source: [...g.sources].join('+'), axes: g.axes, label: permutationLabel(g.axes, varying, permutationId) };
    if (g.ids.size > 1 || g.sources.size > 1) p.pooledFrom = [...g.ids];
    if (g.imported) p.imported = true;
    return p;
  });
}

/** What each varying axis is compared against: `--baseline`, else the playbook's baseline:, else its first value. */
function chooseBaselines(options: ReportOptions, info: RunInfo, axes: readonly AxisInfo[], varying: readonly string[], permList: readonly PermutationInfo[], pool: ReadonlySet<string>, warnings: string[]): Report['baselines'] {
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
    return baselines;
  }
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
  return baselines;
}

/**
 * Each compared axis: the permutation that has the baseline value there and the same values of
 * the other varying axes. Permutations (not tests) are matched, once. A permutation with no such
 * partner, or with two (ambiguous), is listed as unpaired and compared with nothing. Along
 * `target`, a target may lack axes another takes (report/pairing.ts).
 */
function pairWithBaselines(compared: ReadonlyArray<{ axis: string; baselineValue: AxisValue }>, permList: readonly PermutationInfo[], varying: readonly string[]): { baseOf: Int32Array[]; unpaired: UnpairedPermutations[]; matchedBy: Map<string, string[]> } {
  const unpaired: UnpairedPermutations[] = [];
  const matchedBy = new Map<string, string[]>();
  const baseOf = compared.map(({ axis, baselineValue }) => {
    const matchBy = matchingAxes(permList, axis, varying);
    matchedBy.set(axis, matchBy);
    const pairing = pairAlong(permList, axis, baselineValue, matchBy);
    unpaired.push(...pairing.unpaired);
    return pairing.baseOf;
  });
  return { baseOf, unpaired, matchedBy };
}

/** The noisy cells shown: all of them, or, when the report is cut short, those that most need more repetitions, in report order. */
function noisyShown(noisy: Report['summary']['noisy'], limit: number, sections: readonly TestSection[]): { noisy: Report['summary']['noisy']; noisyTotal?: number } {
  if (noisy.length <= limit || !sections.some((s) => s.truncated)) return { noisy };
  const keep = new Set([...noisy].sort((a, b) => b.cvPct - a.cvPct).slice(0, limit));
  return { noisy: noisy.filter((n) => keep.has(n)), noisyTotal: noisy.length };
}

/** What the report warns about beyond its cells: insecure endpoints, failures, nothing compared, sources that do not line up. */
function reportWarnings(info: RunInfo, options: ReportOptions, compared: readonly unknown[], permList: readonly PermutationInfo[], unpaired: readonly UnpairedPermutations[], matchedBy: ReadonlyMap<string, string[]>): string[] {
  const warnings: string[] = [];
  if (info.insecureEndpoints && info.insecureEndpoints.length > 0) {
    warnings.push(`Insecure connections (TLS certificate / SSH host key not verified): ${info.insecureEndpoints.join(', ')}`);
  }
  for (const u of info.unfinished ?? []) {
    warnings.push(
      `Run ${u.runId} was interrupted (or is still running): ${u.left} of ${u.total} permutation${u.total === 1 ? '' : 's'} not measured to the end; this report covers what was measured (\`storsweep run --resume <runDir>\` measures the rest).`,
    );
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
  return warnings;
}

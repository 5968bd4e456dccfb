// Run-to-run comparison: B (the candidate) against A (the baseline), matched permutation by
// permutation (the axes that vary on either side) and by canonical test id; never pooled unasked. Pure; the CLI loads the two sides and decides the exit code.
import type { ResultRecord } from '../results/record.ts';
import type { AxisValue, Axes } from '../contract/axis.ts';
import { UsageError } from '../errors.ts';
import { METRICS, primaryMetricOf, SOURCE_AXIS, sourceOf, type MetricKey, type RunInfo } from './model.ts';
import { formatDelta, formatValue } from './numbers.ts';
import { adjustPValues, compareSamples, CORRECTION_NAMES, DEFAULT_VERDICT_OPTIONS, familyP, type Comparison, type VerdictOptions } from './stats.ts';
import { welchCell } from './wording.ts';
import { isVmMember } from './vm-scaling.ts';
import { conditionDifferences, conditionsOf, conditionWarning, type Conditions } from './conditions.ts';

export interface CompareSide {
  label: string;
  records: readonly ResultRecord[];
  info: RunInfo;
}

export interface CompareOptions {
  /** a significant slowdown of at least this many % is a regression (also the verdict's min effect) */
  failOnRegressionPct?: number;
  verdict?: Partial<VerdictOptions>;
  /** axes to pool (`--pool source`): permutations of a side that differ only in these become one sample */
  pool?: readonly string[];
}

export interface CompareRow {
  testId: string;
  /** the matched axes (shared by both sides) */
  axes: Axes;
  metric: MetricKey;
  comparison: Comparison;
  regression: boolean;
  /** permutations pooled on each side into this row (more than 1 only with `pool`) */
  pooled: { a: number; b: number };
}

export interface CompareResult {
  a: { label: string; runId: string; records: number };
  b: { label: string; runId: string; records: number };
  options: VerdictOptions;
  failOnRegressionPct: number | null;
  /** the axes a permutation of B must share with one of A to be compared with it */
  matchedAxes: string[];
  /** axes pooled on request */
  pooledAxes: string[];
  rows: CompareRow[];
  /** permutations (their matched axes, `name=value, …`) with no partner on the other side */
  unpairedA: string[];
  unpairedB: string[];
  /** tests of paired permutations that only one side ran: `test (axes)` */
  onlyInA: string[];
  onlyInB: string[];
  fingerprintWarnings: string[];
  warnings: string[];
  regressions: number;
}

function axisValues(records: readonly ResultRecord[]): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>();
  for (const r of records) {
    for (const [k, v] of Object.entries(r.axes)) {
      let s = m.get(k);
      if (!s) m.set(k, (s = new Set()));
      s.add(String(v));
    }
  }
  return m;
}

/**
 * Fingerprint keys whose values differ between the runs, leaving out the keys that are axes: those
 * are meant to differ. A key present on one side only is reported too when both sides have a
 * fingerprint at all (an imported export has none, and saying so once is enough).
 */
export function fingerprintDifferences(a: RunInfo, b: RunInfo, axisNames: ReadonlySet<string>): string[] {
  const fa = a.fingerprint;
  const fb = b.fingerprint;
  if (!fa || !fb) return fa || fb ? [`only ${fa ? 'A' : 'B'} records an environment fingerprint; environments cannot be checked`] : [];
  const keys = [...new Set([...Object.keys(fa), ...Object.keys(fb)])].filter((k) => !axisNames.has(k)).sort();
  const out: string[] = [];
  for (const k of keys) {
    const va = fa[k];
    const vb = fb[k];
    if (va === vb) continue;
    out.push(`environment differs: ${k}: ${va ?? '(not recorded)'} → ${vb ?? '(not recorded)'}`);
  }
  return out;
}

/** Distinct values of each axis on one side; a record without the axis counts as the value `null`. */
function sideAxes(records: readonly ResultRecord[], names: readonly string[]): Map<string, Set<string | null>> {
  const m = new Map<string, Set<string | null>>(names.map((n) => [n, new Set()]));
  let last: Axes | undefined;
  for (const r of records) {
    if (r.axes === last) continue;
    last = r.axes;
    for (const n of names) m.get(n)!.add(n in r.axes ? String(r.axes[n]) : null);
  }
  return m;
}

/** Each source's conditions, from its first record (what compare needs to tell two setups apart). */
function conditionsBySource(records: readonly ResultRecord[]): Map<string, Conditions> {
  const out = new Map<string, Conditions>();
  for (const r of records) {
    const s = sourceOf(r);
    if (!out.has(s)) out.set(s, conditionsOf({ metadata: r.metadata, tool: r.tool, fills: [], unwritten: [], replication: 'unknown' }));
  }
  return out;
}

/** A warning per pair of compared sources measured under different conditions (report/conditions.ts). */
function conditionWarnings(ga: Side, gb: Side, a: readonly ResultRecord[], b: readonly ResultRecord[]): string[] {
  const ca = conditionsBySource(a);
  const cb = conditionsBySource(b);
  const out = new Set<string>();
  for (const [key, gB] of gb.groups) {
    const gA = ga.groups.get(key);
    if (!gA) continue;
    for (const sb of gB.sources) {
      for (const sa of gA.sources) {
        const diff = conditionDifferences(cb.get(sb)!, ca.get(sa)!);
        if (diff.length > 0) out.add(conditionWarning(sb, sa, diff));
      }
    }
  }
  return [...out];
}

interface Side {
  /** key (matched axes) → the records and the permutations (source + id) they come from */
  groups: Map<string, { records: ResultRecord[]; perms: Set<string>; sources: Set<string> }>;
}

function groupSide(records: readonly ResultRecord[], keyOf: (r: ResultRecord) => string): Side {
  const groups: Side['groups'] = new Map();
  for (const r of records) {
    const k = keyOf(r);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { records: [], perms: new Set(), sources: new Set() }));
    g.records.push(r);
    g.perms.add(JSON.stringify([sourceOf(r), r.permutationId]));
    g.sources.add(sourceOf(r));
  }
  return { groups };
}

/**
 * B against A, permutation by permutation: a permutation of B is compared with the one of A that
 * has the same values of every axis that varies on either side (`source`, which names the side,
 * aside). Axes constant on both sides only describe them (a warning when their values differ).
 * A side whose permutations would pool into one sample (several sources with the same axes) is
 * refused unless the caller pools on purpose (`pool`).
 */
export function compareRuns(sideA: CompareSide, sideB: CompareSide, options: CompareOptions = {}): CompareResult {
  // a vm.count study is compared by its aggregates: a VM's member record beside them would pool into the same sample
  const a = aggregatesOnly(sideA);
  const b = aggregatesOnly(sideB);
  const o: VerdictOptions = {
    ...DEFAULT_VERDICT_OPTIONS,
    ...options.verdict,
    ...(options.failOnRegressionPct !== undefined ? { minEffectPct: options.failOnRegressionPct } : {}),
  };
  const va = axisValues(a.records);
  const vb = axisValues(b.records);
  const names = [...new Set([...va.keys(), ...vb.keys()])];
  const pool = new Set(options.pool ?? []);
  for (const p of pool) if (!names.includes(p)) throw new UsageError(`--pool ${p}: neither side has an axis "${p}" (axes: ${names.join(', ') || 'none'})`);
  const candidates = names.filter((n) => n !== SOURCE_AXIS && !pool.has(n));
  const sa = sideAxes(a.records, candidates);
  const sb = sideAxes(b.records, candidates);
  const warnings: string[] = [];
  const matchedAxes = candidates.filter((n) => sa.get(n)!.size > 1 || sb.get(n)!.size > 1).sort();
  for (const k of candidates) {
    if (matchedAxes.includes(k)) continue;
    const [x] = sa.get(k)!;
    const [y] = sb.get(k)!;
    if (x !== undefined && y !== undefined && x !== null && y !== null && x !== y) warnings.push(`axis ${k} differs (A: ${x}; B: ${y}); compared across it`);
  }

  const keyOf = (r: ResultRecord): string => JSON.stringify(matchedAxes.map((k) => (k in r.axes ? String(r.axes[k]) : null)));
  const ga = groupSide(a.records, keyOf);
  const gb = groupSide(b.records, keyOf);
  if (!pool.has(SOURCE_AXIS)) refusePooledSources([['A', ga, a.label], ['B', gb, b.label]], matchedAxes);
  const describeKey = (recs: readonly ResultRecord[]): string => {
    const r = recs[0]!;
    return matchedAxes.map((k) => `${k}=${k in r.axes ? String(r.axes[k]) : '(none)'}`).join(', ') || '(all)';
  };
  const { pending, onlyInA, onlyInB } = matchTests(ga, gb, matchedAxes, describeKey);
  const rows = judgeRows(pending, o, options.failOnRegressionPct);
  const unpairedA = [...ga.groups].filter(([k]) => !gb.groups.has(k)).map(([, g]) => describeKey(g.records));
  const unpairedB = [...gb.groups].filter(([k]) => !ga.groups.has(k)).map(([, g]) => describeKey(g.records));
  if (unpairedA.length + unpairedB.length > 0) warnings.push(...missingAxisWarnings(matchedAxes, sa, sb));
  warnings.push(...conditionWarnings(ga, gb, a.records, b.records));
  warnings.push(...rowWarnings(rows, pool));
  const axisNames = new Set(names);
  return {
    a: { label: a.label, runId: a.info.runId, records: a.records.length },
    b: { label: b.label, runId: b.info.runId, records: b.records.length },
    options: o,
    failOnRegressionPct: options.failOnRegressionPct ?? null,
    matchedAxes,
    pooledAxes: [...pool],
    rows,
    unpairedA,
    unpairedB,
    onlyInA,
    onlyInB,
    fingerprintWarnings: fingerprintDifferences(a.info, b.info, axisNames),
    warnings,
    regressions: rows.filter((r) => r.regression).length,
  };
}

type SideAxes = ReturnType<typeof sideAxes>;

function aggregatesOnly(side: CompareSide): CompareSide {
  return side.records.some(isVmMember) ? { ...side, records: side.records.filter((r) => !isVmMember(r)) } : side;
}

/**
 * Several permutations of one side under one key differ only in their source: pooling them would
 * average different exports or runs into one sample, so that needs asking for.
 */
function refusePooledSources(sides: ReadonlyArray<readonly [string, Side, string]>, matchedAxes: readonly string[]): void {
  for (const [side, g, label] of sides) {
    const clash = [...g.groups.values()].find((x) => x.sources.size > 1);
    if (!clash) continue;
    const srcs = [...clash.sources];
    const shown = srcs.slice(0, 4).join(', ') + (srcs.length > 4 ? `, … (${srcs.length} in all)` : '');
    throw new UsageError(
      `compare: ${side} (${label}) holds ${srcs.length} sources (${shown}) that ${matchedAxes.length ? `${matchedAxes.join(', ')} cannot tell apart` : 'no axis tells apart'}; ` +
        'comparing would pool them into one sample. Tag each with the axis value it measured (`storsweep import FILE --export N --set axis=value --json > part.jsonl`), ' +
        'or pass --pool source to pool them on purpose',
    );
  }
}

interface Pending {
  testId: string;
  axes: Axes;
  metric: MetricKey;
  candidate: number[];
  baseline: number[];
  pooled: CompareRow['pooled'];
}

function byTest(recs: readonly ResultRecord[]): Map<string, ResultRecord[]> {
  const m = new Map<string, ResultRecord[]>();
  for (const r of recs) {
    let l = m.get(r.test.id);
    if (!l) m.set(r.test.id, (l = []));
    l.push(r);
  }
  return m;
}

/** The tests both sides have under one key, by metric (the primary one, and the mean latency where both have it); the tests only one side has. */
function matchTests(ga: Side, gb: Side, matchedAxes: readonly string[], describeKey: (recs: readonly ResultRecord[]) => string): { pending: Pending[]; onlyInA: string[]; onlyInB: string[] } {
  const pending: Pending[] = [];
  const onlyInA: string[] = [];
  const onlyInB: string[] = [];
  for (const [key, gB] of gb.groups) {
    const gA = ga.groups.get(key);
    if (!gA) continue;
    const ta = byTest(gA.records);
    const tb = byTest(gB.records);
    const axes: Axes = {};
    for (const k of matchedAxes) {
      const v: AxisValue | undefined = gB.records[0]!.axes[k];
      if (v !== undefined) axes[k] = v;
    }
    const where = matchedAxes.length ? ` (${describeKey(gB.records)})` : '';
    for (const id of ta.keys()) if (!tb.has(id)) onlyInA.push(`${id}${where}`);
    for (const [id, recsB] of tb) {
      const recsA = ta.get(id);
      if (!recsA) {
        onlyInB.push(`${id}${where}`);
        continue;
      }
      pending.push(...testMetrics(recsA, recsB, axes, { a: gA.perms.size, b: gB.perms.size }));
    }
  }
  return { pending, onlyInA, onlyInB };
}

function testMetrics(recsA: readonly ResultRecord[], recsB: readonly ResultRecord[], axes: Axes, pooled: CompareRow['pooled']): Pending[] {
  const test = recsB[0]!.test;
  const primary = primaryMetricOf(test, [...recsA, ...recsB]);
  const metrics: MetricKey[] = [primary];
  const both = (m: MetricKey): boolean => recsA.some((r) => METRICS[m].get(r) !== null) && recsB.some((r) => METRICS[m].get(r) !== null);
  if (both('latencyMeanUs')) metrics.push('latencyMeanUs');
  const out: Pending[] = [];
  for (const m of metrics) {
    if (!both(m)) continue;
    const vals = (rs: readonly ResultRecord[]): number[] => rs.map((r) => METRICS[m].get(r)).filter((v): v is number => v !== null && Number.isFinite(v));
    out.push({ testId: test.id, axes, metric: m, candidate: vals(recsB), baseline: vals(recsA), pooled });
  }
  return out;
}

/** Every matched test × metric is one family: their p-values are adjusted together (o.correction). */
function judgeRows(pending: readonly Pending[], o: VerdictOptions, failOnRegressionPct: number | undefined): CompareRow[] {
  const inFamily = pending.map((x) => familyP(x.candidate, x.baseline));
  const members = inFamily.flatMap((p, i) => (p === null ? [] : [i]));
  const adjusted = adjustPValues(members.map((i) => inFamily[i]!), o.correction);
  const adjustedOf = new Map(members.map((i, k) => [i, adjusted[k]!]));
  return pending.map((x, i) => {
    const comparison = compareSamples(x.candidate, x.baseline, METRICS[x.metric].higherIsBetter, o, adjustedOf.get(i));
    const regression = failOnRegressionPct !== undefined && comparison.verdict === 'slower';
    return { testId: x.testId, axes: x.axes, metric: x.metric, comparison, regression, pooled: x.pooled };
  });
}

/** An axis one side does not have at all: the usual reason permutations do not pair, with its remedy. */
function missingAxisWarnings(matchedAxes: readonly string[], sa: SideAxes, sb: SideAxes): string[] {
  const warnings: string[] = [];
  for (const k of matchedAxes) {
    for (const [side, s] of [['A', sa], ['B', sb]] as const) {
      const vals = s.get(k)!;
      if (vals.size === 1 && vals.has(null)) {
        warnings.push(`${side} has no ${k} axis, so none of its permutations lines up with the other side's; tag an import with \`storsweep import FILE --set ${k}=VALUE\`, or pass --pool ${k}`);
      }
    }
  }
  return warnings;
}

function rowWarnings(rows: readonly CompareRow[], pool: ReadonlySet<string>): string[] {
  const warnings: string[] = [];
  const pooledRows = rows.filter((r) => r.pooled.a > 1 || r.pooled.b > 1);
  if (pooledRows.length > 0) {
    warnings.push(`${new Set(pooledRows.map((r) => r.testId)).size} test(s) pool several permutations of one side into one sample (--pool ${[...pool].join(', ')})`);
  }
  if (rows.length > 0 && rows.every((r) => r.comparison.verdict === 'insufficient-data')) {
    warnings.push('every comparison has fewer than 2 repetitions on a side: deltas are shown, but no difference can be called significant');
  }
  return warnings;
}

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => rows.reduce((w, r) => Math.max(w, [...(r[i] ?? '')].length), 0));
  return rows.map((r) => r.map((c, i) => c + ' '.repeat(widths[i]! - [...c].length)).join('  ').trimEnd()).join('\n');
}

/** Terminal output: one line per matched test and metric, then warnings and the regression count. */
export function renderCompareText(r: CompareResult): string {
  const out: string[] = [
    `B: ${r.b.label} (${r.b.runId}, ${r.b.records} records) compared with A: ${r.a.label} (${r.a.runId}, ${r.a.records} records)`,
    `matched by test id${r.matchedAxes.length ? ` and ${r.matchedAxes.join(', ')}` : ''}${r.pooledAxes.length ? `, pooled over ${r.pooledAxes.join(', ')}` : ''}: ` +
      `${new Set(r.rows.map((x) => JSON.stringify([x.testId, x.axes]))).size} matched, ${r.unpairedA.length + r.unpairedB.length} permutation(s) without a partner, ` +
      `${r.onlyInA.length} test(s) only in A, ${r.onlyInB.length} only in B`,
  ];
  for (const w of [...r.fingerprintWarnings, ...r.warnings]) out.push(`warning: ${w}`);
  if (r.rows.length > 0) {
    const family = r.rows.filter((x) => x.comparison.pAdjusted !== null).length;
    out.push(r.options.correction === 'none' ? 'p-values: each comparison on its own (no correction)' : `p-values adjusted by ${CORRECTION_NAMES[r.options.correction]} over the family of ${family} comparison${family === 1 ? '' : 's'}; a verdict needs the adjusted p < ${r.options.alpha}`);
    const table = [['test', 'axes', 'metric', 'A mean', 'B mean', 'Δ% [95% CI]', 'p (Welch)', 'verdict']];
    for (const row of r.rows) {
      const c = row.comparison;
      const axes = Object.entries(row.axes).map(([k, v]) => `${k}=${String(v)}`).join(', ') || '–';
      table.push([
        row.testId,
        axes,
        METRICS[row.metric].label,
        formatValue(row.metric, c.baseline.mean),
        formatValue(row.metric, c.candidate.mean),
        formatDelta(c),
        welchCell(c),
        `${c.verdict.replace('-', ' ')}${row.regression ? ' REGRESSION' : ''}`,
      ]);
    }
    out.push('', pad(table));
  }
  if (r.unpairedA.length) out.push('', `no partner in B for A's: ${r.unpairedA.join('; ')}`);
  if (r.unpairedB.length) out.push('', `no partner in A for B's: ${r.unpairedB.join('; ')}`);
  if (r.onlyInA.length) out.push('', `only in A: ${r.onlyInA.join('; ')}`);
  if (r.onlyInB.length) out.push('', `only in B: ${r.onlyInB.join('; ')}`);
  if (r.failOnRegressionPct !== null) {
    out.push('', r.regressions > 0 ? `${r.regressions} significant regression(s) of at least ${r.failOnRegressionPct}%` : `no significant regression of at least ${r.failOnRegressionPct}%`);
  }
  return out.join('\n') + '\n';
}

// Run-to-run comparison: B (the candidate) against A (the baseline), matched by canonical test id
// and by the axes both sides share. Pure; the CLI loads the two sides and decides the exit code.
import type { ResultRecord } from '../results/record.ts';
import type { AxisValue, Axes } from '../contract/axis.ts';
import { formatDelta, formatMetric, METRICS, primaryMetricOf, type MetricKey, type RunInfo } from './model.ts';
import { compareSamples, DEFAULT_VERDICT_OPTIONS, formatP, type Comparison, type VerdictOptions } from './stats.ts';

export interface CompareSide {
  label: string;
  records: readonly ResultRecord[];
  info: RunInfo;
}

export interface CompareOptions {
  /** a significant slowdown of at least this many % is a regression (also the verdict's min effect) */
  failOnRegressionPct?: number;
  verdict?: Partial<VerdictOptions>;
}

export interface CompareRow {
  testId: string;
  /** the matched axes (shared by both sides) */
  axes: Axes;
  metric: MetricKey;
  comparison: Comparison;
  regression: boolean;
  /** permutations pooled on each side into this row */
  pooled: { a: number; b: number };
}

export interface CompareResult {
  a: { label: string; runId: string; records: number };
  b: { label: string; runId: string; records: number };
  options: VerdictOptions;
  failOnRegressionPct: number | null;
  matchedAxes: string[];
  rows: CompareRow[];
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

export function compareRuns(a: CompareSide, b: CompareSide, options: CompareOptions = {}): CompareResult {
  const o: VerdictOptions = {
    ...DEFAULT_VERDICT_OPTIONS,
    ...options.verdict,
    ...(options.failOnRegressionPct !== undefined ? { minEffectPct: options.failOnRegressionPct } : {}),
  };
  const va = axisValues(a.records);
  const vb = axisValues(b.records);
  const warnings: string[] = [];
  // Axes on both sides whose values overlap identify a configuration; axes with disjoint values
  // (e.g. `source` = the file name of two imports) identify the side, so matching ignores them.
  const matchedAxes: string[] = [];
  for (const [k, sa] of va) {
    const sb = vb.get(k);
    if (!sb) continue;
    if ([...sa].some((x) => sb.has(x))) matchedAxes.push(k);
    else if (k !== 'source') warnings.push(`axis ${k} has no common value (A: ${[...sa].join(', ')}; B: ${[...sb].join(', ')}); compared across it`);
  }
  matchedAxes.sort();

  const keyOf = (r: ResultRecord): string => JSON.stringify([r.test.id, ...matchedAxes.map((k) => (k in r.axes ? String(r.axes[k]) : null))]);
  const group = (records: readonly ResultRecord[]): Map<string, ResultRecord[]> => {
    const m = new Map<string, ResultRecord[]>();
    for (const r of records) {
      const k = keyOf(r);
      let l = m.get(k);
      if (!l) m.set(k, (l = []));
      l.push(r);
    }
    return m;
  };
  const ga = group(a.records);
  const gb = group(b.records);
  const describe = (recs: readonly ResultRecord[]): string => {
    const r = recs[0]!;
    const ax = matchedAxes.filter((k) => k in r.axes).map((k) => `${k}=${String(r.axes[k])}`);
    return ax.length ? `${r.test.id} (${ax.join(', ')})` : r.test.id;
  };

  const rows: CompareRow[] = [];
  for (const [key, recsB] of gb) {
    const recsA = ga.get(key);
    if (!recsA) continue;
    const test = recsB[0]!.test;
    const primary = primaryMetricOf(test, [...recsA, ...recsB]);
    const metrics: MetricKey[] = [primary];
    const both = (m: MetricKey): boolean => recsA.some((r) => METRICS[m].get(r) !== null) && recsB.some((r) => METRICS[m].get(r) !== null);
    if (both('latencyMeanUs')) metrics.push('latencyMeanUs');
    const axes: Axes = {};
    for (const k of matchedAxes) {
      const v: AxisValue | undefined = recsB[0]!.axes[k];
      if (v !== undefined) axes[k] = v;
    }
    const pooled = { a: new Set(recsA.map((r) => r.permutationId)).size, b: new Set(recsB.map((r) => r.permutationId)).size };
    for (const m of metrics) {
      if (!both(m)) continue;
      const vals = (rs: readonly ResultRecord[]): number[] => rs.map((r) => METRICS[m].get(r)).filter((v): v is number => v !== null && Number.isFinite(v));
      const comparison = compareSamples(vals(recsB), vals(recsA), METRICS[m].higherIsBetter, o);
      const regression = options.failOnRegressionPct !== undefined && comparison.verdict === 'slower';
      rows.push({ testId: test.id, axes, metric: m, comparison, regression, pooled });
    }
  }
  const onlyInA = [...ga].filter(([k]) => !gb.has(k)).map(([, r]) => describe(r));
  const onlyInB = [...gb].filter(([k]) => !ga.has(k)).map(([, r]) => describe(r));
  const pooledRows = rows.filter((r) => r.pooled.a > 1 || r.pooled.b > 1);
  if (pooledRows.length > 0) {
    warnings.push(`${new Set(pooledRows.map((r) => r.testId)).size} test(s) pool several permutations of one side into one sample; pass runs with matching axes to compare them one by one`);
  }
  if (rows.length > 0 && rows.every((r) => r.comparison.verdict === 'insufficient-data')) {
    warnings.push('every comparison has fewer than 2 repetitions on a side: deltas are shown, but no difference can be called significant');
  }
  const axisNames = new Set([...va.keys(), ...vb.keys()]);
  return {
    a: { label: a.label, runId: a.info.runId, records: a.records.length },
    b: { label: b.label, runId: b.info.runId, records: b.records.length },
    options: o,
    failOnRegressionPct: options.failOnRegressionPct ?? null,
    matchedAxes,
    rows,
    onlyInA,
    onlyInB,
    fingerprintWarnings: fingerprintDifferences(a.info, b.info, axisNames),
    warnings,
    regressions: rows.filter((r) => r.regression).length,
  };
}

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => rows.reduce((w, r) => Math.max(w, [...(r[i] ?? '')].length), 0));
  return rows.map((r) => r.map((c, i) => c + ' '.repeat(widths[i]! - [...c].length)).join('  ').trimEnd()).join('\n');
}

/** Terminal output: one line per matched test and metric, then warnings and the regression count. */
export function renderCompareText(r: CompareResult): string {
  const out: string[] = [
    `B: ${r.b.label} (${r.b.runId}, ${r.b.records} records) compared with A: ${r.a.label} (${r.a.runId}, ${r.a.records} records)`,
    `matched by test id${r.matchedAxes.length ? ` and ${r.matchedAxes.join(', ')}` : ''}: ${new Set(r.rows.map((x) => JSON.stringify([x.testId, x.axes]))).size} matched, ${r.onlyInA.length} only in A, ${r.onlyInB.length} only in B`,
  ];
  for (const w of [...r.fingerprintWarnings, ...r.warnings]) out.push(`warning: ${w}`);
  if (r.rows.length > 0) {
    const table = [['test', 'axes', 'metric', 'A mean', 'B mean', 'Δ% [95% CI]', 'p (Welch)', 'verdict']];
    for (const row of r.rows) {
      const c = row.comparison;
      const axes = Object.entries(row.axes).map(([k, v]) => `${k}=${String(v)}`).join(', ') || '–';
      table.push([
        row.testId,
        axes,
        METRICS[row.metric].label,
        c.baseline.mean === null ? '–' : formatMetric(row.metric, c.baseline.mean),
        c.candidate.mean === null ? '–' : formatMetric(row.metric, c.candidate.mean),
        formatDelta(c),
        c.welch ? formatP(c.welch.p) : '–',
        `${c.verdict.replace('-', ' ')}${row.regression ? ' REGRESSION' : ''}`,
      ]);
    }
    out.push('', pad(table));
  }
  if (r.onlyInA.length) out.push('', `only in A: ${r.onlyInA.join('; ')}`);
  if (r.onlyInB.length) out.push('', `only in B: ${r.onlyInB.join('; ')}`);
  if (r.failOnRegressionPct !== null) {
    out.push('', r.regressions > 0 ? `${r.regressions} significant regression(s) of at least ${r.failOnRegressionPct}%` : `no significant regression of at least ${r.failOnRegressionPct}%`);
  }
  return out.join('\n') + '\n';
}

// What every renderer says the same way (Markdown, HTML, summary CSV): verdict words, a test in
// words and by its reference tool's label, the note on a capped section, the metrics a comparison
// shows, the overview grid and the one-line answer per axis value. Renderers import this, never
// each other.
import { blockSizeLabel, type TestIdentity } from '../results/record.ts';
import { halfWidthPctOf } from '../results/stability.ts';
import type { AxisValue } from '../contract/axis.ts';
import { METRICS, SOURCE_AXIS, type ComparisonRow, type MetricKey, type PermutationInfo, type Report, type TestRow, type TestSection } from './model.ts';
import { formatDelta, formatPct, formatValue, TOO_NOISY, deltaTooNoisy } from './numbers.ts';
import { CORRECTION_NAMES, formatP, type Comparison, type Verdict } from './stats.ts';
import { FIRST_WRITE_DESCRIPTION, FIRST_WRITE_LABEL, isFirstWrite } from './first-write.ts';

export const VERDICT_TEXT: Record<Verdict, string> = {
  faster: 'faster',
  slower: 'slower',
  'within-noise': 'within noise',
  'insufficient-data': 'insufficient data',
};

function direction(t: TestIdentity): string {
  return t.readPercent >= 100 ? 'read' : t.readPercent <= 0 ? 'write' : `mix ${t.readPercent}% read`;
}

/**
 * The label CrystalDiskMark 7/8 gives the test (`SEQ1M Q8T1`, `SEQ128K Q32T1`, `RND4K Q32T16`: its
 * main window and its text export, `SEQ    1MiB (Q=  8, T= 1)`, test/fixtures/cdm/cdm8-*.txt),
 * then the direction (`read`, `write`, `mix 70% read` as in its `[Mix] Read 70%/Write 30%`). A
 * partly random test has no CrystalDiskMark label: its IOMeter access specification is its label.
 */
export function referenceLabel(t: TestIdentity): string {
  if (isFirstWrite(t)) return FIRST_WRITE_LABEL;
  if (t.randomPercent !== undefined && t.randomPercent > 0 && t.randomPercent < 100) return iometerText(t);
  const kind = t.pattern === 'read' || t.pattern === 'write' || t.pattern === 'rw' ? 'SEQ' : 'RND';
  return `${kind}${blockSizeLabel(t.blockSizeBytes).toUpperCase()} Q${t.queueDepth}T${t.threads} ${direction(t)}${halfWords(t)}`;
}

/** ` — its reads` for the read half of a mixed job (results/mix-halves.ts), beside the job's total. */
function halfWords(t: TestIdentity): string {
  return t.half ? ` — its ${t.half}s` : '';
}

/**
 * The test as an IOMeter access specification in storsweep's grammar (`workload.profile: "4k 70%
 * read 100% random q32 t4"`, src/workloads/iometer-spec.ts), which reads back as the same test.
 */
export function iometerText(t: TestIdentity): string {
  const random = t.randomPercent ?? (t.pattern === 'randread' || t.pattern === 'randwrite' || t.pattern === 'randrw' ? 100 : 0);
  return `${blockSizeLabel(t.blockSizeBytes)} ${t.readPercent}% read ${random}% random q${t.queueDepth} t${t.threads}`;
}

export function describeTest(t: TestIdentity): string {
  if (isFirstWrite(t)) return FIRST_WRITE_DESCRIPTION;
  const random = t.randomPercent !== undefined && t.randomPercent > 0 && t.randomPercent < 100 ? `${t.randomPercent}% random` : t.id.startsWith('rnd-') ? 'random' : 'sequential';
  const block = blockSizeLabel(t.blockSizeBytes);
  const half = t.half ? `the ${t.half}s of a ` : '';
  return `${half}${random} ${direction(t)}, ${block} blocks, queue depth ${t.queueDepth}, ${t.threads} thread${t.threads === 1 ? '' : 's'}; IOMeter spec "${iometerText(t)}"${t.half ? ', measured in that job' : ''}`;
}

/** `8 tests`, or `8 tests + the first write (pre-fill)` when the records name a fill (first-write.ts). */
export function testCount(report: Report): string {
  const n = report.tests.filter((s) => !isFirstWrite(s.test)).length;
  return `${n} test${n === 1 ? '' : 's'}${n < report.tests.length ? ` + the ${FIRST_WRITE_LABEL}` : ''}`;
}

/** The sentence a capped section opens with (see TestSection.truncated); null when nothing was cut. */
export function truncationNote(s: TestSection): string | null {
  const t = s.truncated;
  if (!t) return null;
  const which =
    t.by === 'largest-delta'
      ? `the ${t.shown} with the largest |Δ| in ${METRICS[s.primaryMetric].label} against a baseline`
      : `the first ${t.shown} in run order`;
  return `Showing ${t.shown} of ${t.total.toLocaleString('en-US')} permutations (${which}); the verdict counts cover all of them, and the CSV (\`storsweep report --format csv\`) has every record.`;
}

/** Metrics a comparison table shows: the one the test is judged by, plus mean latency when known. */
export function comparedMetrics(section: TestSection): MetricKey[] {
  const ms: MetricKey[] = [section.primaryMetric];
  if (section.metrics.includes('latencyMeanUs')) ms.push('latencyMeanUs');
  return ms;
}

/**
 * Axis names as a reader says them: the last segment (`blockSizeMb` for `datastore.blockSizeMb`)
 * unless two axes share it, then the whole path.
 */
export function shortAxisNames(names: readonly string[]): Map<string, string> {
  const short = names.map((a) => a.slice(a.lastIndexOf('.') + 1));
  const count = new Map<string, number>();
  for (const s of short) count.set(s, (count.get(s) ?? 0) + 1);
  return new Map(names.map((a, i) => [a, count.get(short[i]!)! > 1 ? a : short[i]!]));
}

// ───────────────────────── the overview grid ─────────────────────────

/** Most permutations the overview grid lists (each is a column or a row); the tables below list the rest. */
export const OVERVIEW_LIMIT = 40;

export interface OverviewDelta {
  /** e.g. `format=thin` */
  against: string;
  comparison: Comparison;
}

export interface OverviewCell {
  /** `828.0 [789.6]`: MB/s [IOPS] as CrystalDiskMark prints them; IOPS alone when no MB/s */
  text: string;
  /** the significant verdict the cell is coloured by (the largest |Δ| among its comparisons), if any */
  shown: { verdict: 'faster' | 'slower'; pct: number; text: string } | null;
  /** every comparison of the cell's main metric, in words, for a tooltip */
  notes: string[];
}

export interface Overview {
  tests: Array<{ id: string; label: string }>;
  permutations: Array<{ id: string; label: string; baseline: boolean }>;
  /** cells[test][permutation]; null where the test did not run in that permutation */
  cells: Array<Array<OverviewCell | null>>;
  /** permutations left out of the grid (beyond OVERVIEW_LIMIT) */
  omitted: number;
  /** true when permutations are the rows (more of them than tests) */
  transposed: boolean;
}

function cellText(row: TestRow): string {
  const mb = row.cells.bytesPerSecond?.summary.mean ?? null;
  const iops = row.cells.iops?.summary.mean ?? null;
  if (mb === null) return iops === null ? '–' : `[${formatValue('iops', iops)}]`;
  return iops === null ? formatValue('bytesPerSecond', mb) : `${formatValue('bytesPerSecond', mb)} [${formatValue('iops', iops)}]`;
}

/** Tests × permutations, each cell MB/s [IOPS], with the verdicts of the test's main metric. */
export function buildOverview(report: Report): Overview {
  const listed = new Set<string>();
  for (const s of report.tests) for (const r of s.rows) listed.add(r.permutationId);
  // Ordered by the varying axes, `source` last: a published value stands beside the measured one
  // of the same configuration (blockSizeMb=1 run, blockSizeMb=1 import, blockSizeMb=2 run, …).
  const varying = report.axes.filter((a) => a.varies).sort((a, b) => Number(a.name === SOURCE_AXIS) - Number(b.name === SOURCE_AXIS));
  const rank = varying.map((a) => new Map(a.values.map((v, i) => [String(v), i])));
  const key = (p: PermutationInfo): number[] => varying.map((a, i) => (a.name in p.axes ? (rank[i]!.get(String(p.axes[a.name])) ?? -1) : -1));
  const all = report.permutations
    .filter((p) => listed.has(p.permutationId))
    .map((p, i) => ({ p, i, k: key(p) }))
    .sort((x, y) => {
      for (let j = 0; j < x.k.length; j++) if (x.k[j] !== y.k[j]) return x.k[j]! - y.k[j]!;
      return x.i - y.i;
    })
    .map((x) => x.p);
  const perms = all.slice(0, OVERVIEW_LIMIT);
  const baselineIds = new Set<string>();
  for (const s of report.tests) for (const c of s.comparisons) for (const r of c.rows) baselineIds.add(r.baselinePermutationId);
  const compared = new Set<string>();
  for (const s of report.tests) for (const c of s.comparisons) for (const r of c.rows) compared.add(r.permutationId);
  const cells = report.tests.map((s) => {
    const rowOf = new Map(s.rows.map((r) => [r.permutationId, r]));
    const deltas = new Map<string, OverviewDelta[]>();
    for (const c of s.comparisons) {
      for (const r of c.rows) {
        if (r.metric !== s.primaryMetric) continue;
        let list = deltas.get(r.permutationId);
        if (!list) deltas.set(r.permutationId, (list = []));
        list.push({ against: `${c.axis}=${String(c.baselineValue)}`, comparison: r.comparison });
      }
    }
    return perms.map((p): OverviewCell | null => {
      const row = rowOf.get(p.permutationId);
      if (!row) return null;
      let shown: OverviewCell['shown'] = null;
      const notes: string[] = [];
      for (const d of deltas.get(p.permutationId) ?? []) {
        const v = d.comparison.verdict;
        notes.push(`vs ${d.against}: ${METRICS[s.primaryMetric].label} ${formatDelta(d.comparison)}, ${VERDICT_TEXT[v]}`);
        if ((v === 'faster' || v === 'slower') && d.comparison.delta && (!shown || Math.abs(d.comparison.delta.pct) > Math.abs(shown.pct))) {
          shown = { verdict: v, pct: d.comparison.delta.pct, text: formatPct(d.comparison.delta.pct) };
        }
      }
      return { text: cellText(row), shown, notes };
    });
  });
  return {
    tests: report.tests.map((s) => ({ id: s.test.id, label: referenceLabel(s.test) })),
    permutations: perms.map((p) => ({ id: p.permutationId, label: p.label, baseline: baselineIds.has(p.permutationId) && !compared.has(p.permutationId) })),
    cells,
    omitted: all.length - perms.length,
    transposed: perms.length > Math.max(8, report.tests.length),
  };
}

/** The sentence under the grid saying what a cell holds and what its colour means. */
export function overviewLegend(report: Report, o: Overview): string {
  const bases: string[] = [];
  for (const s of report.tests) for (const c of s.comparisons) if (!bases.includes(`${c.axis}=${String(c.baselineValue)}`)) bases.push(`${c.axis}=${String(c.baselineValue)}`);
  const against = bases.length === 1 ? ` from the permutation with ${bases[0]}, all else equal,` : bases.length > 1 ? ` from the permutation with one axis at its baseline value (${bases.join('; ')}), all else equal,` : '';
  const cut = o.omitted > 0 ? ` The first ${o.permutations.length} of ${o.permutations.length + o.omitted} permutations; the tables below and the CSV have the rest.` : '';
  return `Each cell: MB/s [IOPS], the mean of ${repetitionWords(report)}. ▲/▼ and colour: the test's main metric (MB/s for sequential, IOPS for random tests) differs${against} beyond noise (${report.summary.family.correction === 'none' ? 'p' : `${CORRECTION_NAMES[report.summary.family.correction]}-adjusted p`} < ${report.options.alpha} and |Δ| ≥ ${report.options.minEffectPct}%); no colour: within noise or too few repetitions to tell.${cut}`;
}

/**
 * The method line every renderer prints: intervals, tests, the family and its correction, the
 * replication unit the intervals describe.
 */
export function methodLine(report: Report): string {
  const o = report.options;
  const f = report.summary.family;
  const corrected = f.correction === 'none' ? 'each comparison on its own (no correction for many comparisons)' : `p adjusted by ${CORRECTION_NAMES[f.correction]} over the family of ${f.size.toLocaleString('en-US')} comparison${f.size === 1 ? '' : 's'} (every test × permutation × metric compared)`;
  return `Method: mean ± ${Math.round(o.level * 100)}% CI (t distribution); Δ% CI by Fieller; Welch's t-test, ${corrected}; verdict when the adjusted p < ${o.alpha} and |Δ| ≥ ${o.minEffectPct}% and Δ's interval is bounded and narrower than the value (else "too noisy to tell"); Mann–Whitney shown only where its sample sizes can reach p < ${o.alpha}; CV flagged above ${o.cvThresholdPct}%`;
}

/** What the repetitions are samples of: the replication unit the intervals describe. */
export function replicationLine(report: Report): string {
  const unit = report.info.replication;
  const rounds = report.info.rounds;
  const order = rounds ? `; in rounds (repetition k of every permutation before any k+1), each round in a random order from seed ${rounds.seed}` : '';
  if (unit === 'between-provisionings') return `Replication unit: the provisioning (each repetition on freshly provisioned objects): intervals include between-provisioning variance${order}`;
  if (unit === 'mixed') return 'Replication unit: mixed (some sources repeat within one provisioning, some across provisionings): read each interval with its source';
  if (unit === 'unknown') return 'Replication unit: not stated by the sources (imported results): intervals describe what was repeated, which may be one provisioning';
  return 'Replication unit: the run within one provisioning (repetitions back to back on the same datastore and disk): intervals describe run-to-run noise only, not between-provisioning variance';
}

/** How many labels a line lists before it says how many more there are. */
const LISTED = 10;

/**
 * Repeat until stable (the run's repeat.until): which permutations reached the asked interval
 * and which did not, by the same rule the run stopped on (results/stability.ts); null otherwise.
 */
export function repeatUntilLine(report: Report): string | null {
  const u = report.info.repeatUntil;
  if (!u) return null;
  // per permutation: the widest main-metric interval over its tests, and its repetitions
  const perms = new Map<string, { label: string; n: number; pct: number | null }>();
  for (const s of report.tests) {
    // the run's stopping rule judged the measured tests only, not the first write (one sample per fill)
    if (isFirstWrite(s.test)) continue;
    for (const r of s.rows) {
      const c = r.cells[s.primaryMetric]?.summary;
      if (!c) continue;
      const pct = halfWidthPctOf(c.n, c.mean, c.stddev);
      const p = perms.get(r.permutationId) ?? { label: r.label, n: 0, pct: 0 };
      p.n = Math.max(p.n, c.n);
      p.pct = pct === null || p.pct === null ? null : Math.max(p.pct, pct);
      perms.set(r.permutationId, p);
    }
  }
  const all = [...perms.values()];
  const reached = all.filter((p) => p.pct !== null && p.pct <= u.ciPct);
  const not = all.filter((p) => !reached.includes(p));
  const list = (ps: typeof all) => ps.slice(0, LISTED).map((p) => `${p.label} (n = ${p.n}, ±${p.pct === null ? '?' : p.pct.toFixed(1)} %)`).join('; ') + (ps.length > LISTED ? `; and ${ps.length - LISTED} more` : '');
  const head = `Repeat until stable: until the main metric's 95 % interval is within ±${u.ciPct} % of its mean, ${u.min}–${u.max} repetitions`;
  const yes = reached.length ? `reached by ${reached.length} of ${all.length}: ${list(reached)}` : `reached by none of ${all.length}`;
  return `${head}; ${yes}${not.length ? `; not reached: ${list(not)}` : ''}`;
}

/** Welch's p as a table shows it: the raw p, and the adjusted one when the family changed it. */
export function welchCell(c: Comparison): string {
  if (!c.welch) return '–';
  const raw = formatP(c.welch.p);
  return c.pAdjusted !== null && formatP(c.pAdjusted) !== raw ? `${raw} (adj. ${formatP(c.pAdjusted)})` : raw;
}

/** Mann–Whitney's p, or why it is not shown: its sample sizes cannot reach the threshold. */
export function rankCell(c: Comparison): string {
  if (c.mannWhitney) return formatP(c.mannWhitney.p);
  return c.rankFloor !== null ? `n/a (n too small: p ≥ ${formatP(c.rankFloor)})` : '–';
}

function repetitionWords(report: Report): string {
  let lo = Infinity;
  let hi = 0;
  for (const s of report.tests) {
    for (const r of s.rows) {
      const n = r.cells[s.primaryMetric]?.summary.n ?? 0;
      lo = Math.min(lo, n);
      hi = Math.max(hi, n);
    }
  }
  if (hi === 0) return 'no repetitions';
  return lo === hi ? `${hi} repetition${hi === 1 ? '' : 's'}` : `${lo}–${hi} repetitions`;
}

// ───────────────────────── one answer per axis value ─────────────────────────

type FindingRow = { s: TestSection; r: ComparisonRow };

/**
 * Published numbers compared one sample against one (an imported paper's 2 MB vs 1 MB): no test
 * can judge them, but they are the paper's own answer, so they are said as what they are, per
 * context (`where`), largest |Δ| first: `; published (source=paper.txt): SEQ1M Q1T1 read MB/s
 * -2.0%, …, one sample each side, no test possible`. `text` is empty when there are none.
 */
function publishedDifferences(rows: readonly FindingRow[], perms: ReadonlyMap<string, PermutationInfo>, where: (r: ComparisonRow) => string): { text: string; count: number } {
  const single = rows.filter(
    ({ r }) => r.comparison.delta !== null && r.comparison.baseline.n === 1 && r.comparison.candidate.n === 1 && perms.get(r.permutationId)?.imported === true && perms.get(r.baselinePermutationId)?.imported === true,
  );
  const byWhere = new Map<string, FindingRow[]>();
  for (const x of single) {
    const k = where(x.r);
    let list = byWhere.get(k);
    if (!list) byWhere.set(k, (list = []));
    list.push(x);
  }
  const parts = [...byWhere].map(([at, list]) => {
    list.sort((a, b) => Math.abs(b.r.comparison.delta!.pct) - Math.abs(a.r.comparison.delta!.pct));
    const items = list.slice(0, LISTED_FINDINGS).map(({ s, r }) => `${referenceLabel(s.test)} ${METRICS[s.primaryMetric].label} ${formatPct(r.comparison.delta!.pct)}`);
    const more = list.length > LISTED_FINDINGS ? `, and ${list.length - LISTED_FINDINGS} more` : '';
    return `published${at}: ${items.join(', ')}${more}, one sample each side, no test possible`;
  });
  return { text: parts.map((p) => `; ${p}`).join(''), count: single.length };
}

export interface Finding {
  axis: string;
  value: AxisValue;
  baselineValue: AxisValue;
  /** the whole line, e.g. `blockSizeMb 8 vs 1: no test differs beyond noise (24/24)` */
  text: string;
  /** the faster/slower verdicts, largest |Δ| first */
  significant: number;
  total: number;
}

const LISTED_FINDINGS = 4;

/**
 * One line per compared axis value: which tests' main metric differs from the baseline value
 * beyond noise, with Δ and its interval, or that none does (and out of how many comparisons), or
 * that the data cannot tell (fewer than 2 repetitions on a side).
 */
export function axisFindings(report: Report): Finding[] {
  return findingsOf(report);
}

/**
 * Along `target` (or any axis), the axes one side's permutations have and the other's lack: a bare
 * disk over SSH has no datastore or disk format. ` (lab-guest has no datastore.kind, disk.format)`.
 */
export function lackingNote(names: ReadonlyMap<string, ReadonlySet<string>>, value: AxisValue, baselineValue: AxisValue): string {
  const mine = names.get(String(value)) ?? new Set<string>();
  const theirs = names.get(String(baselineValue)) ?? new Set<string>();
  const parts: string[] = [];
  const baseLacks = [...mine].filter((k) => !theirs.has(k));
  const valueLacks = [...theirs].filter((k) => !mine.has(k));
  if (baseLacks.length) parts.push(`${String(baselineValue)} has no ${baseLacks.join(', ')}`);
  if (valueLacks.length) parts.push(`${String(value)} has no ${valueLacks.join(', ')}`);
  return parts.length ? ` (${parts.join('; ')})` : '';
}

/** Per value of `axis`: the axis names its permutations have (one pass over the permutations). */
export function axisNamesByValue(report: Pick<Report, 'permutations'>, axis: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const p of report.permutations) {
    const v = p.axes[axis];
    if (v === undefined) continue;
    let s = out.get(String(v));
    if (!s) out.set(String(v), (s = new Set()));
    for (const k in p.axes) s.add(k);
  }
  return out;
}

function findingsOf(report: Report): Finding[] {
  const axisNames = report.axes.map((a) => a.name);
  const short = shortAxisNames(axisNames);
  const varying = report.axes.filter((a) => a.varies).map((a) => a.name);
  // every compared axis, also one whose permutations all lack a partner: its line says why
  const compared: Array<{ axis: string; baselineValue: AxisValue }> = report.baselines.map((b) => ({ axis: b.axis, baselineValue: b.value }));
  for (const s of report.tests) {
    for (const c of s.comparisons) if (!compared.some((x) => x.axis === c.axis)) compared.push({ axis: c.axis, baselineValue: c.baselineValue });
  }
  const permById = new Map(report.permutations.map((p) => [p.permutationId, p]));
  const out: Finding[] = [];
  for (const { axis, baselineValue } of compared) {
    const info = report.axes.find((a) => a.name === axis);
    const values = (info?.values ?? []).filter((v) => String(v) !== String(baselineValue));
    const others = varying.filter((a) => a !== axis);
    const namesByValue = axisNamesByValue(report, axis);
    // The primary metric's rows of this axis by value, in one pass (in report order): an axis with
    // 625 values no longer walks every row 625 times.
    const rowsByValue = new Map<string, Array<{ s: TestSection; r: ComparisonRow }>>();
    for (const s of report.tests) {
      for (const c of s.comparisons) {
        if (c.axis !== axis) continue;
        for (const r of c.rows) {
          if (r.metric !== s.primaryMetric) continue;
          const k = String(r.value);
          let list = rowsByValue.get(k);
          if (!list) rowsByValue.set(k, (list = []));
          list.push({ s, r });
        }
      }
    }
    for (const value of values) {
      const rows = rowsByValue.get(String(value)) ?? [];
      const name = short.get(axis) ?? axis;
      const head = `${name} ${String(value)} vs ${String(baselineValue)}${lackingNote(namesByValue, value, baselineValue)}`;
      const where = (r: ComparisonRow): string => {
        const perm = permById.get(r.permutationId);
        const ctx = perm ? others.filter((a) => a in perm.axes).map((a) => `${short.get(a) ?? a}=${String(perm.axes[a])}`) : [];
        return ctx.length > 0 ? ` (${ctx.join(', ')})` : '';
      };
      const sig = rows.filter(({ r }) => r.comparison.verdict === 'faster' || r.comparison.verdict === 'slower');
      const within = rows.filter(({ r }) => r.comparison.verdict === 'within-noise').length;
      const published = publishedDifferences(rows, permById, where);
      // the published single samples are said on their own, after
      const few = rows.length - sig.length - within - published.count;
      let text: string;
      if (rows.length === 0) {
        const why = report.unpaired.find((u) => u.axis === axis && String(u.value) === String(value))?.why;
        text = `${head}: nothing to compare (${why ?? 'no permutation differs from a baseline one in this axis only'})`;
      } else if (sig.length > 0) {
        sig.sort((a, b) => Math.abs(b.r.comparison.delta?.pct ?? 0) - Math.abs(a.r.comparison.delta?.pct ?? 0));
        const items = sig.slice(0, LISTED_FINDINGS).map(({ s, r }) => `${referenceLabel(s.test)}${where(r)} ${METRICS[s.primaryMetric].label} ${formatDelta(r.comparison)}`);
        const more = sig.length > LISTED_FINDINGS ? `, and ${sig.length - LISTED_FINDINGS} more` : '';
        text = `${head}: ${items.join('; ')}${more} (${sig.length} of ${rows.length - published.count} beyond noise)${published.text}`;
      } else if (within > 0) {
        text = `${head}: no test differs beyond noise (${within}/${rows.length - published.count}${few > 0 ? `; the other ${few} have fewer than 2 repetitions on a side` : ''})${published.text}`;
      } else if (published.count === rows.length) {
        // only published numbers, one each side: their differences are the paper's answer
        text = `${head}${published.text.replace(/^; /, ': ')}`;
      } else {
        // n = 1 on a side (an import, a single repetition): the Δ is shown, but it cannot be judged.
        const largest = [...rows].sort((a, b) => Math.abs(b.r.comparison.delta?.pct ?? 0) - Math.abs(a.r.comparison.delta?.pct ?? 0))[0];
        const big = largest?.r.comparison.delta ? `; largest Δ: ${referenceLabel(largest.s.test)}${where(largest.r)} ${METRICS[largest.s.primaryMetric].label} ${deltaTooNoisy(largest.r.comparison) ? TOO_NOISY : formatPct(largest.r.comparison.delta.pct)}` : '';
        text = `${head}: cannot tell — ${rows.length === 1 ? 'the comparison has' : `all ${rows.length} comparisons have`} fewer than 2 repetitions on a side${big}`;
      }
      out.push({ axis, value, baselineValue, text, significant: sig.length, total: rows.length });
    }
  }
  return out;
}

/**
 * Which permutations lack an axis, said beside it in the axes line: a bare disk beside a VM has no
 * disk size, and is not shown with one (` (lab-guest: none)`); '' when every permutation has it.
 */
export function axisScope(report: Pick<Report, 'permutations'>, axis: string): string {
  const lacking = report.permutations.filter((p) => !(axis in p.axes));
  if (!lacking.length) return '';
  for (const by of ['target', SOURCE_AXIS]) {
    const vals = new Set(lacking.flatMap((p) => (p.axes[by] === undefined ? [] : [String(p.axes[by])])));
    if (vals.size && report.permutations.every((p) => !vals.has(String(p.axes[by])) || !(axis in p.axes))) return ` (${[...vals].join(', ')}: none)`;
  }
  return ` (${lacking.length} permutation${lacking.length === 1 ? '' : 's'}: none)`;
}

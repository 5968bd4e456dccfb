// Markdown report: ready to paste into a wiki page or a pull request. Answer first: the axes varied,
// the overview grid (the first table), one line per axis value; then the run's facts, the tables
// per test, and the noisy cells collapsed at the end.
import { LATENCY_SPAN, VM_COUNT_AXIS } from '../results/record.ts';
import { hostLatencyLegend, hostLatencyTable } from './host-latency.ts';
import { METRICS, type PermutationInfo, type Report, type TestSection } from './model.ts';
import { MARKDOWN_MARKER } from './marker.ts';
import { formatDelta, formatMeanCi, metricHeader } from './numbers.ts';
import type { Verdict } from './stats.ts';
import { curveTitle, memberNote, scalingAnswer, scalingHeader, scalingHostLegend, scalingIntro, scalingRows } from './vm-scaling-text.ts';
import {
  axisFindings,
  axisScope,
  buildOverview,
  comparedMetrics,
  describeTest,
  testCount,
  overviewLegend,
  referenceLabel,
  shortAxisNames,
  methodLine,
  rankCell,
  repeatUntilLine,
  replicationLine,
  truncationNote,
  VERDICT_TEXT,
  welchCell,
} from './wording.ts';

/** Table cells hold untrusted names: keep them on one line, and stop `|` and HTML from breaking out. */
export function mdCell(s: string): string {
  return s
    .replace(/\r?\n|\r/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_[\]|])/g, '\\$1');
}

const VERDICT_MARK: Record<Verdict, string> = { faster: '▲ ', slower: '▼ ', 'within-noise': '', 'insufficient-data': '' };

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function renderSection(report: Report, s: TestSection): string {
  const varying = report.axes.filter((a) => a.varies).map((a) => a.name);
  const out: string[] = [`### ${mdCell(s.test.id)} — ${mdCell(referenceLabel(s.test))}`, '', `${mdCell(describeTest(s.test))}. Means ± 95% CI half-width.`, ''];
  const cut = truncationNote(s);
  if (cut) out.push(`> ${cut}`, '');
  const cvMetric = s.primaryMetric;
  const header = [
    ...(varying.length > 0 ? varying.map(mdCell) : ['permutation']),
    'n',
    ...s.metrics.map(metricHeader),
    `CV (${METRICS[cvMetric].label})`,
  ];
  const rows = s.rows.map((r) => {
    const primary = r.cells[cvMetric];
    const cv = primary?.summary.cv;
    const cvText = cv === null || cv === undefined ? '–' : `${(cv * 100).toFixed(1)}%${primary?.noisy ? ` ⚠ noisy${primary.repetitionsNeeded ? `, need n≈${primary.repetitionsNeeded}` : ''}` : ''}`;
    return [
      ...(varying.length > 0 ? varying.map((a) => mdCell(r.axes[a] === undefined ? '–' : String(r.axes[a]))) : [mdCell(r.permutationId)]),
      String(r.cells[cvMetric]?.summary.n ?? 0),
      ...s.metrics.map((m) => formatMeanCi(r.cells[m])),
      cvText,
    ];
  });
  out.push(table(header, rows));
  for (const c of s.comparisons) {
    out.push('', `#### vs ${mdCell(c.axis)} = ${mdCell(String(c.baselineValue))}`, '');
    for (const w of c.conditionWarnings ?? []) out.push(`> ⚠ ${mdCell(w)}`, '');
    const metrics = comparedMetrics(s);
    const cmpRows = c.rows
      .filter((r) => metrics.includes(r.metric))
      .map((r) => [
        mdCell(r.label),
        METRICS[r.metric].label,
        formatDelta(r.comparison),
        welchCell(r.comparison),
        rankCell(r.comparison),
        `${VERDICT_MARK[r.comparison.verdict]}${VERDICT_TEXT[r.comparison.verdict]}`,
      ]);
    out.push(table(['permutation', 'metric', 'Δ% [95% CI]', 'p (Welch)', 'p (Mann–Whitney)', 'verdict'], cmpRows));
  }
  return out.join('\n');
}

/** The overview grid (tests × permutations, or transposed when permutations outnumber tests). */
function renderOverview(report: Report): string[] {
  const o = buildOverview(report);
  if (o.tests.length === 0 || o.permutations.length === 0) return [];
  const short = shortAxisNames(report.axes.map((a) => a.name));
  const varying = report.axes.filter((a) => a.varies).map((a) => a.name);
  const byId = new Map<string, PermutationInfo>(report.permutations.map((p) => [p.permutationId, p]));
  const permLabel = (id: string, baseline: boolean): string => {
    const p = byId.get(id);
    const parts = p ? varying.filter((a) => a in p.axes).map((a) => `${short.get(a) ?? a}=${String(p.axes[a])}`) : [];
    return `${mdCell(parts.length > 0 ? parts.join(', ') : id)}${baseline ? ' (baseline)' : ''}`;
  };
  const testLabel = (t: { id: string; label: string }): string => `${mdCell(t.label)}<br>${mdCell(t.id)}`;
  const cell = (ti: number, pi: number): string => {
    const c = o.cells[ti]?.[pi];
    if (!c) return '–';
    return c.shown ? `${c.text} ${c.shown.verdict === 'faster' ? '▲' : '▼'} ${c.shown.text}` : c.text;
  };
  const grid = o.transposed
    ? table(
        ['permutation', ...o.tests.map(testLabel)],
        o.permutations.map((p, pi) => [permLabel(p.id, p.baseline), ...o.tests.map((_, ti) => cell(ti, pi))]),
      )
    : table(
        ['test', ...o.permutations.map((p) => permLabel(p.id, p.baseline))],
        o.tests.map((t, ti) => [testLabel(t), ...o.permutations.map((_, pi) => cell(ti, pi))]),
      );
  const findings = axisFindings(report);
  return [grid, '', mdCell(overviewLegend(report, o)), ...(findings.length > 0 ? ['', ...findings.map((f) => `- ${mdCell(f.text)}`)] : [])];
}

/** How each source was measured: one column per source, one row per condition (report/conditions.ts). */
function conditionsTable(report: Report): string {
  const names = [...new Set(report.conditions.flatMap((c) => c.facts.map((f) => f.name)))];
  const value = (c: Report['conditions'][number], name: string) => c.facts.find((f) => f.name === name)?.value ?? '–';
  return table(['condition', ...report.conditions.map((c) => mdCell(c.source))], names.map((n) => [mdCell(n), ...report.conditions.map((c) => mdCell(value(c, n)))]));
}

function keyValueTable(facts: Record<string, string>): string {
  return table(['key', 'value'], Object.entries(facts).map(([k, val]) => [mdCell(k), mdCell(val)]));
}

/** The scaling with VM count (report/vm-scaling.ts): the answer per curve, the rule, then a table per curve. */
function scalingSection(report: Report): string[] {
  const v = report.vmScaling;
  if (!v || v.curves.length === 0) return [];
  const out = ['', '## Scaling with VM count', '', ...v.curves.map((c) => `- ${mdCell(scalingAnswer(c))}`), '', ...scalingIntro(v).map(mdCell)];
  for (const c of v.curves) out.push('', `### ${mdCell(curveTitle(c))}`, '', table(scalingHeader(c), scalingRows(c).map((row) => row.map(mdCell))));
  const legend = scalingHostLegend(v);
  if (legend.length > 0) out.push('', ...legend.map((l) => `- ${mdCell(l)}`));
  return out;
}

/** A study of VM count opens with its scaling answer; elsewhere the section follows the results. */
function opensWithScaling(report: Report): boolean {
  return report.vmScaling !== undefined && report.axes.some((a) => a.name === VM_COUNT_AXIS && a.varies);
}

export function renderMarkdown(report: Report): string {
  const { info, summary, options: o } = report;
  // The first line marks the file as ours: `report -o` rewrites it without --force (app/report-file.ts).
  const out: string[] = [MARKDOWN_MARKER, `# storsweep report — ${mdCell(info.runId)}`, ''];
  const varied = report.axes.filter((a) => a.varies);
  const fixed = report.axes.filter((a) => !a.varies);
  if (varied.length > 0) out.push(`- Axes varied: ${varied.map((a) => `${mdCell(a.name)} (${a.values.map((v) => mdCell(String(v))).join(', ')})${mdCell(axisScope(report, a.name))}`).join('; ')}`);
  else out.push('- Axes varied: none');
  if (fixed.length > 0) out.push(`- Fixed: ${fixed.map((a) => `${mdCell(a.name)} = ${mdCell(String(a.values[0]))}${mdCell(axisScope(report, a.name))}`).join('; ')}`);
  const scalingFirst = opensWithScaling(report);
  if (scalingFirst) out.push(...scalingSection(report));
  const overview = renderOverview(report);
  if (overview.length > 0) out.push('', '## Overview', '', ...overview);
  if (summary.warnings.length > 0) {
    out.push('', ...summary.warnings.map((w) => `> ⚠ ${mdCell(w)}`));
  }

  const facts: string[] = [];
  if (info.playbook) facts.push(`Playbook: \`${info.playbook.replace(/`/g, "'")}\``);
  if (info.startedAt) facts.push(`Started: ${mdCell(info.startedAt)}`);
  if (report.runIds.length > 1) facts.push(`Runs: ${report.runIds.map(mdCell).join(', ')}`);
  facts.push(`${report.recordCount} records${memberNote(report.vmScaling)}, ${report.permutations.length} permutations, ${testCount(report)}`);
  const v = summary.verdicts;
  facts.push(
    `Verdicts (each test's main metric against the baseline): ${v.faster} faster, ${v.slower} slower, ${v['within-noise']} within noise, ${v['insufficient-data']} insufficient data`,
    methodLine(report),
    replicationLine(report),
    ...[repeatUntilLine(report)].flatMap((l) => (l === null ? [] : [mdCell(l)])),
    `Numbers: 4 significant digits (MB/s = 10⁶ bytes/s, as CrystalDiskMark); latency ${LATENCY_SPAN}, in µs below 1 ms, else ms`,
  );
  out.push('', '## Run', '', ...facts.map((f) => `- ${f}`));
  if (report.conditions.length > 0) out.push('', '## Conditions', '', conditionsTable(report));
  if (info.environment && Object.keys(info.environment).length > 0) {
    out.push('', '**Environment (as the playbook states it)**', '', keyValueTable(info.environment));
  }
  if (info.fingerprint && Object.keys(info.fingerprint).length > 0) {
    out.push('', '**Measured fingerprint (as read from the hosts)**', '', keyValueTable(info.fingerprint));
  }
  out.push('', '## Results');
  for (const s of report.tests) out.push('', renderSection(report, s));
  if (!scalingFirst) out.push(...scalingSection(report));
  if (report.hostLatency.length > 0) {
    const t = hostLatencyTable(report.hostLatency);
    out.push('', '## Guest vs host latency', '', table(t.header, t.cells.map((row) => row.map(mdCell))), '', ...hostLatencyLegend(report.hostLatency).map((l) => `- ${mdCell(l)}`));
  }
  if (summary.noisy.length > 0) {
    const count = summary.noisyTotal ?? summary.noisy.length;
    out.push(
      '',
      '<details>',
      `<summary>Noisy cells (CV &gt; ${o.cvThresholdPct}%): ${count.toLocaleString('en-US')}</summary>`,
      '',
      ...(summary.noisyTotal !== undefined ? [`Showing the ${summary.noisy.length} noisiest of ${summary.noisyTotal.toLocaleString('en-US')} noisy cells.`, ''] : []),
      table(
        ['test', 'permutation', 'metric', 'CV', `repetitions for ±${o.minEffectPct}%`],
        summary.noisy.map((n) => [mdCell(n.testId), mdCell(n.label), METRICS[n.metric].label, `${n.cvPct.toFixed(1)}%`, n.repetitionsNeeded === null ? '> 10000' : String(n.repetitionsNeeded)]),
      ),
      '',
      '</details>',
    );
  }
  return out.join('\n') + '\n';
}

// Markdown report: ready to paste into a wiki page or a pull request.
import { LATENCY_SPAN } from '../results/record.ts';
import {
  formatDelta,
  formatMeanCi,
  METRICS,
  type Report,
  type TestSection,
} from './model.ts';
import { MARKDOWN_MARKER } from './marker.ts';
import { formatP, type Verdict } from './stats.ts';
import { comparedMetrics, describeTest, truncationNote, VERDICT_TEXT } from './wording.ts';

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
  const out: string[] = [`### ${mdCell(s.test.id)}`, '', `${describeTest(s.test)}. Means ± 95% CI half-width.`, ''];
  const cut = truncationNote(s);
  if (cut) out.push(`> ${cut}`, '');
  const cvMetric = s.primaryMetric;
  const header = [
    ...(varying.length > 0 ? varying.map(mdCell) : ['permutation']),
    'n',
    ...s.metrics.map((m) => `${METRICS[m].label}${METRICS[m].unit === METRICS[m].label ? '' : ` (${METRICS[m].unit})`}`),
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
    const metrics = comparedMetrics(s);
    const cmpRows = c.rows
      .filter((r) => metrics.includes(r.metric))
      .map((r) => [
        mdCell(r.label),
        METRICS[r.metric].label,
        formatDelta(r.comparison),
        r.comparison.welch ? formatP(r.comparison.welch.p) : '–',
        r.comparison.mannWhitney ? formatP(r.comparison.mannWhitney.p) : '–',
        `${VERDICT_MARK[r.comparison.verdict]}${VERDICT_TEXT[r.comparison.verdict]}`,
      ]);
    out.push(table(['permutation', 'metric', 'Δ% [95% CI]', 'p (Welch)', 'p (Mann–Whitney)', 'verdict'], cmpRows));
  }
  return out.join('\n');
}

export function renderMarkdown(report: Report): string {
  const { info, summary, options: o } = report;
  // The first line marks the file as ours: `report -o` rewrites it without --force (cli/report-file.ts).
  const out: string[] = [MARKDOWN_MARKER, `# storsweep report — ${mdCell(info.runId)}`, ''];
  const facts: string[] = [];
  if (info.playbook) facts.push(`Playbook: \`${info.playbook.replace(/`/g, "'")}\``);
  if (info.startedAt) facts.push(`Started: ${mdCell(info.startedAt)}`);
  if (report.runIds.length > 1) facts.push(`Runs: ${report.runIds.map(mdCell).join(', ')}`);
  facts.push(`${report.recordCount} records, ${report.permutations.length} permutations, ${report.tests.length} tests`);
  out.push(...facts.map((f) => `- ${f}`));
  const varied = report.axes.filter((a) => a.varies);
  const fixed = report.axes.filter((a) => !a.varies);
  if (varied.length > 0) out.push(`- Axes varied: ${varied.map((a) => `${mdCell(a.name)} (${a.values.map((v) => mdCell(String(v))).join(', ')})`).join('; ')}`);
  if (fixed.length > 0) out.push(`- Fixed: ${fixed.map((a) => `${mdCell(a.name)} = ${mdCell(String(a.values[0]))}`).join('; ')}`);
  const v = summary.verdicts;
  out.push(
    `- Verdicts (each test's main metric against the baseline): ${v.faster} faster, ${v.slower} slower, ${v['within-noise']} within noise, ${v['insufficient-data']} insufficient data`,
    `- Method: mean ± ${Math.round(o.level * 100)}% CI (t distribution); Δ% CI by Fieller; Welch's t-test, verdict when p < ${o.alpha} and |Δ| ≥ ${o.minEffectPct}%; CV flagged above ${o.cvThresholdPct}%`,
    `- Latency: ${LATENCY_SPAN}, in µs`,
  );
  if (info.fingerprint && Object.keys(info.fingerprint).length > 0) {
    out.push('', '**Environment**', '', table(['key', 'value'], Object.entries(info.fingerprint).map(([k, val]) => [mdCell(k), mdCell(val)])));
  }
  if (summary.warnings.length > 0) {
    out.push('', ...summary.warnings.map((w) => `> ⚠ ${mdCell(w)}`));
  }
  if (summary.noisy.length > 0) {
    out.push(
      '',
      `## Noisy cells (CV > ${o.cvThresholdPct}%)`,
      '',
      ...(summary.noisyTotal !== undefined ? [`Showing the ${summary.noisy.length} noisiest of ${summary.noisyTotal.toLocaleString('en-US')} noisy cells.`, ''] : []),
      table(
        ['test', 'permutation', 'metric', 'CV', `repetitions for ±${o.minEffectPct}%`],
        summary.noisy.map((n) => [mdCell(n.testId), mdCell(n.label), METRICS[n.metric].label, `${n.cvPct.toFixed(1)}%`, n.repetitionsNeeded === null ? '> 10000' : String(n.repetitionsNeeded)]),
      ),
    );
  }
  out.push('', '## Results');
  for (const s of report.tests) out.push('', renderSection(report, s));
  return out.join('\n') + '\n';
}

// One self-contained HTML file: inline CSS, inline SVG, no script and no URL to fetch. A CSP meta
// tag forbids every fetch as a second line of defence, since names in the report are untrusted.
import { barChart, escapeXml as esc, heatmap, lineChart, type Tone } from './charts.ts';
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
import type { Axes } from '../contract/axis.ts';
import { LATENCY_SPAN, VM_COUNT_AXIS } from '../results/record.ts';
import { hostLatencyLegend, hostLatencyTable } from './host-latency.ts';
import { METRICS, type PermutationInfo, type Report, type TestSection } from './model.ts';
import { deltaTooNoisy, formatDelta, formatMeanCi, latencyUnit, meanTooNoisy, metricHeader, SIGNIFICANT_DIGITS, TOO_NOISY } from './numbers.ts';
import type { Verdict } from './stats.ts';
import { bendText, curveTitle, memberNote, scalingAnswer, scalingHeader, scalingHostLegend, scalingIntro, scalingRows } from './vm-scaling-text.ts';
import type { ScalingCurve } from './vm-scaling.ts';

const CSS = `
:root{--fg:#1d2430;--muted:#5b6675;--line:#d8dee6;--bg:#fff;--accent:#2f6db5;--good:#1f8a4c;--bad:#c0392b;--warn:#8a6d00;--warnbg:#fff7d6}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1360px;margin:0 auto;padding:16px}
h1{font-size:1.5em;margin:.2em 0 .4em;overflow-wrap:anywhere}
h2{font-size:1.25em;margin:1.6em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:.2em}
h3{font-size:1.1em;margin:1.4em 0 .3em;overflow-wrap:anywhere}
h4{font-size:1em;margin:1.2em 0 .3em;overflow-wrap:anywhere}
p,li{overflow-wrap:anywhere}
.muted{color:var(--muted)}
.warn{background:var(--warnbg);color:var(--warn);border-left:4px solid var(--warn);padding:.5em .8em;margin:.4em 0;overflow-wrap:anywhere}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;margin:.5em 0}
table{border-collapse:collapse;font-size:.9em;font-variant-numeric:tabular-nums}
th,td{border:1px solid var(--line);padding:.3em .55em;text-align:right;white-space:nowrap}
th{background:#f3f6f9}
td.t,th.t{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:8em}
.v-faster{color:var(--good);font-weight:600}.v-slower{color:var(--bad);font-weight:600}
.v-within-noise{color:var(--muted)}.v-insufficient-data{color:var(--warn)}
.noisy{color:var(--warn);font-weight:600}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,460px),1fr));gap:12px}
svg.chart{width:100%;height:auto;display:block;font:13px system-ui,sans-serif;border:1px solid var(--line);border-radius:6px;padding:4px;background:#fff}
svg .chart-title{font-weight:600;font-size:14px;fill:var(--fg)}
svg .grid{stroke:#eceff3}svg .zero{stroke:#6b7480;stroke-width:1.2}
svg .tick,svg .unit,svg .axis-name{fill:var(--muted)}svg .label,svg .value{fill:var(--fg)}
svg .bar{fill:var(--accent)}svg .bar.tone-faster{fill:var(--good)}svg .bar.tone-slower{fill:var(--bad)}
svg .bar.tone-unknown{fill:#b9c2cc}svg .bar.tone-base{fill:#7b8794}
svg .err{stroke:#111;stroke-width:1.3;fill:none}
svg .cell{fill:var(--accent)}svg .cell.empty{fill:#f3f3f3}
svg .cell-value{fill:var(--fg)}svg .cell-value.on-dark{fill:#fff}
footer{margin:2em 0 1em;font-size:.85em;color:var(--muted)}
p.axes{margin:.2em 0 .6em;overflow-wrap:anywhere}
table.overview{font-size:.88em}table.overview th,table.overview td{padding:.3em .45em}
table.overview th.t{min-width:0;overflow-wrap:normal;white-space:nowrap}
table.overview td{text-align:center}
table.overview .id{font-weight:400;font-size:.85em}
table.overview .delta{display:block;font-size:.85em;font-weight:600}
table.overview td.faster{color:#0d4f2a}table.overview td.slower{color:#6e1a12}
td.faster.d1{background:#e4f5ea}td.faster.d2{background:#bfe6cd}td.faster.d3{background:#92d4aa}
td.slower.d1{background:#fce7e4}td.slower.d2{background:#f6c3bc}td.slower.d3{background:#ee998d}
ul.findings{margin:.4em 0 1em;padding-left:1.2em}
.env{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,320px),1fr));gap:12px}
svg .line{fill:none;stroke-width:2}svg .s0 .line{stroke:var(--accent)}svg .s0 .point{fill:var(--accent)}
svg .s1 .line{stroke:#d9822b}svg .s1 .point{fill:#d9822b}svg .s2 .line{stroke:#6b4fa3}svg .s2 .point{fill:#6b4fa3}
svg .dashed .line{stroke:#8a94a0;stroke-dasharray:5 4}svg .legend{fill:var(--fg)}
svg .bend{stroke:var(--bad);stroke-width:1.2;stroke-dasharray:3 3}svg .bend-text{fill:var(--bad);font-weight:600}
details.noisy{margin:1.6em 0}details.noisy>summary{font-size:1.1em;font-weight:600;cursor:pointer}
@media (max-width:600px){body{font-size:14px}main{padding:10px}th,td{padding:.25em .4em}}
@media print{
  body{font-size:10pt;color:#000}main{max-width:none;padding:0}
  .scroll{overflow:visible}section.test{break-inside:avoid-page}
  svg.chart{break-inside:avoid;border:none}h2,h3{break-after:avoid}
  .charts{grid-template-columns:1fr 1fr}
}`;

const TONE: Record<Verdict, Tone> = { faster: 'faster', slower: 'slower', 'within-noise': 'neutral', 'insufficient-data': 'unknown' };

function table(head: Array<[string, boolean]>, rows: Array<Array<[string, boolean, string?]>>): string {
  const th = head.map(([h, text]) => `<th${text ? ' class="t"' : ''}>${esc(h)}</th>`).join('');
  const trs = rows
    .map((r) => `<tr>${r.map(([c, text, cls]) => `<td${text || cls ? ` class="${text ? 't' : ''}${cls ? ` ${cls}` : ''}"` : ''}>${esc(c)}</td>`).join('')}</tr>`)
    .join('');
  return `<div class="scroll"><table><thead><tr>${th}</tr></thead><tbody>${trs}</tbody></table></div>`;
}

function slug(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]+/g, '-');
}

/**
 * Chart labels have little room: `blockSizeMb=1, format=thin` instead of the full axis paths,
 * unless two varying axes share a last segment.
 */
function chartLabeller(varying: readonly string[]): (axes: Axes, fallback: string) => string {
  const short = varying.map((a) => a.slice(a.lastIndexOf('.') + 1));
  const names = new Set(short).size === short.length ? short : varying;
  return (axes, fallback) => {
    const parts = varying.flatMap((a, i) => (a in axes ? [`${names[i]}=${String(axes[a])}`] : []));
    return parts.length > 0 ? parts.join(', ') : fallback;
  };
}

function renderTest(report: Report, s: TestSection, byId: ReadonlyMap<string, PermutationInfo>): string {
  const varying = report.axes.filter((a) => a.varies).map((a) => a.name);
  const out: string[] = [`<section class="test" id="t-${esc(slug(s.test.id))}">`, `<h3>${esc(s.test.id)} — ${esc(referenceLabel(s.test))}</h3>`, `<p class="muted">${esc(describeTest(s.test))}</p>`];
  const cut = truncationNote(s);
  if (cut) out.push(`<p class="warn">${esc(cut)}</p>`);
  const charts = testCharts(s, varying, byId);
  const heat = testHeatmap(report, s, varying);
  if (heat) charts.push(heat);
  out.push(`<div class="charts">${charts.join('')}</div>`);
  out.push(testTable(s, varying));
  out.push(...testComparisons(s));
  out.push('</section>');
  return out.join('\n');
}

/** The bar charts of a test: the primary metric's means, then its Δ% per compared axis. */
function testCharts(s: TestSection, varying: readonly string[], byId: ReadonlyMap<string, PermutationInfo>): string[] {
  const chartLabel = chartLabeller(varying);
  const labelOf = (permutationId: string): string => {
    const p = byId.get(permutationId);
    return p ? chartLabel(p.axes, p.label) : permutationId;
  };
  const pm = s.primaryMetric;
  const def = METRICS[pm];
  const charts: string[] = [];
  charts.push(
    barChart({
      title: `${s.test.id}: ${def.label} (mean, 95% CI)`,
      unit: def.unit,
      digits: SIGNIFICANT_DIGITS,
      bars: s.rows.flatMap((r) => {
        const c = r.cells[pm];
        if (!c || c.summary.mean === null) return [];
        // An interval wider than the mean would reach below zero: said in words, not drawn.
        const vague = meanTooNoisy(c.summary);
        const ci = vague ? null : c.summary.ci;
        return [{ label: chartLabel(r.axes, r.label), value: c.summary.mean * def.scale, low: ci ? ci.low * def.scale : null, high: ci ? ci.high * def.scale : null, tone: c.noisy || vague ? ('unknown' as const) : ('neutral' as const), note: vague ? TOO_NOISY : c.noisy ? 'noisy' : undefined }];
      }),
    }),
  );
  for (const c of s.comparisons) {
    const rows = c.rows.filter((r) => r.metric === pm && r.comparison.delta);
    if (rows.length === 0) continue;
    charts.push(
      barChart({
        title: `${s.test.id}: Δ% ${def.label} vs ${c.axis}=${String(c.baselineValue)}`,
        unit: 'Δ%',
        signed: true,
        bars: rows.map((r) => {
          // [-571%, +805%] is no answer: such a bar has no error bar and says so.
          const vague = deltaTooNoisy(r.comparison);
          return {
            label: labelOf(r.permutationId),
            value: r.comparison.delta!.pct,
            low: vague ? null : (r.comparison.delta!.ci?.low ?? null),
            high: vague ? null : (r.comparison.delta!.ci?.high ?? null),
            tone: vague ? ('unknown' as const) : TONE[r.comparison.verdict],
            // Only the verdicts that say something; "within noise" would crowd the value column.
            note: vague ? TOO_NOISY : r.comparison.verdict === 'faster' || r.comparison.verdict === 'slower' ? VERDICT_TEXT[r.comparison.verdict] : undefined,
          };
        }),
      }),
    );
  }
  return charts;
}

/** Two varying axes: the primary metric as a grid of them. */
function testHeatmap(report: Report, s: TestSection, varying: readonly string[]): string | null {
  const pm = s.primaryMetric;
  const def = METRICS[pm];
  // A capped section holds only some of the grid's cells: no heatmap rather than a misleading one.
  if (varying.length === 2 && !s.truncated) {
    const [xa, ya] = varying as [string, string];
    const xs = report.axes.find((a) => a.name === xa)!.values;
    const ys = report.axes.find((a) => a.name === ya)!.values;
    const cellKey = (x: unknown, y: unknown): string => JSON.stringify([String(x), String(y)]);
    const rowAt = new Map<string, (typeof s.rows)[number]>();
    for (const r of s.rows) {
      const k = cellKey(r.axes[xa], r.axes[ya]);
      if (!rowAt.has(k)) rowAt.set(k, r);
    }
    const cells = ys.map((yv) =>
      xs.map((xv) => {
        const row = rowAt.get(cellKey(xv, yv));
        const m = row?.cells[pm]?.summary.mean;
        return m === undefined || m === null ? null : m * def.scale;
      }),
    );
    // a wide grid scrolls in its own box (charts.ts sets its least readable width)
    return `<div class="scroll">${heatmap({ title: `${s.test.id}: ${def.label} by ${xa} × ${ya}`, unit: def.unit, xName: xa, yName: ya, xValues: xs.map(String), yValues: ys.map(String), cells, digits: SIGNIFICANT_DIGITS, higherIsBetter: def.higherIsBetter })}</div>`;
  }
  return null;
}

/** The test's table: each permutation's axes, n, every metric's mean ± CI and the primary metric's CV. */
function testTable(s: TestSection, varying: readonly string[]): string {
  const pm = s.primaryMetric;
  const def = METRICS[pm];
  const head: Array<[string, boolean]> = [
    ...(varying.length > 0 ? varying.map((a): [string, boolean] => [a, true]) : [['permutation', true] as [string, boolean]]),
    ['n', false],
    ...s.metrics.map((m): [string, boolean] => [metricHeader(m), false]),
    [`CV (${def.label})`, false],
  ];
  const rows = s.rows.map((r) => {
    const c = r.cells[pm];
    const cv = c?.summary.cv;
    const cvText = cv === null || cv === undefined ? '–' : `${(cv * 100).toFixed(1)}%${c?.noisy ? ` noisy${c.repetitionsNeeded ? `, need n≈${c.repetitionsNeeded}` : ''}` : ''}`;
    return [
      ...(varying.length > 0 ? varying.map((a): [string, boolean] => [r.axes[a] === undefined ? '–' : String(r.axes[a]), true]) : [[r.permutationId, true] as [string, boolean]]),
      [String(c?.summary.n ?? 0), false] as [string, boolean],
      ...s.metrics.map((m): [string, boolean] => [formatMeanCi(r.cells[m]), false]),
      [cvText, false, c?.noisy ? 'noisy' : undefined] as [string, boolean, string?],
    ];
  });
  return table(head, rows);

}

/** One table per compared axis: Δ%, p-values and verdict of each permutation against its baseline. */
function testComparisons(s: TestSection): string[] {
  const out: string[] = [];
  const metrics = comparedMetrics(s);
  for (const c of s.comparisons) {
    out.push(`<h4>vs ${esc(c.axis)} = ${esc(String(c.baselineValue))}</h4>`);
    for (const w of c.conditionWarnings ?? []) out.push(`<p class="warn">⚠ ${esc(w)}</p>`);
    out.push(
      table(
        [['permutation', true], ['metric', true], ['Δ% [95% CI]', false], ['p (Welch)', false], ['p (Mann–Whitney)', false], ['verdict', true]],
        c.rows
          .filter((r) => metrics.includes(r.metric))
          .map((r) => [
            [r.label, true],
            [METRICS[r.metric].label, true],
            [formatDelta(r.comparison), false],
            [welchCell(r.comparison), false],
            [rankCell(r.comparison), false],
            [VERDICT_TEXT[r.comparison.verdict], true, `v-${r.comparison.verdict}`],
          ]),
      ),
    );
  }
  return out;
}

/** The overview grid, its legend and one line per axis value: what the first screen shows. */
function renderOverview(report: Report): string[] {
  const o = buildOverview(report);
  if (o.tests.length === 0 || o.permutations.length === 0) return [];
  const short = shortAxisNames(report.axes.map((a) => a.name));
  const varying = report.axes.filter((a) => a.varies).map((a) => a.name);
  const byId = new Map<string, PermutationInfo>(report.permutations.map((p) => [p.permutationId, p]));
  const permHead = (id: string, baseline: boolean, row: boolean): string => {
    const p = byId.get(id);
    const parts = p ? varying.filter((a) => a in p.axes).map((a) => `${short.get(a) ?? a}=${String(p.axes[a])}`) : [];
    // one axis a line, so a column is as wide as its longest value, not as all of them
    const text = parts.length > 0 ? parts.map(esc).join('<br>') : esc(id);
    return `<th class="t"${row ? ' scope="row"' : ' scope="col"'} title="${esc(p?.label ?? id)}">${text}${baseline ? '<br><span class="muted">(baseline)</span>' : ''}</th>`;
  };
  const testHead = (t: { id: string; label: string }, row: boolean): string =>
    `<th class="t"${row ? ' scope="row"' : ' scope="col"'}>${esc(t.label)}<br><span class="muted id">${esc(t.id)}</span></th>`;
  const cell = (ti: number, pi: number): string => {
    const c = o.cells[ti]?.[pi];
    if (!c) return '<td class="muted">–</td>';
    const title = c.notes.length > 0 ? ` title="${esc(c.notes.join('\n'))}"` : '';
    if (!c.shown) return `<td${title}>${esc(c.text)}</td>`;
    const size = Math.abs(c.shown.pct);
    const depth = size >= 40 ? 'd3' : size >= 15 ? 'd2' : 'd1';
    return `<td class="${c.shown.verdict} ${depth}"${title}>${esc(c.text)}<span class="delta">${c.shown.verdict === 'faster' ? '▲' : '▼'} ${esc(c.shown.text)}</span></td>`;
  };
  const corner = o.transposed ? 'permutation' : 'test';
  const head = o.transposed ? o.tests.map((t) => testHead(t, false)) : o.permutations.map((p) => permHead(p.id, p.baseline, false));
  const body = o.transposed
    ? o.permutations.map((p, pi) => `<tr>${permHead(p.id, p.baseline, true)}${o.tests.map((_, ti) => cell(ti, pi)).join('')}</tr>`)
    : o.tests.map((t, ti) => `<tr>${testHead(t, true)}${o.permutations.map((_, pi) => cell(ti, pi)).join('')}</tr>`);
  const findings = axisFindings(report);
  return [
    '<section id="overview">',
    `<div class="scroll"><table class="overview"><caption class="muted">MB/s [IOPS] per test and permutation</caption><thead><tr><th class="t">${corner}</th>${head.join('')}</tr></thead><tbody>${body.join('')}</tbody></table></div>`,
    `<p class="muted legend">${esc(overviewLegend(report, o))}</p>`,
    ...(findings.length > 0 ? [`<ul class="findings">${findings.map((f) => `<li>${esc(f.text)}</li>`).join('')}</ul>`] : []),
    '</section>',
  ];
}

export function renderHtml(report: Report): string {
  const { info, summary } = report;
  const varied = report.axes.filter((a) => a.varies);
  const fixed = report.axes.filter((a) => !a.varies);
  const axesLine = [
    `Axes varied: ${varied.length > 0 ? varied.map((a) => `${a.name} (${a.values.map(String).join(', ')})${axisScope(report, a.name)}`).join('; ') : 'none'}`,
    ...(fixed.length > 0 ? [`Fixed: ${fixed.map((a) => `${a.name} = ${String(a.values[0])}${axisScope(report, a.name)}`).join('; ')}`] : []),
  ].join('. ');
  const facts = runFacts(report);
  // a study of VM count opens with its scaling answer; elsewhere the section follows the results
  const scalingFirst = report.axes.some((a) => a.name === VM_COUNT_AXIS && a.varies);
  const body: string[] = [
    `<h1>storsweep report — ${esc(info.runId)}</h1>`,
    `<p class="axes">${esc(axesLine)}</p>`,
    ...(scalingFirst ? scalingHtml(report) : []),
    ...renderOverview(report),
    ...summary.warnings.map((w) => `<p class="warn" role="alert">⚠ ${esc(w)}</p>`),
    '<h2>Run</h2>',
    `<ul>${facts.map((f) => `<li>${esc(f)}</li>`).join('')}</ul>`,
  ];
  body.push(...conditionsHtml(report), ...environmentHtml(info));
  const byId = new Map(report.permutations.map((p) => [p.permutationId, p]));
  body.push('<h2>Results</h2>', ...report.tests.map((s) => renderTest(report, s, byId)));
  if (!scalingFirst) body.push(...scalingHtml(report));
  body.push(...hostLatencyHtml(report), ...noisyHtml(report));

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="generator" content="storsweep">
<title>storsweep report — ${esc(info.runId)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
${body.join('\n')}
<footer>Generated by storsweep from ${esc(String(report.recordCount))} result records.</footer>
</main>
</body>
</html>
`;
}

/** The scaling with VM count (report/vm-scaling.ts): the answers, the rule, then per curve its two charts and its table. */
function scalingHtml(report: Report): string[] {
  const v = report.vmScaling;
  if (!v || v.curves.length === 0) return [];
  const out = ['<section id="vm-scaling">', '<h2>Scaling with VM count</h2>', `<ul class="findings">${v.curves.map((c) => `<li>${esc(scalingAnswer(c))}</li>`).join('')}</ul>`];
  out.push(...scalingIntro(v).map((l) => `<p class="muted">${esc(l)}</p>`));
  for (const c of v.curves) {
    out.push(`<h3>${esc(curveTitle(c))}</h3>`, `<div class="charts">${scalingCharts(c).join('')}</div>`, table(scalingHeader(c).map((h, i): [string, boolean] => [h, i === 0]), scalingRows(c).map((row) => row.map((cell, i): [string, boolean] => [cell, i === 0]))));
  }
  const legend = scalingHostLegend(v);
  if (legend.length > 0) out.push(`<ul class="muted">${legend.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>`);
  out.push('</section>');
  return out;
}

/** A curve's charts: the aggregate's main metric against linear scaling from the smallest count, and latency with the VMs' p99 spread. */
function scalingCharts(c: ScalingCurve): string[] {
  const def = METRICS[c.metric];
  const main = (p: ScalingCurve['points'][number]) => (c.metric === 'iops' ? p.iops : p.bytesPerSecond);
  const first = c.points[0]!;
  const firstMain = main(first);
  const mark = c.bend ? { x: c.bend.count, text: `bends at ${c.bend.count}` } : undefined;
  const throughput = lineChart({
    title: `${c.test.id}: aggregate ${def.label} by VM count${c.bend ? '' : ' (no bend)'}`,
    unit: def.unit,
    xName: 'VMs',
    series: [
      { name: `aggregate ${def.label}`, points: c.points.map((p) => ({ x: p.count, y: main(p) === null ? null : main(p)! * def.scale })) },
      ...(firstMain === null ? [] : [{ name: 'linear', dashed: true, points: c.points.map((p) => ({ x: p.count, y: (firstMain / first.count) * p.count * def.scale })) }]),
    ],
    ...(mark ? { mark } : {}),
  });
  // one unit for the chart, by its largest value (µs below 1 ms, as the tables print latency)
  const { unit, scale } = latencyUnit(Math.max(0, ...c.points.flatMap((p) => [p.p99MaxUs ?? 0, p.p99Us ?? 0, p.latencyMeanUs ?? 0])));
  const at = (v: number | null) => (v === null ? null : v * scale);
  const latency = lineChart({
    title: `${c.test.id}: latency by VM count (p99 bars: one VM's min–max)`,
    unit,
    xName: 'VMs',
    series: [
      { name: 'p99', points: c.points.map((p) => ({ x: p.count, y: at(p.p99Us), low: at(p.p99MinUs), high: at(p.p99MaxUs) })) },
      { name: 'p50', points: c.points.map((p) => ({ x: p.count, y: at(p.p50Us) })) },
      { name: 'mean', points: c.points.map((p) => ({ x: p.count, y: at(p.latencyMeanUs) })) },
    ],
    ...(mark ? { mark } : {}),
  });
  return [throughput, latency, `<p class="muted">${esc(bendText(c))}</p>`];
}

/** The Run list: playbook, start, runs, counts, verdicts, method and number format. */
function runFacts(report: Report): string[] {
  const { info } = report;
  const v = report.summary.verdicts;
  const facts: string[] = [];
  if (info.playbook) facts.push(`Playbook: ${info.playbook}`);
  if (info.startedAt) facts.push(`Started: ${info.startedAt}`);
  if (report.runIds.length > 1) facts.push(`Runs: ${report.runIds.join(', ')}`);
  facts.push(`${report.recordCount} records${memberNote(report.vmScaling)}, ${report.permutations.length} permutations, ${testCount(report)}`);
  facts.push(`Verdicts (each test's main metric against the baseline): ${v.faster} faster, ${v.slower} slower, ${v['within-noise']} within noise, ${v['insufficient-data']} insufficient data`);
  facts.push(
    methodLine(report),
    replicationLine(report),
    ...[repeatUntilLine(report)].flatMap((l) => (l === null ? [] : [l])),
    `Numbers: ${SIGNIFICANT_DIGITS} significant digits (MB/s = 10⁶ bytes/s, as CrystalDiskMark); latency ${LATENCY_SPAN}, in µs below 1 ms, else ms`,
  );

  return facts;
}

function conditionsHtml(report: Report): string[] {
  const body: string[] = [];
  if (report.conditions.length > 0) {
    const names = [...new Set(report.conditions.flatMap((c) => c.facts.map((f) => f.name)))];
    const value = (c: Report['conditions'][number], name: string) => c.facts.find((f) => f.name === name)?.value ?? '–';
    body.push('<h2>Conditions</h2>', table([['condition', true], ...report.conditions.map((c): [string, boolean] => [c.source, true])], names.map((n) => [[n, true], ...report.conditions.map((c): [string, boolean] => [value(c, n), true])])));
  }
  return body;
}

function environmentHtml(info: Report['info']): string[] {
  const env: string[] = [];
  if (info.environment && Object.keys(info.environment).length > 0) {
    env.push(`<div><h3>As the playbook states it</h3>${table([['key', true], ['value', true]], Object.entries(info.environment).map(([k, val]) => [[k, true], [val, true]]))}</div>`);
  }
  if (info.fingerprint && Object.keys(info.fingerprint).length > 0) {
    env.push(`<div><h3>Measured fingerprint</h3>${table([['key', true], ['value', true]], Object.entries(info.fingerprint).map(([k, val]) => [[k, true], [val, true]]))}</div>`);
  }
  return env.length > 0 ? ['<h2>Environment</h2>', `<div class="env">${env.join('')}</div>`] : [];
}

function hostLatencyHtml(report: Report): string[] {
  const body: string[] = [];
  if (report.hostLatency.length > 0) {
    const t = hostLatencyTable(report.hostLatency);
    body.push(
      '<section id="host-latency">',
      '<h2>Guest vs host latency</h2>',
      table(t.header.map((h, i) => [h, i < 2]), t.cells.map((row) => row.map((c, i) => [c, i < 2]))),
      `<ul class="muted">${hostLatencyLegend(report.hostLatency).map((l) => `<li>${esc(l)}</li>`).join('')}</ul>`,
      '</section>',
    );
  }
  return body;
}

function noisyHtml(report: Report): string[] {
  const { summary, options: o } = report;
  const body: string[] = [];
  if (summary.noisy.length > 0) {
    const count = summary.noisyTotal ?? summary.noisy.length;
    body.push(
      '<details class="noisy">',
      `<summary>Noisy cells (CV &gt; ${esc(String(o.cvThresholdPct))}%): ${esc(count.toLocaleString('en-US'))}</summary>`,
      ...(summary.noisyTotal !== undefined ? [`<p class="muted">Showing the ${summary.noisy.length} noisiest of ${esc(summary.noisyTotal.toLocaleString('en-US'))} noisy cells.</p>`] : []),
      table(
        [['test', true], ['permutation', true], ['metric', true], ['CV', false], [`repetitions for ±${o.minEffectPct}%`, false]],
        summary.noisy.map((n) => [[n.testId, true], [n.label, true], [METRICS[n.metric].label, true], [`${n.cvPct.toFixed(1)}%`, false], [n.repetitionsNeeded === null ? '> 10000' : String(n.repetitionsNeeded), false]]),
      ),
      '</details>',
    );
  }
  return body;
}

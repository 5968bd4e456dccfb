// Hand-written SVG charts for the HTML report: horizontal bars with error bars, and a heatmap.
// Horizontal bars because permutation labels are long and phones are narrow. Every string that
// reaches the markup goes through escapeXml: labels carry host, VM and datastore names.
// A throughput axis starts at 0 and never goes below it (an error bar reaching below zero is cut
// at 0); only a signed (Δ%) chart has negative values. Values keep significant digits (numbers.ts).
import { compactSig, formatPct } from './numbers.ts';

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

export type Tone = 'base' | 'neutral' | 'faster' | 'slower' | 'unknown';

export interface Bar {
  label: string;
  value: number;
  /** error bar ends, same unit as value; omitted when unknown */
  low?: number | null;
  high?: number | null;
  tone?: Tone;
  /** extra text after the value, e.g. a verdict */
  note?: string;
}

export interface BarChartOptions {
  title: string;
  unit: string;
  bars: Bar[];
  /** significant digits of value labels (default 4) */
  digits?: number;
  /** format values as signed percentages (delta charts) */
  signed?: boolean;
}

const W = 640;
const LABEL_W = 250;
const VALUE_W = 120;
const ROW_H = 28;
const TOP = 34;
const BOTTOM = 28;

function niceStep(range: number, target = 5): number {
  if (!(range > 0)) return 1;
  const raw = range / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/** A value label: significant digits, k/M/G from 10,000 on; `tick` drops trailing zeros. */
export function compactNumber(v: number, digits = 4, signed = false, tick = false): string {
  const s = compactSig(v, digits, tick);
  return signed && v > 0 ? `+${s}` : s;
}

/** Most characters of a label shown whole; a longer one is cut (its full text stays in the tooltip). */
const LABEL_CHARS = 80;
/** Width of a label of `chars` characters at the charts' 13 px font (a generous average glyph). */
const textW = (chars: number): number => Math.ceil(chars * 7.2) + 16;

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

const r1 = (x: number): string => (Math.round(x * 10) / 10).toString();

/** Bars with optional error bars; handles negative values (Δ% charts) with a zero line. */
export function barChart(o: BarChartOptions): string {
  const digits = o.digits ?? 4;
  const signed = o.signed === true;
  // Unsigned (throughput, latency): nothing below zero, an error bar's low end included.
  const floor = (v: number | null | undefined): number | null | undefined => (signed || v == null ? v : Math.max(0, v));
  const bars = o.bars.filter((b) => Number.isFinite(b.value) && (signed || b.value >= 0)).map((b) => ({ ...b, low: floor(b.low), high: floor(b.high) }));
  const height = TOP + Math.max(1, bars.length) * ROW_H + BOTTOM;
  const ends = bars.flatMap((b) => [b.value, b.low ?? b.value, b.high ?? b.value]).filter(Number.isFinite);
  let lo = signed ? Math.min(0, ...ends) : 0;
  let hi = Math.max(0, ...ends);
  if (lo === hi) hi = lo + 1;
  const step = niceStep(hi - lo);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  // the label column as wide as the longest label (never cut at a fixed 30 characters): the chart
  // grows by the difference, so the plot keeps its width
  const labelW = Math.max(LABEL_W, textW(Math.min(LABEL_CHARS, Math.max(0, ...bars.map((b) => [...b.label].length)))));
  const width = W + labelW - LABEL_W;
  const x0 = labelW;
  const plotW = W - LABEL_W - VALUE_W;
  const x = (v: number): number => x0 + ((v - lo) / (hi - lo)) * plotW;
  const fmt = (v: number): string => (signed ? formatPct(v) : compactNumber(v, digits));
  const tickText = (v: number): string => (signed ? `${compactNumber(v, 3, true, true)}%` : compactNumber(v, 3, false, true));

  const parts: string[] = [];
  parts.push(
    `<svg class="chart bar-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(o.title)}">`,
    `<title>${escapeXml(o.title)}</title>`,
    `<text class="chart-title" x="0" y="16">${escapeXml(truncate(o.title, 90))}</text>`,
  );
  for (let t = lo; t <= hi + step / 2; t += step) {
    const tx = r1(x(t));
    parts.push(
      `<line class="grid" x1="${tx}" x2="${tx}" y1="${TOP - 6}" y2="${height - BOTTOM}"/>`,
      `<text class="tick" x="${tx}" y="${height - BOTTOM + 14}" text-anchor="middle">${escapeXml(tickText(Math.abs(t) < step / 1e6 ? 0 : t))}</text>`,
    );
  }
  parts.push(`<text class="unit" x="${width - VALUE_W}" y="${height - 2}" text-anchor="end">${escapeXml(o.unit)}</text>`);
  bars.forEach((b, i) => {
    const y = TOP + i * ROW_H;
    const bx = Math.min(x(0), x(b.value));
    const bw = Math.max(1, Math.abs(x(b.value) - x(0)));
    const tone = b.tone ?? 'neutral';
    const tip = `${b.label}: ${fmt(b.value)}${b.low != null && b.high != null ? ` [${fmt(b.low)}, ${fmt(b.high)}]` : ''} ${o.signed ? '' : o.unit}${b.note ? ` — ${b.note}` : ''}`;
    parts.push(
      `<g class="row">`,
      `<title>${escapeXml(tip.trim())}</title>`,
      `<text class="label" x="${labelW - 8}" y="${y + ROW_H / 2 + 4}" text-anchor="end">${escapeXml(truncate(b.label, LABEL_CHARS))}</text>`,
      `<rect class="bar tone-${tone}" x="${r1(bx)}" y="${y + 4}" width="${r1(bw)}" height="${ROW_H - 8}"/>`,
    );
    if (b.low != null && b.high != null && Number.isFinite(b.low) && Number.isFinite(b.high)) {
      const ly = y + ROW_H / 2;
      const [xl, xh] = [r1(x(b.low)), r1(x(b.high))];
      parts.push(
        `<path class="err" d="M${xl} ${ly}H${xh}M${xl} ${ly - 5}V${ly + 5}M${xh} ${ly - 5}V${ly + 5}"/>`,
      );
    }
    parts.push(
      `<text class="value" x="${width - VALUE_W + 6}" y="${y + ROW_H / 2 + 4}">${escapeXml(fmt(b.value))}${b.note ? ` ${escapeXml(b.note)}` : ''}</text>`,
      `</g>`,
    );
  });
  if (lo < 0) parts.push(`<line class="zero" x1="${r1(x(0))}" x2="${r1(x(0))}" y1="${TOP - 6}" y2="${height - BOTTOM}"/>`);
  parts.push('</svg>');
  return parts.join('');
}

export interface HeatmapOptions {
  title: string;
  unit: string;
  xName: string;
  yName: string;
  xValues: string[];
  yValues: string[];
  /** cells[y][x]; null where the permutation is missing */
  cells: Array<Array<number | null>>;
  digits?: number;
  /** true when larger is better (the darkest cell is then the best) */
  higherIsBetter: boolean;
}

/** Two varying axes → one grid, colour by value, the number printed in each cell. */
export function heatmap(o: HeatmapOptions): string {
  const digits = o.digits ?? 4;
  const labelW = Math.max(150, textW(Math.min(40, Math.max(0, ...o.yValues.map((v) => [...v].length)))));
  const top = 52;
  // a cell as wide as its column's value (up to 24 characters), at least 50: a wide grid is drawn
  // at its own size and scrolls (html.ts), never shrunk until its text cannot be read
  const tickChars = Math.min(24, Math.max(0, ...o.xValues.map((v) => [...v].length)));
  const cellW = Math.max(50, textW(tickChars) - 8, Math.min(160, (W - labelW - 8) / Math.max(1, o.xValues.length)));
  const cellH = 34;
  // Same viewBox width as the bar charts, so text renders at the same size side by side.
  const width = Math.max(W, labelW + cellW * o.xValues.length + 8);
  const height = top + cellH * o.yValues.length + 24;
  const vals = o.cells.flat().filter((v): v is number => v !== null && Number.isFinite(v));
  const min = vals.length ? Math.min(...vals) : 0;
  const max = vals.length ? Math.max(...vals) : 1;
  const parts: string[] = [
    `<svg class="chart heatmap" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${r1(width)} ${height}"${width > W ? ` style="min-width:${Math.ceil(width * 0.75)}px"` : ''} role="img" aria-label="${escapeXml(o.title)}">`,
    `<title>${escapeXml(o.title)}</title>`,
    `<text class="chart-title" x="0" y="16">${escapeXml(truncate(o.title, 90))}</text>`,
    `<text class="axis-name" x="${labelW}" y="34">${escapeXml(truncate(o.xName, 60))} →</text>`,
    `<text class="axis-name" x="0" y="${height - 6}">↓ ${escapeXml(truncate(o.yName, 60))}</text>`,
  ];
  o.xValues.forEach((xv, i) => {
    parts.push(`<text class="tick" x="${r1(labelW + cellW * i + cellW / 2)}" y="${top - 4}" text-anchor="middle">${escapeXml(truncate(xv, 24))}</text>`);
  });
  o.yValues.forEach((yv, j) => {
    const y = top + j * cellH;
    parts.push(`<text class="label" x="${labelW - 8}" y="${y + cellH / 2 + 4}" text-anchor="end">${escapeXml(truncate(yv, 40))}</text>`);
    o.xValues.forEach((xv, i) => {
      const v = o.cells[j]?.[i] ?? null;
      const cx = labelW + cellW * i;
      if (v === null || !Number.isFinite(v)) {
        parts.push(`<rect class="cell empty" x="${r1(cx)}" y="${y}" width="${r1(cellW - 2)}" height="${cellH - 2}"><title>${escapeXml(`${xv} × ${yv}: no data`)}</title></rect>`);
        return;
      }
      // Intensity 0.15–1 so even the worst cell stays visible against the page.
      let f = max > min ? (v - min) / (max - min) : 1;
      if (!o.higherIsBetter) f = 1 - f;
      const alpha = (0.15 + 0.85 * f).toFixed(3);
      parts.push(
        `<rect class="cell" x="${r1(cx)}" y="${y}" width="${r1(cellW - 2)}" height="${cellH - 2}" fill-opacity="${alpha}"><title>${escapeXml(`${o.xName}=${xv}, ${o.yName}=${yv}: ${compactNumber(v, digits)} ${o.unit}`)}</title></rect>`,
        `<text class="cell-value${f > 0.55 ? ' on-dark' : ''}" x="${r1(cx + cellW / 2 - 1)}" y="${y + cellH / 2 + 4}" text-anchor="middle">${escapeXml(compactNumber(v, digits))}</text>`,
      );
    });
  });
  parts.push('</svg>');
  return parts.join('');
}

export interface LinePoint {
  x: number;
  y: number | null;
  /** a range drawn as an error bar at the point (the spread between VMs); omitted when unknown */
  low?: number | null;
  high?: number | null;
}

export interface LineSeries {
  name: string;
  points: LinePoint[];
  /** dashed: a reference (linear scaling), not a measurement */
  dashed?: boolean;
}

export interface LineChartOptions {
  title: string;
  unit: string;
  xName: string;
  series: LineSeries[];
  /** a vertical mark at this x (where a curve bends), with its words */
  mark?: { x: number; text: string };
}

const LINE_H = 240;
const LINE_LEFT = 64;
const LINE_RIGHT = 150;

/** The y axis of a line chart: 0 up to a nice step above the largest value (or range end). */
function lineScale(series: readonly LineSeries[]): { hi: number; step: number } {
  const ends = series.flatMap((s) => s.points.flatMap((p) => [p.y, p.high ?? null])).filter((v): v is number => v !== null && Number.isFinite(v) && v >= 0);
  const max = Math.max(0, ...ends);
  const step = niceStep(max > 0 ? max : 1);
  return { hi: Math.max(step, Math.ceil(max / step) * step), step };
}

/**
 * Values against a small set of x values (VM counts), evenly spaced as categories: one polyline and
 * a dot per series, error bars where a point has a range, a legend, and an optional mark. The y
 * axis starts at 0, like every throughput chart here.
 */
export function lineChart(o: LineChartOptions): string {
  const xs = [...new Set(o.series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  const { hi, step } = lineScale(o.series);
  const plotW = W - LINE_LEFT - LINE_RIGHT;
  const x = (v: number): number => LINE_LEFT + (xs.length <= 1 ? plotW / 2 : (xs.indexOf(v) / (xs.length - 1)) * plotW);
  const y = (v: number): number => TOP + (1 - Math.max(0, v) / hi) * (LINE_H - TOP - BOTTOM);
  const parts: string[] = [
    `<svg class="chart line-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${LINE_H}" role="img" aria-label="${escapeXml(o.title)}">`,
    `<title>${escapeXml(o.title)}</title>`,
    `<text class="chart-title" x="0" y="16">${escapeXml(truncate(o.title, 90))}</text>`,
  ];
  for (let t = 0; t <= hi + step / 2; t += step) {
    parts.push(`<line class="grid" x1="${LINE_LEFT}" x2="${LINE_LEFT + plotW}" y1="${r1(y(t))}" y2="${r1(y(t))}"/>`, `<text class="tick" x="${LINE_LEFT - 6}" y="${r1(y(t) + 4)}" text-anchor="end">${escapeXml(compactNumber(t, 3, false, true))}</text>`);
  }
  for (const v of xs) parts.push(`<text class="tick" x="${r1(x(v))}" y="${LINE_H - BOTTOM + 16}" text-anchor="middle">${escapeXml(compactNumber(v, 3, false, true))}</text>`);
  parts.push(`<text class="axis-name" x="${LINE_LEFT + plotW}" y="${LINE_H - 4}" text-anchor="end">${escapeXml(o.xName)} →</text>`, `<text class="unit" x="0" y="${LINE_H - 4}">${escapeXml(o.unit)}</text>`);
  if (o.mark && xs.includes(o.mark.x)) {
    const mx = r1(x(o.mark.x));
    parts.push(`<line class="bend" x1="${mx}" x2="${mx}" y1="${TOP - 6}" y2="${LINE_H - BOTTOM}"/>`, `<text class="bend-text" x="${mx}" y="${TOP - 10}" text-anchor="middle">${escapeXml(truncate(o.mark.text, 40))}</text>`);
  }
  o.series.forEach((s, i) => parts.push(...lineSeries(s, i, x, y, o.unit)));
  parts.push('</svg>');
  return parts.join('');
}

/** One series: its line, its dots (each with its value as a tooltip), its error bars and its legend entry. */
function lineSeries(s: LineSeries, i: number, x: (v: number) => number, y: (v: number) => number, unit: string): string[] {
  const pts = s.points.filter((p): p is LinePoint & { y: number } => p.y !== null && Number.isFinite(p.y));
  const cls = `series s${i % 4}${s.dashed ? ' dashed' : ''}`;
  const out: string[] = [`<g class="${cls}">`];
  if (pts.length > 1) out.push(`<polyline class="line" points="${pts.map((p) => `${r1(x(p.x))},${r1(y(p.y))}`).join(' ')}"/>`);
  for (const p of pts) {
    if (p.low != null && p.high != null && Number.isFinite(p.low) && Number.isFinite(p.high)) {
      const px = r1(x(p.x));
      const [yl, yh] = [r1(y(p.low)), r1(y(p.high))];
      out.push(`<path class="err" d="M${px} ${yl}V${yh}M${r1(x(p.x) - 5)} ${yl}H${r1(x(p.x) + 5)}M${r1(x(p.x) - 5)} ${yh}H${r1(x(p.x) + 5)}"/>`);
    }
    if (!s.dashed) out.push(`<circle class="point" cx="${r1(x(p.x))}" cy="${r1(y(p.y))}" r="4"><title>${escapeXml(`${s.name} at ${p.x}: ${compactNumber(p.y)} ${unit}`)}</title></circle>`);
  }
  const ly = TOP + 4 + i * 18;
  out.push(`<line class="line" x1="${W - LINE_RIGHT + 12}" x2="${W - LINE_RIGHT + 32}" y1="${ly}" y2="${ly}"/>`, `<text class="legend" x="${W - LINE_RIGHT + 38}" y="${ly + 4}">${escapeXml(truncate(s.name, 16))}</text>`, '</g>');
  return out;
}

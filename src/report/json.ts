// JSON for tools: the whole report model (summaries, comparisons, verdicts) under a format version,
// so a consumer can tell when the shape changes.
import { visibleJson } from '../text/visible.ts';
import type { Report } from './model.ts';

export const REPORT_JSON_VERSION = 1;

export function renderJson(report: Report): string {
  // Infinity (a t statistic on constant samples) is not JSON; null says "not a finite number".
  // DEL, C1 and bidi controls as \u escapes (the same data): safe to print, still exact JSON.
  return visibleJson(JSON.stringify({ storsweepReport: REPORT_JSON_VERSION, ...report }, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)) + '\n';
}

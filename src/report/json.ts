// JSON for tools: the whole report model (summaries, comparisons, verdicts) under a format version,
// so a consumer can tell when the shape changes.
import type { Report } from './model.ts';

export const REPORT_JSON_VERSION = 1;

export function renderJson(report: Report): string {
  // Infinity (a t statistic on constant samples) is not JSON; null says "not a finite number".
  return JSON.stringify({ storsweepReport: REPORT_JSON_VERSION, ...report }, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2) + '\n';
}

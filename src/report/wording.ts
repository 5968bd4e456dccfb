// What every renderer says the same way (Markdown, HTML): verdict words, a test in words, the note
// on a capped section, the metrics a comparison shows. Renderers import this, never each other.
import type { TestIdentity } from '../results/record.ts';
import { METRICS, type MetricKey, type TestSection } from './model.ts';
import type { Verdict } from './stats.ts';

export const VERDICT_TEXT: Record<Verdict, string> = {
  faster: 'faster',
  slower: 'slower',
  'within-noise': 'within noise',
  'insufficient-data': 'insufficient data',
};

export function describeTest(t: TestIdentity): string {
  const dir = t.readPercent >= 100 ? 'read' : t.readPercent <= 0 ? 'write' : `${t.readPercent}% read`;
  const kind = t.id.startsWith('rnd-') ? 'random' : 'sequential';
  return `${kind} ${dir}, ${t.id.split('-')[1]} blocks, queue depth ${t.queueDepth}, ${t.threads} thread${t.threads === 1 ? '' : 's'}`;
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

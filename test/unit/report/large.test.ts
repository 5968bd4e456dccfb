import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../../src/report/html.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { buildReport } from '../../../src/report/model.ts';
import { NULL_LATENCY, type ResultRecord } from '../../../src/results/record.ts';

const TEST = { id: 'rnd-4k-q32t1-read', pattern: 'randread', blockSizeBytes: 4096, queueDepth: 32, threads: 1, readPercent: 100 } as const;

/** `kinds` × `sizes` permutations, one repetition each; IOPS grows with the size index. */
function sweep(kinds: string[], sizes: number, iops: (kind: number, size: number) => number): ResultRecord[] {
  const out: ResultRecord[] = [];
  kinds.forEach((kind, k) => {
    for (let s = 1; s <= sizes; s++) {
      out.push({
        runId: 'big',
        permutationId: `p-${kind}-${s}`,
        axes: { 'datastore.kind': kind, 'disk.sizeGb': s },
        repetition: 1,
        test: { ...TEST },
        iops: iops(k, s),
        bytesPerSecond: iops(k, s) * 4096,
        latencyUs: { ...NULL_LATENCY },
        cpuPercent: null,
        tool: { name: 'fio', version: 'fio-3.33' },
        rawPath: 'x',
      });
    }
  });
  return out;
}

describe('a report of more permutations than the detail limit', () => {
  // nfs is 10% slower than vmfs6 everywhere, except sizes 7 and 9 where it is 50% and 30% slower.
  const records = sweep(['vmfs6', 'nfs'], 10, (k, s) => (k === 0 ? 1000 : s === 7 ? 500 : s === 9 ? 700 : 900));

  it('lists the permutations with the largest |Δ|, in run order, and counts every verdict', () => {
    const r = buildReport(records, { runId: 'big' }, { detailLimit: 4 });
    const s = r.tests[0]!;
    expect(s.truncated).toEqual({ shown: 4, total: 20, by: 'largest-delta' });
    expect(s.rows.map((x) => x.permutationId)).toEqual(['p-nfs-1', 'p-nfs-2', 'p-nfs-7', 'p-nfs-9']);
    const kind = s.comparisons.find((c) => c.axis === 'datastore.kind')!;
    expect(new Set(kind.rows.map((x) => x.permutationId))).toEqual(new Set(['p-nfs-7', 'p-nfs-9', 'p-nfs-1', 'p-nfs-2']));
    // 10 nfs vs vmfs6 + 18 sizes vs size 1, all single runs
    expect(r.summary.verdicts['insufficient-data']).toBe(28);
    expect(r.permutations).toHaveLength(20);
  });

  it('says so in both renderers, and draws no partial heatmap', () => {
    const r = buildReport(records, { runId: 'big' }, { detailLimit: 4 });
    expect(renderMarkdown(r)).toContain('> Showing 4 of 20 permutations (the 4 with the largest |Δ| in IOPS against a baseline)');
    const html = renderHtml(r);
    expect(html).toContain('Showing 4 of 20 permutations');
    expect(html).not.toContain('class="chart heatmap"');
  });

  it('leaves a report within the limit as it was', () => {
    const r = buildReport(records, { runId: 'big' }, { detailLimit: 20 });
    expect(r.tests[0]!.truncated).toBeUndefined();
    expect(r.tests[0]!.rows).toHaveLength(20);
    expect(renderMarkdown(r)).not.toContain('Showing');
    expect(renderHtml(r)).toContain('class="chart heatmap"');
  });
});

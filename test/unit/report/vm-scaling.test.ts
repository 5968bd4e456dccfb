// A vm.count study's report (issue 32): records as the run writes them (members and aggregates for
// 1, 2 and 4 VMs), rendered in every format. Verdicts compare aggregates only, never members beside
// them; the scaling section opens the report and names where each curve bends, by its stated rule.
import { describe, expect, it } from 'vitest';
import { renderCsv, renderSummaryCsv } from '../../../src/report/csv.ts';
import { compareRuns } from '../../../src/report/compare.ts';
import { renderHtml } from '../../../src/report/html.ts';
import { renderJson } from '../../../src/report/json.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { buildReport } from '../../../src/report/model.ts';
import { BEND_RULE, findBend, type ScalingPoint } from '../../../src/report/vm-scaling.ts';
import { BENDS_AT_4, NO_BEND, RANDOM_TEST, SEQUENTIAL_TEST, vmStudyRecords } from './vm-records.ts';

const study = { counts: [1, 2, 4], curves: [BENDS_AT_4, NO_BEND] };
const records = vmStudyRecords(study);
const report = buildReport(records, { runId: 'vm-run' });

describe('a vm.count study: the samples are the aggregates', () => {
  it('every section counts one sample per repetition: the aggregate, never the members beside it', () => {
    // 3 counts × 3 repetitions × 2 tests: 18 aggregates and 2 × 3 × (1 + 2 + 4) = 42 members
    expect(records.filter((r) => r.vm?.role === 'aggregate')).toHaveLength(18);
    expect(records.filter((r) => r.vm?.role === 'member')).toHaveLength(42);
    expect(report.recordCount).toBe(18);
    for (const s of report.tests) {
      for (const row of s.rows) expect(row.cells[s.primaryMetric]!.summary.n).toBe(3);
    }
    const random = report.tests.find((s) => s.test.id === RANDOM_TEST.id)!;
    const four = random.rows.find((r) => r.axes['vm.count'] === 4)!;
    // the sum of the VMs' IOPS (23,000 at repetition r scaled by 1 + 0.003 r), not one VM's ~5,750
    expect(four.cells.iops!.summary.mean).toBeCloseTo(23_000 * 1.006, 0);
  });

  it('verdicts compare the aggregates against 1 VM', () => {
    const cmp = report.tests.find((s) => s.test.id === RANDOM_TEST.id)!.comparisons.find((c) => c.axis === 'vm.count')!;
    const iops = cmp.rows.filter((r) => r.metric === 'iops');
    expect(iops.map((r) => r.value)).toEqual([2, 4]);
    for (const r of iops) {
      expect(r.comparison.candidate.n).toBe(3);
      expect(r.comparison.baseline.n).toBe(3);
      expect(r.comparison.verdict).toBe('faster');
    }
  });

  it('compare leaves the members out on both sides', () => {
    const other = vmStudyRecords({ ...study, runId: 'vm-run-b' });
    const result = compareRuns({ label: 'A', records, info: { runId: 'vm-run' } }, { label: 'B', records: other, info: { runId: 'vm-run-b' } });
    const rows = result.rows.filter((r) => r.testId === RANDOM_TEST.id && r.metric === 'iops');
    expect(rows).toHaveLength(3);
    for (const r of rows) expect([r.comparison.candidate.n, r.comparison.baseline.n]).toEqual([3, 3]);
    expect(result.a.records).toBe(18);
  });
});

describe('the scaling section', () => {
  it('finds the bend at 4 VMs on the curve that bends, and none on the one that scales', () => {
    const v = report.vmScaling!;
    expect(v.memberRecords).toBe(42);
    const random = v.curves.find((c) => c.test.id === RANDOM_TEST.id)!;
    expect(random.metric).toBe('iops');
    expect(random.points.map((p) => p.count)).toEqual([1, 2, 4]);
    expect(random.bend).toMatchObject({ count: 4, from: 2, reason: 'throughput' });
    // (23,000 − 19,500) / (19,500 / 2 × 2)
    expect(random.bend!.shareOfLinear).toBeCloseTo(3500 / 19_500, 2);
    const seq = v.curves.find((c) => c.test.id === SEQUENTIAL_TEST.id)!;
    expect(seq.metric).toBe('bytesPerSecond');
    expect(seq.bend).toBeNull();
    // the spread between VMs: VM 1 runs 10 % above an even share
    const four = random.points[2]!;
    expect(four.iopsMaxPerVm! / four.iopsMinPerVm!).toBeGreaterThan(1.1);
    expect(four.startSkewMs).toBe(6);
  });

  it('the rule: < 50 % of linear scaling, or latency beyond 2× the smallest count', () => {
    const pt = (count: number, iops: number, p99: number): ScalingPoint => ({ count, n: 1, iops, bytesPerSecond: null, perVm: iops / count, latencyMeanUs: p99 / 2, p50Us: null, p99Us: p99, p99MinUs: null, p99MaxUs: null, iopsMinPerVm: null, iopsMaxPerVm: null, iopsCv: null, p99Cv: null, startSkewMs: null, hostVdiskMeanUs: null, hostVdiskMinUs: null, hostVdiskMaxUs: null, hostDatastoreUs: null });
    expect(BEND_RULE).toEqual({ minShareOfLinear: 0.5, maxLatencyFactor: 2 });
    // 2 → 4 adds 9,000 of a linear 18,000: exactly half is not below half
    expect(findBend([pt(1, 10_000, 100), pt(2, 18_000, 110), pt(4, 27_000, 150)], 'iops', 'p99')).toBeNull();
    expect(findBend([pt(1, 10_000, 100), pt(2, 18_000, 110), pt(4, 26_900, 150)], 'iops', 'p99')).toMatchObject({ count: 4, reason: 'throughput' });
    // throughput scales, latency triples at 4
    expect(findBend([pt(1, 10_000, 100), pt(2, 20_000, 150), pt(4, 40_000, 201)], 'iops', 'p99')).toMatchObject({ count: 4, reason: 'latency', latencyFactor: 2.01 });
    expect(findBend([pt(1, 10_000, 100), pt(2, 20_000, 150), pt(4, 40_000, 201)], 'iops', 'mean')).toMatchObject({ count: 4, reason: 'latency' });
    expect(findBend([pt(1, 10_000, 100), pt(2, 20_000, 150), pt(4, 40_000, 199)], 'iops', 'p99')).toBeNull();
  });

  it('Markdown opens with the scaling answer and the rule, then a table per curve', () => {
    const md = renderMarkdown(report);
    const scaling = md.indexOf('## Scaling with VM count');
    expect(scaling).toBeGreaterThan(0);
    expect(scaling).toBeLessThan(md.indexOf('## Overview'));
    expect(md).toContain('- RND4K Q32T1 read (rnd-4k-q32t1-read): IOPS 1 VM 10,060 → 2 VMs 19,617 → 4 VMs 23,138. Bends at 4 VMs: going from 2 to 4 VMs added 18% of linear scaling.');
    expect(md).toMatch(/- SEQ1M Q8T1 read \(seq-1m-q8t1-read\): MB\/s 1 VM [\d.,]+ → 2 VMs [\d.,]+ → 4 VMs [\d.,]+\. No bend up to 4 VMs\./);
    expect(md).toContain('less than 50% of linear scaling');
    expect(md).toContain('exceeds 2× its value at the smallest count');
    expect(md).toContain('18 records (+ 42 per-VM records, each counted in its pass\'s aggregate), 3 permutations');
    expect(md).toMatch(/\| VMs \| n \| IOPS \| MB\/s \| per VM \| lat mean \| p50 \| p99 \| p99 of one VM \(min–max\) \| p99 CV between VMs \| IOPS of one VM \(min–max\) \| IOPS CV between VMs \| start skew \|/);
    expect(md).toMatch(/\| 4 \| 3 \| 23,138 \| [\d.,]+ \| 5,78[45] IOPS \| /);
  });

  it('HTML opens with it too, with two line charts per curve and the bend marked', () => {
    const html = renderHtml(report);
    expect(html.indexOf('id="vm-scaling"')).toBeLessThan(html.indexOf('id="overview"'));
    expect(html.match(/<svg class="chart line-chart"/g)).toHaveLength(4);
    // one bend: marked on both charts of its curve
    expect(html.match(/<line class="bend"/g)).toHaveLength(2);
    expect(html).toContain('bends at 4');
  });

  it('JSON carries the curves; the summary CSV the aggregates; the long CSV says which row is which', () => {
    const json = JSON.parse(renderJson(report)) as { vmScaling: { curves: Array<{ bend: { count: number } | null }> } };
    expect(json.vmScaling.curves.map((c) => c.bend?.count ?? null)).toEqual([4, null]);
    const summary = renderSummaryCsv(report).trim().split('\r\n');
    // 3 permutations × 2 tests, each from its 3 aggregates
    expect(summary).toHaveLength(7);
    const header = summary[0]!.split(',');
    for (const line of summary.slice(1)) expect(line.split(',')[header.indexOf('n')]).toBe('3');
    const long = renderCsv(records).trim().split('\r\n');
    const cols = long[0]!.split(',');
    expect(cols).toEqual(expect.arrayContaining(['vm.role', 'vm.count', 'vm.index', 'vm.name', 'vm.startSkewMs']));
    const roles = long.slice(1).map((l) => l.split(',')[cols.indexOf('vm.role')]);
    expect(roles.filter((r) => r === 'member')).toHaveLength(42);
    expect(roles.filter((r) => r === 'aggregate')).toHaveLength(18);
    // the tool columns still end the header (report/marker.ts)
    expect(cols.slice(-2)).toEqual(['tool', 'toolVersion']);
  });

  it('one VM count: no curve to draw, but the members are still left out, and said so', () => {
    const one = buildReport(vmStudyRecords({ counts: [2], curves: [BENDS_AT_4] }), { runId: 'two' });
    expect(one.vmScaling!.curves).toEqual([]);
    expect(one.tests[0]!.rows[0]!.cells.iops!.summary.n).toBe(3);
    const md = renderMarkdown(one);
    expect(md).not.toContain('Scaling with VM count');
    expect(md).toContain('3 records (+ 6 per-VM records, each counted in its pass\'s aggregate)');
  });

  it('a report without vm records has no scaling section and no vm columns', () => {
    const plain = records.filter((r) => r.vm?.role === 'aggregate').map(({ vm: _vm, ...r }) => r);
    const md = renderMarkdown(buildReport(plain, { runId: 'plain' }));
    expect(md).not.toContain('Scaling with VM count');
    expect(renderCsv(plain).split('\r\n')[0]).not.toContain('vm.role');
  });
});

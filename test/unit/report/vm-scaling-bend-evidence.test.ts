// The bend of a scaling curve is a fixed threshold crossed by means (report/vm-scaling.ts findBend).
// With one repetition, one noisy pass makes a "bend"; with several curves and counts, some step
// crosses by chance. The report now says what its replication unit is, tests every step the rule
// checks one-sided on the repetitions' aggregates (Welch), adjusts them as one family (Holm, as the
// report's comparisons), and says of each bend whether it is supported, not significant, or only
// indicative (report/vm-scaling-evidence.ts).
import { describe, expect, it } from 'vitest';
import type { ResultRecord } from '../../../src/results/record.ts';
import { buildVmScaling, VmScalingRecords } from '../../../src/report/vm-scaling.ts';
import { scalingAnswer, scalingIntro } from '../../../src/report/vm-scaling-text.ts';
import { contrastP } from '../../../src/report/vm-scaling-evidence.ts';
import { BENDS_AT_4, NO_BEND, RANDOM_TEST, vmStudyRecords } from './vm-records.ts';

function scaling(records: readonly ResultRecord[]) {
  const t = new VmScalingRecords();
  for (const r of records) t.add(r);
  return buildVmScaling(t)!;
}

/** An aggregate record of one repetition at `count` VMs with `iops` (latency flat: only throughput can bend). */
function aggregate(count: number, repetition: number, iops: number): ResultRecord {
  return {
    runId: 'r', permutationId: `p-vm${count}`, axes: { 'vm.count': count }, repetition, test: RANDOM_TEST,
    iops, bytesPerSecond: iops * 4096, latencyUs: { mean: 200, p50: 190, p95: 300, p99: 400, p999: 500 },
    cpuPercent: null, tool: { name: 'fio', version: null }, rawPath: null,
    vm: { role: 'aggregate', count, startSkewMs: 1, spread: {} }, metadata: {},
  };
}

describe('whether a bend is more than noise', () => {
  it('one repetition: the bend is indicative only, and the section names its replication unit', () => {
    const v = scaling(vmStudyRecords({ counts: [1, 2, 4], curves: [BENDS_AT_4], repetitions: 1 }));
    const c = v.curves[0]!;
    expect(c.bend).toMatchObject({ count: 4, reason: 'throughput' });
    expect(c.bendEvidence).toMatchObject({ status: 'untested', n: 1, pAdjusted: null });
    expect(scalingAnswer(c)).toMatch(/Bends at 4 VMs: .* Indicative only: n = 1 repetition per count leaves no variance to test it against/);
    expect(scalingIntro(v).join(' ')).toContain('The replication unit is the repetition');
  });

  it('three repetitions of a clear bend: supported, with its Holm-adjusted p over every step of every curve', () => {
    const v = scaling(vmStudyRecords({ counts: [1, 2, 4], curves: [BENDS_AT_4, NO_BEND], repetitions: 3 }));
    const c = v.curves.find((x) => x.test.id === RANDOM_TEST.id)!;
    // 2 curves × 2 steps × (throughput, latency) = 8 step tests, those with variance tested
    expect(c.bendEvidence!.status).toBe('supported');
    expect(c.bendEvidence!.pAdjusted!).toBeLessThan(0.05);
    expect(c.bendEvidence!.family).toBeGreaterThan(1);
    expect(scalingAnswer(c)).toMatch(/Supported: Holm-adjusted p = [\d.e-]+ over \d+ step tests, n = 3 repetitions per count\./);
  });

  it('means that cross the threshold within the noise: not significant', () => {
    // 1 VM: 9,000 / 10,000 / 11,000; 2 VMs: 12,000 / 16,000 / 14,500 — mean share 42 % of linear, spread wide
    // (the family: this step's throughput and latency tests)
    const records = [[9000, 10_000, 11_000], [12_000, 16_000, 14_500]].flatMap((xs, i) => xs.map((x, r) => aggregate(i + 1, r + 1, x)));
    const c = scaling(records).curves[0]!;
    expect(c.bend).toMatchObject({ count: 2, reason: 'throughput' });
    expect(c.bendEvidence!.status).toBe('not-significant');
    expect(scalingAnswer(c)).toMatch(/Not significant: Holm-adjusted p = 0\.\d+ over 2 step tests, n = 3 repetitions per count; it may be noise\./);
  });

  it('the contrast test: Welch on a − c·b, one-sided', () => {
    // a = b·1.5 exactly on average: p ½ either way; far below: p → 0
    expect(contrastP([14, 16], [9, 11], 1.5, 'lower')).toBeCloseTo(0.5, 6);
    expect(contrastP([1, 1.1, 0.9], [10, 10.5, 9.5], 1.5, 'lower')!).toBeLessThan(0.001);
    expect(contrastP([5], [1, 2], 2, 'upper')).toBeNull();
  });
});

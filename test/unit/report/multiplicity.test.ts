// Verdicts a user can publish: p-values adjusted over the report's whole family of comparisons
// (Holm by default), a rank test shown only where its sample sizes can reach the threshold, and
// one rule deciding both ▲/▼ and "too noisy to tell".
import { describe, expect, it } from 'vitest';
import { buildReport } from '../../../src/report/model.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { adjustPValues, compareSamples, mannWhitneyFloor } from '../../../src/report/stats.ts';
import { testIdentity, type ResultRecord } from '../../../src/results/record.ts';

describe('adjustPValues', () => {
  // R: p.adjust(c(0.01, 0.04, 0.03, 0.02, 0.05), "holm") and "BH"
  const ps = [0.01, 0.04, 0.03, 0.02, 0.05];
  it('Holm: step-down, monotone, as R\'s p.adjust', () => {
    expect([...adjustPValues(ps, 'holm')].map((x) => +x.toFixed(10))).toEqual([0.05, 0.09, 0.09, 0.08, 0.09]);
  });
  it('Benjamini–Hochberg: step-up, as R\'s p.adjust', () => {
    expect([...adjustPValues(ps, 'bh')].map((x) => +x.toFixed(10))).toEqual([0.05, 0.05, 0.05, 0.05, 0.05]);
    expect([...adjustPValues([0.001, 0.5, 0.04], 'bh')].map((x) => +x.toFixed(10))).toEqual([0.003, 0.5, 0.06]);
  });
  it('none and a family of one change nothing; nothing exceeds 1', () => {
    expect([...adjustPValues(ps, 'none')]).toEqual(ps);
    expect([...adjustPValues([0.03], 'holm')]).toEqual([0.03]);
    expect(Math.max(...adjustPValues([0.6, 0.7, 0.9], 'holm'))).toBe(1);
  });
});

describe('Mann–Whitney only where it can reach the threshold', () => {
  it('the smallest p at n = 3 per side is 0.1 (2 / C(6,3)); at 5 per side 0.00794', () => {
    expect(mannWhitneyFloor(3, 3)).toBeCloseTo(0.1, 12);
    expect(mannWhitneyFloor(5, 5)).toBeCloseTo(2 / 252, 12);
  });
  it('n = 3 per side: no rank p (it could never be < 0.05), the floor is kept for the table', () => {
    const c = compareSamples([10, 11, 12], [20, 21, 22], true);
    expect(c.mannWhitney).toBeNull();
    expect(c.rankFloor).toBeCloseTo(0.1, 12);
    const c5 = compareSamples([10, 11, 12, 13, 14], [20, 21, 22, 23, 24], true);
    expect(c5.mannWhitney?.p).toBeCloseTo(2 / 252, 12);
  });
});

describe('one rule for ▲/▼ and "too noisy to tell"', () => {
  it('a significant Welch p with an unbounded Δ interval is within noise, never slower', () => {
    // baseline mean barely distinguishable from zero: Fieller's interval does not close
    const c = compareSamples([1, 1.05, 0.95, 1.02], [40, -20, 60, -30], true);
    expect(c.delta?.ci).toBeNull();
    expect(c.verdict).toBe('within-noise');
    expect(c.reason).toMatch(/too noisy to tell/);
  });
  it('the adjusted p decides: raw p < 0.05 but adjusted ≥ 0.05 is within noise', () => {
    const a = [100, 101, 99, 100.5, 99.5];
    const b = [103, 104, 102, 103.5, 102.2];
    const alone = compareSamples(b, a, true);
    expect(alone.welch!.p).toBeLessThan(0.05);
    expect(alone.verdict).toBe('within-noise'); // |Δ| < 5 %
    const big = compareSamples([110, 112, 108, 111, 109], [100, 101, 99, 100.5, 99.5], true, {}, 0.2);
    expect(big.welch!.p).toBeLessThan(0.001);
    expect(big.pAdjusted).toBe(0.2);
    expect(big.verdict).toBe('within-noise');
    expect(big.reason).toMatch(/Holm-adjusted 0\.2\) ≥ 0\.05/);
  });
});

/** Box–Muller normal draws from a fixed LCG: the same inputs on every run. */
function normal(seed: number): () => number {
  let s = seed >>> 0;
  const u = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 1) / 4294967297;
  return () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}

/** Two labels of one configuration: 8 tests, `repeat` repetitions, 8 % noise (a busy lab). */
function nullSweep(seed: number, repeat = 5): ResultRecord[] {
  const z = normal(seed);
  const out: ResultRecord[] = [];
  const tests = Array.from({ length: 8 }, (_, i) => testIdentity({ pattern: i % 2 ? 'randread' : 'read', blockSizeBytes: 4096 << i, queueDepth: 1 + i, threads: 1, readPercent: 100 }));
  for (const label of ['a', 'b']) {
    for (let rep = 1; rep <= repeat; rep++) {
      for (const t of tests) {
        const bytesPerSecond = 500e6 * (1 + 0.08 * z());
        out.push({ runId: 'null', permutationId: `p-${label}`, axes: { 'disk.label': label }, repetition: rep, test: t, iops: bytesPerSecond / t.blockSizeBytes, bytesPerSecond, latencyUs: { mean: 100, p50: 90, p95: 150, p99: 200, p999: 300 }, cpuPercent: 10, tool: { name: 'fio', version: 'fio-3.33' }, rawPath: 'raw' });
      }
    }
  }
  return out;
}

describe('a null sweep (one configuration under two labels, 8 tests, repeat 5)', () => {
  const coloured = (records: ResultRecord[], correction?: 'holm' | 'none') => {
    const r = buildReport(records, { runId: 'null' }, correction ? { verdict: { correction } } : {});
    return r.summary.verdicts.faster + r.summary.verdicts.slower > 0;
  };

  it('shows no ▲/▼ in at least 9 of 10 reports (and 95 of 100); without the correction the same inputs colour more', () => {
    const seeds = Array.from({ length: 100 }, (_, i) => nullSweep(1000 + i));
    const holm = seeds.map((r) => coloured(r));
    expect(holm.slice(0, 10).filter(Boolean).length).toBeLessThanOrEqual(1);
    expect(holm.filter(Boolean).length).toBeLessThanOrEqual(5);
    // the control: each cell on its own (today's way before the correction) colours more reports
    const none = seeds.map((r) => coloured(r, 'none')).filter(Boolean).length;
    expect(none).toBeGreaterThan(holm.filter(Boolean).length);
  });

  it('the report names the correction and the family size, and the replication unit', () => {
    const md = renderMarkdown(buildReport(nullSweep(1), { runId: 'null' }));
    // 8 tests × 5 metrics with data (MB/s, IOPS, lat mean, lat p99, CPU) = 40 comparisons
    expect(md).toContain('p adjusted by Holm over the family of 40 comparisons');
    expect(md).toContain('Replication unit: the run within one provisioning');
  });
});

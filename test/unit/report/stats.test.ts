import { describe, expect, it } from 'vitest';
import {
  compareSamples,
  formatP,
  isNoisy,
  mannWhitneyU,
  normalCdf,
  percentDelta,
  repetitionsNeeded,
  studentTCdf,
  studentTQuantile,
  summarize,
  welchTTest,
} from '../../../src/report/stats.ts';

// Reference values: R's qt()/pt() as printed in R docs and reproduced with scipy 1.17.1
// (scipy.stats.t.ppf/cdf, ttest_ind(equal_var=False), mannwhitneyu) on this machine.

describe('Student t distribution', () => {
  it('matches R qt(0.975, 4) = 2.776445', () => {
    expect(studentTQuantile(0.975, 4)).toBeCloseTo(2.7764451051977934, 9);
  });
  it('matches qt(0.975, 1) = 12.7062 (Cauchy) and fractional df', () => {
    expect(studentTQuantile(0.975, 1)).toBeCloseTo(12.706204736174694, 7);
    expect(studentTQuantile(0.995, 30.5)).toBeCloseTo(2.746967063704737, 9);
    expect(studentTQuantile(0.025, 4)).toBeCloseTo(-2.7764451051977934, 9);
  });
  it('CDF matches pt(-2.5, 3.3) and pnorm(-3.1)', () => {
    expect(studentTCdf(-2.5, 3.3)).toBeCloseTo(0.040026418154177235, 11);
    expect(normalCdf(-3.1)).toBeCloseTo(0.0009676032132183563, 13);
    expect(normalCdf(0)).toBe(0.5);
  });
});

describe('summarize', () => {
  it('gives mean, median, sample stddev and the t interval', () => {
    const s = summarize([10.2, 11.1, 9.8, 10.5, 10.9]);
    expect(s.n).toBe(5);
    expect(s.mean).toBeCloseTo(10.5, 12);
    expect(s.median).toBe(10.5);
    expect(s.stddev).toBeCloseTo(0.5244044240850758, 12);
    expect(s.cv).toBeCloseTo(0.5244044240850758 / 10.5, 12);
    // scipy.stats.t.interval(0.95, 4, loc=mean, scale=sem)
    expect(s.ci?.low).toBeCloseTo(9.848865906114781, 9);
    expect(s.ci?.high).toBeCloseTo(11.151134093885215, 9);
  });
  it('has no spread or interval for a single value, and nothing for none', () => {
    const one = summarize([42]);
    expect(one).toMatchObject({ n: 1, mean: 42, median: 42, stddev: null, ci: null, cv: null });
    expect(summarize([]).mean).toBeNull();
  });
  it('even-length median', () => {
    expect(summarize([4, 1, 3, 2]).median).toBe(2.5);
  });
});

describe("Welch's t-test", () => {
  it('matches ClickHouse welchTTest test vector p = 0.021378001462867 (and scipy)', () => {
    const left = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
    const right = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
    const r = welchTTest(left, right);
    expect(r.p).toBeCloseTo(0.021378001462867, 12);
    expect(r.t).toBeCloseTo(-2.455356398286006, 10);
    expect(r.df).toBeCloseTo(24.988529290231416, 9);
  });
  it('matches the Julia/scipy example X=[80,87,78,72], Y=[119,78,95,124,85,92]: df 6.50027, p 0.0508365', () => {
    const r = welchTTest([80, 87, 78, 72], [119, 78, 95, 124, 85, 92]);
    expect(r.df).toBeCloseTo(6.50027434076389, 10);
    expect(r.p).toBeCloseTo(0.050836543911200315, 12);
    expect(r.t).toBeCloseTo(-2.3902810031928428, 10);
    expect(r.ci.low).toBeCloseTo(-39.262512280780726, 8);
    expect(r.ci.high).toBeCloseTo(0.09584561411407222, 8);
  });
  it('handles constant samples without NaN', () => {
    expect(welchTTest([5, 5, 5], [5, 5]).p).toBe(1);
    expect(welchTTest([6, 6, 6], [5, 5]).p).toBe(0);
  });
  it('refuses n < 2', () => {
    expect(() => welchTTest([1], [1, 2])).toThrow(/at least 2 values/);
  });
});

describe('Mann–Whitney U', () => {
  it('exact p for complete separation 4 vs 5 = 2/126 (scipy method=exact)', () => {
    const r = mannWhitneyU([1.1, 2.3, 3.5, 4.2], [5.1, 6.4, 7.7, 8.0, 9.3]);
    expect(r).toMatchObject({ u: 0, method: 'exact' });
    expect(r.p).toBeCloseTo(0.015873015873015872, 14);
  });
  it('exact p for an overlapping 6 vs 7 case (scipy: U=7, p=0.05128205)', () => {
    const r = mannWhitneyU([3.1, 4.2, 5.0, 6.3, 2.2, 7.1], [4.0, 5.5, 8.1, 9.2, 6.6, 7.9, 10.4]);
    expect(r.u).toBe(7);
    expect(r.p).toBeCloseTo(0.05128205128205128, 12);
  });
  it('normal approximation with ties and continuity correction (scipy asymptotic: U=11, p=0.017547)', () => {
    const r = mannWhitneyU([1, 2, 2, 3, 4, 5, 5, 6], [3, 4, 5, 6, 6, 7, 8, 9, 9]);
    expect(r).toMatchObject({ u: 11, method: 'normal' });
    expect(r.p).toBeCloseTo(0.01754696188101204, 10);
  });
});

describe('percentDelta (Fieller)', () => {
  it('endpoints solve Fieller’s quadratic (a − θb)² = t²(v_a + θ² v_b)', () => {
    const cand = [90, 92, 88, 91, 89];
    const base = [100, 103, 98, 101, 99];
    const d = percentDelta(cand, base)!;
    expect(d.pct).toBeCloseTo(100 * (90 / 100.2 - 1), 10);
    const va = 2.5 / 5; // variance(cand)/n
    const vb = 3.7 / 5;
    const df = (va + vb) ** 2 / (va ** 2 / 4 + vb ** 2 / 4);
    const t = studentTQuantile(0.975, df);
    for (const pct of [d.ci!.low, d.ci!.high]) {
      const theta = 1 + pct / 100;
      expect((90 - theta * 100.2) ** 2).toBeCloseTo(t * t * (va + theta * theta * vb), 8);
    }
    expect(d.ci!.low).toBeLessThan(d.pct);
    expect(d.ci!.high).toBeGreaterThan(d.pct);
  });
  it('gives no interval with one value per side, and null for a zero baseline', () => {
    expect(percentDelta([110], [100])).toEqual({ pct: 10.000000000000009, ci: null });
    expect(percentDelta([1, 2], [0, 0])).toBeNull();
  });
});

describe('verdicts', () => {
  const base = [1000, 1010, 990, 1005, 995];
  it('identical distributions → within-noise', () => {
    const c = compareSamples([1000, 1010, 990, 1005, 995], base, true);
    expect(c.verdict).toBe('within-noise');
    expect(c.welch?.p).toBeCloseTo(1, 12);
  });
  it('a 20% throughput drop with low noise → slower', () => {
    const c = compareSamples(base.map((x) => x * 0.8), base, true);
    expect(c.verdict).toBe('slower');
    expect(c.delta?.pct).toBeCloseTo(-20, 10);
    expect(c.welch!.p).toBeLessThan(0.001);
  });
  it('20% more latency is slower, 20% less is faster', () => {
    expect(compareSamples(base.map((x) => x * 1.2), base, false).verdict).toBe('slower');
    expect(compareSamples(base.map((x) => x * 0.8), base, false).verdict).toBe('faster');
  });
  it('a significant but tiny difference stays within noise (min effect 5%)', () => {
    const c = compareSamples(base.map((x) => x * 1.02), base.map((x) => x), true, { minEffectPct: 5 });
    expect(c.welch!.p).toBeLessThan(0.05);
    expect(c.verdict).toBe('within-noise');
    expect(compareSamples(base.map((x) => x * 1.02), base, true, { minEffectPct: 1 }).verdict).toBe('faster');
  });
  it('a large but noisy difference stays within noise', () => {
    const c = compareSamples([500, 1500, 900, 1800, 600], base, true);
    expect(c.welch!.p).toBeGreaterThan(0.05);
    expect(c.verdict).toBe('within-noise');
  });
  it('one repetition → insufficient-data', () => {
    expect(compareSamples([800], [1000], true).verdict).toBe('insufficient-data');
  });
});

describe('noise flags', () => {
  it('flags CV above the threshold', () => {
    expect(isNoisy(summarize([100, 130, 70, 120]))).toBe(true);
    expect(isNoisy(summarize([100, 101, 99]))).toBe(false);
  });
  it('estimates repetitions for the CI half-width to reach the minimum effect', () => {
    // sd 10% of the mean, target ±5%: n with t(n−1)·0.1/√n ≤ 0.05 → 18 (t17 = 2.1098 → 0.04973)
    expect(repetitionsNeeded(10, 100, 0.05)).toBe(18);
    expect(repetitionsNeeded(0, 100, 0.05)).toBe(2);
  });
  it('formats p-values', () => {
    expect(formatP(0.0001)).toBe('< 0.001');
    expect(formatP(0.04321)).toBe('0.0432');
    expect(formatP(1)).toBe('1');
  });
});

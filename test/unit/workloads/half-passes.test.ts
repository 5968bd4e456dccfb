// A mixed job's halves over several passes are aggregated as the job's total is (issue 30 item 3).
import { describe, expect, it } from 'vitest';
import { halfFacts } from '../../../src/results/mix-halves.ts';
import { aggregateHalves } from '../../../src/workloads/half-passes.ts';

const lat = (mean: number) => ({ mean, p50: null, p95: null, p99: null, p999: null });
const pass = (r: number, w: number) => halfFacts({ iops: r, bytesPerSecond: r * 4096, latencyUs: lat(100) }, { iops: w, bytesPerSecond: w * 4096, latencyUs: lat(200) });

describe('aggregateHalves', () => {
  it('means the halves of the passes with the mean rule, so they add up to the mean total', () => {
    const m = aggregateHalves([pass(700, 300), pass(900, 100)], 'mean');
    expect(m['half.read.iops']).toBe(800);
    expect(m['half.write.iops']).toBe(200);
    expect(m['half.read.latencyUs.mean']).toBe(100);
  });

  it("leaves the representative pass's halves for max and last, and a single pass alone", () => {
    expect(aggregateHalves([pass(700, 300), pass(900, 100)], 'max')).toEqual({});
    expect(aggregateHalves([pass(700, 300)], 'mean')).toEqual({});
    expect(aggregateHalves([{ latencySpan: 'x' }, { latencySpan: 'x' }], 'mean')).toEqual({});
  });
});

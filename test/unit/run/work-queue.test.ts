// The queue's pure parts: which targets share a queue (take turns across workers), the job id of a
// permutation (the store URL: test/unit/config/store-url.test.ts).
import { describe, expect, it } from 'vitest';
import { jobId, queueGroups } from '../../../src/run/work-queue.ts';

describe('queueGroups', () => {
  it('one target: one queue', () => {
    expect(queueGroups({ runId: 'r1', target: 'a' })).toEqual([{ queue: 'storsweep_r1_g0', targets: ['a'] }]);
  });
  it('listed targets each get a queue, unless a serialised resource joins them (transitively)', () => {
    const plan = {
      runId: 'r2',
      target: 'a, b, c, d',
      targets: ['a', 'b', 'c', 'd'].map((name) => ({ name, provider: 'vsphere' as const })),
      serialised: [
        { key: 'vm x', what: 'VM x', targets: ['a', 'c'] },
        { key: 'lun y', what: 'LUN y', targets: ['c', 'd'] },
      ],
    };
    expect(queueGroups(plan)).toEqual([
      { queue: 'storsweep_r2_g0', targets: ['a', 'c', 'd'] },
      { queue: 'storsweep_r2_g1', targets: ['b'] },
    ]);
  });
});

describe('jobId', () => {
  it('is a uuid, the same for the same permutation and different for another', () => {
    const a = jobId('r1', 'p-1');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(jobId('r1', 'p-1')).toBe(a);
    expect(jobId('r1', 'p-2')).not.toBe(a);
    expect(jobId('r2', 'p-1')).not.toBe(a);
  });
});

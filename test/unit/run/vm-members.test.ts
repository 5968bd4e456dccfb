// The pieces of a vm.count pass that need no lab (run/vm-members.ts): the barrier every VM's scored
// pass waits at (all released together; one failing VM releases the others with its error, so none
// waits forever), each VM's start as its fio says it (timestamp_ms less the job's runtime), and the
// start-skew bound. The pass on the lab: test/integration/vm-scaling.test.ts.
import { describe, expect, it } from 'vitest';
import { Barrier, fioIoSpanMs, skewBoundMs, VM_START_SKEW_BOUND_MS } from '../../../src/run/vm-members.ts';

describe('Barrier', () => {
  it('releases nobody until all N arrived, then everybody', async () => {
    const b = new Barrier(3);
    const released: number[] = [];
    const a = b.arrive().then(() => released.push(1));
    const c = b.arrive().then(() => released.push(2));
    await Promise.resolve();
    await Promise.resolve();
    expect(released).toEqual([]);
    await Promise.all([b.arrive().then(() => released.push(3)), a, c]);
    expect(released.sort()).toEqual([1, 2, 3]);
  });

  it('broken by one party\'s failure: the waiting parties and later arrivals reject with it', async () => {
    const b = new Barrier(3);
    const waiting = b.arrive();
    const boom = new Error('fio failed in VM 2');
    b.break(boom);
    await expect(waiting).rejects.toBe(boom);
    await expect(b.arrive()).rejects.toBe(boom);
  });
});

describe('fioIoSpanMs', () => {
  it('is the JSON\'s timestamp_ms (written as the jobs ended) less the longest job runtime', () => {
    const raw = JSON.stringify({ 'fio version': 'fio-3.33', timestamp: 1796521409, timestamp_ms: 1796521409035, jobs: [{ jobname: 'a', job_runtime: 2000 }, { jobname: 'b', job_runtime: 1990 }] });
    expect(fioIoSpanMs(`note: a line fio printed first\n${raw}`)).toEqual({ start: 1796521407035, end: 1796521409035 });
  });

  it('is null when the output says neither', () => {
    expect(fioIoSpanMs('{"jobs": []}')).toBeNull();
    expect(fioIoSpanMs('not json')).toBeNull();
  });
});

describe('the start-skew bound', () => {
  it('is 1 s, or a twentieth of the pass when that is longer', () => {
    expect(VM_START_SKEW_BOUND_MS).toBe(1000);
    expect(skewBoundMs({ runtimeSec: 1 })).toBe(1000);
    expect(skewBoundMs({ runtimeSec: 60 })).toBe(3000);
  });
});

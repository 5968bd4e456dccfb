// Queue depth and thread counts have the tools' limits, whoever writes the test: a preset, an IOMeter
// spec, a custom fio job or custom diskspd parameters (src/limits.ts cites each limit).
import { describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../../src/errors.ts';
import { MAX_QUEUE_DEPTH, MAX_THREADS } from '../../../src/limits.ts';
import { customDiskspdTest, customFioTest } from '../../../src/workloads/custom.ts';
import { makeTest } from '../../../src/workloads/profiles.ts';

describe('makeTest: every test passes through it', () => {
  it('accepts 1..32768 outstanding I/Os and 1..4096 threads', () => {
    expect(makeTest('randread', 4096, MAX_QUEUE_DEPTH, MAX_THREADS).queueDepth).toBe(32768);
    expect(makeTest('randread', 4096, 1, 1).threads).toBe(1);
  });

  it.each([
    [0, 1],
    [MAX_QUEUE_DEPTH + 1, 1],
    [1.5, 1],
    [1, 0],
    [1, MAX_THREADS + 1],
    [1, NaN],
  ])('refuses queue depth %s / threads %s', (qd, t) => {
    expect(() => makeTest('randread', 4096, qd, t)).toThrow(InvalidArgument);
  });
});

describe('custom jobs', () => {
  it('fio: iodepth 65536 and numjobs 100000 are refused with the range; the largest allowed pass', () => {
    expect(() => customFioTest({ rw: 'randread', iodepth: 65536 })).toThrow('fio option iodepth="65536": expected a whole number from 1 to 32768');
    expect(() => customFioTest({ rw: 'randread', numjobs: 100000 })).toThrow('fio option numjobs="100000": expected a whole number from 1 to 4096');
    expect(customFioTest({ rw: 'randread', iodepth: 32768, numjobs: 4096 })).toMatchObject({ queueDepth: 32768, threads: 4096 });
  });

  it('diskspd: -o/-O above 32768 and -t/-F above 4096 are refused (diskspd itself only needs > 0)', () => {
    expect(() => customDiskspdTest('-b4K -o65536')).toThrow('diskspd parameter -o65536="-o65536": expected outstanding I/Os from 1 to 32768');
    expect(() => customDiskspdTest('-b4K -O65536 -F2')).toThrow('expected outstanding I/Os from 1 to 32768');
    expect(() => customDiskspdTest('-b4K -F5000')).toThrow('diskspd parameter -F5000="-F5000": expected threads from 1 to 4096');
    expect(customDiskspdTest('-b4K -o32768 -t4096')).toMatchObject({ queueDepth: 32768, threads: 4096 });
  });
});

describe('custom fio times', () => {
  it('runtime, ramp_time and startdelay above a day are refused in fio\'s own units; thinktime counts µs', async () => {
    const { validateFioOptions } = await import('../../../src/workloads/custom.ts');
    expect(validateFioOptions({ runtime: '86400', ramp_time: '24h', startdelay: '1d', thinktime: '86400000000' })).toMatchObject({ runtime: '86400' });
    expect(() => validateFioOptions({ runtime: '86401' })).toThrow('fio option runtime="86401": expected at most 86400 s');
    expect(() => validateFioOptions({ ramp_time: '2d' })).toThrow('fio option ramp_time="2d": expected at most 86400 s');
    expect(() => validateFioOptions({ startdelay: '1441m' })).toThrow('expected at most 86400 s');
    expect(() => validateFioOptions({ thinktime: '2d' })).toThrow('expected at most 86400 s');
    expect(validateFioOptions({ thinktime: '1000' })).toEqual({ thinktime: '1000' });
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../../src/errors.ts';
import { customDiskspdTest, customFioTest, resolveWorkload, validateDiskspdParams, validateFioOptions } from '../../../src/workloads/custom.ts';
import { PROFILES } from '../../../src/workloads/profiles.ts';

describe('custom fio jobs', () => {
  it('derive the identity from rw/bs/iodepth/numjobs/rwmixread and keep the rest as options', () => {
    const t = customFioTest({ rw: 'randrw', bs: '8k', iodepth: 16, numjobs: 4, rwmixread: 70, norandommap: true, ioengine: 'io_uring' });
    expect(t.id).toBe('rnd-8k-q16t4-mix70');
    expect(t.fioOptions).toEqual({ norandommap: '1', ioengine: 'io_uring' });
  });

  it('accepts --prefixed keys and fio size spellings', () => {
    expect(customFioTest({ '--rw': 'write', '--bs': '1m' }).id).toBe('seq-1m-q1t1-write');
    expect(validateFioOptions({ size: '10%', runtime: '30s', percentile_list: '50:99:99.9' })).toEqual({ size: '10%', runtime: '30s', percentile_list: '50:99:99.9' });
  });

  it.each([
    [{ output: '/tmp/x' }, /output.*may not be set in a playbook/],
    [{ 'output-format': 'normal' }, /may not be set/],
    [{ exec_prerun: 'rm' }, /running programs on the guest is not allowed/],
    [{ exec_anything: 'x' }, /running programs/],
    [{ filename: '/dev/sda' }, /runner sets the target/],
    [{ bs: '4k;reboot' }, /shell metacharacter/],
    [{ ioengine: 'libaio $(id)' }, /shell metacharacter/],
    [{ iodepth: 'deep' }, /does not match/],
    [{ rwmixread: 101 }, /does not match/],
    [{ frobnicate: 1 }, /not one storsweep accepts; allowed: rw, readwrite/],
  ])('rejects %j', (opts, message) => {
    expect(() => validateFioOptions(opts)).toThrow(InvalidArgument);
    expect(() => validateFioOptions(opts)).toThrow(message);
  });

  it('refuses block size ranges that cannot name one test', () => {
    expect(() => customFioTest({ bs: '4k-64k' })).toThrow(/does not match/);
  });
});

describe('custom diskspd parameters', () => {
  it('derive the identity from -b -o -t -w -r and keep the rest', () => {
    const t = customDiskspdTest('-b8K -o16 -t4 -r -w30 -Su -Zr -ag');
    expect(t.id).toBe('rnd-8k-q16t4-mix70');
    expect(t.diskspdOptions).toEqual(['-Su', '-Zr', '-ag']);
  });

  it('uses diskspd defaults for missing flags (64K, -o2, one thread, reads)', () => {
    expect(customDiskspdTest(['-Sh']).id).toBe('seq-64k-q2t1-read');
  });

  it.each([
    ['-d60', /profile sets the duration/],
    ['-c10G', /test file size/],
    ['-Rtext', /always asks for -Rxml/],
    ['D:\\file.dat', /not a flag; the target comes from the inventory/],
    ['-Z1M,C:\\entropy.bin', /shell metacharacter|not a flag storsweep accepts/],
    ['-b4K;calc', /shell metacharacter/],
    ['-q7', /not a flag storsweep accepts/],
    ['-w', /not a flag storsweep accepts/],
  ])('rejects %s', (param, message) => {
    expect(() => validateDiskspdParams(param)).toThrow(InvalidArgument);
    expect(() => validateDiskspdParams(param)).toThrow(message);
  });

  it('rejects a write share over 100', () => {
    expect(() => customDiskspdTest('-w150')).toThrow(/0\.\.100/);
  });
});

describe('resolveWorkload', () => {
  it('returns presets by name', () => {
    expect(resolveWorkload('cdm6')).toBe(PROFILES['cdm6']);
  });

  it('turns a bare IOMeter spec into a one-test profile with CDM 8 timing but no unscored warm-up pass (IOMeter runs none)', () => {
    const p = resolveWorkload('32k 100% read 0% random');
    expect(p.tests.map((t) => t.id)).toEqual(['seq-32k-q1t1-read']);
    expect(p).toMatchObject({ passes: 5, runtimeSec: 5, aggregate: 'max', fileSizeBytes: 1024 ** 3, warmupPass: false });
    expect(p.description).toContain('no warm-up pass');
  });

  it('an inline custom workload takes its base\'s timing but not CrystalDiskMark\'s pass 0', () => {
    for (const input of [{ fio: { rw: 'randread', bs: '16k' } }, { base: 'cdm3', iometer: '4k 100% read 100% random' }, { base: 'cdm8-default', diskspd: '-b4K -r' }]) {
      const p = resolveWorkload(input);
      expect(p.warmupPass, JSON.stringify(input)).toBe(false);
      expect(p.description).toContain('no warm-up pass');
    }
    expect(resolveWorkload({ base: 'cdm3', iometer: '4k 100% read 100% random' })).toMatchObject({ runtimeSec: 6, passes: 5 });
    // the presets themselves keep theirs
    expect(PROFILES['cdm8-default']!.warmupPass).toBe(true);
  });

  it('takes inline iometer lists, fio jobs and diskspd jobs with a base profile for timing', () => {
    const io = resolveWorkload({ iometer: ['32k 0% read 0% random', '4k 50% read 100% random q32'], base: 'quick', name: 'iometer-classic' });
    expect(io.name).toBe('iometer-classic');
    expect(io.tests.map((t) => t.id)).toEqual(['seq-32k-q1t1-write', 'rnd-4k-q32t1-mix50']);
    expect(io.runtimeSec).toBe(1);
    expect(resolveWorkload({ fio: { rw: 'randread', bs: '16k', iodepth: 64 } }).tests[0]?.id).toBe('rnd-16k-q64t1-read');
    expect(resolveWorkload({ diskspd: [['-b4K', '-r', '-o32'], ['-b1M', '-o8']] }).tests.map((t) => t.id)).toEqual(['rnd-4k-q32t1-read', 'seq-1m-q8t1-read']);
    expect(resolveWorkload({ diskspd: '-b4K -r' }).tests[0]?.id).toBe('rnd-4k-q2t1-read');
  });

  it('names the presets when a name is unknown, and wants exactly one kind inline', () => {
    expect(() => resolveWorkload('cdm9')).toThrow(/neither a preset \(cdm8-default, quick, cdm3/);
    expect(() => resolveWorkload({ base: 'nope', fio: {} })).toThrow(/"nope" is neither a preset/);
    expect(() => resolveWorkload({ fio: {}, diskspd: '-b4K' })).toThrow(/exactly one of iometer, fio, diskspd \(got fio, diskspd\)/);
    expect(() => resolveWorkload({})).toThrow(/got none/);
  });
});

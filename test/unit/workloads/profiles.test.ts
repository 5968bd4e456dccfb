import { describe, expect, it } from 'vitest';
import { shJoin } from '../../../src/ssh/quote.ts';
import { diskspdArgs } from '../../../src/workloads/diskspd.ts';
import { fioArgs } from '../../../src/workloads/fio.ts';
import { getProfile, profileNames, PROFILES } from '../../../src/workloads/profiles.ts';

const ids = (name: string) => PROFILES[name]?.tests.map((t) => t.id);

describe('CrystalDiskMark profiles', () => {
  it('cover every CDM version and preset, plus the existing ones', () => {
    expect(profileNames().sort()).toEqual(
      ['cdm3', 'cdm5', 'cdm6', 'cdm7-default', 'cdm7-peak', 'cdm7-real', 'cdm8-default', 'cdm8-demo', 'cdm8-nvme', 'cdm8-peak', 'cdm8-real', 'quick'].sort(),
    );
  });

  it('cdm3: Seq 1 MiB QD1, Random 512K QD1, 4K QD1, 4K QD32 on a 1000 MiB file; each read then its write (2.2 ExecDiskBenchAll); 6 s passes after an unscored one', () => {
    expect(ids('cdm3')).toEqual([
      'seq-1m-q1t1-read', 'seq-1m-q1t1-write', 'rnd-512k-q1t1-read', 'rnd-512k-q1t1-write',
      'rnd-4k-q1t1-read', 'rnd-4k-q1t1-write', 'rnd-4k-q32t1-read', 'rnd-4k-q32t1-write',
    ]);
    expect(PROFILES['cdm3']).toMatchObject({ fileSizeBytes: 1000 * 1024 * 1024, passes: 5, runtimeSec: 6, warmupPass: true, intervalSec: 0, aggregate: 'max', direct: true, prefill: true });
  });

  it('cdm5 and cdm6 use 128 KiB Q32 sequential; cdm6 adds 4K Q8T8; every read test, then every write test (5.1.2 ExecDiskBenchAll)', () => {
    expect(ids('cdm5')).toEqual([
      'seq-128k-q32t1-read', 'rnd-4k-q32t1-read', 'seq-1m-q1t1-read', 'rnd-4k-q1t1-read',
      'seq-128k-q32t1-write', 'rnd-4k-q32t1-write', 'seq-1m-q1t1-write', 'rnd-4k-q1t1-write',
    ]);
    expect(ids('cdm6')).toEqual([
      'seq-128k-q32t1-read', 'rnd-4k-q8t8-read', 'rnd-4k-q32t1-read', 'rnd-4k-q1t1-read',
      'seq-128k-q32t1-write', 'rnd-4k-q8t8-write', 'rnd-4k-q32t1-write', 'rnd-4k-q1t1-write',
    ]);
  });

  it('cdm8 default: all reads before all writes', () => {
    expect(ids('cdm8-default')).toEqual([
      'seq-1m-q8t1-read', 'seq-1m-q1t1-read', 'rnd-4k-q32t1-read', 'rnd-4k-q1t1-read',
      'seq-1m-q8t1-write', 'seq-1m-q1t1-write', 'rnd-4k-q32t1-write', 'rnd-4k-q1t1-write',
    ]);
  });

  it('cdm7 presets use RND4K Q32T16; cdm8 default/peak use Q32T1; nvme adds SEQ128K Q32T1', () => {
    expect(ids('cdm7-default')).toContain('rnd-4k-q32t16-read');
    expect(ids('cdm7-peak')).toEqual(['seq-1m-q8t1-read', 'rnd-4k-q32t16-read', 'seq-1m-q8t1-write', 'rnd-4k-q32t16-write']);
    expect(ids('cdm7-real')).toEqual(['seq-1m-q1t1-read', 'rnd-4k-q1t1-read', 'seq-1m-q1t1-write', 'rnd-4k-q1t1-write']);
    expect(ids('cdm8-peak')).toEqual(['seq-1m-q8t1-read', 'rnd-4k-q32t1-read', 'seq-1m-q8t1-write', 'rnd-4k-q32t1-write']);
    expect(ids('cdm8-real')).toEqual(ids('cdm7-real'));
    expect(ids('cdm8-demo')).toEqual(['seq-1m-q8t1-read', 'seq-1m-q8t1-write']);
    expect(ids('cdm8-nvme')).toEqual([
      'seq-1m-q8t1-read', 'seq-128k-q32t1-read', 'rnd-4k-q32t16-read', 'rnd-4k-q1t1-read',
      'seq-1m-q8t1-write', 'seq-128k-q32t1-write', 'rnd-4k-q32t16-write', 'rnd-4k-q1t1-write',
    ]);
  });

  it('every cdm profile states the best-of-passes rule and its timing; every version runs an unscored pass 0 and pre-fills its file', () => {
    for (const name of profileNames().filter((n) => n.startsWith('cdm'))) {
      const p = PROFILES[name]!;
      expect(p.aggregate, name).toBe('max');
      expect(p.description, name).toMatch(/best|max/i);
      expect(p.description, name).toMatch(/after one unscored pass/);
      expect(p.passes, name).toBe(5);
      expect(p.runtimeSec, name).toBe(name === 'cdm3' ? 6 : 5);
      expect(p, name).toMatchObject({ warmupPass: true, prefill: true });
    }
    expect(PROFILES['cdm8-nvme']).toMatchObject({ intervalSec: 5, fileSizeBytes: 1024 ** 3 });
    expect(PROFILES['cdm7-default']).toMatchObject({ intervalSec: 5 });
  });

  it('getProfile does not answer for inherited object keys', () => {
    expect(getProfile('toString')).toBeUndefined();
    expect(getProfile('cdm6')?.name).toBe('cdm6');
  });
});

describe('golden command lines', () => {
  it('cdm3 on diskspd', () => {
    const p = PROFILES['cdm3']!;
    expect(p.tests.map((t) => shJoin(diskspdArgs(t, p, { target: 'D:\\bench\\cdm.dat' })))).toEqual([
      "-b1M -o1 -t1 -w0 -d6 -W0 -S -L -Rxml 'D:\\bench\\cdm.dat'",
      "-b1M -o1 -t1 -w100 -d6 -W0 -S -Z1M -L -Rxml 'D:\\bench\\cdm.dat'",
      "-b512K -o1 -t1 -r -w0 -d6 -W0 -S -L -Rxml 'D:\\bench\\cdm.dat'",
      "-b512K -o1 -t1 -r -w100 -d6 -W0 -S -Z512K -L -Rxml 'D:\\bench\\cdm.dat'",
      "-b4K -o1 -t1 -r -w0 -d6 -W0 -S -L -Rxml 'D:\\bench\\cdm.dat'",
      "-b4K -o1 -t1 -r -w100 -d6 -W0 -S -Z4K -L -Rxml 'D:\\bench\\cdm.dat'",
      "-b4K -o32 -t1 -r -w0 -d6 -W0 -S -L -Rxml 'D:\\bench\\cdm.dat'",
      "-b4K -o32 -t1 -r -w100 -d6 -W0 -S -Z4K -L -Rxml 'D:\\bench\\cdm.dat'",
    ]);
  });

  it('cdm6 Q8T8 and cdm8-nvme Q32T16 on diskspd (threads per target)', () => {
    const six = PROFILES['cdm6']!;
    expect(diskspdArgs(six.tests[1]!, six, { target: '#3' })).toEqual(['-b4K', '-o8', '-t8', '-r', '-w0', '-d5', '-W0', '-S', '-f1G', '-L', '-Rxml', '#3']);
    const nvme = PROFILES['cdm8-nvme']!;
    expect(diskspdArgs(nvme.tests[6]!, nvme, { target: 'E:' }).join(' ')).toBe('-b4K -o32 -t16 -r -w100 -d5 -W0 -S -Z4K -ag -f1G -L -Rxml E:');
    expect(diskspdArgs(nvme.tests[1]!, nvme, { target: 'E:' }).join(' ')).toBe('-b128K -o32 -t1 -w0 -d5 -W0 -S -ag -f1G -L -Rxml E:');
  });

  it('cdm8-default on fio', () => {
    const p = PROFILES['cdm8-default']!;
    expect(shJoin(fioArgs(p.tests[0]!, p, { filename: '/dev/sdb' }))).toBe(
      '--name=seq-1m-q8t1-read --filename=/dev/sdb --size=1073741824 --rw=read --bs=1048576 --iodepth=8 --numjobs=1 --group_reporting ' +
        '--ioengine=libaio --direct=1 --runtime=5 --time_based --randrepeat=0 --refill_buffers --norandommap --percentile_list=50:95:99:99.9 --lat_percentiles=1 --output-format=json+',
    );
  });

  it('every test of every profile, both tools, matches the stored golden file', async () => {
    const lines: string[] = [];
    for (const name of profileNames()) {
      const p = PROFILES[name]!;
      for (const t of p.tests) {
        lines.push(`${name} ${t.id}`);
        lines.push(`  diskspd ${shJoin(diskspdArgs(t, p, { target: 'D:\\bench\\storsweep.dat' }))}`);
        lines.push(`  fio ${shJoin(fioArgs(t, p, { filename: '/mnt/bench/storsweep.dat' }))}`);
      }
    }
    await expect(lines.join('\n') + '\n').toMatchFileSnapshot('./golden/profile-command-lines.txt');
  });
});

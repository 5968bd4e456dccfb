// The pre-fill's command lines and the diskspd fill loop (workloads/prefill.ts); the loop is driven
// by the real diskspd XML reader with results shaped like diskspd's.
import { describe, expect, it } from 'vitest';
import { diskspdArgs } from '../../../src/workloads/diskspd.ts';
import { diskspdCreateOnlyArgs, diskspdFillArgs, fioFillArgs, runDiskspdFill } from '../../../src/workloads/prefill.ts';
import { PROFILES, profileNames } from '../../../src/workloads/profiles.ts';

const MiB = 1024 * 1024;
const cdm8 = PROFILES['cdm8-default']!;

function xmlWriting(bytes: number): string {
  return [
    '<Results>',
    '  <TimeSpan>',
    '    <TestTimeSeconds>10.00</TestTimeSeconds>',
    '    <ThreadCount>1</ThreadCount>',
    '    <Thread><Id>0</Id><Target><Path>x</Path>',
    `      <BytesCount>${bytes}</BytesCount><IOCount>${bytes / MiB}</IOCount><ReadBytes>0</ReadBytes><ReadCount>0</ReadCount>`,
    `      <WriteBytes>${bytes}</WriteBytes><WriteCount>${bytes / MiB}</WriteCount>`,
    '    </Target></Thread>',
    '  </TimeSpan>',
    '</Results>',
  ].join('\n');
}

describe('fio pre-fill', () => {
  it('one sequential write job over the test size, 1 MiB blocks, fresh random data per I/O, not time based', () => {
    const args = fioFillArgs(cdm8, { filename: '/dev/disk/by-path/pci-0000:03:00.0-scsi-0:0:1:0' });
    expect(args).toEqual([
      '--name=storsweep-prefill',
      '--filename=/dev/disk/by-path/pci-0000\\:03\\:00.0-scsi-0\\:0\\:1\\:0',
      '--size=1073741824',
      '--rw=write',
      '--bs=1048576',
      '--iodepth=8',
      '--ioengine=libaio',
      '--direct=1',
      '--refill_buffers',
      '--buffer_compress_percentage=0',
      '--end_fsync=1',
      '--output-format=json',
    ]);
    expect(args.some((a) => a.startsWith('--time_based') || a.startsWith('--runtime'))).toBe(false);
  });
});

describe('diskspd pre-fill: -c only here, never in a measured pass', () => {
  it('the first fill pass of a file target creates it (-c); later ones start at -B where the last ended', () => {
    expect(diskspdFillArgs(cdm8, { target: 'T:\\storsweep.dat', baseBytes: 0, create: true })).toEqual([
      '-b1M', '-o8', '-t1', '-s', '-w100', '-d10', '-W0', '-S', '-Z1M', '-c1G', '-Rxml', 'T:\\storsweep.dat',
    ]);
    expect(diskspdFillArgs(cdm8, { target: 'T:\\storsweep.dat', baseBytes: 512 * MiB, create: false })).toEqual([
      '-b1M', '-o8', '-t1', '-s', '-w100', '-d10', '-W0', '-S', '-Z1M', `-B${512 * MiB}`, '-Rxml', 'T:\\storsweep.dat',
    ]);
  });

  it('a raw target (#N, X:) is never created, only bounded to the test region (-f), in the fill and in every pass', () => {
    expect(diskspdFillArgs(cdm8, { target: '#2', baseBytes: 0, create: true })).toEqual(['-b1M', '-o8', '-t1', '-s', '-w100', '-d10', '-W0', '-S', '-Z1M', '-f1G', '-Rxml', '#2']);
    expect(diskspdArgs(cdm8.tests[0]!, cdm8, { target: '#2' })).toContain('-f1G');
    expect(diskspdCreateOnlyArgs(cdm8, '#2')).toBeNull();
    expect(diskspdCreateOnlyArgs(cdm8, 'T:\\t.dat')).toEqual(['-b1M', '-o1', '-t1', '-w0', '-d1', '-W0', '-S', '-c1G', '-Rxml', 'T:\\t.dat']);
  });

  it('no measured pass of any profile carries -c; every direct one carries -S (not -Sh)', () => {
    for (const name of profileNames()) {
      const p = PROFILES[name]!;
      for (const t of p.tests) {
        const argv = diskspdArgs(t, p, { target: 'T:\\storsweep.dat' });
        expect(argv.filter((a) => a.startsWith('-c')), `${name} ${t.id}`).toEqual([]);
        expect(argv, `${name} ${t.id}`).toContain('-S');
        expect(argv, `${name} ${t.id}`).not.toContain('-Sh');
      }
    }
  });

  it('loops until the region is covered: each pass continues at the offset the last one reached', async () => {
    const seen: string[][] = [];
    const written = [400 * MiB, 400 * MiB, 400 * MiB];
    let t = 0;
    const out = await runDiskspdFill(
      cdm8,
      'T:\\storsweep.dat',
      async (argv) => {
        seen.push(argv);
        return xmlWriting(written[seen.length - 1]!);
      },
      () => (t += 2500),
    );
    expect(seen.map((a) => a.filter((x) => /^-[cB]/.test(x)))).toEqual([['-c1G'], [`-B${400 * MiB}`], [`-B${800 * MiB}`]]);
    expect(out).toMatchObject({ filled: true, bytes: 1024 * MiB, passes: 3, seconds: 2.5 });
  });

  it('a pass that writes nothing is an error, not an endless loop', async () => {
    await expect(runDiskspdFill(cdm8, 'T:\\s.dat', async () => xmlWriting(0))).rejects.toThrow(/fill pass from offset 0 wrote nothing/);
  });
});

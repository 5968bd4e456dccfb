import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../src/errors.ts';
import { parseCrystalDiskMarkText } from '../../../src/importers/crystaldiskmark-text.ts';
import { decodeText } from '../../../src/importers/import-result.ts';

const path = (name: string) => new URL(`../../fixtures/cdm/${name}`, import.meta.url);
const load = (name: string) => parseCrystalDiskMarkText(decodeText(readFileSync(path(name))), `test/fixtures/cdm/${name}`);
const byId = (r: ReturnType<typeof load>, id: string) => r.records.find((x) => x.test.id === id);

describe('CrystalDiskMark 3.0 seeds (VMFS block-size study)', () => {
  const r = load('cdm3-vmfs3-1mb.txt');

  it('reads all eight rows, in file order, with canonical ids', () => {
    expect(r.warnings).toEqual([]);
    expect(r.records.map((x) => x.test.id)).toEqual([
      'seq-1m-q1t1-read', 'seq-1m-q1t1-write', 'rnd-512k-q1t1-read', 'rnd-512k-q1t1-write',
      'rnd-4k-q1t1-read', 'rnd-4k-q1t1-write', 'rnd-4k-q32t1-read', 'rnd-4k-q32t1-write',
    ]);
  });

  it('MB/s × 1e6 = bytes/s to the last printed digit; IOPS as printed', () => {
    expect(byId(r, 'seq-1m-q1t1-read')?.bytesPerSecond).toBe(828041000);
    expect(byId(r, 'rnd-512k-q1t1-read')?.bytesPerSecond).toBe(94105000);
    expect(byId(r, 'rnd-4k-q1t1-read')).toMatchObject({ bytesPerSecond: 1585000, iops: 387.0 });
    expect(byId(r, 'rnd-4k-q32t1-write')).toMatchObject({ bytesPerSecond: 27872000, iops: 6804.8 });
  });

  it('derives IOPS for rows that print none (MB/s × 1e6 / block bytes) and says so', () => {
    const seq = byId(r, 'seq-1m-q1t1-read')!;
    expect(seq.iops).toBeCloseTo(828041000 / 1048576, 9);
    expect(seq.metadata).toMatchObject({ iopsDerived: true, line: 7 });
    expect(byId(r, 'rnd-4k-q1t1-read')?.metadata?.['iopsDerived']).toBe(false);
  });

  it('carries the footer and the import identity', () => {
    const rec = r.records[0]!;
    expect(rec).toMatchObject({
      runId: 'import:cdm3-vmfs3-1mb.txt',
      permutationId: 'cdm3-vmfs3-1mb',
      axes: { source: 'cdm3-vmfs3-1mb.txt' },
      repetition: 1,
      tool: { name: 'crystaldiskmark', version: '3.0' },
      cpuPercent: null,
    });
    expect(rec.metadata).toMatchObject({
      testSize: '2000 MB', passes: 5, drive: 'E: 0.1% (0.1/50.0 GB)', date: '2010/12/18 19:57:29',
      os: 'Windows Server 2003 R2 SP2 [5.2 Build 3790] (x86)', aggregate: 'max', cdmVersion: '3.0',
    });
  });

  it('reads the other seeds the same way', () => {
    expect(byId(load('cdm3-vmfs3-8mb.txt'), 'rnd-4k-q32t1-read')).toMatchObject({ bytesPerSecond: 20285000, iops: 4952.5 });
    expect(byId(load('cdm3-vmfs3-2mb.txt'), 'seq-1m-q1t1-write')?.bytesPerSecond).toBe(740084000);
  });
});

describe('CrystalDiskMark 5.x–8.x', () => {
  it('5.2 without indentation: Q32 sequential is 128 KiB, "(T= 1)" is 1 MiB QD1', () => {
    const r = load('cdm5-no-indent.txt');
    expect(r.records.map((x) => x.test.id)).toEqual([
      'seq-128k-q32t1-read', 'seq-128k-q32t1-write', 'rnd-4k-q32t1-read', 'rnd-4k-q32t1-write',
      'seq-1m-q1t1-read', 'seq-1m-q1t1-write', 'rnd-4k-q1t1-read', 'rnd-4k-q1t1-write',
    ]);
    expect(byId(r, 'rnd-4k-q1t1-write')).toMatchObject({ bytesPerSecond: 15317000, iops: 3739.5 });
    expect(r.records[0]?.metadata).toMatchObject({ testSize: '1024 MiB', passes: 5, intervalSec: 5, cdmVersion: '5.2.0' });
  });

  it('6.0.2 saved as UTF-16LE with BOM and CRLF', () => {
    const bytes = readFileSync(path('cdm6-utf16le-bom.txt'));
    expect([bytes[0], bytes[1]]).toEqual([0xff, 0xfe]);
    const r = load('cdm6-utf16le-bom.txt');
    expect(r.warnings).toEqual([]);
    expect(byId(r, 'rnd-4k-q8t8-read')).toMatchObject({ bytesPerSecond: 401577000, iops: 98041.3 });
    expect(byId(r, 'seq-128k-q32t1-write')?.bytesPerSecond).toBe(512904000);
    expect(r.records[0]?.metadata).toMatchObject({ os: 'Windows Server 2016 Datacenter (Full installation) [10.0 Build 14393] (x64)', date: '2018/11/20 16:42:09' });
  });

  it('7.0.0 sections give the direction; latency in µs; footer interval and options', () => {
    const r = load('cdm7-default.txt');
    expect(r.records).toHaveLength(8);
    expect(byId(r, 'rnd-4k-q32t16-write')).toMatchObject({ bytesPerSecond: 160447000, iops: 39171.6, latencyUs: { mean: 13070.68 } });
    expect(byId(r, 'seq-1m-q8t1-read')?.latencyUs.mean).toBe(8156.9);
    expect(r.records[0]?.metadata).toMatchObject({ profile: 'Default', testSize: '1 GiB', passes: 5, intervalSec: 5, testOptions: '<DefaultAffinity=DISABLED>' });
  });

  it('8.0.4 Shizuku Edition: header edition, mode, measure/interval, comment', () => {
    const r = load('cdm8-shizuku-default.txt');
    expect(r.warnings).toEqual([]);
    expect(byId(r, 'rnd-4k-q1t1-read')).toMatchObject({ bytesPerSecond: 61927000, iops: 15118.9, latencyUs: { mean: 66.14 } });
    expect(r.records[0]?.tool).toEqual({ name: 'crystaldiskmark', version: '8.0.4' });
    expect(r.records[0]?.metadata).toMatchObject({
      edition: 'Shizuku Edition x64', mode: '[Admin]', measureSec: 5, intervalSec: 5, passes: 5, drive: 'D: 12% (58/476GiB)',
      comment: 'vmfs6 1MB block, thick eager zeroed vmdk',
    });
  });

  it('8.0.5 store build, CRLF, no indentation, NVMe rows and the [Mix] section', () => {
    const r = load('cdm8-uwp-nvme-mix.txt');
    expect(r.records).toHaveLength(12);
    expect(r.records[0]?.metadata?.['edition']).toBe('x64 (UWP)');
    expect(byId(r, 'seq-128k-q32t1-read')).toMatchObject({ bytesPerSecond: 6840217000, iops: 52186.7 });
    const mix = byId(r, 'rnd-4k-q32t16-mix70')!;
    expect(mix.test).toMatchObject({ pattern: 'randrw', readPercent: 70 });
    expect(mix).toMatchObject({ bytesPerSecond: 688215000, iops: 168021.2, latencyUs: { mean: 3047.23 } });
    expect(byId(r, 'seq-1m-q8t1-mix70')?.test.pattern).toBe('rw');
  });

  it('a truncated export keeps the rows before the break and names the line that broke', () => {
    const r = load('cdm8-truncated.txt');
    expect(r.records.map((x) => x.test.id)).toEqual(['seq-1m-q8t1-read', 'seq-1m-q1t1-read', 'rnd-4k-q32t1-read', 'rnd-4k-q1t1-read', 'seq-1m-q8t1-write', 'seq-1m-q1t1-write']);
    expect(r.warnings[0]).toBe('test/fixtures/cdm/cdm8-truncated.txt:17: unreadable result row (truncated?): "RND    4KiB (Q= 32, T= 1):   455.0"');
    expect(r.warnings[1]).toMatch(/:17: file ends without the footer .* 6 result rows read/);
  });

  it('accepts a forum re-post with collapsed padding and no header, with a warning', () => {
    const r = parseCrystalDiskMarkText('Sequential Read : 255.045 MB/s\nRandom Read 4KB (QD=32) : 19.970 MB/s [ 4875.6 IOPS]\n', 'post.txt');
    expect(r.records.map((x) => [x.test.id, x.bytesPerSecond])).toEqual([['seq-1m-q1t1-read', 255045000], ['rnd-4k-q32t1-read', 19970000]]);
    expect(r.warnings.some((w) => /no "CrystalDiskMark <version>" header/.test(w))).toBe(true);
  });

  it('no result rows at all is a ParseError naming the expected rows and the line', () => {
    try {
      parseCrystalDiskMarkText('CrystalDiskMark 8.0.4 x64 (C) 2007-2021 hiyohiyo\n[Read]\n  SEQ    1MiB (Q=  8, T= 1):  35\n', 'bad.txt');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ParseError);
      expect((err as ParseError).details.line).toBe(3);
      expect((err as Error).message).toMatch(/^bad\.txt:3: no CrystalDiskMark result rows found \(expected a "CrystalDiskMark <version>" header followed by rows like/);
    }
  });
});

describe('several exports in one file, anywhere in it', () => {
  const r = load('cdm3-vmfs3-appendix.txt');

  it('a study appendix with four exports (the first header at line 49) gives four sources, never one pooled sample', () => {
    expect([...new Set(r.records.map((x) => x.axes['source']))]).toEqual(['cdm3-vmfs3-appendix.txt#1', 'cdm3-vmfs3-appendix.txt#2', 'cdm3-vmfs3-appendix.txt#3', 'cdm3-vmfs3-appendix.txt#4']);
    expect([...new Set(r.records.map((x) => x.permutationId))]).toEqual(['cdm3-vmfs3-appendix#1', 'cdm3-vmfs3-appendix#2', 'cdm3-vmfs3-appendix#3', 'cdm3-vmfs3-appendix#4']);
    expect(r.records.every((x) => x.repetition === 1)).toBe(true);
    // each export's own numbers: the seeds' sequential reads, 1/2/4/8 MB blocks
    expect(r.records.filter((x) => x.test.id === 'seq-1m-q1t1-read').map((x) => x.bytesPerSecond)).toEqual([828041000, 811591000, 790583000, 802994000]);
    expect(r.records[0]!.metadata).toMatchObject({ export: 1, line: 54, date: '2010/12/18 19:57:29', cdmVersion: '3.0' });
  });

  it('says which text around the exports it skipped, once per stretch', () => {
    expect(r.warnings).toEqual([
      'test/fixtures/cdm/cdm3-vmfs3-appendix.txt:1-46: 46 lines of other text (not a CrystalDiskMark export) ignored',
      'test/fixtures/cdm/cdm3-vmfs3-appendix.txt:67: 1 line of other text (not a CrystalDiskMark export) ignored',
      'test/fixtures/cdm/cdm3-vmfs3-appendix.txt:88: 1 line of other text (not a CrystalDiskMark export) ignored',
      'test/fixtures/cdm/cdm3-vmfs3-appendix.txt:109: 1 line of other text (not a CrystalDiskMark export) ignored',
    ]);
  });

  it('splits exports without headers at the footer (forum re-posts pasted one after another)', () => {
    const one = 'Sequential Read : 255.045 MB/s\nSequential Write : 100.000 MB/s\nDate : 2011/01/01 10:00:00\n';
    const two = 'Sequential Read : 300.000 MB/s\nSequential Write : 120.000 MB/s\nDate : 2011/01/02 10:00:00\n';
    const p = parseCrystalDiskMarkText(`${one}\n${two}`, 'posts.txt');
    expect(p.records.map((x) => [x.axes['source'], x.bytesPerSecond])).toEqual([
      ['posts.txt#1', 255045000],
      ['posts.txt#1', 100000000],
      ['posts.txt#2', 300000000],
      ['posts.txt#2', 120000000],
    ]);
  });
});

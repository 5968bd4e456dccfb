import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidArgument, ParseError } from '../../../src/errors.ts';
import { diskspdArgs, diskspdSize, parseDiskspdXml } from '../../../src/workloads/diskspd.ts';
import { makeTest, PROFILES } from '../../../src/workloads/profiles.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/diskspd/${name}`, import.meta.url), 'utf8');
const cdm8 = PROFILES['cdm8-default']!;

describe('diskspdArgs', () => {
  it('builds the CrystalDiskMark-style line for RND4K Q32T1 read', () => {
    expect(diskspdArgs(makeTest('randread', 4096, 32, 1), cdm8, { target: 'D:\\t.dat' })).toEqual(
      ['-b4K', '-o32', '-t1', '-r', '-w0', '-d5', '-W0', '-S', '-ag', '-L', '-Rxml', 'D:\\t.dat'],
    );
  });

  it('a 70/30 mix writes -w30 and a random source buffer; multi-thread sequential shares the offset (-si)', () => {
    expect(diskspdArgs(makeTest('rw', 65536, 4, 4, 70), cdm8, { target: '#2' }).join(' ')).toBe('-b64K -o4 -t4 -si -w30 -d5 -W0 -S -Z64K -ag -f1G -L -Rxml #2');
  });

  it('uses profile ramp and no cache flags when the profile is buffered', () => {
    const p = { ...cdm8, direct: false, rampSec: 2, runtimeSec: 30, fileSizeBytes: 16 * 1024 * 1024 };
    expect(diskspdArgs(makeTest('read', 1048576, 1, 1), p, { target: 'x.dat' }).join(' ')).toBe('-b1M -o1 -t1 -w0 -d30 -W2 -ag -L -Rxml x.dat');
  });

  it('custom options replace the default caching flag and are placed before -L', () => {
    const t = { ...makeTest('randwrite', 8192, 16, 2), diskspdOptions: ['-Su', '-Zr'] };
    expect(diskspdArgs(t, cdm8, { target: 'E:' }).join(' ')).toBe('-b8K -o16 -t2 -r -w100 -d5 -W0 -ag -f1G -Su -Zr -L -Rxml E:');
  });

  it('refuses targets that diskspd would read as flags', () => {
    expect(() => diskspdArgs(makeTest('read', 4096, 1, 1), cdm8, { target: '-c1G' })).toThrow(InvalidArgument);
    expect(() => diskspdArgs(makeTest('read', 4096, 1, 1), cdm8, { target: '/Rtext' })).toThrow(/must be a file path/);
  });

  it('formats sizes with binary suffixes', () => {
    expect([diskspdSize(512), diskspdSize(4096), diskspdSize(1536), diskspdSize(1048576), diskspdSize(1000 * 1048576), diskspdSize(2 ** 40)]).toEqual(
      ['512', '4K', '1536', '1M', '1000M', '1T'],
    );
  });
});

describe('parseDiskspdXml', () => {
  it('sums the 8 per-thread targets and divides by TestTimeSeconds', () => {
    const r = parseDiskspdXml(fixture('cdm6-rnd-4k-q8t8-write.xml'), 'w.xml');
    expect(r.version).toBe('2.1');
    expect(r.computerName).toBe('WIN-BENCH01');
    expect(r.timeSpans).toHaveLength(1);
    const s = r.timeSpans[0]!;
    expect(s.test?.id).toBe('rnd-4k-q8t8-write');
    expect(s.total.bytes).toBe(2828701696);
    expect(s.total.ios).toBe(690601);
    expect(s.write.bytes).toBe(2828701696);
    expect(s.read.bytes).toBe(0);
    expect(s.total.bytesPerSecond).toBeCloseTo(565740339.2, 3);
    expect(s.total.iops).toBeCloseTo(138120.2, 6);
    expect(s.total.latencyUs).toEqual({ mean: 741, p50: 684, p95: 1321, p99: 1735, p999: 2355 });
    expect(s.write.latencyUs.p99).toBe(1735);
    expect(s.read.latencyUs).toEqual({ mean: null, p50: null, p95: null, p99: null, p999: null });
    expect(s.cpuPercent).toBe(26.74);
  });

  it('reads a single-thread sequential run without confusing the profile TimeSpan with the result one', () => {
    const s = parseDiskspdXml(fixture('cdm8-seq-1m-q8t1-read.xml'), 'r.xml').timeSpans[0]!;
    expect(s.testTimeSeconds).toBe(5.01);
    expect(s.test?.id).toBe('seq-1m-q8t1-read');
    expect(s.total.bytesPerSecond).toBeCloseTo(17533239296 / 5.01, 3);
    expect(s.total.latencyUs.p50).toBe(2208);
    expect(s.total.latencyUs.p999).toBe(7601);
  });

  it('an interrupted run is an error that quotes diskspd', () => {
    expect(() => parseDiskspdXml(fixture('interrupted.xml'), 'i.xml')).toThrow(/interrupted before the measurements began/);
  });

  it('truncated XML names the line where it ends', () => {
    const text = fixture('cdm8-seq-1m-q8t1-read.xml');
    const cut = text.slice(0, text.indexOf('<Thread>'));
    try {
      parseDiskspdXml(cut, 'cut.xml');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ParseError);
      expect((err as ParseError).details.line).toBe(cut.split('\n').length);
      expect((err as Error).message).toMatch(/^cut\.xml:\d+: diskspd XML ends before <\/Results>/);
    }
  });

  it('text that is not diskspd XML says what was expected', () => {
    expect(() => parseDiskspdXml('{"fio version": "fio-3.33"}', 'x.json')).toThrow(/not diskspd XML output/);
  });
});

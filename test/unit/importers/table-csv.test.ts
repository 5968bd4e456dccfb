import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../src/errors.ts';
import { importTableCsv } from '../../../src/importers/table-csv.ts';
import { parseCrystalDiskMarkText } from '../../../src/importers/crystaldiskmark-text.ts';

const fixture = (p: string) => readFileSync(new URL(`../../fixtures/${p}`, import.meta.url), 'utf8');

describe('a results table typed in from a paper (docs/guide/importing.md, "The results table")', () => {
  const r = importTableCsv(fixture('table/vmfs3-block-size-paper.csv'), 'paper.csv');

  it('gives the same records as the CrystalDiskMark exports it was typed from', () => {
    const cdm = parseCrystalDiskMarkText(fixture('cdm/cdm3-vmfs3-1mb.txt'), 'x.txt').records;
    const one = r.records.filter((x) => x.axes['datastore.blockSizeMb'] === 1);
    const key = (x: { test: { id: string }; bytesPerSecond: number | null; iops: number | null }) => [x.test.id, x.bytesPerSecond, x.iops];
    expect(one.map(key).sort()).toEqual(cdm.map(key).sort());
    expect(r.warnings).toEqual([]);
  });

  it('one source (the file), one permutation per combination of axis values, the tool as given', () => {
    expect(new Set(r.records.map((x) => x.axes['source']))).toEqual(new Set(['paper.csv']));
    expect([...new Set(r.records.map((x) => `${x.permutationId} ${String(x.axes['datastore.blockSizeMb'])}`))]).toEqual(['paper#1 1', 'paper#2 8']);
    expect(r.records[0]!.tool).toEqual({ name: 'crystaldiskmark', version: '3.0' });
    expect(r.records[0]!.metadata).toMatchObject({ format: 'table-csv', line: 4, iopsDerived: true });
  });

  it('reads CrystalDiskMark 8 labels, block/qd/threads/pattern columns, latency in ms, a source column and repetitions', () => {
    const t = importTableCsv(
      [
        'source;test;read MB/s;write MB/s;read latency ms;write latency (ms)',
        'vendor;SEQ1M Q8T1;7012.553;5203.998;1.19623;1.61195',
        'vendor;RND4K Q32T16;3105.774;2210.095;;',
        'vendor;SEQ 1MiB (Q= 8, T= 1);7000;5200;;',
      ].join('\n'),
      'v.csv',
    );
    expect(t.records.map((x) => [x.test.id, x.bytesPerSecond, x.latencyUs.mean, x.repetition, x.axes['source']])).toEqual([
      ['seq-1m-q8t1-read', 7012553000, 1196.23, 1, 'vendor'],
      ['seq-1m-q8t1-write', 5203998000, 1611.95, 1, 'vendor'],
      ['rnd-4k-q32t16-read', 3105774000, null, 1, 'vendor'],
      ['rnd-4k-q32t16-write', 2210095000, null, 1, 'vendor'],
      ['seq-1m-q8t1-read', 7000000000, null, 2, 'vendor'],
      ['seq-1m-q8t1-write', 5200000000, null, 2, 'vendor'],
    ]);
    const cols = importTableCsv('block,qd,threads,pattern,IOPS,latency us\n4k,32,1,randread,4875.6,6563\n128KiB,32,1,write,,\n', 'c.csv');
    expect(cols.records.map((x) => [x.test.id, x.iops, x.bytesPerSecond])).toEqual([['rnd-4k-q32t1-read', 4875.6, 4875.6 * 4096]]);
    expect(cols.warnings).toEqual(['c.csv:3: row has no MB/s or IOPS value, ignored']);
    expect(importTableCsv('test,MB/s\nrnd-4k-q1t1-write,32.17\n', 'id.csv').records[0]!.test.id).toBe('rnd-4k-q1t1-write');
    expect(importTableCsv('test,read MB/s\nRandom Read 4KB (QD=32),19.97\n', 'c3.csv').records[0]!.test.id).toBe('rnd-4k-q32t1-read');
    expect(importTableCsv('test,read MB/s,write MB/s\n4K QD32,19.97,27.872\nSeq Q32T1,1,2\n', 'w.csv').records.map((x) => x.test.id)).toEqual([
      'rnd-4k-q32t1-read',
      'rnd-4k-q32t1-write',
      'seq-128k-q32t1-read',
      'seq-128k-q32t1-write',
    ]);
  });

  it.each([
    ['test,read MB/s,colour\nSEQ1M Q8T1,1,red\n', /^t\.csv:1: column 3 "colour" is not one of: test \(or block, qd, threads, pattern\), read MB\/s/],
    ['test,read MB/s\nSEQ1M Q8T1,1 234\n', /^t\.csv:2: MB\/s "1 234" is not a number/],
    ['test,read MB/s\nFAST,1\n', /^t\.csv:2: test "FAST" is not a test label \(expected e\.g\. "SEQ1M Q8T1"/],
    ['test,MB/s\nSEQ1M Q8T1,1\n', /^t\.csv:2: test "SEQ1M Q8T1" does not say read or write, so its numbers go in read\/write columns/],
    ['test,read MB/s\n', /^t\.csv:2: the table has no row with an MB\/s or IOPS value/],
    ['test,read MB/s,read mbps\nSEQ1M Q8T1,1,1\n', /^t\.csv:1: column 3 "read mbps" repeats an earlier column/],
  ])('refuses %j naming the line and what was expected', (text, message) => {
    expect(() => importTableCsv(text, 't.csv')).toThrow(ParseError);
    expect(() => importTableCsv(text, 't.csv')).toThrow(message);
  });
});

// Issue 30 item 2: a results table as papers print it — a Markdown table, an IOMeter access spec as
// the test label, units in the header (MiB/s is 2^20 bytes/s, latency in ms or µs), a samples
// column — and a warning where MB/s and IOPS × block size disagree (IOMeter's binary MB/s read as decimal).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importFile, importText } from '../../../src/importers/index.ts';

const md = fileURLToPath(new URL('../../fixtures/table/iometer-paper.md', import.meta.url));

describe('a Markdown table with IOMeter specs and MiB/s', () => {
  it('imports the right bytes/s, tests, latency and sample counts', async () => {
    const r = await importFile(md);
    expect(r.format).toBe('table-csv');
    expect(r.warnings).toEqual([]);
    expect(r.records.map((x) => x.test.id)).toEqual(['seq-32k-q1t1-read', 'rnd-4k-q32t1-mix70', 'seq-64k-q1t1-write']);
    // 312.5 MiB/s = 312.5 × 1,048,576 bytes/s, the same as 10,000 IOPS × 32 KiB
    expect(r.records.map((x) => x.bytesPerSecond)).toEqual([327_680_000, 40_960_000, 131_072_000]);
    expect(r.records.map((x) => x.iops)).toEqual([10000, 10000, 2000]);
    expect(r.records.map((x) => x.latencyUs.mean)).toEqual([3200, 3200, 16000]);
    expect(r.records.map((x) => x.metadata?.['samples'])).toEqual([3, 3, 3]);
    // the Markdown file's own line numbers
    expect(r.records.map((x) => x.metadata?.['line'])).toEqual([7, 8, 9]);
  });

  it('reads latency in µs and refuses a bad cell at its Markdown line', () => {
    const us = importText('| test | MB/s | latency (µs) |\n|---|---|---|\n| 4k 100% read 100% random | 4.096 | 250 |\n', 'paper.md');
    expect(us.records[0]!.latencyUs.mean).toBe(250);
    expect(us.records[0]!.bytesPerSecond).toBe(4_096_000);
    expect(() => importText('| test | MB/s |\n|---|---|\n| 4k 100% read 100% random | 4,1 |\n', 'paper.md')).toThrow(/paper\.md:3: MB\/s "4,1" is not a number/);
  });
});

describe('MB/s against IOPS × block size', () => {
  it('warns where they disagree by more than 2 %, and names binary MB/s', () => {
    const csv = 'test,MB/s,IOPS\n32k 100% read 0% random,312.5,10000\n32k 100% read 0% random,327.68,10000\n';
    const r = importText(csv, 'paper.csv');
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^paper\.csv:2: MB\/s 312\.500 and IOPS 10000 × 32768 bytes disagree by \+4\.9 %: the MB\/s looks binary/);
    // the value is kept as written (decimal MB/s); the warning is the hint
    expect(r.records[0]!.bytesPerSecond).toBe(312_500_000);
  });

  it('stays quiet within 2 %', () => {
    expect(importText('test,MB/s,IOPS\n32k 100% read 0% random,330,10000\n', 'p.csv').warnings).toEqual([]);
  });
});

// Issue 30 item 3: an imported fio randrw job gives its read and write halves beside its total.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importFile } from '../../../src/importers/index.ts';
import { mixHalves } from '../../../src/results/mix-halves.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/fio/${name}`, import.meta.url));

describe('fio randrw import', () => {
  it("yields the job's total, then its read and write halves, from fio's own per-direction figures", async () => {
    const r = await importFile(fixture('randrw70-4k-q8t4.json'));
    expect(r.records.map((x) => x.test.id)).toEqual(['rnd-4k-q8t4-mix70', 'rnd-4k-q8t4-mix70-read', 'rnd-4k-q8t4-mix70-write']);
    const [total, read, write] = r.records;
    expect(read!.test.half).toBe('read');
    expect(write!.test.half).toBe('write');
    expect(read!.metadata?.['halfOf']).toBe('rnd-4k-q8t4-mix70');
    expect(read!.iops! + write!.iops!).toBeCloseTo(total!.iops!, 6);
    expect(read!.bytesPerSecond! / 1e6).toBeCloseTo(214.908, 2);
    // CPU is the job's: a half has none of its own
    expect(read!.cpuPercent).toBeNull();
  });

  it('a pure read or write job has no halves', async () => {
    const r = await importFile(fixture('randread-4k-q32.json'));
    expect(r.records.map((x) => x.test.id)).toEqual(['rnd-4k-q32t1-read']);
    expect(mixHalves(r.records[0]!)).toEqual([]);
  });
});

describe('diskspd -w30 import', () => {
  // written by the lab's diskspd stand-in (src/lab/harness/windows/diskspd_standin.py, `xml`) for -b4K -o8 -t2 -w30 -r
  it('yields the job total, then its reads and writes from the XML ReadBytes/WriteBytes', async () => {
    const r = await importFile(fileURLToPath(new URL('../../fixtures/diskspd/standin-rnd-4k-q8t2-mix70.xml', import.meta.url)));
    expect(r.records.map((x) => x.test.id)).toEqual(['rnd-4k-q8t2-mix70', 'rnd-4k-q8t2-mix70-read', 'rnd-4k-q8t2-mix70-write']);
    const [total, read, write] = r.records;
    // 2 threads × 1,252,597,760 read bytes in 5.00 s; the writes likewise
    expect(read!.bytesPerSecond).toBeCloseTo((2 * 1252597760) / 5, 0);
    expect(write!.bytesPerSecond).toBeCloseTo((2 * 536825856) / 5, 0);
    expect(read!.bytesPerSecond! + write!.bytesPerSecond!).toBeCloseTo(total!.bytesPerSecond!, 0);
    expect(read!.latencyUs.mean).toBeCloseTo(83, 6);
    expect(write!.latencyUs.mean).toBeCloseTo(113, 6);
  });
});

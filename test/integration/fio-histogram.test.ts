// The latency histogram a fio test hands back (the json+ lat_ns bins a vm.count member keeps),
// checked against REAL fio through the local runner: it holds every I/O of every scored pass, as
// fio's own raw output of each pass counts them, and its percentiles are fio's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binsPercentile, HISTOGRAM_SPAN, histogramTotal } from '../../src/results/latency-histogram.ts';
import { createLocalRunner } from '../../src/ssh/local-runner.ts';
import { makeTest } from '../../src/workloads/profiles.ts';
import { runFioTest } from '../../src/workloads/run-fio.ts';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-fio-histogram-'));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

interface RawRead {
  total_ios: number;
  lat_ns: { N: number; percentile: Record<string, number>; bins: Record<string, number> };
}

describe('a fio test\'s latency histogram', () => {
  it('two scored passes: the bins of both, issue→completion, each pass\'s as fio printed them', async () => {
    const file = path.join(dir, 'h.dat');
    fs.writeFileSync(file, Buffer.alloc(8 * 1024 * 1024, 7));
    const runner = createLocalRunner(process.env);
    const raws: string[] = [];
    const profile = { name: 't', description: 't', tests: [], fileSizeBytes: 8 * 1024 * 1024, runtimeSec: 1, rampSec: 0, passes: 2, warmupPass: false, prefill: false, intervalSec: 0, direct: false, aggregate: 'max' as const };
    const o = await runFioTest(runner, makeTest('randread', 4096, 1, 1), profile, { filename: file, ioengine: 'psync', controlDir: dir, onRaw: async (_t, _p, raw) => (raws.push(raw), null) });
    await runner.close();
    const reads = raws.map((r) => (JSON.parse(r) as { jobs: Array<{ read: RawRead }> }).jobs[0]!.read);
    expect(reads).toHaveLength(2);
    const h = o.latencyHistogram!;
    expect(h.span).toBe(HISTOGRAM_SPAN);
    expect(h.unit).toBe('ns');
    // every I/O of both passes, counted from lat_ns (issue→completion), never clat
    expect(histogramTotal(h)).toBe(reads[0]!.lat_ns.N + reads[1]!.lat_ns.N);
    expect(histogramTotal(h)).toBe(reads[0]!.total_ios + reads[1]!.total_ios);
    const summed = new Map<number, number>();
    for (const r of reads) for (const [v, c] of Object.entries(r.lat_ns.bins)) summed.set(Number(v), (summed.get(Number(v)) ?? 0) + c);
    expect(h.bins).toEqual([...summed].sort((a, b) => a[0] - b[0]));
    // one pass's bins alone give that pass's printed p99: the compact form loses nothing
    const one = Object.entries(reads[0]!.lat_ns.bins).map(([v, c]): [number, number] => [Number(v), c]).sort((a, b) => a[0] - b[0]);
    expect(binsPercentile(one, 99)).toBe(reads[0]!.lat_ns.percentile['99.000000']);
  });
});

// How fio is run and read, checked against REAL fio (3.x, installed here) through the local runner:
// the test file fio writes is exactly the one named (':' escaped), numjobs clones printed one by one
// are one test with their sum, and latency is fio's issue→completion span (lat_ns).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATENCY_SPAN } from '../../src/results/record.ts';
import { createLocalRunner } from '../../src/ssh/local-runner.ts';
import { makeTest } from '../../src/workloads/profiles.ts';
import { runFioPrefill, runFioTest } from '../../src/workloads/run-fio.ts';
import { gzipSync } from 'node:zlib';
import type { WorkloadProfile } from '../../src/workloads/spec.ts';

let dir: string;
const profile = (over: Partial<WorkloadProfile> = {}): WorkloadProfile => ({
  name: 't',
  description: 't',
  tests: [],
  fileSizeBytes: 8 * 1024 * 1024,
  runtimeSec: 1,
  rampSec: 0,
  passes: 1,
  warmupPass: false,
  prefill: false,
  intervalSec: 0,
  direct: false,
  aggregate: 'max',
  ...over,
});

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-fio-measure-'));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('fio --filename with ":" (fio splits the option at an unescaped colon)', () => {
  it('a by-path-style name with colons is the one file fio writes; no file is made at the part before the first colon', async () => {
    const byPath = path.join(dir, 'by-path');
    fs.mkdirSync(byPath);
    const name = path.join(byPath, 'pci-0000:03:00.0-scsi-0:0:1:0');
    const runner = createLocalRunner(process.env);
    const o = await runFioTest(runner, makeTest('write', 65536, 1, 1), profile(), { filename: name, ioengine: 'psync', controlDir: dir });
    expect(o.bytesPerSecond).toBeGreaterThan(0);
    // the named file holds the test region; unescaped, fio would have written `pci-0000`, `03`, `00.0-scsi-0`, …
    expect(fs.readdirSync(byPath)).toEqual(['pci-0000:03:00.0-scsi-0:0:1:0']);
    expect(fs.statSync(name).size).toBe(8 * 1024 * 1024);
    await runner.close();
  });
});

describe('numjobs clones without group_reporting', () => {
  it('the runner sums the 4 clone entries fio prints into one outcome (IOPS and bytes), latency over all their I/Os', async () => {
    const file = path.join(dir, 'clones.dat');
    fs.writeFileSync(file, Buffer.alloc(8 * 1024 * 1024, 7));
    const runner = createLocalRunner(process.env);
    const raws: string[] = [];
    // fio takes the last of a repeated option: the custom group_reporting=0 replaces the runner's own
    const test = { ...makeTest('randread', 4096, 1, 4), fioOptions: { group_reporting: '0' } };
    const o = await runFioTest(runner, test, profile(), {
      filename: file,
      ioengine: 'psync',
      controlDir: dir,
      onRaw: async (_t, _p, raw) => {
        raws.push(raw);
        return null;
      },
    });
    const doc = JSON.parse(raws[0]!) as { jobs: { jobname: string; read: { iops: number; bw_bytes: number; total_ios: number; lat_ns: { mean: number }; clat_ns: { mean: number } } }[] };
    expect(doc.jobs).toHaveLength(4);
    expect(o.iops).toBeCloseTo(doc.jobs.reduce((a, j) => a + j.read.iops, 0), 6);
    expect(o.bytesPerSecond).toBe(doc.jobs.reduce((a, j) => a + j.read.bw_bytes, 0));
    const n = doc.jobs.reduce((a, j) => a + j.read.total_ios, 0);
    const meanUs = doc.jobs.reduce((a, j) => a + j.read.lat_ns.mean * j.read.total_ios, 0) / n / 1000;
    expect(o.latencyUs.mean).toBeCloseTo(meanUs, 6);
    // json+ histograms make the merged percentiles exact
    expect(o.latencyUs.p99).not.toBeNull();
    expect(o.metadata).toMatchObject({ latencySpan: LATENCY_SPAN });
    await runner.close();
  });

  it('latency is lat_ns (issue→completion), not clat_ns: with libaio they differ by the submission time', async () => {
    const file = path.join(dir, 'lat.dat');
    fs.writeFileSync(file, Buffer.alloc(8 * 1024 * 1024, 7));
    const runner = createLocalRunner(process.env);
    const raws: string[] = [];
    const o = await runFioTest(runner, makeTest('randread', 4096, 4, 1), profile(), {
      filename: file,
      ioengine: 'libaio',
      controlDir: dir,
      onRaw: async (_t, _p, raw) => {
        raws.push(raw);
        return null;
      },
    });
    const r = (JSON.parse(raws[0]!) as { jobs: { read: { lat_ns: { mean: number; percentile: Record<string, number> }; clat_ns: { mean: number } } }[] }).jobs[0]!.read;
    expect(r.lat_ns.mean).toBeGreaterThan(r.clat_ns.mean);
    expect(o.latencyUs.mean).toBeCloseTo(r.lat_ns.mean / 1000, 9);
    expect(o.latencyUs.p99).toBe(r.lat_ns.percentile['99.000000']! / 1000);
    await runner.close();
  });
});

describe('pre-fill (fio never lays out a device, so never-written blocks are read as zeros)', () => {
  it('on a sparse file reads before the fill are served from holes; the fill writes the whole region once with incompressible data; reads after it reach the disk', async () => {
    const file = path.join(dir, 'sparse.dat');
    const size = 64 * 1024 * 1024;
    fs.writeFileSync(file, '');
    fs.truncateSync(file, size); // a hole: what a thin / lazy-zeroed disk is before anyone writes it
    const p = profile({ fileSizeBytes: size, direct: true, runtimeSec: 2 });
    const runner = createLocalRunner(process.env);
    const read = makeTest('randread', 4096, 8, 1);
    const before = await runFioTest(runner, read, p, { filename: file, ioengine: 'libaio', controlDir: dir });
    expect(fs.statSync(file).blocks).toBe(0);
    const fill = await runFioPrefill(runner, p, { filename: file, ioengine: 'libaio', controlDir: dir });
    expect(fill).toMatchObject({ filled: true, bytes: size, passes: 1 });
    expect(fill.seconds).toBeGreaterThan(0);
    // every block allocated and written; the data does not compress (random per I/O)
    expect(fs.statSync(file).blocks * 512).toBeGreaterThanOrEqual(size);
    const data = fs.readFileSync(file);
    expect(gzipSync(data.subarray(0, 8 * 1024 * 1024)).length).toBeGreaterThan(8 * 1024 * 1024 * 0.99);
    const after = await runFioTest(runner, read, p, { filename: file, ioengine: 'libaio', controlDir: dir });
    // measured here: ~63k IOPS from holes vs ~14k from written blocks; the two must not be taken for one
    expect(before.iops!).toBeGreaterThan(after.iops! * 1.5);
    await runner.close();
  });
});

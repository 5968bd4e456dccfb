// Record builders for report tests. The CrystalDiskMark 3 seeds are read here with a small parser
// of their documented row format (reference §8.4), so these tests do not depend on src/importers.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NULL_LATENCY, testIdentity, type Pattern, type ResultRecord, type TestIdentity } from '../../../src/results/record.ts';

export const FIXTURES = fileURLToPath(new URL('../../fixtures/report/', import.meta.url));
export const SEED_BLOCK_SIZES = [1, 2, 4, 8] as const;

const KiB = 1024;
const MiB = 1024 * 1024;

// CDM 3.0: sequential = 1 MiB QD1, random 512 KB QD1, random 4 KB QD1 and QD32; all one thread.
function cdm3Test(label: string): TestIdentity {
  const m = /^(Sequential|Random) (Read|Write)(?: (512KB|4KB) \(QD=(\d+)\)| (512KB))?$/.exec(label);
  if (!m) throw new Error(`unknown CrystalDiskMark 3 row: ${label}`);
  const random = m[1] === 'Random';
  const read = m[2] === 'Read';
  const size = m[3] ?? m[5];
  const pattern: Pattern = random ? (read ? 'randread' : 'randwrite') : read ? 'read' : 'write';
  return testIdentity({
    pattern,
    blockSizeBytes: !random ? MiB : size === '512KB' ? 512 * KiB : 4 * KiB,
    queueDepth: m[4] ? Number(m[4]) : 1,
    threads: 1,
    readPercent: read ? 100 : 0,
  });
}

export function cdm3Records(file: string, runId: string, permutationId: string, axes: ResultRecord['axes']): ResultRecord[] {
  const text = readFileSync(file, 'utf8');
  const out: ResultRecord[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(.+?)\s*:\s*([\d.]+) MB\/s(?:\s*\[\s*([\d.]+) IOPS\])?/.exec(line);
    if (!m) continue;
    const test = cdm3Test(m[1]!);
    const bytesPerSecond = Number(m[2]) * 1e6;
    out.push({
      runId,
      permutationId,
      axes,
      repetition: 1,
      test,
      iops: m[3] ? Number(m[3]) : bytesPerSecond / test.blockSizeBytes,
      bytesPerSecond,
      latencyUs: { ...NULL_LATENCY },
      cpuPercent: null,
      tool: { name: 'crystaldiskmark', version: '3.0' },
      rawPath: file,
    });
  }
  return out;
}

/** The four VMFS-3 seeds as four permutations of `datastore.blockSizeMb`. */
export function seedRecords(runId = 'seed-run'): ResultRecord[] {
  return SEED_BLOCK_SIZES.flatMap((mb) =>
    cdm3Records(`${FIXTURES}cdm3-vmfs3-${mb}mb.txt`, runId, `p-bs${mb}`, { 'datastore.blockSizeMb': mb }),
  );
}

/** Deterministic noise in [-1, 1] (a fixed LCG so a test run never changes its inputs). */
function noise(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 0xffffffff) * 2 - 1;
  };
}

export interface LabOptions {
  runId?: string;
  repetitions?: number;
  /** multiplier applied to every throughput for thick disks, e.g. 0.8 for 20% slower */
  thickFactor?: number;
  relNoise?: number;
  seed?: number;
  hostileName?: string;
}

/**
 * A two-axis lab run: blockSizeMb 1/8 × disk.format thin/eagerzeroedthick, 5 repetitions of two
 * tests, with latency, so comparisons, heatmaps and verdicts all have data.
 */
export function labRecords(o: LabOptions = {}): ResultRecord[] {
  const runId = o.runId ?? 'lab-run';
  const reps = o.repetitions ?? 5;
  const rnd = noise(o.seed ?? 7);
  const rel = o.relNoise ?? 0.01;
  const tests = [
    { t: testIdentity({ pattern: 'read', blockSizeBytes: MiB, queueDepth: 8, threads: 1, readPercent: 100 }), bps: 800e6 },
    { t: testIdentity({ pattern: 'randwrite', blockSizeBytes: 4 * KiB, queueDepth: 32, threads: 1, readPercent: 0 }), bps: 4000 * 4096 },
  ];
  const out: ResultRecord[] = [];
  for (const format of ['thin', 'eagerzeroedthick']) {
    for (const mb of [1, 8]) {
      const axes = { 'datastore.blockSizeMb': mb, 'disk.format': format, ...(o.hostileName ? { 'vm.name': o.hostileName } : {}) };
      const permutationId = `p-${format}-${mb}`;
      for (let rep = 1; rep <= reps; rep++) {
        for (const { t, bps } of tests) {
          const factor = (format === 'thin' ? 1 : (o.thickFactor ?? 1)) * (1 + rel * rnd());
          const bytesPerSecond = bps * factor;
          const iops = bytesPerSecond / t.blockSizeBytes;
          const lat = (t.queueDepth * 1e6) / iops;
          out.push({
            runId,
            permutationId,
            axes,
            repetition: rep,
            test: t,
            iops,
            bytesPerSecond,
            latencyUs: { mean: lat, p50: lat * 0.9, p95: lat * 1.5, p99: lat * 2, p999: lat * 3 },
            cpuPercent: 12.5,
            tool: { name: 'fio', version: 'fio-3.33' },
            rawPath: `raw/${permutationId}-${rep}.json`,
          });
        }
      }
    }
  }
  return out;
}

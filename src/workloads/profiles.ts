// Named workload presets. Each is a list of tests with canonical ids plus the pass/aggregation rule
// of the tool it imitates. Values follow ../shared/reference/vsphere-hyperv-benchmarks.md §8.3.
import { testIdentity, type Pattern } from '../results/record.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';

const KiB = 1024;
const MiB = 1024 * 1024;

export function makeTest(pattern: Pattern, blockSizeBytes: number, queueDepth: number, threads: number, readPercent?: number): WorkloadTest {
  const rp = readPercent ?? (pattern === 'read' || pattern === 'randread' ? 100 : pattern === 'write' || pattern === 'randwrite' ? 0 : 50);
  return testIdentity({ pattern, blockSizeBytes, queueDepth, threads, readPercent: rp });
}

/** read and write variants of one (block, Q, T) test, reads first, as CrystalDiskMark orders them */
function readWrite(seq: boolean, blockSizeBytes: number, queueDepth: number, threads: number): WorkloadTest[] {
  return [
    makeTest(seq ? 'read' : 'randread', blockSizeBytes, queueDepth, threads),
    makeTest(seq ? 'write' : 'randwrite', blockSizeBytes, queueDepth, threads),
  ];
}

const cdm8Defaults = {
  fileSizeBytes: 1024 * MiB,
  runtimeSec: 5,
  rampSec: 0,
  passes: 5,
  warmupPass: true,
  intervalSec: 5,
  direct: true,
  aggregate: 'max',
} as const satisfies Partial<WorkloadProfile>;

export const PROFILES: Record<string, WorkloadProfile> = {
  'cdm8-default': {
    name: 'cdm8-default',
    description: 'CrystalDiskMark 8 default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1; read and write; best of 5',
    tests: [...readWrite(true, MiB, 8, 1), ...readWrite(true, MiB, 1, 1), ...readWrite(false, 4 * KiB, 32, 1), ...readWrite(false, 4 * KiB, 1, 1)],
    ...cdm8Defaults,
  },
  quick: {
    name: 'quick',
    description: 'The CrystalDiskMark 8 default tests, one 1 s pass each on a 16 MiB file: a smoke test, not a measurement',
    tests: [...readWrite(true, MiB, 8, 1), ...readWrite(true, MiB, 1, 1), ...readWrite(false, 4 * KiB, 32, 1), ...readWrite(false, 4 * KiB, 1, 1)],
    fileSizeBytes: 16 * MiB,
    runtimeSec: 1,
    rampSec: 0,
    passes: 1,
    warmupPass: false,
    intervalSec: 0,
    direct: true,
    aggregate: 'max',
  },
};

export function profileNames(): string[] {
  return Object.keys(PROFILES);
}

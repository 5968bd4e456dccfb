// Named workload presets. Each is a list of tests with canonical ids plus the pass/aggregation rule
// of the tool it imitates. Values follow ../shared/reference/vsphere-hyperv-benchmarks.md §8.3 and the
// real CrystalDiskMark exports under test/fixtures/cdm/ (5.x/6.x exports print "1024 MiB", so those
// versions use 1 GiB even though a 5.x source comment says "1000 MiB").
//
// Aggregation: every CrystalDiskMark version reports the best (max) of its measured passes, so every
// cdm* profile says `aggregate: 'max'`; the importer records the same rule in each record's metadata.
import { InvalidArgument } from '../errors.ts';
import { MAX_QUEUE_DEPTH, MAX_THREADS } from '../limits.ts';
import { testIdentity, type Pattern } from '../results/record.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';

const KiB = 1024;
const MiB = 1024 * 1024;

export function makeTest(pattern: Pattern, blockSizeBytes: number, queueDepth: number, threads: number, readPercent?: number): WorkloadTest {
  // Every test, whatever wrote it (preset, IOMeter spec, custom fio/diskspd), passes through here.
  if (!Number.isInteger(queueDepth) || queueDepth < 1 || queueDepth > MAX_QUEUE_DEPTH) {
    throw new InvalidArgument(`queue depth: expected a whole number from 1 to ${MAX_QUEUE_DEPTH}, got ${queueDepth}`, { name: 'queueDepth', value: String(queueDepth) });
  }
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
    throw new InvalidArgument(`threads: expected a whole number from 1 to ${MAX_THREADS}, got ${threads}`, { name: 'threads', value: String(threads) });
  }
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

const SEQ = true;
const RND = false;

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

// 5.x–7.x: DiskSpd with -W0 and no separate unmeasured pass; 5 passes of 5 s, 5 s apart.
const cdm5to7Defaults = { ...cdm8Defaults, warmupPass: false } as const satisfies Partial<WorkloadProfile>;

const BEST_OF = 'score = best (max) of the measured passes, as CrystalDiskMark reports it';

function cdm(name: string, what: string, tests: WorkloadTest[], base: Omit<WorkloadProfile, 'name' | 'description' | 'tests'>): WorkloadProfile {
  const timing = `${base.passes} passes of ${base.runtimeSec} s on a ${base.fileSizeBytes / MiB} MiB file, ${base.intervalSec} s apart` +
    (base.warmupPass ? ', after one unmeasured pass' : '');
  return { name, description: `${what}; ${timing}; ${BEST_OF}`, tests, ...base };
}

const CDM8_DEFAULT_TESTS = [...readWrite(SEQ, MiB, 8, 1), ...readWrite(SEQ, MiB, 1, 1), ...readWrite(RND, 4 * KiB, 32, 1), ...readWrite(RND, 4 * KiB, 1, 1)];

export const PROFILES: Record<string, WorkloadProfile> = {
  'cdm8-default': {
    name: 'cdm8-default',
    description: 'CrystalDiskMark 8 default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1; read and write; best of 5',
    tests: CDM8_DEFAULT_TESTS,
    ...cdm8Defaults,
  },
  quick: {
    name: 'quick',
    description: 'The CrystalDiskMark 8 default tests, one 1 s pass each on a 16 MiB file: a smoke test, not a measurement',
    tests: [...readWrite(SEQ, MiB, 8, 1), ...readWrite(SEQ, MiB, 1, 1), ...readWrite(RND, 4 * KiB, 32, 1), ...readWrite(RND, 4 * KiB, 1, 1)],
    fileSizeBytes: 16 * MiB,
    runtimeSec: 1,
    rampSec: 0,
    passes: 1,
    warmupPass: false,
    intervalSec: 0,
    direct: true,
    aggregate: 'max',
  },
  // 3.x ran in-process with FILE_FLAG_NO_BUFFERING; its "Preparing" step only writes the test file,
  // which our runners do separately, and it had no interval setting.
  cdm3: cdm(
    'cdm3',
    'CrystalDiskMark 3.x: Sequential (1 MiB, QD1), Random 512KB QD1, Random 4KB QD1, Random 4KB QD32; read and write',
    [...readWrite(SEQ, MiB, 1, 1), ...readWrite(RND, 512 * KiB, 1, 1), ...readWrite(RND, 4 * KiB, 1, 1), ...readWrite(RND, 4 * KiB, 32, 1)],
    { ...cdm5to7Defaults, fileSizeBytes: 1000 * MiB, intervalSec: 0 },
  ),
  cdm5: cdm(
    'cdm5',
    'CrystalDiskMark 5.x: Seq 128 KiB Q32T1, 4 KiB Q32T1, Seq 1 MiB Q1T1, 4 KiB Q1T1; read and write',
    [...readWrite(SEQ, 128 * KiB, 32, 1), ...readWrite(RND, 4 * KiB, 32, 1), ...readWrite(SEQ, MiB, 1, 1), ...readWrite(RND, 4 * KiB, 1, 1)],
    cdm5to7Defaults,
  ),
  cdm6: cdm(
    'cdm6',
    'CrystalDiskMark 6.x: Seq 128 KiB Q32T1, 4 KiB Q8T8, 4 KiB Q32T1, 4 KiB Q1T1; read and write',
    [...readWrite(SEQ, 128 * KiB, 32, 1), ...readWrite(RND, 4 * KiB, 8, 8), ...readWrite(RND, 4 * KiB, 32, 1), ...readWrite(RND, 4 * KiB, 1, 1)],
    cdm5to7Defaults,
  ),
  'cdm7-default': cdm(
    'cdm7-default',
    'CrystalDiskMark 7.x default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T16, RND4K Q1T1; read and write',
    [...readWrite(SEQ, MiB, 8, 1), ...readWrite(SEQ, MiB, 1, 1), ...readWrite(RND, 4 * KiB, 32, 16), ...readWrite(RND, 4 * KiB, 1, 1)],
    cdm5to7Defaults,
  ),
  'cdm7-peak': cdm(
    'cdm7-peak',
    'CrystalDiskMark 7.x "Peak Performance": SEQ1M Q8T1, RND4K Q32T16; read and write',
    [...readWrite(SEQ, MiB, 8, 1), ...readWrite(RND, 4 * KiB, 32, 16)],
    cdm5to7Defaults,
  ),
  'cdm7-real': cdm(
    'cdm7-real',
    'CrystalDiskMark 7.x "Real World Performance": SEQ1M Q1T1, RND4K Q1T1; read and write',
    [...readWrite(SEQ, MiB, 1, 1), ...readWrite(RND, 4 * KiB, 1, 1)],
    cdm5to7Defaults,
  ),
  'cdm8-peak': cdm(
    'cdm8-peak',
    'CrystalDiskMark 8.x "Peak Performance": SEQ1M Q8T1, RND4K Q32T1; read and write',
    [...readWrite(SEQ, MiB, 8, 1), ...readWrite(RND, 4 * KiB, 32, 1)],
    cdm8Defaults,
  ),
  'cdm8-real': cdm(
    'cdm8-real',
    'CrystalDiskMark 8.x "Real World Performance": SEQ1M Q1T1, RND4K Q1T1; read and write',
    [...readWrite(SEQ, MiB, 1, 1), ...readWrite(RND, 4 * KiB, 1, 1)],
    cdm8Defaults,
  ),
  'cdm8-demo': cdm('cdm8-demo', 'CrystalDiskMark 8.x "Demo": SEQ1M Q8T1; read and write', readWrite(SEQ, MiB, 8, 1), cdm8Defaults),
  'cdm8-nvme': cdm(
    'cdm8-nvme',
    'CrystalDiskMark 8.x "NVMe SSD" preset: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1; read and write',
    [...readWrite(SEQ, MiB, 8, 1), ...readWrite(SEQ, 128 * KiB, 32, 1), ...readWrite(RND, 4 * KiB, 32, 16), ...readWrite(RND, 4 * KiB, 1, 1)],
    cdm8Defaults,
  ),
};

export function profileNames(): string[] {
  return Object.keys(PROFILES);
}

/** The preset with this name, or undefined. */
export function getProfile(name: string): WorkloadProfile | undefined {
  return Object.hasOwn(PROFILES, name) ? PROFILES[name] : undefined;
}

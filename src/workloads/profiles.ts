// Named workload presets. Each is a list of tests with canonical ids plus the pass/aggregation rule
// of the tool it imitates, taken from CrystalDiskMark's own source (DiskBench.cpp per version, quoted
// below) and the real exports under test/fixtures/cdm/ (5.x/6.x exports print
// "1024 MiB", so those versions use 1 GiB even though a 5.x source comment says "1000 MiB").
//
// | Profile | Order of the "All" run                      | Passes (unscored + scored)  | Pass  | Interval | Source (quoted lines) |
// |---------|---------------------------------------------|-----------------------------|-------|----------|-----------------------|
// | cdm3    | per test type: its read, then its write     | 1 + 5                       | 6 s   | none     | 2.2, see (a) (b) (c)  |
// | cdm5    | every read test, then every write test      | 1 + 5                       | 5 s   | 5 s      | 5.1.2, see (d) (e)    |
// | cdm6    | every read test, then every write test      | 1 + 5                       | 5 s   | 5 s      | 6.0.0, as 5.1.2 (f)   |
// | cdm7-*  | every read test, then every write test      | 1 + 5                       | 5 s   | 5 s      | 7.0.0, as 8.x (f)     |
// | cdm8-*  | every read test, then every write test      | 1 (always 5 s) + 5          | 5 s   | 5 s      | 8.x, see (g) (h)      |
//
// (a) thesnow Code/CPP/CrystalDiskMark/DiskBench.cpp (CDM 2.2, the last in-process engine whose source
//     is public; 3.x kept that engine — 3.x internals are not in a primary source, so cdm3 follows 2.2):
//     `#define DISK_TEST_TIME 6*1000` — 6-second passes.
// (b) same file, `Sequential()`: `for(j = 0; j <= DiskTestNumber; j++)` with `cstr = _T("Preparing...
//     Sequential Read")` for j == 0 and `if(j != 0) { score = …; if(score > maxScore) …}` — pass 0 runs
//     but is never scored; the best of the N scored passes is reported.
// (c) same file, `ExecDiskBenchAll()`: `Sequential(dlg); Random(dlg, 512, …); Random(dlg, 4, …);
//     RandomX(dlg, 4, 32, …)`, each running its read passes and then its write passes; no Interval().
// (d) ababycoder/CrystalDiskMark5_1_2Src CrystalDiskMark/DiskBench.cpp `ExecDiskBenchAll()`:
//     `DiskSpd(dlg, TEST_SEQUENTIAL_READ_MULTI_QT); Interval(dlg); … DiskSpd(dlg, TEST_RANDOM_READ_4K);
//     Interval(dlg); DiskSpd(dlg, TEST_SEQUENTIAL_WRITE_MULTI_QT); … DiskSpd(dlg, TEST_RANDOM_WRITE_4K);`
//     — all four reads, then all four writes, Interval() between consecutive tests only.
// (e) same file, `DiskSpd()`: `option.Format(L"-b128K -d5 -o%d -t%d -W0 -S -w0", …)` — `-S`, not `-Sh`
//     (diskspd CmdLineParser.cpp: `-S` = `-Su`, no forced write-through); `for (j = 0; j <= DiskTestCount;
//     j++)` with `cstr.Format(L"Preparing... %s", title)` for j == 0 and `if (j > 0 && score > *maxScore)`.
// (f) 6.0.0 [ababycoder/CrystalDiskMark6_0_0Src DiskBench.cpp] and 7.0.0
//     [hiyohiyo/CrystalDiskMark@8dbfdeb DiskBench.cpp] have the same pass loop and read-then-write order.
// (g) hiyohiyo/CrystalDiskMark DiskBench.cpp (8.x, @00c38e9) `ExecDiskBenchAll()`: `if (benchmark &
//     BENCHMARK_READ) { DiskSpd(dlg, TEST_READ_0); Interval(dlg); … DiskSpd(dlg, TEST_READ_3); } … if
//     (benchmark & BENCHMARK_WRITE) { DiskSpd(dlg, TEST_WRITE_0); … }`.
// (h) same file, `DiskSpd()`: `option.Format(L"-b%dK -o%d -t%d -W0 -S -w0 -r", …)`; `if (j == 0) {
//     duration = 5; … "Preparing... %s" } else { duration = m_MeasureTime; … }`; `if (j > 0 && score >
//     *maxScore)`; `if (j > 0 && score > 0.0 && (latency < *minLatency || *minLatency < 0))`.
// The test file itself is created and filled once before the first test (`Init()`: CREATE_ALWAYS, then
// `WriteFile(hFile, buf, BufSize, …)` over the whole size with `buf[i] = (char)(rand() % 256)`): every
// profile says `prefill: true`, and the runners fill the test region once per permutation.
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

type Kind = [seq: boolean, blockSizeBytes: number, queueDepth: number, threads: number];

const read = ([seq, bs, q, t]: Kind) => makeTest(seq ? 'read' : 'randread', bs, q, t);
const write = ([seq, bs, q, t]: Kind) => makeTest(seq ? 'write' : 'randwrite', bs, q, t);

/** CrystalDiskMark 5–8 "All": every read test, then every write test (see (d), (g) above). */
function readsThenWrites(...kinds: Kind[]): WorkloadTest[] {
  return [...kinds.map(read), ...kinds.map(write)];
}

/** CrystalDiskMark 2.x/3.x "All": per test type, its read passes then its write passes (see (c) above). */
function readWritePerKind(...kinds: Kind[]): WorkloadTest[] {
  return kinds.flatMap((k) => [read(k), write(k)]);
}

const SEQ = true;
const RND = false;

// 5.x–7.x: DiskSpd with -W0 and the same unscored pass 0 before 5 passes of 5 s, tests 5 s apart ((e), (f)).
// Every pass of 5.x–7.x lasts 5 s (`-d5`; 7.0.0 `int duration = 5;` for each pass); no affinity flag in 5.x/6.x.
const cdm5to7Defaults = {
  fileSizeBytes: 1024 * MiB,
  runtimeSec: 5,
  rampSec: 0,
  passes: 5,
  warmupPass: true,
  prefill: true,
  intervalSec: 5,
  direct: true,
  aggregate: 'max',
} as const satisfies Partial<WorkloadProfile>;

// 7.x: `if (Affinity == 0) option += L" -n"; else option += L" -ag";` with the setting read as
// `GetPrivateProfileInt(_T("Setting"), _T("Affinity"), AFFINITY_DISABLED, m_Ini)` and
// AFFINITY_DISABLED = 0 (DiskBench.h): -n unless the user turned affinity on [CDM@8dbfdeb
// DiskBench.cpp `DiskSpd()`, DiskMarkDlg.cpp].
const cdm7Defaults = { ...cdm5to7Defaults, diskspdAffinity: 'none' } as const satisfies Partial<WorkloadProfile>;

// 8.x: `option += L" -ag";` unconditionally, and pass 0 is `duration = 5;` whatever the measure time
// (`duration = m_MeasureTime` for j > 0) [CDM@94d0d10 (8.0.4) DiskBench.cpp `DiskSpd()`; see (h)].
const cdm8Defaults = { ...cdm5to7Defaults, warmupPassSec: 5, diskspdAffinity: 'group' } as const satisfies Partial<WorkloadProfile>;

const BEST_OF = 'score = best (max) of the measured passes, as CrystalDiskMark reports it';

function cdm(name: string, what: string, tests: WorkloadTest[], base: Omit<WorkloadProfile, 'name' | 'description' | 'tests'>): WorkloadProfile {
  const timing = `${base.passes} passes of ${base.runtimeSec} s on a ${base.fileSizeBytes / MiB} MiB file, ${base.intervalSec} s apart` +
    (base.warmupPass ? `, after one unscored pass${base.warmupPassSec !== undefined ? ` of ${base.warmupPassSec} s` : ''}` : '');
  return { name, description: `${what}; ${timing}; ${BEST_OF}`, tests, ...base };
}

const CDM8_DEFAULT_TESTS = readsThenWrites([SEQ, MiB, 8, 1], [SEQ, MiB, 1, 1], [RND, 4 * KiB, 32, 1], [RND, 4 * KiB, 1, 1]);

export const PROFILES: Record<string, WorkloadProfile> = {
  'cdm8-default': {
    name: 'cdm8-default',
    description: 'CrystalDiskMark 8 default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1; every read, then every write; best of 5 after one unscored pass of 5 s',
    tests: CDM8_DEFAULT_TESTS,
    ...cdm8Defaults,
  },
  quick: {
    name: 'quick',
    description: 'The CrystalDiskMark 8 default tests, one 1 s pass each on a 16 MiB file: a smoke test, not a measurement',
    tests: CDM8_DEFAULT_TESTS,
    fileSizeBytes: 16 * MiB,
    runtimeSec: 1,
    rampSec: 0,
    passes: 1,
    warmupPass: false,
    prefill: true,
    intervalSec: 0,
    direct: true,
    aggregate: 'max',
  },
  // 3.x ran in-process with FILE_FLAG_NO_BUFFERING, 6-second passes after an unscored pass 0, and
  // had no interval setting ((a)–(c)).
  cdm3: cdm(
    'cdm3',
    'CrystalDiskMark 3.x: Sequential (1 MiB, QD1), Random 512KB QD1, Random 4KB QD1, Random 4KB QD32; each read, then its write',
    readWritePerKind([SEQ, MiB, 1, 1], [RND, 512 * KiB, 1, 1], [RND, 4 * KiB, 1, 1], [RND, 4 * KiB, 32, 1]),
    { ...cdm5to7Defaults, fileSizeBytes: 1000 * MiB, runtimeSec: 6, intervalSec: 0 },
  ),
  cdm5: cdm(
    'cdm5',
    'CrystalDiskMark 5.x: Seq 128 KiB Q32T1, 4 KiB Q32T1, Seq 1 MiB Q1T1, 4 KiB Q1T1; every read, then every write',
    readsThenWrites([SEQ, 128 * KiB, 32, 1], [RND, 4 * KiB, 32, 1], [SEQ, MiB, 1, 1], [RND, 4 * KiB, 1, 1]),
    cdm5to7Defaults,
  ),
  cdm6: cdm(
    'cdm6',
    'CrystalDiskMark 6.x: Seq 128 KiB Q32T1, 4 KiB Q8T8, 4 KiB Q32T1, 4 KiB Q1T1; every read, then every write',
    readsThenWrites([SEQ, 128 * KiB, 32, 1], [RND, 4 * KiB, 8, 8], [RND, 4 * KiB, 32, 1], [RND, 4 * KiB, 1, 1]),
    cdm5to7Defaults,
  ),
  'cdm7-default': cdm(
    'cdm7-default',
    'CrystalDiskMark 7.x default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T16, RND4K Q1T1; every read, then every write',
    readsThenWrites([SEQ, MiB, 8, 1], [SEQ, MiB, 1, 1], [RND, 4 * KiB, 32, 16], [RND, 4 * KiB, 1, 1]),
    cdm7Defaults,
  ),
  'cdm7-peak': cdm(
    'cdm7-peak',
    'CrystalDiskMark 7.x "Peak Performance": SEQ1M Q8T1, RND4K Q32T16; every read, then every write',
    readsThenWrites([SEQ, MiB, 8, 1], [RND, 4 * KiB, 32, 16]),
    cdm7Defaults,
  ),
  'cdm7-real': cdm(
    'cdm7-real',
    'CrystalDiskMark 7.x "Real World Performance": SEQ1M Q1T1, RND4K Q1T1; every read, then every write',
    readsThenWrites([SEQ, MiB, 1, 1], [RND, 4 * KiB, 1, 1]),
    cdm7Defaults,
  ),
  'cdm8-peak': cdm(
    'cdm8-peak',
    'CrystalDiskMark 8.x "Peak Performance": SEQ1M Q8T1, RND4K Q32T1; every read, then every write',
    readsThenWrites([SEQ, MiB, 8, 1], [RND, 4 * KiB, 32, 1]),
    cdm8Defaults,
  ),
  'cdm8-real': cdm(
    'cdm8-real',
    'CrystalDiskMark 8.x "Real World Performance": SEQ1M Q1T1, RND4K Q1T1; every read, then every write',
    readsThenWrites([SEQ, MiB, 1, 1], [RND, 4 * KiB, 1, 1]),
    cdm8Defaults,
  ),
  'cdm8-demo': cdm('cdm8-demo', 'CrystalDiskMark 8.x "Demo": SEQ1M Q8T1; every read, then every write', readsThenWrites([SEQ, MiB, 8, 1]), cdm8Defaults),
  'cdm8-nvme': cdm(
    'cdm8-nvme',
    'CrystalDiskMark 8.x "NVMe SSD" preset: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1; every read, then every write',
    readsThenWrites([SEQ, MiB, 8, 1], [SEQ, 128 * KiB, 32, 1], [RND, 4 * KiB, 32, 16], [RND, 4 * KiB, 1, 1]),
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

// What a workload is and what one test of it yields, as every layer names it: the test's identity and
// pattern, the profile, the passes' figures and the outcome a run of a test hands back. Types only
// (the contract imports nothing of ours); workloads/, results/ and the providers re-export them
// from where they are used (workloads/spec.ts, workloads/passes.ts, results/record.ts).

export type Pattern = 'read' | 'write' | 'randread' | 'randwrite' | 'rw' | 'randrw';

export interface TestIdentity {
  /** canonical id, e.g. `seq-1m-q8t1-read`, `rnd-4k-q32t1-write`, `rnd-4k-q1t1-mix70` */
  id: string;
  pattern: Pattern;
  blockSizeBytes: number;
  queueDepth: number;
  threads: number;
  /** 100 for pure reads, 0 for pure writes */
  readPercent: number;
  /**
   * Only for a partly random test (1–99): the share of random I/O, the rest sequential — diskspd
   * `-rs<pct>` (`<RandomRatio>`), IOMeter's "% random", fio's percentage_random. Such a test has a
   * random pattern and an id starting `rnd<pct>-`. Absent for fully random or sequential tests.
   */
  randomPercent?: number;
  /**
   * Only for a half of a mixed read/write job (results/mix-halves.ts): its reads or its writes,
   * measured in the same job as its total. The id is the job's with `-read`/`-write` appended.
   */
  half?: 'read' | 'write';
}

export interface LatencyUs {
  mean: number | null;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  p999: number | null;
}

/** How several measured passes of one test become one number (CrystalDiskMark keeps the best). */
export type Aggregation = 'max' | 'mean' | 'median' | 'last';

export interface WorkloadTest extends TestIdentity {
  /** extra tool options for custom tests (validated by the runner) */
  fioOptions?: Record<string, string>;
  diskspdOptions?: string[];
}

export interface WorkloadProfile {
  name: string;
  description: string;
  tests: WorkloadTest[];
  /** size of the test file in bytes */
  fileSizeBytes: number;
  /** measured seconds per pass */
  runtimeSec: number;
  /** warm-up seconds not counted (fio ramp_time, diskspd -W) */
  rampSec: number;
  /** measured passes per test; aggregated with `aggregate` into one record per repetition */
  passes: number;
  /** an unscored pass before the measured ones of each test (CrystalDiskMark 2.x–8.x pass 0, "Preparing…") */
  warmupPass: boolean;
  /**
   * The unscored pass's own length when the tool fixes it whatever the measure time (CrystalDiskMark
   * 8.x: always 5 s); absent = `runtimeSec`.
   */
  warmupPassSec?: number;
  /**
   * diskspd thread affinity as CrystalDiskMark passes it: `none` = `-n` (7.x, whose default setting
   * is "affinity disabled"), `group` = `-ag` (8.x, always); absent = no flag (5.x, 6.x, custom).
   */
  diskspdAffinity?: 'none' | 'group';
  /**
   * Fill the test region once per permutation with incompressible data before the first pass, as
   * CrystalDiskMark fills its test file (reads of never-written blocks of a thin, lazy-zeroed or dynamic
   * disk return zeros without touching the array). Absent = true.
   */
  prefill?: boolean;
  /**
   * What diskspd writes (write-data.ts): `cdm` = CrystalDiskMark's one random block-sized buffer for
   * every write and a 1 MiB one for the fill; `unique` = a large random buffer, near-unique data.
   * fio writes fresh random data either way. Absent = cdm.
   */
  writeData?: 'cdm' | 'unique';
  /** seconds of idle between tests */
  intervalSec: number;
  /** bypass the OS cache (fio direct=1 / diskspd -S, as CrystalDiskMark passes it: no forced write-through) */
  direct: boolean;
  aggregate: Aggregation;
}

/** What the fill did: recorded in the journal and in every record of the permutation. */
export interface PrefillOutcome {
  /** false when the profile says `prefill: false` and the step only created the test file */
  filled: boolean;
  /** bytes of the test region written (0 when not filled) */
  bytes: number;
  /** wall-clock seconds the fill took */
  seconds: number;
  /**
   * The write throughput the tool measured over the fill (bytes/s; fio's bw_bytes, diskspd's bytes
   * written ÷ its test time summed over the fill passes): the first-write cost of the region, a result
   * of its own (report "first write"). Absent when not filled.
   */
  bytesPerSecond?: number;
  /** tool invocations it took */
  passes: number;
  /** how, in a few words (tool, block, data) */
  method: string;
}

/**
 * A test's latency as a histogram, kept so that the latency of several measurements (the VMs of a
 * `vm.count` pass) can be merged exactly: their percentiles come from the summed counts, never from
 * the mean of their percentiles. fio's `--output-format=json+` prints it (`lat_ns.bins` with
 * `lat_percentiles=1`); diskspd prints none. results/latency-histogram.ts merges and checks it.
 */
export interface LatencyHistogram {
  /** which latency the bins count (results/latency-histogram.ts HISTOGRAM_SPAN) */
  span: string;
  unit: 'ns';
  /** [bucket value, I/O count], ascending by value, counts > 0; the value is fio's bucket midpoint */
  bins: Array<[number, number]>;
}

export interface PassMeasurement {
  iops: number | null;
  bytesPerSecond: number | null;
  latencyUs: LatencyUs;
  cpuPercent: number | null;
  /** the pass's latency histogram, where the tool printed one (fio json+) */
  latencyHistogram?: LatencyHistogram;
}

export interface Aggregated extends PassMeasurement {
  /** index of the pass whose raw output represents the result (the best pass for 'max') */
  representativePass: number;
}

export type Metadata = Record<string, string | number | boolean | null>;

export interface TestOutcome extends Aggregated {
  test: WorkloadTest;
  toolVersion: string | null;
  /** what onRaw returned for the representative pass (its stored path) */
  rawPath: string | null;
  passes: number;
  /** the representative pass's metadata, plus `warmupPass` when an unscored pass ran first */
  metadata?: Metadata;
}

export type OnRaw = (test: WorkloadTest, pass: number, raw: string) => Promise<string | null>;

/**
 * The span of a test's scored passes, marked for whoever watches it from outside (the host's
 * latency counters, run/executor.ts): `start` right before the first measured pass (after the
 * unscored pass 0), `end` right after the last. The tool's own start between scored passes lies
 * inside it; pass 0, the fill and the pause between tests do not.
 */
export interface ScoredSpan {
  start(): Promise<void>;
  end(): Promise<void>;
  /** right before each scored pass after the first (VMs of a `vm.count` pass start each pass together: run/vm-members.ts) */
  pass?(n: number): Promise<void>;
}

// What a workload is, independent of the tool that runs it. Profiles (CrystalDiskMark-equivalent,
// IOMeter access specs, custom) are lists of these tests plus how passes are run and aggregated.
import type { TestIdentity } from '../results/record.ts';

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

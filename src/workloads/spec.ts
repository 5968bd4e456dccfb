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
   * Fill the test region once per permutation with incompressible data before the first pass, as
   * CrystalDiskMark fills its test file (reads of never-written blocks of a thin, lazy-zeroed or dynamic
   * disk return zeros without touching the array). Absent = true.
   */
  prefill?: boolean;
  /** seconds of idle between tests */
  intervalSec: number;
  /** bypass the OS cache (fio direct=1 / diskspd -S, as CrystalDiskMark passes it: no forced write-through) */
  direct: boolean;
  aggregate: Aggregation;
}

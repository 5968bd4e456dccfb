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
  /** an unmeasured pass before the measured ones (CrystalDiskMark 8 does this) */
  warmupPass: boolean;
  /** seconds of idle between tests */
  intervalSec: number;
  /** bypass the OS cache (O_DIRECT / diskspd -Sh) */
  direct: boolean;
  aggregate: Aggregation;
}

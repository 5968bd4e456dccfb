// What a report knows of the run (or imports) its records came from, beside the records: ids,
// playbook, target, baseline, environment, how repetitions were made. Its own file so that what the
// model uses (conditions.ts) can name it without importing model.ts back.
import type { AxisValue } from '../contract/axis.ts';

export interface RunInfo {
  runId: string;
  playbook?: string;
  /** the run's target (several joined by ", " when the playbook lists them) */
  target?: string;
  /**
   * the playbook's `baseline:` (axis → value): the value each named axis is compared against when
   * no `--baseline` is given; other varying axes are compared against their first value
   */
  baseline?: Record<string, AxisValue>;
  startedAt?: string;
  /** environment facts: host versions, datastore type, guest OS, tool versions… */
  fingerprint?: Record<string, string>;
  /** what the playbook's `environment:` states about the setup (array, RAID level, protocol, QoS, VM spec) */
  environment?: Record<string, string>;
  /** endpoints contacted without TLS/host-key verification; every report warns about them */
  insecureEndpoints?: string[];
  failures?: Array<{ permutationId: string; axes: Record<string, unknown>; reason: string }>;
  /** runs with permutations not (fully) measured: interrupted (Ctrl-C, a crash) or still running */
  unfinished?: Array<{ runId: string; left: number; total: number }>;
  /**
   * what a repetition is a sample of: 'within-provisioning' (back to back on one provisioned
   * datastore and disk: run-to-run noise only; a run's default), 'between-provisionings' (each on
   * freshly provisioned objects), 'mixed' (sources differ), 'unknown' (imports that do not say)
   */
  replication?: 'within-provisioning' | 'between-provisionings' | 'mixed' | 'unknown';
  /** several sources in one report: each run's replication unit by its run id (imports: unknown) */
  replicationOf?: Record<string, 'within-provisioning' | 'between-provisionings' | 'mixed' | 'unknown'>;
  /** the repetitions ran in rounds (each on its own provisioning), each round in an order drawn from this seed */
  rounds?: { seed: number };
  /** repeat-until-stable as the run was asked: the report says which permutations reached it */
  repeatUntil?: { ciPct: number; min: number; max: number };
}

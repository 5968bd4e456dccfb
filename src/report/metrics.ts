// The figures a report shows for each test (MB/s, IOPS, latency mean and p99, CPU): how each is read
// from a record, scaled, labelled and compared, and one summarized cell of them. Its own file so that
// what the model uses (numbers.ts, through host-latency.ts) can name them without importing model.ts back.
import type { ResultRecord } from '../results/record.ts';
import type { Summary } from './stats.ts';

export type MetricKey = 'bytesPerSecond' | 'iops' | 'latencyMeanUs' | 'latencyP99Us' | 'cpuPercent';

export interface MetricDef {
  key: MetricKey;
  label: string;
  unit: string;
  higherIsBetter: boolean;
  /** raw record value */
  get: (r: ResultRecord) => number | null;
  /** raw → displayed unit (bytes/s → MB/s, decimal as CrystalDiskMark prints it) */
  scale: number;
  digits: number;
}

export const METRICS: Record<MetricKey, MetricDef> = {
  bytesPerSecond: { key: 'bytesPerSecond', label: 'MB/s', unit: 'MB/s', higherIsBetter: true, get: (r) => r.bytesPerSecond, scale: 1e-6, digits: 1 },
  iops: { key: 'iops', label: 'IOPS', unit: 'IOPS', higherIsBetter: true, get: (r) => r.iops, scale: 1, digits: 0 },
  latencyMeanUs: { key: 'latencyMeanUs', label: 'lat mean', unit: 'µs', higherIsBetter: false, get: (r) => r.latencyUs.mean, scale: 1, digits: 1 },
  latencyP99Us: { key: 'latencyP99Us', label: 'lat p99', unit: 'µs', higherIsBetter: false, get: (r) => r.latencyUs.p99, scale: 1, digits: 1 },
  // the tool's CPU use (fio usr+sys, diskspd's average): what the I/O cost the guest, lower is better
  cpuPercent: { key: 'cpuPercent', label: 'CPU', unit: '%', higherIsBetter: false, get: (r) => r.cpuPercent, scale: 1, digits: 1 },
};
export const METRIC_ORDER: readonly MetricKey[] = ['bytesPerSecond', 'iops', 'latencyMeanUs', 'latencyP99Us', 'cpuPercent'];

export interface MetricCell {
  metric: MetricKey;
  summary: Summary;
  noisy: boolean;
  /** repetitions for the CI half-width to reach the minimum effect; null when n < 2 or unreachable */
  repetitionsNeeded: number | null;
}

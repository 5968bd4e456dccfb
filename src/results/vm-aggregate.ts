// PLACEHOLDER for issue 32's aggregate (branch h32clone): the run side needs aggregateVmPass before
// the h32agg branch (which owns this file: merged latency distributions, the spread between VMs) is
// merged; at merge its version replaces this one. This body is deliberately trivial: IOPS and
// bytes/s summed, mean latency weighted by each member's IOPS, percentiles unknown (null) — a
// percentile of several VMs cannot be had from their percentiles.
import { NULL_LATENCY, type ResultRecord } from './record.ts';

export function aggregateVmPass(members: ResultRecord[]): ResultRecord {
  const first = members[0];
  if (!first) throw new Error('aggregateVmPass: no members');
  const sum = (k: 'iops' | 'bytesPerSecond') => (members.every((m) => m[k] !== null) ? members.reduce((s, m) => s + (m[k] ?? 0), 0) : null);
  const weighted = members.every((m) => m.iops !== null && m.latencyUs.mean !== null);
  const ios = members.reduce((s, m) => s + (m.iops ?? 0), 0);
  const mean = weighted && ios > 0 ? members.reduce((s, m) => s + (m.iops ?? 0) * (m.latencyUs.mean ?? 0), 0) / ios : null;
  return {
    ...first,
    iops: sum('iops'),
    bytesPerSecond: sum('bytesPerSecond'),
    latencyUs: { ...NULL_LATENCY, mean },
    cpuPercent: null,
    rawPath: null,
    vm: { role: 'aggregate', count: members.length },
  };
}

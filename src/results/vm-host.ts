// The host's view of one `vm.count` pass (issue 32; docs/decisions/0095-vm-count-host-latency.md).
// Each member record carries what the host counted for ITS clone's disk under test (virtualDisk.*
// on that clone, instance scsi<bus>:<unit>) over its own scored passes. The datastore is shared by
// every VM of the pass, so its figures belong to the aggregate: the datastore.* counters as each VM
// saw the datastore, summed over the VMs (IOPS, KB/s) and weighted by their I/O (latency). That is
// the datastore's load from the pass's VMs, wherever they run: a host-level query would add other
// VMs' I/O, and clones on several hosts would need one query per host. Pure.
import type { HostIoFigures, HostMetrics, HostUnavailable } from '../contract/host-metrics.ts';
import type { ResultRecord } from './record.ts';

/** What the aggregate's host latency covers, in words (HostMetrics.latencySpan). */
export const VM_DATASTORE_SPAN =
  'datastore.totalReadLatency/totalWriteLatency as each VM of the pass saw the shared datastore (whole ms), I/O-weighted over the VMs, reads and writes; IOPS and KB/s summed over the VMs; each VM over its own scored passes';

/** A datastore counter counts whole milliseconds: no µs counterpart exists for the group. */
const DATASTORE_RESOLUTION_US = 1000;

type Observed = { index: number; host: HostMetrics };

/**
 * The aggregate's `host`: the datastore's figures summed over the pass's VMs, or why not (a VM not
 * observed, or without datastore figures: a sum of some VMs would understate the load). Undefined
 * when no member was observed at all (nothing watched the host).
 */
export function aggregateVmHost(members: readonly ResultRecord[]): HostMetrics | HostUnavailable | undefined {
  const hosts = members.map((m) => m.host);
  const first = hosts.find((h) => h !== undefined);
  if (first === undefined) return undefined;
  const source = first.source;
  const observed: Observed[] = [];
  for (const [i, m] of members.entries()) {
    const index = m.vm?.index ?? i + 1;
    const h = m.host;
    if (h === undefined) return { source, unavailable: `VM ${index} was not observed; the datastore's load of the pass would be understated` };
    if ('unavailable' in h) return { source, unavailable: `VM ${index} was not observed (${h.unavailable}); the datastore's load of the pass would be understated` };
    if (!h.datastore) return { source, unavailable: `VM ${index} has no datastore figures; the datastore's load of the pass would be understated` };
    observed.push({ index, host: h });
  }
  const instances = new Set(observed.map((o) => o.host.datastore!.instance));
  if (instances.size > 1) return { source, unavailable: `the VMs' disks are on different datastores (${[...instances].join(', ')}): no one datastore to sum` };
  return summedDatastore(observed, source);
}

function summedDatastore(observed: readonly Observed[], source: HostMetrics['source']): HostMetrics {
  const ds = observed.map((o) => o.host.datastore!);
  const datastore: HostIoFigures = {
    instance: ds[0]!.instance,
    readIops: sum(ds.map((d) => d.readIops)),
    writeIops: sum(ds.map((d) => d.writeIops)),
    readKBps: sum(ds.map((d) => d.readKBps)),
    writeKBps: sum(ds.map((d) => d.writeKBps)),
    readLatencyMs: weighted(ds.map((d) => [d.readLatencyMs, d.readIops])),
    writeLatencyMs: weighted(ds.map((d) => [d.writeLatencyMs, d.writeIops])),
    latencyMs: null,
  };
  datastore.latencyMs = weighted(ds.map((d) => [d.latencyMs, (d.readIops ?? 0) + (d.writeIops ?? 0)]));
  const notes = new Set<string>();
  for (const o of observed) for (const n of o.host.notes ?? []) notes.add(n);
  const froms = observed.map((o) => o.host.from).sort();
  const tos = observed.map((o) => o.host.to).sort();
  return {
    source,
    from: froms[0]!,
    to: tos[tos.length - 1]!,
    ...(observed.every((o) => o.host.window === 'scored-passes') ? { window: 'scored-passes' as const } : {}),
    intervalSec: Math.max(...observed.map((o) => o.host.intervalSec)),
    // the fewest any VM had: every VM's figures rest on at least this many samples
    samples: Math.min(...observed.map((o) => o.host.samples)),
    samplesInside: Math.min(...observed.map((o) => o.host.samplesInside)),
    datastore,
    latencyUs: datastore.latencyMs === null ? null : datastore.latencyMs * 1000,
    latencySpan: VM_DATASTORE_SPAN,
    latencyResolutionUs: DATASTORE_RESOLUTION_US,
    ...(notes.size > 0 ? { notes: [...notes] } : {}),
  };
}

function sum(xs: ReadonlyArray<number | null>): number | null {
  let s = 0;
  for (const x of xs) {
    if (x === null) return null;
    s += x;
  }
  return s;
}

/** The mean of the values weighted by I/O; equal weights when no VM counted any I/O; null when a value is missing. */
function weighted(pairs: ReadonlyArray<readonly [number | null, number | null]>): number | null {
  if (pairs.some(([v]) => v === null)) return null;
  const total = pairs.reduce((a, [, w]) => a + (w ?? 0), 0);
  if (total <= 0) return pairs.reduce((a, [v]) => a + v!, 0) / pairs.length;
  return pairs.reduce((a, [v, w]) => a + v! * (w ?? 0), 0) / total;
}

// What the hypervisor saw of one test, from below the guest: vSphere's PerformanceManager
// real-time counters for the virtual disk under test and its datastore, or `esxtop -b` on an ESXi
// host. Stored in the record as `host` beside the guest's own figures (docs/architecture.md,
// "Host-side metrics"). A leaf shape shared by providers (which measure it), run/ (which attaches
// it to each record), results/ and report/.

/** One entity's I/O as the host counted it over the samples kept. Unknown values are null. */
export interface HostIoFigures {
  /** the counter instance: a virtual disk `scsi0:1`, a datastore's uuid, an esxtop device `naa.…` */
  instance: string;
  readIops: number | null;
  writeIops: number | null;
  /** KB per second as vSphere counts them (KB = 1024 bytes) */
  readKBps: number | null;
  writeKBps: number | null;
  /** mean read/write latency in milliseconds (vSphere: whole ms; esxtop: two decimals) */
  readLatencyMs: number | null;
  writeLatencyMs: number | null;
  /** the I/O-weighted mean of read and write latency, ms — what the reports set beside the guest's */
  latencyMs: number | null;
}

/** esxtop's per-command latencies of the LUN under test (ms per command, averages over the samples kept). */
export interface EsxtopLatencies {
  /** the device: `naa.…`/`t10.…`/`mpx.…` */
  device: string;
  /** DAVG/cmd: device/driver round trip (Average Driver MilliSec/Command) */
  davgMs: number | null;
  /** KAVG/cmd: time in the VMkernel (Average Kernel MilliSec/Command), QAVG included */
  kavgMs: number | null;
  /** GAVG/cmd = DAVG + KAVG: what the guest's I/O cost at the host (Average Guest MilliSec/Command) */
  gavgMs: number | null;
  /** QAVG/cmd: time queued in the VMkernel (Average Queue MilliSec/Command) */
  qavgMs: number | null;
  readIops: number | null;
  writeIops: number | null;
}

export interface HostMetrics {
  /** where the figures come from */
  source: 'vsphere-perf' | 'esxtop';
  /** the host's clock at the start and end of the span watched (ISO 8601) */
  from: string;
  to: string;
  /**
   * the span watched: `scored-passes` from the first measured pass's start to the last one's end
   * (workloads/passes.ts ScoredSpan: pass 0, the fill and the pause between tests left out); absent
   * in records made before, which watched the whole test (pass 0 and the tool's start included)
   */
  window?: 'scored-passes';
  /**
   * vSphere: the VM whose counters these are, by name (the target's VM, or the clone a `vm.count`
   * member measured); absent on esxtop's figures and on a `vm.count` aggregate (its VMs summed)
   */
  entity?: string;
  /** seconds each sample averages over (vSphere: the real-time refreshRate, 20 s on ESXi; esxtop: -d) */
  intervalSec: number;
  /** samples that overlap the test's span, and of those the ones lying wholly inside it */
  samples: number;
  samplesInside: number;
  /** vSphere: virtualDisk.* of the disk under test (from the VMkernel's virtual SCSI layer) */
  virtualDisk?: HostIoFigures;
  /** vSphere: datastore.* of the datastore holding it, as seen by this VM */
  datastore?: HostIoFigures;
  /** esxtop: the LUN's DAVG/KAVG/GAVG/QAVG */
  esxtop?: EsxtopLatencies;
  /** the host latency the reports set beside the guest's, in µs (virtual disk, else GAVG) */
  latencyUs: number | null;
  /** the latency span `latencyUs` covers, in words */
  latencySpan: string;
  /**
   * the resolution of the counter `latencyUs` comes from, µs: 1 for vSphere's microsecond counters
   * (virtualDisk.readLatencyUS/writeLatencyUS), 1000 where only whole-millisecond ones exist, 10
   * for esxtop's two-decimal ms; a guest − host difference below it is not a measurement
   */
  latencyResolutionUs?: number;
  /** why a figure is missing or weak (no sample wholly inside the span, a counter not offered…) */
  notes?: string[];
}

/** The host could not be observed for this test (a query failed, no counter offered): why. */
export interface HostUnavailable {
  source: HostMetrics['source'];
  unavailable: string;
}

/**
 * A provider's way to watch one test from the host. The executor starts it right before the test
 * and stops it right after; a failure to observe never fails the test (the record says why).
 */
export interface HostObserver {
  readonly source: HostMetrics['source'];
  start(signal: AbortSignal): Promise<HostObservation>;
}

export interface HostObservation {
  /** ends the observation: what the host saw from start to now */
  stop(signal: AbortSignal): Promise<HostMetrics>;
}

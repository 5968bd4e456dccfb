// The host's view of a test through vSphere's PerformanceManager: the real-time counters of the
// virtual disk under test (virtualDisk.*, instance `scsi<bus>:<unit>`) and of the datastore holding
// it (datastore.*, instance = the datastore's uuid), on the VM entity, at the provider's real-time
// interval (QueryPerfProviderSummary.refreshRate: 20 s on ESXi). Counter ids are resolved by
// group.name.rollup from PerformanceManager.perfCounter, never hard-coded: they are server-assigned
// [pyvmomi docs/vim/PerformanceManager.rst; API reference "Virtual Disk Counters", "Datastore Counters"].
//
// Method: the host's clock (CurrentTime) is read when the test starts and ends; then QueryPerf
// returns the samples from the start on, asked again until one at or after the end exists (a real
// host publishes a sample when its interval closes, so this waits up to one interval). A sample
// stamped t averages (t − interval, t]; those overlapping the test are kept, and when some lie
// wholly inside it only those are used. Rates are averaged over the kept samples; latencies are
// weighted by each sample's I/O count, as the counters are per-command averages.
import type { HostIoFigures, HostMetrics, HostObservation, HostObserver } from '../../contract/host-metrics.ts';
import type { CreatedObject } from '../../contract/provider.ts';
import { VsphereClientError } from './fault.ts';
import { currentTime, queryAvailablePerfMetric, queryPerf, queryPerfProviderSummary } from './methods.ts';
import type { MoRef } from './soap.ts';
import type { PerfCounterInfo, PerfEntityMetric, PerfMetricId, VirtualDevice } from './types.ts';
import { arr } from './types.ts';
import type { VsphereClient } from './client.ts';

/** What the host latency beside the guest's covers: the VMkernel's view of the guest's commands. */
export const VSPHERE_LATENCY_SPAN =
  'virtualDisk.totalReadLatency/totalWriteLatency: from the VMkernel receiving the guest\u2019s command for the virtual disk to its completion (kernel + device, whole ms), I/O-weighted over reads and writes';
/** The same span from the microsecond counters, where the host offers them. */
export const VSPHERE_LATENCY_SPAN_US =
  'virtualDisk.readLatencyUS/writeLatencyUS: from the VMkernel receiving the guest\u2019s command for the virtual disk to its completion (kernel + device, µs, rollup latest), I/O-weighted over reads and writes';

type Field = 'readIops' | 'writeIops' | 'readKBps' | 'writeKBps' | 'readLatencyMs' | 'writeLatencyMs' | 'readLatencyUs' | 'writeLatencyUs';

/**
 * name.rollup of each counter we read, per group. totalRead/WriteLatency count whole milliseconds:
 * on flash they read 0 or 1 ms. The virtual disk group also has readLatencyUS/writeLatencyUS
 * (unit microsecond, stats absolute, rollup latest) [real-product-rules.md §5; govmomi@0.24
 * simulator/esx/performance_manager.go and vpx/performance_manager.go, the counter tables captured
 * from a real ESXi and vCenter 6.5]; they are used where the host offers them for the instance.
 */
const COUNTERS: ReadonlyArray<[string, string, Field, ReadonlyArray<Group>?]> = [
  ['numberReadAveraged', 'average', 'readIops'],
  ['numberWriteAveraged', 'average', 'writeIops'],
  ['read', 'average', 'readKBps'],
  ['write', 'average', 'writeKBps'],
  ['totalReadLatency', 'average', 'readLatencyMs'],
  ['totalWriteLatency', 'average', 'writeLatencyMs'],
  ['readLatencyUS', 'latest', 'readLatencyUs', ['virtualDisk']],
  ['writeLatencyUS', 'latest', 'writeLatencyUs', ['virtualDisk']],
];
const GROUPS = ['virtualDisk', 'datastore'] as const;
type Group = (typeof GROUPS)[number];

/** `group.name.rollup` → counter key, from PerformanceManager.perfCounter. */
export function counterKeys(infos: readonly PerfCounterInfo[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of infos) out.set(`${c.groupInfo.key}.${c.nameInfo.key}.${c.rollupType}`, c.key);
  return out;
}

/** The counter instance of a virtual disk: `scsi0:1`, `sata0:0`, `nvme0:0`, `ide0:1` (controller type, bus, unit). */
export function virtualDiskInstance(devices: readonly VirtualDevice[], disk: { controllerKey: number; unitNumber: number }): string | null {
  const ctl = devices.find((d) => d.key === disk.controllerKey);
  if (!ctl || ctl.busNumber === undefined) return null;
  const t = ctl._type ?? '';
  const prefix = /NVME/i.test(t) ? 'nvme' : /SATA|AHCI/i.test(t) ? 'sata' : /IDE/i.test(t) ? 'ide' : /SCSI|LsiLogic|BusLogic/i.test(t) ? 'scsi' : null;
  return prefix ? `${prefix}${ctl.busNumber}:${disk.unitNumber}` : null;
}

/** The datastore's counter instance candidates: its VMFS uuid, and its URL's last segment (ds:///vmfs/volumes/<id>/). */
export function datastoreInstances(info: { url?: string; vmfs?: { uuid?: string } }): string[] {
  const out: string[] = [];
  if (info.vmfs?.uuid) out.push(info.vmfs.uuid);
  const seg = (info.url ?? '').replace(/\/+$/, '').split('/').pop();
  if (seg) out.push(seg);
  return out;
}

interface Series {
  group: Group;
  field: Field;
  instance: string;
  /** by sample timestamp (ms) */
  values: Map<number, number>;
}

/**
 * The figures of one group from the series QueryPerf returned, over the samples that overlap
 * [fromMs, toMs] (wholly inside ones only, when any). A value below 0 is vSphere's "no data".
 */
export function summarise(metrics: readonly PerfEntityMetric[], ids: ReadonlyMap<number, { group: Group; field: Field }>, span: { fromMs: number; toMs: number }, intervalSec: number): { figures: Partial<Record<Group, HostIoFigures>>; samples: number; inside: number; /** the virtual disk's latency came from the µs counters */ microseconds: boolean } {
  let microseconds = false;
  const series: Series[] = [];
  const stamps = new Set<number>();
  for (const m of metrics) {
    const times = arr(m.sampleInfo).map((s) => Date.parse(s.timestamp));
    for (const v of arr(m.value)) {
      const id = ids.get(v.id.counterId);
      if (!id) continue;
      const values = new Map<number, number>();
      arr(v.value).forEach((x, i) => {
        const t = times[i];
        if (t !== undefined && Number.isFinite(t) && typeof x === 'number' && x >= 0) values.set(t, x);
      });
      for (const t of times) if (Number.isFinite(t)) stamps.add(t);
      series.push({ ...id, instance: v.id.instance, values });
    }
  }
  const iv = intervalSec * 1000;
  const overlapping = [...stamps].filter((t) => t > span.fromMs && t - iv < span.toMs);
  const inside = overlapping.filter((t) => t - iv >= span.fromMs && t <= span.toMs);
  const kept = new Set(inside.length > 0 ? inside : overlapping);
  const figures: Partial<Record<Group, HostIoFigures>> = {};
  for (const group of GROUPS) {
    const own = series.filter((s) => s.group === group);
    if (own.length === 0) continue;
    const get = (f: Field) => own.find((s) => s.field === f);
    const mean = (f: Field): number | null => {
      const xs = [...(get(f)?.values ?? new Map<number, number>())].filter(([t]) => kept.has(t)).map(([, x]) => x);
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
    };
    // latency per command, weighted by the commands of each sample
    const weighted = (lat: Field, iops: Field): number | null => {
      const l = get(lat)?.values;
      const n = get(iops)?.values;
      if (!l) return null;
      let sum = 0;
      let w = 0;
      for (const t of kept) {
        const x = l.get(t);
        const k = n?.get(t);
        if (x === undefined) continue;
        if (k === undefined) return mean(lat);
        sum += x * k;
        w += k;
      }
      return w > 0 ? sum / w : mean(lat);
    };
    // the microsecond counters, where the host gave them, in place of the whole-ms ones
    const us = (f: Field, iops: Field) => (get(f) ? weighted(f, iops) : null);
    const readUs = us('readLatencyUs', 'readIops');
    const writeUs = us('writeLatencyUs', 'writeIops');
    const micro = get('readLatencyUs') !== undefined || get('writeLatencyUs') !== undefined;
    const f: HostIoFigures = {
      instance: own[0]!.instance,
      readIops: mean('readIops'),
      writeIops: mean('writeIops'),
      readKBps: mean('readKBps'),
      writeKBps: mean('writeKBps'),
      readLatencyMs: micro ? (readUs === null ? null : readUs / 1000) : weighted('readLatencyMs', 'readIops'),
      writeLatencyMs: micro ? (writeUs === null ? null : writeUs / 1000) : weighted('writeLatencyMs', 'writeIops'),
      latencyMs: null,
    };
    f.latencyMs = combined(f);
    figures[group] = f;
    if (group === 'virtualDisk') microseconds = micro;
  }
  return { figures, samples: kept.size, inside: inside.length, microseconds };
}

/** The I/O-weighted mean of read and write latency (the one that moved, when only one did). */
export function combined(f: Pick<HostIoFigures, 'readIops' | 'writeIops' | 'readLatencyMs' | 'writeLatencyMs'>): number | null {
  const r = f.readIops ?? 0;
  const w = f.writeIops ?? 0;
  if (r + w > 0) return ((f.readLatencyMs ?? 0) * r + (f.writeLatencyMs ?? 0) * w) / (r + w);
  if (f.readLatencyMs !== null && f.writeLatencyMs !== null) return Math.max(f.readLatencyMs, f.writeLatencyMs);
  return f.readLatencyMs ?? f.writeLatencyMs;
}

interface Target {
  pm: MoRef;
  vm: MoRef;
  /** the VM's name, as the ledger recorded it: the record says whose counters these are */
  vmName: string;
  intervalSec: number;
  metricIds: PerfMetricId[];
  ids: Map<number, { group: Group; field: Field }>;
  notes: string[];
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new Error('interrupted'));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Error('interrupted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

type PerfFind = { vm(name: string): Promise<MoRef>; datastore(name: string): Promise<MoRef | undefined> };

/**
 * The metric ids to ask for each group's instance: every counter of COUNTERS the server has and
 * offers for that instance at the interval; what is missing is said in `notes`.
 */
function chooseMetrics(counters: ReadonlyMap<string, number>, available: readonly PerfMetricId[], instances: Record<Group, string | null>, intervalSec: number, notes: string[]): { metricIds: PerfMetricId[]; ids: Map<number, { group: Group; field: Field }> } {
  const metricIds: PerfMetricId[] = [];
  const ids = new Map<number, { group: Group; field: Field }>();
  for (const group of GROUPS) {
    const instance = instances[group];
    if (instance === null) continue;
    for (const [name, rollup, field, only] of COUNTERS) {
      if (only && !only.includes(group)) continue;
      const key = counters.get(`${group}.${name}.${rollup}`);
      const microsecond = field === 'readLatencyUs' || field === 'writeLatencyUs';
      if (key === undefined || !available.some((m) => m.counterId === key && m.instance === instance)) {
        // the µs counters are optional: said once below, for the latency they leave at whole ms
        if (!microsecond) notes.push(key === undefined ? `${group}.${name}.${rollup} is not among the server's counters` : `${group}.${name}.${rollup} is not offered for instance ${instance} at the ${intervalSec} s interval`);
        continue;
      }
      metricIds.push({ counterId: key, instance });
      ids.set(key, { group, field });
    }
  }
  if (instances.virtualDisk && ![...ids.values()].some((v) => v.field === 'readLatencyUs' || v.field === 'writeLatencyUs')) {
    notes.push('the host offers no microsecond latency counters (virtualDisk.readLatencyUS/writeLatencyUS) for the disk: its latency is whole milliseconds (totalReadLatency/totalWriteLatency), so a guest − host difference under 1 ms is the counter\u2019s rounding, not a measurement');
  }
  return { metricIds, ids };
}

/** What to ask PerformanceManager for the disk under test: the VM, its interval, the counters and instances offered. */
async function resolveTarget(client: () => Promise<VsphereClient>, find: PerfFind, disk: CreatedObject): Promise<Target> {
  const c = await client();
  const rt = c.session;
  const pm = c.serviceContent.perfManager;
  if (!pm) throw new VsphereClientError('unsupported', `${c.endpoint} has no PerformanceManager`, { method: 'RetrieveServiceContent', host: c.endpoint });
  const vm = await find.vm(String(disk.data.vm));
  const summary = await queryPerfProviderSummary(rt, pm, vm);
  if (!summary.currentSupported || !summary.refreshRate || summary.refreshRate <= 0) throw new VsphereClientError('unsupported', `VM ${String(disk.data.vm)} offers no real-time statistics (QueryPerfProviderSummary: currentSupported ${String(summary.currentSupported)}, refreshRate ${String(summary.refreshRate)})`, { method: 'QueryPerfProviderSummary', host: c.endpoint });
  const intervalSec = summary.refreshRate;
  const counters = counterKeys(arr((await c.readProps(pm, ['perfCounter'])).perfCounter as PerfCounterInfo[] | undefined));
  const available = await queryAvailablePerfMetric(rt, pm, vm, intervalSec);
  const notes: string[] = [];
  const devices = await c.devices(vm);
  const vdisk = virtualDiskInstance(devices, { controllerKey: disk.data.controllerKey as number, unitNumber: disk.data.unitNumber as number });
  const instances: Record<Group, string | null> = { virtualDisk: vdisk, datastore: null };
  if (!vdisk) notes.push(`the virtual disk's controller (key ${String(disk.data.controllerKey)}) is not on the VM: no virtualDisk counters`);
  // an RDM's mapping file sits on a datastore its I/O does not go to: no datastore figures
  const file = typeof disk.data.fileName === 'string' ? /^\[([^\]]+)\]/.exec(disk.data.fileName)?.[1] : undefined;
  if (disk.kind === 'disk' && file) {
    const ds = await find.datastore(file);
    if (!ds) throw new VsphereClientError('not-found', `datastore ${file} of the disk under test is not found`, { method: 'FindByInventoryPath', host: c.endpoint });
    const { info } = await c.readDatastore(ds);
    const want = datastoreInstances(info);
    const offered = new Set(available.map((m) => m.instance));
    instances.datastore = want.find((w) => offered.has(w)) ?? null;
    if (!instances.datastore) notes.push(`no datastore counter instance of ${file} (${want.join(', ')}) is offered for the VM`);
  }
  const { metricIds, ids } = chooseMetrics(counters, available, instances, intervalSec, notes);
  if (metricIds.length === 0) throw new VsphereClientError('unsupported', `no virtualDisk or datastore counter is offered for the disk under test of VM ${String(disk.data.vm)}${notes.length ? `: ${notes.join('; ')}` : ''}`, { method: 'QueryAvailablePerfMetric', host: c.endpoint });
  return { pm, vm, vmName: String(disk.data.vm), intervalSec, metricIds, ids, notes };
}

/**
 * The samples from `fromMs` on, asked again until one at or after `toMs` is published (a sample
 * covering the end is published when its interval closes): at most one interval and a half.
 */
async function samplesUntil(c: VsphereClient, t: Target, span: { fromMs: number; toMs: number }, notes: string[], signal: AbortSignal, pollMs: number): Promise<PerfEntityMetric[]> {
  const { fromMs, toMs } = span;
  const ivMs = t.intervalSec * 1000;
  const maxSample = Math.ceil((toMs - fromMs) / ivMs) + 2;
  const deadline = Date.now() + ivMs * 1.5;
  for (;;) {
    const metrics = await queryPerf(c.session, t.pm, [{ entity: t.vm, startTime: new Date(fromMs - ivMs).toISOString(), maxSample, metricId: t.metricIds, intervalId: t.intervalSec }]);
    const latest = Math.max(-Infinity, ...metrics.flatMap((m) => arr(m.sampleInfo).map((s) => Date.parse(s.timestamp))));
    if (latest >= toMs) return metrics;
    if (Date.now() >= deadline) {
      notes.push(`no sample at or after the test's end was published within ${Math.round((ivMs * 1.5) / 1000)} s; the last part of the test is not covered`);
      return metrics;
    }
    await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())), signal);
  }
}

/** The host metrics of the test between the host's times `from` and `to`. */
async function hostMetrics(c: VsphereClient, t: Target, from: string, to: string, signal: AbortSignal, pollMs: number): Promise<HostMetrics> {
  const fromMs = Date.parse(from);
  const toMs = Date.parse(to);
  const notes = [...t.notes];
  const metrics = await samplesUntil(c, t, { fromMs, toMs }, notes, signal, pollMs);
  const s = summarise(metrics, t.ids, { fromMs, toMs }, t.intervalSec);
  if (s.samples === 0) notes.push('no sample overlaps the test');
  else if (s.inside === 0) notes.push(`no ${t.intervalSec} s sample lies wholly inside the test's ${Math.round((toMs - fromMs) / 1000)} s: the figures average samples that also cover time before or after it (rates are diluted; latencies, per command, much less)`);
  const vd = s.figures.virtualDisk;
  return {
    source: 'vsphere-perf',
    from,
    to,
    entity: t.vmName,
    intervalSec: t.intervalSec,
    samples: s.samples,
    samplesInside: s.inside,
    ...(vd ? { virtualDisk: vd } : {}),
    ...(s.figures.datastore ? { datastore: s.figures.datastore } : {}),
    latencyUs: vd?.latencyMs === null || vd?.latencyMs === undefined ? null : vd.latencyMs * 1000,
    latencySpan: s.microseconds ? VSPHERE_LATENCY_SPAN_US : VSPHERE_LATENCY_SPAN,
    latencyResolutionUs: s.microseconds ? 1 : 1000,
    ...(notes.length ? { notes } : {}),
  };
}

/**
 * Watches the disk the permutation attached (the ledger's `disk`/`rdm` object: VM, controller key,
 * unit number, file) through PerformanceManager; null when no disk was attached.
 */
export function perfObserver(client: () => Promise<VsphereClient>, find: PerfFind, provisioned: readonly CreatedObject[], opts: { pollMs?: number } = {}): HostObserver | null {
  const disk = [...provisioned].reverse().find((o) => (o.kind === 'disk' || o.kind === 'rdm') && typeof o.data.vm === 'string' && typeof o.data.controllerKey === 'number' && typeof o.data.unitNumber === 'number');
  if (!disk) return null;
  let target: Promise<Target> | undefined;
  return {
    source: 'vsphere-perf',
    async start(): Promise<HostObservation> {
      target ??= resolveTarget(client, find, disk);
      const t = await target.catch((err: unknown) => {
        target = undefined; // asked again at the next test
        throw err;
      });
      const c = await client();
      const from = await currentTime(c.session);
      return {
        async stop(signal: AbortSignal): Promise<HostMetrics> {
          const to = await currentTime(c.session);
          return hostMetrics(c, t, from, to, signal, opts.pollMs ?? 5000);
        },
      };
    },
  };
}

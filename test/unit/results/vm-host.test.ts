// The host's view of a vm.count pass (results/vm-host.ts): each member keeps its own disk's
// counters; the aggregate sums the shared datastore's over the VMs, or says why it cannot. And the
// spread between VMs the aggregate states (IOPS and p99: min, max, coefficient of variation).
import { describe, expect, it } from 'vitest';
import type { HostIoFigures, HostMetrics, ResultRecord } from '../../../src/results/record.ts';
import { aggregateVmPass, cvOf } from '../../../src/results/vm-aggregate.ts';
import { aggregateVmHost, VM_DATASTORE_SPAN } from '../../../src/results/vm-host.ts';
import { memberRecords, RANDOM_TEST } from '../report/vm-records.ts';

const DS = '5f1c2a3b-9d8e7f60-1a2b-001122334455';

const io = (instance: string, readIops: number, writeIops: number, readLatencyMs: number, writeLatencyMs: number): HostIoFigures => ({
  instance,
  readIops,
  writeIops,
  readKBps: readIops * 4,
  writeKBps: writeIops * 4,
  readLatencyMs,
  writeLatencyMs,
  latencyMs: (readLatencyMs * readIops + writeLatencyMs * writeIops) / (readIops + writeIops),
});

/** One member's host figures as perf.ts writes them: its clone's disk, the datastore as that VM saw it. */
function hostOf(vm: string, ds: HostIoFigures, from: string, to: string, notes?: string[]): HostMetrics {
  return {
    source: 'vsphere-perf',
    from,
    to,
    entity: vm,
    window: 'scored-passes',
    intervalSec: 20,
    samples: 2,
    samplesInside: 0,
    virtualDisk: io('scsi0:1', ds.readIops!, ds.writeIops!, 0.5, 0.9),
    datastore: ds,
    latencyUs: 500,
    latencySpan: 'virtualDisk.readLatencyUS/writeLatencyUS: …',
    latencyResolutionUs: 1,
    ...(notes ? { notes } : {}),
  };
}

/** Two VMs of one pass, each with its own host figures. */
function pass(hosts: Array<ResultRecord['host']>): ResultRecord[] {
  const curve = { test: RANDOM_TEST, points: { 2: { iops: 20_000, latencyUs: 200 } } };
  return memberRecords({ counts: [2], curves: [curve] }, curve, 2, 1).map((m, i) => ({ ...m, ...(hosts[i] ? { host: hosts[i] } : {}) }));
}

describe('the aggregate\'s host: the shared datastore, summed over the pass\'s VMs', () => {
  const a = hostOf('ss-vm-1', io(DS, 300, 100, 2, 4), '2026-12-06T02:00:00.100Z', '2026-12-06T02:00:01.200Z', ['no 20 s sample lies wholly inside the test']);
  const b = hostOf('ss-vm-2', io(DS, 100, 100, 1, 3), '2026-12-06T02:00:00.050Z', '2026-12-06T02:00:01.300Z', ['no 20 s sample lies wholly inside the test']);

  it('sums IOPS and KB/s, weights latency by each VM\'s I/O, and covers every VM\'s watched span', () => {
    const h = aggregateVmHost(pass([a, b])) as HostMetrics;
    expect(h.datastore).toEqual({
      instance: DS,
      readIops: 400,
      writeIops: 200,
      readKBps: 1600,
      writeKBps: 800,
      // (2 × 300 + 1 × 100) / 400; (4 × 100 + 3 × 100) / 200
      readLatencyMs: 1.75,
      writeLatencyMs: 3.5,
      // each VM's combined latency weighted by its I/O: (2.5 × 400 + 2 × 200) / 600
      latencyMs: (2.5 * 400 + 2 * 200) / 600,
    });
    expect(h.latencyUs).toBeCloseTo(h.datastore!.latencyMs! * 1000, 9);
    // the datastore group counts whole milliseconds
    expect(h.latencyResolutionUs).toBe(1000);
    expect(h.latencySpan).toBe(VM_DATASTORE_SPAN);
    expect(h.virtualDisk).toBeUndefined();
    expect(h.entity).toBeUndefined();
    expect(h.from).toBe(b.from);
    expect(h.to).toBe(b.to);
    expect(h.window).toBe('scored-passes');
    expect(h.notes).toEqual(['no 20 s sample lies wholly inside the test']);
  });

  it('aggregateVmPass gives the aggregate that host, and leaves each member its own', () => {
    const members = pass([a, b]);
    const agg = aggregateVmPass(members);
    expect(agg.host).toEqual(aggregateVmHost(members));
    expect(members.map((m) => (m.host as HostMetrics).entity)).toEqual(['ss-vm-1', 'ss-vm-2']);
  });

  it('never sums some of the VMs: one not observed, or without datastore figures, makes it unavailable', () => {
    expect(aggregateVmHost(pass([a, undefined]))).toEqual({ source: 'vsphere-perf', unavailable: expect.stringMatching(/^VM 2 was not observed/) });
    expect(aggregateVmHost(pass([a, { source: 'vsphere-perf', unavailable: 'QueryPerf failed' }]))).toEqual({ source: 'vsphere-perf', unavailable: expect.stringContaining('(QueryPerf failed)') });
    const { datastore: _, ...noDatastore } = b;
    expect(aggregateVmHost(pass([a, noDatastore]))).toEqual({ source: 'vsphere-perf', unavailable: expect.stringMatching(/^VM 2 has no datastore figures/) });
    const other = hostOf('ss-vm-2', io('other-ds', 100, 100, 1, 3), b.from, b.to);
    expect(aggregateVmHost(pass([a, other]))).toEqual({ source: 'vsphere-perf', unavailable: expect.stringContaining('different datastores') });
  });

  it('has no host where nothing watched it', () => {
    expect(aggregateVmHost(pass([undefined, undefined]))).toBeUndefined();
    expect(aggregateVmPass(pass([undefined, undefined])).host).toBeUndefined();
  });
});

describe('the spread between VMs in the aggregate', () => {
  it('states IOPS and p99 min, max and coefficient of variation (population)', () => {
    const members = pass([undefined, undefined]);
    const spread = aggregateVmPass(members).vm!.spread!;
    const iops = members.map((m) => m.iops!);
    const p99 = members.map((m) => m.latencyUs.p99!);
    expect(spread).toMatchObject({ iopsMin: Math.min(...iops), iopsMax: Math.max(...iops), p99MinUs: Math.min(...p99), p99MaxUs: Math.max(...p99) });
    // two VMs: the population standard deviation is half their difference
    const cv = (xs: number[]) => Math.abs(xs[0]! - xs[1]!) / 2 / ((xs[0]! + xs[1]!) / 2);
    expect(spread['iopsCv']).toBeCloseTo(cv(iops), 12);
    expect(spread['p99Cv']).toBeCloseTo(cv(p99), 12);
    expect(spread['p99Cv']).toBeGreaterThan(0);
  });

  it('has no p99 CV when a VM has no p99, and no CV of a mean that is not positive', () => {
    const members = pass([undefined, undefined]);
    members[1] = { ...members[1]!, latencyUs: { ...members[1]!.latencyUs, p99: null } };
    expect(aggregateVmPass(members).vm!.spread!['p99Cv']).toBeNull();
    expect(cvOf([0, 0])).toBeNull();
    expect(cvOf([5, 5])).toBe(0);
  });
});

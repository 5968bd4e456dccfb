// aggregateVmPass: one record per vm.count pass from its VMs' member records. The fio fixtures are
// two fio 3.33 processes run at once on this machine against one file (two "VMs" of one pass), with
// storsweep's own argument vector (fioArgs: json+, lat_percentiles=1). What the aggregate says is
// checked against fio's raw JSON, read here independently of storsweep's parser.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRecordsJsonl } from '../../../src/app/load-source.ts';
import { binsPercentile, histogramOf, histogramTotal, MAX_HISTOGRAM_BINS } from '../../../src/results/latency-histogram.ts';
import { testIdentity, type ResultRecord } from '../../../src/results/record.ts';
import { aggregateVmPass } from '../../../src/results/vm-aggregate.ts';
import { mergeClones, parseFioJson } from '../../../src/workloads/fio.ts';

const FIXTURES = ['vm-pass-vm1-jsonplus.json', 'vm-pass-vm2-jsonplus.json'] as const;
const text = (name: string) => readFileSync(new URL(`../../fixtures/fio/${name}`, import.meta.url), 'utf8');

interface RawLat {
  mean: number;
  N: number;
  percentile: Record<string, number>;
  bins: Record<string, number>;
}
interface RawDirection {
  iops: number;
  bw_bytes: number;
  total_ios: number;
  lat_ns: RawLat;
  clat_ns: Partial<RawLat>;
}
/** fio's own read block, as fio printed it (no storsweep code involved). */
const raw = (name: string) => (JSON.parse(text(name)) as { jobs: Array<{ read: RawDirection }> }).jobs[0]!.read;

const TEST = testIdentity({ pattern: 'randread', blockSizeBytes: 4096, queueDepth: 4, threads: 1, readPercent: 100 });
const T0 = Date.parse('2026-12-06T02:10:00.000Z');

/** A member record as the run writes it from a pass's fio output. */
function member(name: string, index: number, count = 2, extra: Partial<ResultRecord> = {}): ResultRecord {
  const job = mergeClones(parseFioJson(text(name), name).jobs)[0]!;
  const latencyHistogram = histogramOf(job.latency.bins!)!;
  return {
    runId: 'r1',
    permutationId: `p-vm${count}`,
    axes: { 'vm.count': count },
    repetition: 1,
    test: TEST,
    iops: job.iops,
    bytesPerSecond: job.bytesPerSecond,
    latencyUs: job.latencyUs,
    latencyHistogram,
    cpuPercent: job.cpuPercent,
    tool: { name: 'fio', version: 'fio-3.33' },
    rawPath: null,
    vm: { role: 'member', count, index, name: `vm${index}`, startedAt: new Date(T0 + index * 3).toISOString(), endedAt: new Date(T0 + 1000 + index).toISOString() },
    metadata: { profile: 'vm-scaling', passSec: 1, vmName: `vm${index}` },
    ...extra,
  };
}

/** The empirical quantile of every I/O's bucket value: the value at rank ⌈p·N⌉ of all of them, sorted. */
function quantileOfAll(bins: ReadonlyArray<Record<string, number>>, p: number): number {
  const values: number[] = [];
  for (const b of bins) for (const [v, c] of Object.entries(b)) for (let i = 0; i < c; i++) values.push(Number(v));
  values.sort((a, b) => a - b);
  return values[Math.ceil((p / 100) * values.length) - 1]!;
}

describe('fio 3.33 json+ with lat_percentiles=1: the lat histogram', () => {
  it.each(FIXTURES)('%s: lat_ns has bins of every I/O, and they give fio\'s own lat percentiles', (name) => {
    const r = raw(name);
    expect(Object.keys(r.lat_ns.bins).length).toBeGreaterThan(10);
    const sum = Object.values(r.lat_ns.bins).reduce((a, b) => a + b, 0);
    expect(sum).toBe(r.lat_ns.N);
    expect(sum).toBe(r.total_ios);
    const m = member(name, 1);
    expect(histogramTotal(m.latencyHistogram!)).toBe(r.total_ios);
    expect(m.latencyHistogram!.bins.length).toBeLessThanOrEqual(MAX_HISTOGRAM_BINS);
    for (const p of [50, 95, 99, 99.9]) {
      expect(binsPercentile(m.latencyHistogram!.bins, p)).toBe(r.lat_ns.percentile[p.toFixed(6)]);
    }
    expect(m.latencyUs.p99).toBe(r.lat_ns.percentile['99.000000']! / 1000);
  });
});

describe('aggregateVmPass', () => {
  it('two VMs of one pass: IOPS and bytes/s summed, the mean I/O-weighted, percentiles of all their I/Os', () => {
    const [a, b] = FIXTURES.map(raw) as [RawDirection, RawDirection];
    const agg = aggregateVmPass([member(FIXTURES[0], 1), member(FIXTURES[1], 2)]);
    expect(agg.iops).toBeCloseTo(a.iops + b.iops, 6);
    expect(agg.bytesPerSecond).toBe(a.bw_bytes + b.bw_bytes);
    expect(agg.latencyUs.mean).toBeCloseTo((a.lat_ns.mean * a.lat_ns.N + b.lat_ns.mean * b.lat_ns.N) / (a.lat_ns.N + b.lat_ns.N) / 1000, 6);
    for (const [k, p] of [['p50', 50], ['p95', 95], ['p99', 99], ['p999', 99.9]] as const) {
      expect(agg.latencyUs[k]).toBe(quantileOfAll([a.lat_ns.bins, b.lat_ns.bins], p) / 1000);
    }
    expect(histogramTotal(agg.latencyHistogram!)).toBe(a.total_ios + b.total_ios);
    expect(agg.vm).toMatchObject({ role: 'aggregate', count: 2, startedAt: new Date(T0 + 6).toISOString(), endedAt: new Date(T0 + 1001).toISOString(), startSkewMs: 3 });
    expect(agg.vm!.spread).toMatchObject({ iopsMin: Math.min(a.iops, b.iops), iopsMax: Math.max(a.iops, b.iops), p99MinUs: Math.min(a.lat_ns.percentile['99.000000']!, b.lat_ns.percentile['99.000000']!) / 1000 });
    // what every VM shares stays; a VM's own fact does not
    expect(agg.metadata).toMatchObject({ profile: 'vm-scaling', passSec: 1 });
    expect(agg.metadata).not.toHaveProperty('vmName');
    expect(agg.vm).not.toHaveProperty('index');
  });

  // 9,900 fast I/Os on one VM, 100 slow ones on the other: the pass's p99 is the fast one's
  const lopsided = (histograms: boolean): ResultRecord[] => {
    const one = member(FIXTURES[0], 1);
    const fast = { ...one, iops: 9900, latencyUs: { mean: 100, p50: 100, p95: 100, p99: 100, p999: 100 }, latencyHistogram: { ...one.latencyHistogram!, bins: [[100_000, 9900]] as Array<[number, number]> } };
    const slow = { ...member(FIXTURES[1], 2), iops: 100, latencyUs: { mean: 10_000, p50: 10_000, p95: 10_000, p99: 10_000, p999: 10_000 }, latencyHistogram: { ...one.latencyHistogram!, bins: [[10_000_000, 100]] as Array<[number, number]> } };
    return histograms ? [fast, slow] : [fast, slow].map(({ latencyHistogram: _h, ...r }) => ({ ...r, tool: { name: 'diskspd', version: null } }));
  };

  it('never the mean of the VMs\' percentiles', () => {
    const agg = aggregateVmPass(lopsided(true));
    expect(agg.latencyUs.p99).toBe(100);
    expect(agg.latencyUs.p999).toBe(10_000);
    // the mean of means would be 5,050 µs; weighted by I/O count it is 199 µs
    expect(agg.latencyUs.mean).toBeCloseTo(199, 9);
    expect(agg.vm!.spread).toMatchObject({ p99MinUs: 100, p99MaxUs: 10_000, iopsMin: 100, iopsMax: 9900 });
    expect(agg.vm!.spread!.iopsCv).toBeCloseTo(0.98, 9);
  });

  it('VMs without a histogram (diskspd): percentiles null with a note, the mean weighted by IOPS', () => {
    const agg = aggregateVmPass(lopsided(false));
    expect(agg.latencyUs).toEqual({ mean: expect.closeTo(199, 9), p50: null, p95: null, p99: null, p999: null });
    expect(agg.latencyHistogram).toBeUndefined();
    expect(String(agg.metadata!['vmLatencyNote'])).toMatch(/percentiles left empty: VM 1, 2 have no latency histogram \(diskspd -L prints percentiles only\)/);
    expect(String(agg.metadata!['vmLatencyNote'])).toMatch(/weighted by IOPS/);
  });

  it('one VM: its own figures', () => {
    const one = member(FIXTURES[0], 1, 1);
    const agg = aggregateVmPass([one]);
    expect(agg.latencyUs).toEqual(one.latencyUs);
    expect(agg.iops).toBe(one.iops);
    expect(agg.vm).toMatchObject({ role: 'aggregate', count: 1, startSkewMs: 0, spread: { iopsCv: 0 } });
  });

  it('refuses members that are not one pass of one permutation, test and repetition, one per VM', () => {
    const a = member(FIXTURES[0], 1);
    const b = member(FIXTURES[1], 2);
    expect(() => aggregateVmPass([])).toThrow(/no member records/);
    expect(() => aggregateVmPass([a, { ...b, permutationId: 'other' }])).toThrow(/record 2 is of another permutationId/);
    expect(() => aggregateVmPass([a, { ...b, repetition: 2 }])).toThrow(/another repetition/);
    expect(() => aggregateVmPass([a, { ...b, test: testIdentity({ pattern: 'randread', blockSizeBytes: 4096, queueDepth: 8, threads: 1, readPercent: 100 }) }])).toThrow(/another test/);
    expect(() => aggregateVmPass([a, { ...b, metadata: { pass: 2 } }])).toThrow(/another pass/);
    expect(() => aggregateVmPass([a])).toThrow(/1 member records for vm.count 2/);
    expect(() => aggregateVmPass([a, { ...b, vm: { ...b.vm!, index: 1 } }])).toThrow(/two member records of one VM/);
    expect(() => aggregateVmPass([a, aggregateVmPass([a, b])])).toThrow(/record 2 is not a member record/);
  });
});

describe('a record read back from a file: latencyHistogram and vm checked at their line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'storsweep-vm-records-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const read = (records: unknown[]) => {
    const file = join(dir, `r${Math.random().toString(36).slice(2)}.jsonl`);
    writeFileSync(file, records.map((r) => JSON.stringify(r) + '\n').join(''));
    return readRecordsJsonl(file);
  };
  const good = member(FIXTURES[0], 1);

  it('reads members and aggregates as written', async () => {
    const agg = aggregateVmPass([good, member(FIXTURES[1], 2)]);
    const { records } = await read([good, agg]);
    expect(records[1]!.latencyHistogram!.bins).toEqual(agg.latencyHistogram!.bins);
    expect(records[1]!.vm!.role).toBe('aggregate');
  });

  it('refuses a histogram larger than fio makes, out of order, or with counts that are no counts', async () => {
    const bins = Array.from({ length: MAX_HISTOGRAM_BINS + 1 }, (_, i) => [i + 1, 1]);
    await expect(read([good, { ...good, latencyHistogram: { ...good.latencyHistogram, bins } }])).rejects.toThrow(/:2: latencyHistogram\.bins: expected fio's latency histogram as storsweep keeps it \(.*1856/);
    await expect(read([{ ...good, latencyHistogram: { ...good.latencyHistogram, bins: [[20, 1], [10, 1]] } }])).rejects.toThrow(/:1: latencyHistogram\.bins\.1: .*ascend/);
    await expect(read([{ ...good, latencyHistogram: { ...good.latencyHistogram, bins: [[10, -1]] } }])).rejects.toThrow(/:1: latencyHistogram\.bins\.0\.1: /);
    await expect(read([{ ...good, latencyHistogram: { ...good.latencyHistogram, unit: 'us' } }])).rejects.toThrow(/:1: latencyHistogram\.unit: /);
  });

  it('refuses a vm share the reports could not read', async () => {
    await expect(read([{ ...good, vm: { ...good.vm, role: 'leader' } }])).rejects.toThrow(/:1: vm\.role: expected the vm\.count share storsweep writes/);
    await expect(read([{ ...good, vm: { ...good.vm, count: 0 } }])).rejects.toThrow(/:1: vm\.count: /);
    await expect(read([{ ...good, vm: { ...good.vm, spread: { iopsCv: 'high' } } }])).rejects.toThrow(/:1: vm\.spread\.iopsCv: /);
  });
});

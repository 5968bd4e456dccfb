// The guest − host gap is shown only where it is larger than the host counter's resolution: vSphere's
// totalRead/WriteLatency count whole milliseconds (1000 µs), its readLatencyUS/writeLatencyUS µs.
import { describe, expect, it } from 'vitest';
import { hostLatencyRows, hostLatencyTable } from '../../../src/report/host-latency.ts';
import type { HostMetrics } from '../../../src/results/record.ts';
import { summarise } from '../../../src/providers/vsphere/perf.ts';

const host = (latencyUs: number, latencyResolutionUs?: number): HostMetrics => ({
  source: 'vsphere-perf',
  from: '2024-01-01T00:00:00Z',
  to: '2024-01-01T00:01:00Z',
  intervalSec: 20,
  samples: 3,
  samplesInside: 2,
  latencyUs,
  latencySpan: 'x',
  ...(latencyResolutionUs !== undefined ? { latencyResolutionUs } : {}),
});
const rows = (guestUs: number, h: HostMetrics) => hostLatencyRows([{ permutationId: 'p1', label: 'a', records: [{ test: { id: 't' }, latencyUs: { mean: guestUs }, host: h }] }]);

describe('gap below the counter resolution', () => {
  it('whole-ms counters: a 400 µs difference is not a gap; 1.5 ms is', () => {
    const [r] = rows(1400, host(1000, 1000));
    expect(r).toMatchObject({ gapUs: null, gapBelowResolution: true, resolutionUs: 1000 });
    expect(hostLatencyTable([r!]).cells[0]![4]).toMatch(/^within ±1(\.0+)? ms \(counter resolution\)$/);
    expect(rows(2500, host(1000, 1000))[0]).toMatchObject({ gapUs: 1500, gapBelowResolution: false });
  });

  it('µs counters: the same 400 µs difference is shown', () => {
    expect(rows(1400, host(1000, 1))[0]).toMatchObject({ gapUs: 400, gapBelowResolution: false, resolutionUs: 1 });
  });

  it('a vSphere record from before the resolution was recorded counts as whole ms', () => {
    expect(rows(1400, host(1000))[0]).toMatchObject({ gapUs: null, gapBelowResolution: true, resolutionUs: 1000 });
  });
});

describe('the legend says which span each side covers', () => {
  it('guest: scored passes only; host: samples over the whole test, pass 0 included', async () => {
    const { hostLatencyLegend } = await import('../../../src/report/host-latency.ts');
    const legend = hostLatencyLegend(rows(1400, host(1000, 1)));
    expect(legend).toContainEqual(expect.stringMatching(/guest figure is its scored passes only; the host figure .* the unscored pass 0/));
  });
});

describe('summarise: µs counters take the place of the whole-ms ones', () => {
  const t0 = Date.parse('2024-01-01T00:00:00Z');
  const stamps = [20, 40, 60].map((s) => new Date(t0 + s * 1000).toISOString());
  const series = (counterId: number, value: number[]) => ({ id: { counterId, instance: 'scsi0:1' }, value });
  const metric = { entity: { type: 'VirtualMachine', value: 'vm-1' }, sampleInfo: stamps.map((timestamp) => ({ timestamp, interval: 20 })), value: [series(1, [100, 100, 100]), series(5, [0, 1, 0]), series(7, [180, 240, 300])] };
  const ids = new Map([
    [1, { group: 'virtualDisk' as const, field: 'readIops' as const }],
    [5, { group: 'virtualDisk' as const, field: 'readLatencyMs' as const }],
    [7, { group: 'virtualDisk' as const, field: 'readLatencyUs' as const }],
  ]);
  it('read latency 0.24 ms from µs (not the 0/1 ms of the whole-ms counter), flagged as microseconds', () => {
    const s = summarise([metric] as never, ids, { fromMs: t0, toMs: t0 + 60_000 }, 20);
    expect(s.microseconds).toBe(true);
    expect(s.figures.virtualDisk!.readLatencyMs).toBeCloseTo(0.24, 6);
    const noUs = new Map([...ids].filter(([k]) => k !== 7));
    const m = summarise([metric] as never, noUs, { fromMs: t0, toMs: t0 + 60_000 }, 20);
    expect(m.microseconds).toBe(false);
    expect(m.figures.virtualDisk!.readLatencyMs).toBeCloseTo(1 / 3, 6);
  });
});

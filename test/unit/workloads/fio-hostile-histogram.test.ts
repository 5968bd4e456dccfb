// A guest's fio output is input: a hostile or broken guest of a vm.count pass can print any `bins`.
// fio's lat_ns bins are whole-nanosecond bucket values with whole counts, and they count exactly the
// I/Os the block reports (stat.c add_lat_sample fills both per I/O; checked on fio 3.33's own output
// in the fixtures and on this machine's fio). Anything else is refused whole (workloads/fio-latency.ts
// checkedBins): one VM claiming 10^12 I/Os at 10 s must not become the pass's p99, and a record the
// run writes must be one it reads back (results/latency-histogram.ts latencyHistogramSchema).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { histogramOf, latencyHistogramSchema } from '../../../src/results/latency-histogram.ts';
import { testIdentity, type ResultRecord } from '../../../src/results/record.ts';
import { aggregateVmPass } from '../../../src/results/vm-aggregate.ts';
import { mergeClones, parseFioJson } from '../../../src/workloads/fio.ts';

const text = (name: string) => readFileSync(new URL(`../../fixtures/fio/${name}`, import.meta.url), 'utf8');
const TEST = testIdentity({ pattern: 'randread', blockSizeBytes: 4096, queueDepth: 4, threads: 1, readPercent: 100 });

/** vm-pass-vm2's real fio output with its lat_ns bins changed by `edit`. */
function tampered(edit: (bins: Record<string, number>) => void): string {
  const j = JSON.parse(text('vm-pass-vm2-jsonplus.json')) as { jobs: Array<{ read: { lat_ns: { bins: Record<string, number> } } }> };
  edit(j.jobs[0]!.read.lat_ns.bins);
  return JSON.stringify(j);
}

/** three I/Os of the first bin moved to bucket `key`: the total stays what the block reports */
function moved(b: Record<string, number>, key: string): void {
  const [k] = Object.keys(b);
  b[k!] = b[k!]! - 3;
  b[key] = 3;
}

function jobOf(raw: string) {
  return mergeClones(parseFioJson(raw, 'guest vm2').jobs)[0]!;
}

function member(raw: string, index: number): ResultRecord {
  const job = jobOf(raw);
  const h = job.latency.bins ? histogramOf(job.latency.bins) : null;
  return {
    runId: 'r1', permutationId: 'p-vm2', axes: { 'vm.count': 2 }, repetition: 1, test: TEST,
    iops: job.iops, bytesPerSecond: job.bytesPerSecond, latencyUs: job.latencyUs, ...(h ? { latencyHistogram: h } : {}),
    cpuPercent: job.cpuPercent, tool: { name: 'fio', version: 'fio-3.33' }, rawPath: null,
    vm: { role: 'member', count: 2, index, name: `vm${index}` }, metadata: {},
  };
}

describe('a guest\'s fio bins that are not fio\'s', () => {
  it('bins counting far more I/Os than the block reports are left out: the pass p99 is not the hostile VM\'s 10 s', () => {
    const hostile = tampered((b) => (b['10000000000'] = 1e12));
    const job = jobOf(hostile);
    expect(job.latency.bins).toBeNull();
    expect(job.notes.join('; ')).toMatch(/histogram left out, not fio's output: its bins count \d+ I\/Os where it reports 21116/);
    const agg = aggregateVmPass([member(text('vm-pass-vm1-jsonplus.json'), 1), member(hostile, 2)]);
    expect(agg.latencyUs.p99).not.toBe(1e7);
    expect(agg.latencyUs.p99).toBeNull();
    expect(String(agg.metadata?.['vmLatencyNote'])).toMatch(/VM 2 has no latency histogram/);
  });

  it.each([
    ['a negative bucket value', (b: Record<string, number>) => moved(b, '-5000')],
    ['a fractional bucket value', (b: Record<string, number>) => moved(b, '1500.5')],
    ['a fractional count', (b: Record<string, number>) => { const [k] = Object.keys(b); b[k!] = b[k!]! - 0.5; }],
    ['a negative count', (b: Record<string, number>) => { const [k, l] = Object.keys(b); b[k!] = b[k!]! + 3; b[l!] = -3; }],
  ])('%s: the histogram is refused whole, so no record carries one it cannot read back', (_what, edit) => {
    const job = jobOf(tampered(edit));
    expect(job.latency.bins).toBeNull();
    const h = job.latency.bins ? histogramOf(job.latency.bins) : null;
    if (h) expect(latencyHistogramSchema().safeParse(h).success).toBe(true);
  });

  it('fio\'s own output keeps its histogram (the check refuses nothing real)', () => {
    const job = jobOf(text('vm-pass-vm2-jsonplus.json'));
    const h = histogramOf(job.latency.bins!)!;
    expect(latencyHistogramSchema().safeParse(h).success).toBe(true);
  });
});

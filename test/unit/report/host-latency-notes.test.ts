// The guest-vs-host table's notes are stated once, not once per row: a note every row shares (a
// 20 s sample is longer than each 5 s pass) says "every row"; one a few rows share names them.
import { describe, expect, it } from 'vitest';
import { hostLatencyLegend, hostLatencyRows } from '../../../src/report/host-latency.ts';
import type { HostMetrics } from '../../../src/results/record.ts';

const host = (notes: string[]): HostMetrics => ({ source: 'vsphere-perf', from: 'a', to: 'b', intervalSec: 20, samples: 1, samplesInside: 0, latencyUs: 1000, latencySpan: 'x', notes });
const group = (id: string, notes: string[]) => ({ permutationId: id, label: id, records: ['t1', 't2'].map((t) => ({ test: { id: t }, latencyUs: { mean: 1200 }, host: host(notes) })) });

describe('guest vs host notes', () => {
  it('a note of every row is said once, "every row"; one of some rows once, naming them', () => {
    const rows = hostLatencyRows([group('p1', ['no 20 s sample lay wholly inside the test']), group('p2', ['no 20 s sample lay wholly inside the test', 'datastore counters missing'])]);
    expect(rows).toHaveLength(4);
    const legend = hostLatencyLegend(rows);
    const sample = legend.filter((l) => l.includes('no 20 s sample'));
    expect(sample).toEqual(['no 20 s sample lay wholly inside the test (every row)']);
    expect(legend.filter((l) => l.includes('datastore counters missing'))).toEqual(['datastore counters missing (2 rows: p2 t1, p2 t2)']);
  });
});

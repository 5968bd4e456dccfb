import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.ts';
import { buildReport, parseBaseline } from '../../../src/report/model.ts';
import { labRecords, seedRecords } from './helpers.ts';

describe('buildReport from the CrystalDiskMark 3 seeds (VMFS-3, 1/2/4/8 MB blocks)', () => {
  const report = buildReport(seedRecords(), { runId: 'seeds' });

  it('groups 32 records into 8 tests × 4 permutations, axis values in first-seen order', () => {
    expect(report.recordCount).toBe(32);
    expect(report.tests.map((t) => t.test.id)).toEqual([
      'seq-1m-q1t1-read',
      'seq-1m-q1t1-write',
      'rnd-512k-q1t1-read',
      'rnd-512k-q1t1-write',
      'rnd-4k-q1t1-read',
      'rnd-4k-q1t1-write',
      'rnd-4k-q32t1-read',
      'rnd-4k-q32t1-write',
    ]);
    expect(report.axes).toEqual([{ name: 'datastore.blockSizeMb', values: [1, 2, 4, 8], varies: true }]);
  });

  it('takes the sequential read mean from the file (828.041 MB/s at 1 MB) and judges random tests by IOPS', () => {
    const seq = report.tests[0]!;
    expect(seq.primaryMetric).toBe('bytesPerSecond');
    expect(seq.rows[0]!.cells.bytesPerSecond!.summary.mean).toBeCloseTo(828.041e6, 0);
    const rnd = report.tests.find((t) => t.test.id === 'rnd-4k-q32t1-write')!;
    expect(rnd.primaryMetric).toBe('iops');
    expect(rnd.rows.map((r) => r.cells.iops!.summary.mean)).toEqual([6804.8, 6648.8, 6611.2, 6747.5]);
  });

  it('compares 2/4/8 MB against 1 MB with Δ% but calls no verdict from one pass each', () => {
    const cmp = report.tests[0]!.comparisons;
    expect(cmp).toHaveLength(1);
    expect(cmp[0]!.baselineValue).toBe(1);
    const primary = cmp[0]!.rows.filter((r) => r.metric === 'bytesPerSecond');
    expect(primary.map((r) => r.value)).toEqual([2, 4, 8]);
    expect(primary[1]!.comparison.delta!.pct).toBeCloseTo(100 * (790.583 / 828.041 - 1), 9);
    expect(primary.every((r) => r.comparison.verdict === 'insufficient-data')).toBe(true);
    expect(report.summary.verdicts['insufficient-data']).toBe(24);
  });

  it('honours --baseline axis=value', () => {
    const r = buildReport(seedRecords(), { runId: 'seeds' }, { baseline: { axis: 'datastore.blockSizeMb', value: '8' } });
    expect(r.tests[0]!.comparisons[0]!.baselineValue).toBe(8);
    expect(r.tests[0]!.comparisons[0]!.rows.filter((x) => x.metric === 'bytesPerSecond').map((x) => x.value)).toEqual([1, 2, 4]);
  });

  it('rejects an unknown baseline axis or value, naming what exists', () => {
    expect(() => buildReport(seedRecords(), { runId: 's' }, { baseline: { axis: 'disk.format', value: 'thin' } })).toThrow(
      /no axis "disk.format".*axes: datastore.blockSizeMb/,
    );
    expect(() => buildReport(seedRecords(), { runId: 's' }, { baseline: { axis: 'datastore.blockSizeMb', value: '16' } })).toThrow(
      /has no value "16" \(values: 1, 2, 4, 8\)/,
    );
    expect(() => parseBaseline('blocksize')).toThrow(UsageError);
    expect(parseBaseline('vm.note=a=b')).toEqual({ axis: 'vm.note', value: 'a=b' });
  });
});

describe('buildReport from a two-axis lab run with repetitions', () => {
  it('finds eagerzeroedthick 20% slower than thin and block size within noise', () => {
    const r = buildReport(labRecords({ thickFactor: 0.8 }), { runId: 'lab' });
    const seq = r.tests.find((t) => t.test.id === 'seq-1m-q8t1-read')!;
    const byAxis = Object.fromEntries(seq.comparisons.map((c) => [c.axis, c]));
    const fmt = byAxis['disk.format']!.rows.filter((x) => x.metric === 'bytesPerSecond');
    expect(fmt).toHaveLength(2);
    for (const row of fmt) {
      expect(row.comparison.verdict).toBe('slower');
      expect(row.comparison.delta!.pct).toBeGreaterThan(-22);
      expect(row.comparison.delta!.pct).toBeLessThan(-18);
    }
    const lat = byAxis['disk.format']!.rows.filter((x) => x.metric === 'latencyMeanUs');
    expect(lat.every((x) => x.comparison.verdict === 'slower' && x.comparison.delta!.pct > 0)).toBe(true);
    const bs = byAxis['datastore.blockSizeMb']!.rows.filter((x) => x.metric === 'bytesPerSecond');
    expect(bs.every((x) => x.comparison.verdict === 'within-noise')).toBe(true);
    expect(r.summary.verdicts).toEqual({ faster: 0, slower: 4, 'within-noise': 4, 'insufficient-data': 0 });
  });

  it('matches each permutation with the baseline that differs only in the compared axis', () => {
    const r = buildReport(labRecords(), { runId: 'lab' });
    const rows = r.tests[0]!.comparisons.find((c) => c.axis === 'disk.format')!.rows;
    expect(rows.map((x) => [x.permutationId, x.baselinePermutationId])).toContainEqual(['p-eagerzeroedthick-8', 'p-thin-8']);
  });

  it('flags noisy cells and says how many repetitions would do', () => {
    const r = buildReport(labRecords({ relNoise: 0.3 }), { runId: 'lab' });
    expect(r.summary.noisy.length).toBeGreaterThan(0);
    for (const n of r.summary.noisy) {
      expect(n.cvPct).toBeGreaterThan(10);
      expect(n.repetitionsNeeded ?? Infinity).toBeGreaterThan(5);
    }
  });

  it('warns about insecure endpoints and failed permutations', () => {
    const r = buildReport(labRecords(), {
      runId: 'lab',
      insecureEndpoints: ['vcsa.lab:443'],
      failures: [{ permutationId: 'p-x', axes: {}, reason: 'SSH connection lost' }],
    });
    expect(r.summary.warnings).toEqual([
      'Insecure connections (TLS certificate / SSH host key not verified): vcsa.lab:443',
      'Permutation p-x failed: SSH connection lost',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.ts';
import { buildReport, parseBaseline } from '../../../src/report/model.ts';
import type { ResultRecord } from '../../../src/results/record.ts';
import { cdm3Records, FIXTURES, labRecords, SEED_BLOCK_SIZES, seedRecords } from './helpers.ts';

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
    expect(report.axes).toEqual([
      { name: 'datastore.blockSizeMb', values: [1, 2, 4, 8], varies: true },
      { name: 'source', values: ['seed-run'], varies: false },
    ]);
    expect(report.sources).toEqual(['seed-run']);
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

describe('sources are never pooled unless asked', () => {
  // The same playbook run twice, against two targets named in the run facts only (a playbook with
  // one target puts none in the records' axes): same permutation ids, same axes.
  const runA = seedRecords('run-a').map((r) => ({ ...r, axes: { ...r.axes, target: 'lab-a', source: 'run-a' } }));
  const runB = seedRecords('run-b').map((r) => ({ ...r, axes: { ...r.axes, target: 'lab-b', source: 'run-b' } }));

  it('keeps two runs that differ only by target apart, one permutation each, and compares them by target', () => {
    const r = buildReport([...runA, ...runB], { runId: 'run-a + run-b' });
    expect(r.permutations).toHaveLength(8);
    expect(new Set(r.permutations.map((p) => p.permutationId)).size).toBe(8);
    expect(r.permutations[0]).toMatchObject({ permutationId: 'p-bs1@run-a', source: 'run-a' });
    expect(r.tests[0]!.rows.every((row) => row.cells.bytesPerSecond!.summary.n === 1)).toBe(true);
    // target and source say the same here: compared once, by target
    expect(r.baselines.map((b) => [b.axis, b.value])).toEqual([
      ['datastore.blockSizeMb', 1],
      ['target', 'lab-a'],
    ]);
    const byTarget = r.tests[0]!.comparisons.find((c) => c.axis === 'target')!;
    // each block size of run-b against the same block size of run-a (same seeds: Δ 0)
    const rows = byTarget.rows.filter((x) => x.metric === 'bytesPerSecond');
    expect(rows.map((x) => [x.permutationId, x.baselinePermutationId])).toEqual(SEED_BLOCK_SIZES.map((mb) => [`p-bs${mb}@run-b`, `p-bs${mb}@run-a`]));
    expect(rows.every((x) => x.comparison.delta!.pct === 0)).toBe(true);
    expect(r.unpaired).toEqual([]);
  });

  it('compares two runs of one target by source, each block size with its own', () => {
    const b2 = runB.map((x) => ({ ...x, axes: { ...x.axes, target: 'lab-a' } }));
    const r = buildReport([...runA, ...b2], { runId: 'run-a + run-b' });
    const bySource = r.tests[0]!.comparisons.find((c) => c.axis === 'source')!;
    expect(bySource.rows.filter((x) => x.metric === 'bytesPerSecond').map((x) => x.baselinePermutationId)).toEqual(['p-bs1@run-a', 'p-bs2@run-a', 'p-bs4@run-a', 'p-bs8@run-a']);
  });

  it('pools sources only when asked (--pool source): one sample of two per permutation', () => {
    const r = buildReport([...runA, ...runB].map((x) => ({ ...x, axes: { ...x.axes, target: 'lab' } })), { runId: 'a+b' }, { pool: ['source'] });
    expect(r.permutations).toHaveLength(4);
    expect(r.permutations[0]).toMatchObject({ permutationId: 'p-bs1', source: 'run-a+run-b', pooledFrom: ['p-bs1'] });
    expect(r.tests[0]!.rows[0]!.cells.bytesPerSecond!.summary.n).toBe(2);
    expect(r.axes.map((a) => a.name)).not.toContain('source');
    expect(r.pooled).toEqual([{ name: 'source', values: ['run-a', 'run-b'], varies: true }]);
    expect(() => buildReport(runA, { runId: 'a' }, { pool: ['disk.format'] })).toThrow(/--pool disk.format: no axis "disk.format"/);
  });

  // A study's appendix: the four exports of one file, each tagged with the block size it measured
  // (`storsweep import study.txt --export N --set datastore.blockSizeMb=…`).
  const published = (mb: number, k: number): ResultRecord[] =>
    cdm3Records(`${FIXTURES}cdm3-vmfs3-${mb}mb.txt`, 'import:study.txt', `study#${k}`, { source: `study.txt#${k}`, 'datastore.blockSizeMb': mb });
  // "measured": the seeds scaled by 0.9 so each delta is -10%
  const measured = seedRecords('run-1').map((r) => ({
    ...r,
    axes: { ...r.axes, 'workload.profile': 'crystaldiskmark3', target: 'lab', source: 'run-1' },
    bytesPerSecond: r.bytesPerSecond! * 0.9,
    iops: r.iops! * 0.9,
  }));

  it('puts each published value beside the measured one for the same block size', () => {
    const r = buildReport([...measured, ...SEED_BLOCK_SIZES.flatMap((mb, i) => published(mb, i + 1))], { runId: 'run-1 + study.txt' });
    expect(r.sources).toEqual(['run-1', 'study.txt#1', 'study.txt#2', 'study.txt#3', 'study.txt#4']);
    expect(r.permutations).toHaveLength(8);
    const seq = r.tests[0]!;
    const bySource = seq.comparisons.find((c) => c.axis === 'source')!;
    const rows = bySource.rows.filter((x) => x.metric === 'bytesPerSecond');
    expect(rows.map((x) => [x.value, x.baselinePermutationId])).toEqual([
      ['study.txt#1', 'p-bs1'],
      ['study.txt#2', 'p-bs2'],
      ['study.txt#3', 'p-bs4'],
      ['study.txt#4', 'p-bs8'],
    ]);
    // published 828.041 MB/s beside measured 745.2369: +11.1%
    expect(rows[0]!.comparison.baseline.mean).toBeCloseTo(828.041e6 * 0.9, 0);
    expect(rows[0]!.comparison.candidate.mean).toBeCloseTo(828.041e6, 0);
    expect(rows[0]!.comparison.delta!.pct).toBeCloseTo(100 / 0.9 - 100, 6);
    expect(r.unpaired.filter((u) => u.axis === 'source')).toEqual([]);
    expect(r.summary.warnings.filter((w) => w.startsWith('source'))).toEqual([]);
  });

  it('lists an import that does not line up (no block size given) as unpaired, never pooled against all four', () => {
    const untagged = cdm3Records(`${FIXTURES}cdm3-vmfs3-1mb.txt`, 'import:paper.txt', 'paper', { source: 'paper.txt' });
    const r = buildReport([...measured, ...untagged], { runId: 'x' });
    expect(r.tests[0]!.comparisons.find((c) => c.axis === 'source')).toBeUndefined();
    expect(r.unpaired).toContainEqual(expect.objectContaining({ axis: 'source', value: 'paper.txt', baselineValue: 'run-1', permutationIds: ['paper'] }));
    expect(r.summary.warnings).toContainEqual(expect.stringMatching(/^source paper.txt: 1 permutation has no partner in source run-1 with the same datastore.blockSizeMb \(paper\); tag an import/));
  });

  it("compares against the playbook's baseline: value, and says when that value is not in the results", () => {
    const r = buildReport(seedRecords(), { runId: 's', baseline: { 'datastore.blockSizeMb': 4 } });
    expect(r.baselines).toEqual([{ axis: 'datastore.blockSizeMb', value: 4, from: 'playbook' }]);
    expect(r.tests[0]!.comparisons[0]!.rows.filter((x) => x.metric === 'bytesPerSecond').map((x) => x.value)).toEqual([1, 2, 8]);
    const missing = buildReport(seedRecords(), { runId: 's', baseline: { 'datastore.blockSizeMb': 16 } });
    expect(missing.baselines).toEqual([{ axis: 'datastore.blockSizeMb', value: 1, from: 'first-value' }]);
    expect(missing.summary.warnings[0]).toMatch(/playbook's baseline datastore.blockSizeMb=16 is not in these results \(values: 1, 2, 4, 8\)/);
    // --baseline still wins
    const opt = buildReport(seedRecords(), { runId: 's', baseline: { 'datastore.blockSizeMb': 4 } }, { baseline: { axis: 'datastore.blockSizeMb', value: '2' } });
    expect(opt.baselines).toEqual([{ axis: 'datastore.blockSizeMb', value: 2, from: 'option' }]);
  });
});

// The conditions a report prints per source, the warning at a comparison of sources measured
// differently (report/conditions.ts), and the pre-fill as a first-write test (report/first-write.ts).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCrystalDiskMarkText } from '../../../src/importers/crystaldiskmark-text.ts';
import { conditionDifferences, conditionsOf, exportSizeBytes, passesText, type ConditionInput } from '../../../src/report/conditions.ts';
import { buildReport } from '../../../src/report/model.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { NULL_LATENCY, type ResultRecord } from '../../../src/results/record.ts';
import { makeTest } from '../../../src/workloads/profiles.ts';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/cdm/cdm3-vmfs3-1mb.txt');
const MiB = 1024 * 1024;

/** What run/executor.ts writes into every record of a 16 MiB, one 1 s pass run with a fill. */
const runMeta = (o: Record<string, string | number | boolean> = {}): NonNullable<ResultRecord['metadata']> => ({
  profile: 'cdm3',
  passes: 1,
  aggregate: 'max',
  fileSizeBytes: 16 * MiB,
  passSec: 1,
  rampSec: 0,
  warmupPass: false,
  intervalSec: 0,
  direct: true,
  prefill: true,
  prefillBytes: 16 * MiB,
  prefillSeconds: 0.05,
  prefillBytesPerSecond: 400e6,
  prefillAt: '2026-01-01T00:00:00.000Z',
  'set:settings.fileSize': '16m',
  ...o,
});

const input = (metadata: ResultRecord['metadata'], tool: ResultRecord['tool'] = { name: 'fio', version: 'fio-3.33' }): ConditionInput => ({ metadata, tool, fills: [], unwritten: [], replication: 'within-provisioning' });

function record(runId: string, permutationId: string, axes: ResultRecord['axes'], repetition: number, testIndex: number, metadata: ResultRecord['metadata'], value = 100e6): ResultRecord {
  const test = [makeTest('read', MiB, 1, 1), makeTest('write', MiB, 1, 1)][testIndex]!;
  return { runId, permutationId, axes, repetition, test, iops: value / MiB, bytesPerSecond: value, latencyUs: NULL_LATENCY, cpuPercent: null, tool: { name: 'fio', version: 'fio-3.33' }, rawPath: null, ...(metadata ? { metadata } : {}) };
}

describe('conditions of a run and of a CrystalDiskMark 3 export', () => {
  const cdm3 = parseCrystalDiskMarkText(fs.readFileSync(FIXTURE, 'utf8'), 'cdm3-vmfs3-1mb.txt').records[0]!;

  it('a run: file size, passes × length, warm-up, pre-fill, tool, every --set', () => {
    const c = conditionsOf(input(runMeta()));
    expect(c).toMatchObject({ kind: 'run', fileSize: '16 MiB', fileSizeBytes: 16 * MiB, passes: '1 × 1 s', warmup: 'none', prefill: 'done: 16 MiB written once before the first pass', prefillDone: true, tool: 'fio-3.33', overrides: ['settings.fileSize=16m'] });
    expect(conditionsOf(input(runMeta({ passes: 5, passSec: 5, warmupPass: true, rampSec: 2 }))).passes).toBe('5 × 5 s, best of 5');
    expect(conditionsOf(input(runMeta({ warmupPass: true, rampSec: 2 }))).warmup).toBe('one unscored pass before each test; 2 s ramp per pass');
    expect(conditionsOf(input(runMeta({ warmupPass: true, warmupPassSec: 5 }))).warmup).toBe('one unscored 5 s pass before each test');
    expect(conditionsOf(input(runMeta({ prefill: false }))).prefill).toBe('not done');
    expect(conditionsOf({ ...input(runMeta({ prefill: false })), unwritten: ['seq-1m-q8t1-write'] }).prefill).toBe('not done; first pass on never-written space: seq-1m-q8t1-write');
  });

  it('an import: what its header says — "Test: 2000 MB (x5)", OS, date; the rest not stated', () => {
    const c = conditionsOf({ ...input(cdm3.metadata, cdm3.tool), replication: 'unknown' });
    expect(c).toMatchObject({ kind: 'import', fileSize: '2000 MB', fileSizeBytes: 2000 * MiB, passes: '5 passes, best of 5', warmup: null, prefill: null, tool: 'crystaldiskmark 3.0', replication: 'not stated' });
    expect(c.header).toEqual(['Test: 2000 MB (x5)', 'OS: Windows Server 2003 R2 SP2 [5.2 Build 3790] (x86)', 'Date: 2010/12/18 19:57:29']);
  });

  it('differences name each condition that differs, the candidate first; what a side does not state is none', () => {
    const run = conditionsOf(input(runMeta()));
    const imp = conditionsOf({ ...input(cdm3.metadata, cdm3.tool), replication: 'unknown' });
    expect(conditionDifferences(imp, run)).toEqual(['file size 2000 MB vs 16 MiB', 'passes 5 passes, best of 5 vs 1 × 1 s', 'tool crystaldiskmark 3.0 vs fio-3.33']);
    expect(conditionDifferences(run, conditionsOf(input(runMeta({ prefillAt: 'later', 'set:settings.fileSize': 'x' }))))).toEqual([]);
    // one size written two ways is one size
    expect(exportSizeBytes('1024 MiB')).toBe(exportSizeBytes('1 GiB'));
    expect(conditionDifferences(conditionsOf(input(runMeta({ fileSizeBytes: 1024 * MiB }))), { ...run, fileSize: '1 GiB', fileSizeBytes: exportSizeBytes('1 GiB') })).toEqual([]);
    expect(passesText(3, null, 'mean')).toBe('3 passes, mean of 3');
  });
});

describe('a report of several sources', () => {
  const a = (rep: number, t: number) => record('run-a', 'p1', { source: 'run-a' }, rep, t, runMeta());
  const b = (rep: number, t: number) => record('run-b', 'p1', { source: 'run-b' }, rep, t, runMeta({ fileSizeBytes: 1024 * MiB, passes: 5, passSec: 5, 'set:settings.fileSize': '1g' }));

  it('prints each source\'s conditions, and warns at each comparison of sources measured differently', () => {
    const report = buildReport([a(1, 0), a(2, 0), b(1, 0), b(2, 0)], { runId: 'a + b' });
    expect(report.conditions.map((c) => c.source)).toEqual(['run-a', 'run-b']);
    expect(report.conditions[1]!.facts).toContainEqual({ name: 'file size', value: '1 GiB' });
    expect(report.conditions[1]!.facts).toContainEqual({ name: '--set', value: 'settings.fileSize=1g' });
    const cmp = report.tests[0]!.comparisons[0]!;
    expect(cmp.axis).toBe('source');
    expect(cmp.conditionWarnings).toEqual(['run-b vs run-a: measured under different conditions — file size 1 GiB vs 16 MiB; passes 5 × 5 s, best of 5 vs 1 × 1 s; the difference mixes the configuration with how it was measured']);
    expect(report.summary.warnings).toContain(cmp.conditionWarnings![0]);
    const md = renderMarkdown(report);
    expect(md).toContain('## Conditions');
    expect(md).toContain('| file size | 16 MiB | 1 GiB |');
    expect(md).toContain('#### vs source = run-a\n\n> ⚠ run-b vs run-a: measured under different conditions — file size 1 GiB vs 16 MiB');
  });

  it('sources measured alike: no warning', () => {
    const c = (rep: number) => record('run-c', 'p1', { source: 'run-c' }, rep, 0, runMeta({ prefillAt: 'another fill', prefillBytesPerSecond: 500e6 }));
    const report = buildReport([a(1, 0), a(2, 0), c(1), c(2)], { runId: 'a + c' });
    expect(report.tests[0]!.comparisons[0]!.conditionWarnings).toBeUndefined();
    expect(report.summary.warnings.filter((w) => w.includes('different conditions'))).toEqual([]);
  });
});

describe('the first write (the pre-fill) as a test of its own', () => {
  const perm = (id: string, format: string, fills: Array<[string, number]>, reps = 2): ResultRecord[] =>
    fills.flatMap(([at, rate], k) =>
      Array.from({ length: reps }, (_, r) => [0, 1].map((t) => record('run', id, { 'disk.format': format }, k * reps + r + 1, t, runMeta({ prefillAt: at, prefillBytesPerSecond: rate })))).flat(),
    );

  it('one sample per fill, never per record or repetition, listed last', () => {
    const report = buildReport(perm('thin', 'thin', [['t1', 100e6]], 3), { runId: 'run' });
    expect(report.tests.map((t) => t.test.id)).toEqual(['seq-1m-q1t1-read', 'seq-1m-q1t1-write', 'first-write']);
    const fw = report.tests.at(-1)!;
    expect(fw.rows[0]!.cells.bytesPerSecond!.summary).toMatchObject({ n: 1, mean: 100e6 });
    expect(report.tests[0]!.rows[0]!.cells.bytesPerSecond!.summary.n).toBe(3);
    expect(fw.metrics).toEqual(['bytesPerSecond']);
  });

  it('records written before prefillAt existed: one fill per permutation, from bytes over seconds', () => {
    const old = [1, 2].map((rep) => record('run', 'p', { n: 1 }, rep, 0, { prefill: true, prefillBytes: 16 * MiB, prefillSeconds: 0.5 }));
    const fw = buildReport(old, { runId: 'run' }).tests.find((t) => t.test.id === 'first-write')!;
    expect(fw.rows[0]!.cells.bytesPerSecond!.summary).toMatchObject({ n: 1, mean: (16 * MiB) / 0.5 });
    // nothing filled: no first-write test
    expect(buildReport([record('run', 'p', { n: 1 }, 1, 0, runMeta({ prefill: false }))], { runId: 'run' }).tests.map((t) => t.test.id)).toEqual(['seq-1m-q1t1-read']);
  });

  it('compared with its baseline inside the report\'s family: thin\'s slow first writes are a verdict, Holm-adjusted with every other comparison', () => {
    const fills = (rate: number): Array<[string, number]> => [['f1', rate], ['f2', rate * 1.02], ['f3', rate * 0.98]];
    const records = [...perm('thin', 'thin', fills(100e6), 1), ...perm('eager', 'eagerzeroedthick', fills(400e6), 1)];
    const report = buildReport(records, { runId: 'run', baseline: { 'disk.format': 'eagerzeroedthick' } });
    const fw = report.tests.find((t) => t.test.id === 'first-write')!;
    const row = fw.comparisons[0]!.rows[0]!;
    expect(row.comparison.candidate.n).toBe(3);
    expect(row.comparison.verdict).toBe('slower');
    expect(row.comparison.delta!.pct).toBeCloseTo(-75, 0);
    // the two tests' five metrics have constant values here (no p), the first write's MB/s has one: a family of 1 + what the tests add
    const members = report.tests.flatMap((t) => t.comparisons.flatMap((c) => c.rows.filter((r) => r.comparison.pAdjusted !== null)));
    expect(members).toContain(row);
    expect(report.summary.family.size).toBe(members.length);
    expect(report.summary.verdicts.slower).toBeGreaterThanOrEqual(1);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_REGRESSION, registerCompare, runCompare } from '../../../src/cli/commands/compare.ts';
import { registerReport, runReport, type CommandIo } from '../../../src/cli/commands/report.ts';
import { ParseError, UsageError } from '../../../src/errors.ts';
import { compareRuns, fingerprintDifferences, renderCompareText } from '../../../src/report/compare.ts';
import type { RunInfo } from '../../../src/report/model.ts';
import { loadSource, readRecordsJsonl } from '../../../src/app/load-source.ts';
import { runImport } from '../../../src/cli/commands/import.ts';
import { ResultStore } from '../../../src/results/store.ts';
import { importFile } from '../../../src/importers/index.ts';
import type { ResultRecord } from '../../../src/results/record.ts';
import { FIXTURES, labRecords, SEED_BLOCK_SIZES, seedRecords } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'storsweep-report-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function runDir(name: string, records: ResultRecord[], info?: RunInfo): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.jsonl'), records.map((r) => JSON.stringify(r) + '\n').join(''));
  if (info) writeFileSync(join(dir, 'run.json'), JSON.stringify(info));
  return dir;
}

function capture(): CommandIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    loadSource,
    stdout: (t: string) => {
      io.out += t;
    },
    stderr: (t: string) => {
      io.err += t;
    },
  };
  return io;
}

describe('loadSource', () => {
  it('reads a run directory: results.jsonl and run.json', async () => {
    const dir = runDir('seeds', seedRecords('r1'), { runId: 'r1', playbook: 'playbooks/vmfs.yaml', fingerprint: { 'esxi.version': '4.1' } });
    const s = await loadSource(dir);
    expect(s.kind).toBe('run');
    expect(s.records).toHaveLength(32);
    expect(s.info).toMatchObject({ runId: 'r1', playbook: 'playbooks/vmfs.yaml', fingerprint: { 'esxi.version': '4.1' } });
  });

  it('skips a trailing partial line with a warning, and names file:line of a broken one', async () => {
    const file = join(tmp, 'partial.jsonl');
    const [a, b] = seedRecords();
    writeFileSync(file, `${JSON.stringify(a)}\n${JSON.stringify(b).slice(0, 40)}`);
    const r = await readRecordsJsonl(file);
    expect(r.records).toHaveLength(1);
    expect(r.warnings).toEqual([`${file}:2: incomplete last line skipped`]);
    writeFileSync(file, `${JSON.stringify(a)}\n{"runId": 1}\n`);
    await expect(readRecordsJsonl(file)).rejects.toThrow(ParseError);
    await expect(readRecordsJsonl(file)).rejects.toThrow(`${file}:2: runId: expected a string`);
    writeFileSync(file, `nope\n`);
    await expect(readRecordsJsonl(file)).rejects.toThrow(/partial\.jsonl:1: not valid JSON/);
  });

  it('checks the host figures of a line like the rest: a crafted host is refused at its line, never a TypeError or a string read as a number', async () => {
    const file = join(tmp, 'host.jsonl');
    const [a] = seedRecords();
    const host = { source: 'vsphere-perf', from: '2024-01-01T00:00:00Z', to: '2024-01-01T00:01:00Z', intervalSec: 20, samples: 3, samplesInside: 1, latencyUs: 5000, latencySpan: 'virtual disk' };
    const line = (h: unknown) => `${JSON.stringify({ ...a, host: h })}\n`;
    writeFileSync(file, line(host) + line({ source: 'esxtop', unavailable: 'esxtop not found' }));
    expect((await readRecordsJsonl(file)).records.map((r) => r.host?.source)).toEqual(['vsphere-perf', 'esxtop']);
    writeFileSync(file, line(host) + line({ ...host, notes: 5 }));
    await expect(readRecordsJsonl(file)).rejects.toThrow(`${file}:2: host.notes: expected the host figures storsweep writes`);
    writeFileSync(file, line({ ...host, samples: '1e3' }));
    await expect(readRecordsJsonl(file)).rejects.toThrow(`${file}:1: host.samples: expected the host figures storsweep writes`);
    writeFileSync(file, line({ ...host, virtualDisk: { instance: 'scsi0:1', readIops: 'x' } }));
    await expect(readRecordsJsonl(file)).rejects.toThrow(ParseError);
    writeFileSync(file, line({ ...host, source: 'guess' }));
    await expect(readRecordsJsonl(file)).rejects.toThrow(`${file}:1: host`);
  });

  it('says what is wrong with a missing path or a directory that is not a run', async () => {
    await expect(loadSource(join(tmp, 'nope'))).rejects.toThrow(UsageError);
    await expect(loadSource(join(tmp, 'nope'))).rejects.toThrow(/nope: no such run directory or result file/);
    mkdirSync(join(tmp, 'empty'));
    await expect(loadSource(join(tmp, 'empty'))).rejects.toThrow(/empty: not a run directory/);
  });
});

describe('storsweep report', () => {
  it('prints markdown to stdout by default through commander', async () => {
    const dir = runDir('cli-md', seedRecords('cli'));
    const io = capture();
    const program = new Command().exitOverride();
    registerReport(program, io);
    await program.parseAsync(['node', 'storsweep', 'report', dir]);
    expect(io.out).toContain('# storsweep report — cli');
    expect(io.out).toContain('#### vs datastore.blockSizeMb = 1');
  });

  it('writes html/csv/json to -o, with --baseline', async () => {
    const dir = runDir('cli-o', labRecords({ thickFactor: 0.8 }));
    for (const format of ['html', 'csv', 'json'] as const) {
      const out = join(tmp, `report.${format}`);
      const io = capture();
      expect(await runReport([dir], { format, output: out, baseline: 'disk.format=thin' }, io)).toBe(0);
      expect(io.out).toBe('');
      expect(io.err).toBe(`wrote ${out}\n`);
      const text = readFileSync(out, 'utf8');
      if (format === 'html') expect(text).toContain('<svg class="chart bar-chart"');
      if (format === 'csv') expect(text.split('\r\n')).toHaveLength(42);
      if (format === 'json') {
        const j = JSON.parse(text) as { tests: Array<{ comparisons: Array<{ axis: string }> }> };
        expect(j.tests[0]!.comparisons.map((c) => c.axis)).toEqual(['disk.format']);
      }
    }
  });

  it('reports the four CrystalDiskMark seed exports through the real importer, one permutation per file', async () => {
    const files = SEED_BLOCK_SIZES.map((mb) => `${FIXTURES}cdm3-vmfs3-${mb}mb.txt`);
    const one = await loadSource(files[0]!);
    expect(one.kind).toBe('import');
    expect(one.records).toHaveLength(8);
    const io = capture();
    await runReport(files, { format: 'md' }, io);
    expect(io.out).toContain('- Axes varied: source (cdm3-vmfs3-1mb.txt, cdm3-vmfs3-2mb.txt, cdm3-vmfs3-4mb.txt, cdm3-vmfs3-8mb.txt)');
    expect(io.out).toContain('#### vs source = cdm3-vmfs3-1mb.txt');
    expect(io.out).toMatch(/\| cdm3-vmfs3-1mb\.txt \| 1 \| 828\.0 \|/);
    expect(io.out).toContain('| source=cdm3-vmfs3-4mb.txt | MB/s | -4.5% |');
  });

  it('names each run as a source (and its single target as an axis), so two runs of one playbook stay apart', async () => {
    const a = runDir('t-a', seedRecords('ra'), { runId: 'ra', target: 'lab-a', baseline: { 'datastore.blockSizeMb': 4 } });
    const b = runDir('t-b', seedRecords('rb'), { runId: 'rb', target: 'lab-b' });
    const sa = await loadSource(a);
    expect((sa.records as ResultRecord[])[0]!.axes).toEqual({ target: 'lab-a', 'datastore.blockSizeMb': 1, source: 'ra' });
    expect(sa.info.baseline).toEqual({ 'datastore.blockSizeMb': 4 });
    const io = capture();
    await runReport([a, b], { format: 'json' }, io);
    const j = JSON.parse(io.out) as { permutations: Array<{ permutationId: string }>; baselines: unknown[] };
    expect(j.permutations.map((p) => p.permutationId)).toEqual(['p-bs1@ra', 'p-bs2@ra', 'p-bs4@ra', 'p-bs8@ra', 'p-bs1@rb', 'p-bs2@rb', 'p-bs4@rb', 'p-bs8@rb']);
    // the first run's playbook baseline is honoured without --baseline
    expect(j.baselines).toEqual([
      { axis: 'target', value: 'lab-a', from: 'first-value' },
      { axis: 'datastore.blockSizeMb', value: 4, from: 'playbook' },
    ]);
    const pooled = capture();
    await runReport([a, b], { format: 'json', pool: ['source', 'target'] }, pooled);
    expect((JSON.parse(pooled.out) as { permutations: unknown[] }).permutations).toHaveLength(4);
    await expect(runReport([a, a], { format: 'md' }, capture())).rejects.toThrow(/given twice/);
  });

  it('merges several sources into one report', async () => {
    const a = runDir('m-a', seedRecords('a').slice(0, 8));
    const b = runDir('m-b', seedRecords('b').slice(8, 16));
    const io = capture();
    await runReport([a, b], { format: 'md' }, io);
    expect(io.out).toContain('# storsweep report — a + b');
    expect(io.out).toContain('- Runs: a, b');
  });

  it('rejects bad options with the flag and what was expected', async () => {
    const dir = runDir('cli-bad', seedRecords());
    await expect(runReport([dir], { format: 'md', alpha: '2' }, capture())).rejects.toThrow('--alpha: expected a number from 1e-9 to 0.5, got "2"');
    await expect(runReport([dir], { format: 'md', baseline: 'nope' }, capture())).rejects.toThrow(/--baseline: expected axis=value/);
    const program = new Command().exitOverride().configureOutput({ writeErr: () => {} });
    registerReport(program, capture());
    await expect(program.parseAsync(['node', 's', 'report', dir, '--format', 'pdf'])).rejects.toThrow(/Allowed choices are md, html, csv, summary-csv, json/);
  });
});

describe('storsweep compare', () => {
  it('exits 3 on a significant regression beyond the threshold, 0 without one', async () => {
    const a = runDir('cmp-a', labRecords({ runId: 'a', seed: 1 }));
    const slow = runDir('cmp-slow', labRecords({ runId: 'b', seed: 2, thickFactor: 1 }).map((r) => ({ ...r, bytesPerSecond: r.bytesPerSecond! * 0.8, iops: r.iops! * 0.8 })));
    const same = runDir('cmp-same', labRecords({ runId: 'c', seed: 3 }));
    const io = capture();
    expect(await runCompare(a, slow, { failOnRegression: '10' }, io)).toBe(EXIT_REGRESSION);
    expect(io.out).toMatch(/seq-1m-q8t1-read +datastore\.blockSizeMb=1, disk\.format=thin +MB\/s .* -(19|20)(\.\d)?% \[.*\] +< 0\.001 +slower REGRESSION/);
    expect(io.out).toContain('8 significant regression(s) of at least 10%');
    expect(await runCompare(a, slow, { failOnRegression: '25' }, capture())).toBe(0);
    expect(await runCompare(a, same, { failOnRegression: '5' }, capture())).toBe(0);
    expect(await runCompare(a, slow, {}, capture())).toBe(0);
  });

  it('prints JSON with --json and reports fingerprint differences that are not axes', async () => {
    const a = runDir('fp-a', labRecords({ runId: 'a' }), { runId: 'a', fingerprint: { 'esxi.version': '7.0.3', 'disk.format': 'thin', 'guest.os': 'Debian 12' } });
    const b = runDir('fp-b', labRecords({ runId: 'b' }), { runId: 'b', fingerprint: { 'esxi.version': '8.0.2', 'disk.format': 'thick', 'guest.os': 'Debian 12' } });
    const io = capture();
    const program = new Command().exitOverride();
    registerCompare(program, io);
    await program.parseAsync(['node', 's', 'compare', a, b, '--json']);
    const j = JSON.parse(io.out) as { fingerprintWarnings: string[]; rows: unknown[]; matchedAxes: string[] };
    expect(j.fingerprintWarnings).toEqual(['environment differs: esxi.version: 7.0.3 → 8.0.2']);
    expect(j.matchedAxes).toEqual(['datastore.blockSizeMb', 'disk.format']);
    expect(j.rows).toHaveLength(16);
    expect(io.err).toContain('warning: environment differs: esxi.version: 7.0.3 → 8.0.2');
  });

  describe('never pools silently: a 4-block-size run against one published export', () => {
    const run = seedRecords('run').map((r) => ({ ...r, axes: { ...r.axes, 'workload.profile': 'crystaldiskmark3', source: 'run' } }));
    const paper = (axes: ResultRecord['axes'], source = 'paper.txt'): ResultRecord[] =>
      seedRecords(`import:${source}`)
        .filter((r) => r.axes['datastore.blockSizeMb'] === 1)
        .map((r) => ({ ...r, axes: { ...axes, source }, permutationId: source }));
    const A = { label: 'runDir', records: run, info: { runId: 'run' } };

    it('an untagged export has no partner; it is compared with all four only when asked (--pool)', () => {
      const res = compareRuns(A, { label: 'paper.txt', records: paper({}), info: { runId: 'import:paper.txt' } });
      expect(res.rows).toEqual([]);
      expect(res.matchedAxes).toEqual(['datastore.blockSizeMb']);
      expect(res.unpairedA).toEqual(['datastore.blockSizeMb=1', 'datastore.blockSizeMb=2', 'datastore.blockSizeMb=4', 'datastore.blockSizeMb=8']);
      expect(res.unpairedB).toEqual(['datastore.blockSizeMb=(none)']);
      expect(res.warnings).toContain(
        'B has no datastore.blockSizeMb axis, so none of its permutations lines up with the other side\'s; tag an import with `storsweep import FILE --set datastore.blockSizeMb=VALUE`, or pass --pool datastore.blockSizeMb',
      );
      expect(renderCompareText(res)).toContain("no partner in B for A's: datastore.blockSizeMb=1; datastore.blockSizeMb=2;");
      const pooled = compareRuns(A, { label: 'paper.txt', records: paper({}), info: { runId: 'i' } }, { pool: ['datastore.blockSizeMb'] });
      expect(pooled.rows.length).toBeGreaterThan(0);
      expect(pooled.rows[0]!.pooled).toEqual({ a: 4, b: 1 });
      expect(pooled.warnings).toContainEqual(expect.stringMatching(/pool several permutations of one side into one sample \(--pool datastore.blockSizeMb\)/));
    });

    it('a tagged export lines up with its block size; the other three are listed without a partner', () => {
      const res = compareRuns(A, { label: 'paper.txt', records: paper({ 'datastore.blockSizeMb': 1 }), info: { runId: 'i' } });
      expect(new Set(res.rows.map((r) => JSON.stringify(r.axes)))).toEqual(new Set([JSON.stringify({ 'datastore.blockSizeMb': 1 })]));
      expect(res.rows.filter((r) => r.metric === 'bytesPerSecond' || r.metric === 'iops')).toHaveLength(8);
      expect(res.rows.every((r) => r.comparison.delta!.pct === 0 && r.pooled.a === 1)).toBe(true);
      expect(res.unpairedA).toEqual(['datastore.blockSizeMb=2', 'datastore.blockSizeMb=4', 'datastore.blockSizeMb=8']);
      expect(res.unpairedB).toEqual([]);
    });

    it('refuses to pool several exports of one side unless --pool source', () => {
      const two = [...paper({}, 'study.txt#1'), ...paper({}, 'study.txt#2')];
      const B = { label: 'study.txt', records: two, info: { runId: 'i' } };
      const other = { label: 'x', records: paper({}, 'x.txt'), info: { runId: 'x' } };
      expect(() => compareRuns(other, B)).toThrow(/B \(study.txt\) holds 2 sources \(study.txt#1, study.txt#2\) that no axis tells apart; comparing would pool them.*--pool source/);
      expect(compareRuns(other, B, { pool: ['source'] }).rows[0]!.pooled).toEqual({ a: 1, b: 2 });
      expect(() => compareRuns(other, B, { pool: ['disk.format'] })).toThrow(/--pool disk.format: neither side has an axis/);
    });
  });

  it('matches imported exports by test id alone, ignoring the per-file source axis', () => {
    const imported = (file: string, mb: number): ResultRecord[] =>
      seedRecords(`import:${file}`).filter((r) => r.axes['datastore.blockSizeMb'] === mb).map((r) => ({ ...r, axes: { source: file }, permutationId: file }));
    const res = compareRuns(
      { label: 'a', records: imported('vmfs-1mb.txt', 1), info: { runId: 'a' } },
      { label: 'b', records: imported('vmfs-4mb.txt', 4), info: { runId: 'b' } },
      { failOnRegressionPct: 1 },
    );
    expect(res.matchedAxes).toEqual([]);
    expect(new Set(res.rows.map((r) => r.testId)).size).toBe(8);
    expect(res.rows.every((r) => r.comparison.verdict === 'insufficient-data')).toBe(true);
    expect(res.regressions).toBe(0);
    expect(res.warnings).toContain('every comparison has fewer than 2 repetitions on a side: deltas are shown, but no difference can be called significant');
    const seq = res.rows.find((r) => r.testId === 'seq-1m-q1t1-read' && r.metric === 'bytesPerSecond')!;
    expect(seq.comparison.delta!.pct).toBeCloseTo(100 * (790.583 / 828.041 - 1), 9);
  });

  it('lists tests present on one side only', () => {
    const all = labRecords();
    const res = compareRuns({ label: 'a', records: all, info: { runId: 'a' } }, { label: 'b', records: all.filter((r) => r.test.id === 'seq-1m-q8t1-read'), info: { runId: 'b' } });
    expect(res.onlyInB).toEqual([]);
    expect(res.onlyInA).toHaveLength(4);
    expect(res.onlyInA[0]).toMatch(/^rnd-4k-q32t1-write \(datastore\.blockSizeMb=1, disk\.format=thin/);
  });

  it('fingerprint: one-sided fingerprints give one note', () => {
    expect(fingerprintDifferences({ runId: 'a', fingerprint: { x: '1' } }, { runId: 'b' }, new Set())).toEqual([
      'only A records an environment fingerprint; environments cannot be checked',
    ]);
    expect(fingerprintDifferences({ runId: 'a' }, { runId: 'b' }, new Set())).toEqual([]);
  });
});

describe('a published study beside a measured run (issue 15 acceptance)', () => {
  const appendix = fileURLToPath(new URL('../../fixtures/cdm/cdm3-vmfs3-appendix.txt', import.meta.url));

  it('imports the four exports of one file as four sources, tags each with its block size, and reports each beside the run', async () => {
    const all = await importFile(appendix);
    expect(new Set(all.records.map((r) => r.axes['source'])).size).toBe(4);
    // a 4-block-size run measuring 10% below the published numbers
    const measured = seedRecords('run-vmfs3').map((r) => ({ ...r, bytesPerSecond: r.bytesPerSecond! * 0.9, iops: r.iops! * 0.9 }));
    const run = runDir('acc-run', measured, { runId: 'run-vmfs3', target: 'lab-esxi' });
    const parts: string[] = [];
    for (const [k, mb] of SEED_BLOCK_SIZES.entries()) {
      const out: string[] = [];
      const code = await runImport([appendix], { json: true, export: String(k + 1), set: [`datastore.blockSizeMb=${mb}`] }, { importFile, stdout: (t) => void out.push(t), stderr: () => {} });
      expect(code).toBe(0);
      const file = join(tmp, `published-${mb}mb.jsonl`);
      writeFileSync(file, out.join(''));
      parts.push(file);
    }
    const io = capture();
    await runReport([run, ...parts], { format: 'json' }, io);
    const j = JSON.parse(io.out) as {
      sources: string[];
      permutations: Array<{ permutationId: string; source: string; axes: Record<string, unknown> }>;
      tests: Array<{ test: { id: string }; comparisons: Array<{ axis: string; baselineValue: unknown; rows: Array<{ permutationId: string; baselinePermutationId: string; metric: string; comparison: { baseline: { mean: number }; candidate: { mean: number } } }> }> }>;
      summary: { warnings: string[] };
    };
    expect(j.sources).toEqual(['run-vmfs3', 'cdm3-vmfs3-appendix.txt#1', 'cdm3-vmfs3-appendix.txt#2', 'cdm3-vmfs3-appendix.txt#3', 'cdm3-vmfs3-appendix.txt#4']);
    expect(j.permutations).toHaveLength(8);
    const perm = new Map(j.permutations.map((p) => [p.permutationId, p]));
    const seq = j.tests.find((t) => t.test.id === 'seq-1m-q1t1-read')!;
    const bySource = seq.comparisons.find((c) => c.axis === 'source')!;
    expect(bySource.baselineValue).toBe('run-vmfs3');
    const rows = bySource.rows.filter((r) => r.metric === 'bytesPerSecond');
    expect(rows).toHaveLength(4);
    const published = [828.041, 811.591, 790.583, 802.994];
    for (const [i, row] of rows.entries()) {
      // the published value beside the measured one of the same block size
      expect(perm.get(row.permutationId)!.axes['datastore.blockSizeMb']).toBe(SEED_BLOCK_SIZES[i]);
      expect(perm.get(row.baselinePermutationId)!.axes).toMatchObject({ 'datastore.blockSizeMb': SEED_BLOCK_SIZES[i], source: 'run-vmfs3', target: 'lab-esxi' });
      expect(row.comparison.candidate.mean / 1e6).toBeCloseTo(published[i]!, 6);
      expect(row.comparison.baseline.mean / 1e6).toBeCloseTo(published[i]! * 0.9, 6);
    }
    expect(j.summary.warnings.filter((w) => w.startsWith('source'))).toEqual([]);

    // the shipped table (README, examples/vmfs3-esx41/published.csv) lines up the same way, in one file
    const table = fileURLToPath(new URL('../../../examples/vmfs3-esx41/published.csv', import.meta.url));
    const t = capture();
    await runReport([run, table], { format: 'json' }, t);
    const tj = JSON.parse(t.out) as typeof j;
    const tRows = tj.tests.find((x) => x.test.id === 'seq-1m-q1t1-read')!.comparisons.find((c) => c.axis === 'source')!.rows.filter((r) => r.metric === 'bytesPerSecond');
    expect(tRows.map((r) => Math.round(r.comparison.candidate.mean / 1e3) / 1e3)).toEqual(published);
    expect(tRows.map((r) => r.baselinePermutationId)).toEqual(['p-bs1', 'p-bs2', 'p-bs4', 'p-bs8']);

    // without the tags, the imports line up with nothing, and the report says so instead of pooling
    const untagged = join(tmp, 'appendix-untagged.jsonl');
    const out: string[] = [];
    await runImport([appendix], { json: true }, { importFile, stdout: (t) => void out.push(t), stderr: () => {} });
    writeFileSync(untagged, out.join(''));
    const bare = capture();
    await runReport([run, untagged], { format: 'json' }, bare);
    const b = JSON.parse(bare.out) as { permutations: unknown[]; summary: { warnings: string[] } };
    expect(b.permutations).toHaveLength(8);
    expect(b.summary.warnings).toContainEqual(expect.stringMatching(/^source cdm3-vmfs3-appendix\.txt#1: 1 permutation has no partner in source run-vmfs3 with the same datastore\.blockSizeMb/));
  });
});

describe("the playbook's baseline in a run directory's report (the end-of-run report renders this same call)", () => {
  it('compares every block size against the baseline the plan recorded, without --baseline', async () => {
    const dir = join(tmp, 'store-baseline');
    const records = seedRecords('rstore');
    const ids = SEED_BLOCK_SIZES.map((mb) => `p-bs${mb}`);
    const store = ResultStore.create(
      dir,
      { runId: 'rstore', playbook: 'vmfs3', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 'lab-esxi', startedAt: '2026-01-01T00:00:00.000Z', fingerprint: {}, insecureEndpoints: [] },
      {
        version: 1,
        runId: 'rstore',
        playbook: 'vmfs3',
        target: 'lab-esxi',
        provider: 'local',
        axes: [{ name: 'datastore.blockSizeMb', values: [...SEED_BLOCK_SIZES] }],
        baseline: { 'datastore.blockSizeMb': 8 },
        profiles: {},
        permutations: ids.map((id, index) => ({ index, permutationId: id, axes: { 'datastore.blockSizeMb': SEED_BLOCK_SIZES[index]! }, workload: 'cdm3', steps: [], repetitions: 1, estimateSec: 1 })),
        totalEstimateSec: 4,
      },
    );
    for (const id of ids) store.addRepetition(id, 1, records.filter((r) => r.permutationId === id));
    store.close();
    const io = capture();
    await runReport([dir], { format: 'json' }, io);
    const j = JSON.parse(io.out) as { baselines: unknown[]; tests: Array<{ comparisons: Array<{ baselineValue: unknown; rows: Array<{ value: unknown; metric: string }> }> }> };
    expect(j.baselines).toEqual([{ axis: 'datastore.blockSizeMb', value: 8, from: 'playbook' }]);
    expect(j.tests[0]!.comparisons[0]!.baselineValue).toBe(8);
    expect(j.tests[0]!.comparisons[0]!.rows.filter((r) => r.metric === 'bytesPerSecond').map((r) => r.value)).toEqual([1, 2, 4]);
    const md = capture();
    await runReport([dir], { format: 'md' }, md);
    expect(md.out).toMatch(/blockSizeMb[^\n]*8/);
  });
});

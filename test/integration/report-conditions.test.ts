// Every condition on the page (issue 27, items 4 and 5): a report says how each source was measured,
// warns at a comparison of sources measured differently, and reports the pre-fill's throughput as a
// result of its own ("first write"), compared inside the same family of adjusted p-values.
// Real fio on the lab guest (sshd on 127.0.0.1), the CLI as a user runs it, a real CrystalDiskMark 3
// export from test/fixtures.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { startLabGuest, type LabGuest } from '../helpers/lab-guest.ts';

const CDM3 = path.join(REPO_ROOT, 'test/fixtures/cdm/cdm3-vmfs3-1mb.txt');

let guest: LabGuest;

/** `storsweep run` that must succeed; its run directory. */
async function runPlaybook(playbook: string, extra: string[] = []): Promise<string> {
  const r = await runCli(['run', playbook, '-i', guest.inventory, '--out', guest.runsDir, '--no-report', '--json', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { runDir: string }).runDir;
}

/** The run's id (its source name in a report). */
const runIdOf = (runDir: string): string => (JSON.parse(fs.readFileSync(path.join(runDir, 'plan.json'), 'utf8')) as { runId: string }).runId;

interface JsonComparison {
  axis: string;
  rows: Array<{ permutationId: string; metric: string; comparison: { candidate: { n: number }; baseline: { n: number }; welch: { p: number } | null; pAdjusted: number | null } }>;
  conditionWarnings?: string[];
}
interface JsonReport {
  conditions: Array<{ source: string; facts: Array<{ name: string; value: string }> }>;
  tests: Array<{ test: { id: string }; rows: Array<{ permutationId: string; cells: Record<string, { summary: { n: number; mean: number } }> }>; comparisons: JsonComparison[] }>;
  summary: { warnings: string[]; family: { correction: string; size: number } };
}

async function jsonReport(args: string[]): Promise<JsonReport> {
  const r = await runCli(['report', ...args, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as JsonReport;
}

const fact = (report: JsonReport, source: string, name: string): string | undefined => report.conditions.find((c) => c.source === source)?.facts.find((f) => f.name === name)?.value;

beforeAll(async () => {
  guest = await startLabGuest();
}, 60_000);

afterAll(async () => {
  await guest?.stop();
});

describe('a CrystalDiskMark 3 export and a 16 MiB lab run in one report', { timeout: 180_000 }, () => {
  let runDir: string;
  let runId: string;
  beforeAll(async () => {
    // the study's own timing in the file, the lab's on the command line (as a user does)
    const playbook = await guest.writePlaybook(
      'cdm3-lab.yaml',
      ['name: cdm3-lab', 'target: lab-guest', 'matrix:', '  workload:', '    profile: [cdm3]', 'settings: { fileSize: 1g, runtimeSec: 1, passes: 1, warmupPass: false, intervalSec: 0 }', 'repeat: 1', ''].join('\n'),
    );
    runDir = await runPlaybook(playbook, ['--set', 'settings.fileSize=16m']);
    runId = runIdOf(runDir);
  }, 180_000);

  it('markdown: a Conditions table names each source\'s file size, passes, warm-up, pre-fill, tool, --set, unit and the export\'s header; each comparison warns naming the file-size and pass differences', async () => {
    const r = await runCli(['report', runDir, CDM3]);
    expect(r.code, r.stderr).toBe(0);
    const md = r.stdout;
    const conditions = md.slice(md.indexOf('## Conditions'), md.indexOf('\n## ', md.indexOf('## Conditions') + 3));
    expect(conditions).toContain(`| condition | ${runId} | cdm3-vmfs3-1mb.txt |`);
    expect(conditions).toMatch(/\| file size \| 16 MiB \| 2000 MB \|/);
    expect(conditions).toMatch(/\| passes \| 1 × 1 s \| 5 passes, best of 5 \|/);
    expect(conditions).toMatch(/\| warm-up \| none \| not stated \|/);
    expect(conditions).toMatch(/\| pre-fill \| done: 16 MiB written once before the first pass; first write [\d.]+ MB\/s \| not stated \|/);
    expect(conditions).toMatch(/\| tool \| fio-3\.\d+ \| crystaldiskmark 3\.0 \|/);
    expect(conditions).toMatch(/\| --set \| settings\.fileSize=16m \| – \|/);
    expect(conditions).toMatch(/\| replication unit \| within one provisioning .* \| not stated \|/);
    expect(conditions).toContain('Test: 2000 MB (x5); OS: Windows Server 2003 R2 SP2 \\[5.2 Build 3790\\] (x86); Date: 2010/12/18 19:57:29');
    // at the comparison: under each test's "vs source = <run>" table
    const warning = `> ⚠ cdm3-vmfs3-1mb.txt vs ${runId}: measured under different conditions — file size 2000 MB vs 16 MiB; passes 5 passes, best of 5 vs 1 × 1 s; tool crystaldiskmark 3.0 vs fio-3.`;
    const section = md.slice(md.indexOf('### seq-1m-q1t1-read'));
    expect(section.slice(section.indexOf(`#### vs source = ${runId}`))).toContain(warning);
    expect(md.split(warning).length - 1).toBeGreaterThanOrEqual(8);
  });

  it('HTML and JSON carry the same conditions and the warning at the comparison', async () => {
    const html = await runCli(['report', runDir, CDM3, '--format', 'html']);
    expect(html.code, html.stderr).toBe(0);
    expect(html.stdout).toContain('<h2>Conditions</h2>');
    expect(html.stdout).toMatch(/<td class="t">file size<\/td><td class="t">16 MiB<\/td><td class="t">2000 MB<\/td>/);
    expect(html.stdout).toContain(`<p class="warn">⚠ cdm3-vmfs3-1mb.txt vs ${runId}: measured under different conditions — file size 2000 MB vs 16 MiB; passes 5 passes, best of 5 vs 1 × 1 s`);
    const json = await jsonReport([runDir, CDM3]);
    expect(fact(json, runId, 'file size')).toBe('16 MiB');
    expect(fact(json, 'cdm3-vmfs3-1mb.txt', 'header')).toContain('Test: 2000 MB (x5)');
    const rnd = json.tests.find((t) => t.test.id === 'rnd-4k-q32t1-write')!;
    const bySource = rnd.comparisons.find((c) => c.axis === 'source')!;
    expect(bySource.conditionWarnings).toEqual([expect.stringContaining('file size 2000 MB vs 16 MiB; passes 5 passes, best of 5 vs 1 × 1 s')]);
    expect(json.summary.warnings).toContainEqual(expect.stringContaining(`cdm3-vmfs3-1mb.txt vs ${runId}: measured under different conditions`));
  });

  it('compare prints the same warning: B against A, naming the differences', async () => {
    const r = await runCli(['compare', runDir, CDM3]);
    expect(r.stdout).toContain(`warning: cdm3-vmfs3-1mb.txt vs ${runId}: measured under different conditions — file size 2000 MB vs 16 MiB; passes 5 passes, best of 5 vs 1 × 1 s`);
  });

  it('the records say it: the fill\'s throughput as fio measured it, and when the fill started', () => {
    const records = fs.readFileSync(path.join(runDir, 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { metadata: Record<string, unknown> });
    expect(records).toHaveLength(8);
    for (const r of records) expect(r.metadata).toMatchObject({ fileSizeBytes: 16 * 1024 * 1024, passSec: 1, warmupPass: false, prefill: true, prefillBytesPerSecond: expect.any(Number), prefillAt: records[0]!.metadata.prefillAt, 'set:settings.fileSize': '16m' });
  });

  it('two runs measured alike: conditions shown, no warning', async () => {
    const playbook = await guest.writePlaybook(
      'cdm3-lab.yaml',
      ['name: cdm3-lab', 'target: lab-guest', 'matrix:', '  workload:', '    profile: [cdm3]', 'settings: { fileSize: 16m, runtimeSec: 1, passes: 1, warmupPass: false, intervalSec: 0 }', 'repeat: 1', ''].join('\n'),
    );
    const other = await runPlaybook(playbook);
    const json = await jsonReport([runDir, other]);
    expect(fact(json, runIdOf(other), 'file size')).toBe('16 MiB');
    expect(fact(json, runIdOf(other), '--set')).toBe('none');
    expect(json.summary.warnings.filter((w) => w.includes('measured under different conditions'))).toEqual([]);
    expect(json.tests.flatMap((t) => t.comparisons.flatMap((c) => c.conditionWarnings ?? []))).toEqual([]);
  });
});

describe('the first write is a result', { timeout: 240_000 }, () => {
  const runs: string[] = [];
  beforeAll(async () => {
    // two targets on the one guest (they take turns on its test file), each pre-filled per run
    const playbook = await guest.writePlaybook(
      'first-write.yaml',
      ['name: first-write', 'target: [lab-guest, lab-local]', 'matrix:', '  workload:', '    profile: ["4k 100% read 100% random"]', 'settings: { fileSize: 16m, runtimeSec: 1, passes: 1, intervalSec: 0 }', 'repeat: 2', ''].join('\n'),
    );
    for (let i = 0; i < 3; i++) runs.push(await runPlaybook(playbook));
  }, 240_000);

  it('one run: a first-write test per permutation, one sample per fill (not per repetition), compared target against target', async () => {
    const json = await jsonReport([runs[0]!]);
    const fw = json.tests.find((t) => t.test.id === 'first-write');
    expect(fw, 'a first-write section').toBeDefined();
    expect(fw!.rows).toHaveLength(2);
    for (const row of fw!.rows) {
      expect(row.cells.bytesPerSecond!.summary.n).toBe(1);
      expect(row.cells.bytesPerSecond!.summary.mean).toBeGreaterThan(0);
    }
    const test = json.tests.find((t) => t.test.id === 'rnd-4k-q1t1-read')!;
    expect(test.rows.map((r) => r.cells.iops!.summary.n)).toEqual([2, 2]);
    const cmp = fw!.comparisons.find((c) => c.axis === 'target')!;
    expect(cmp.rows).toHaveLength(1);
    expect(cmp.rows[0]!.metric).toBe('bytesPerSecond');
    expect(fact(json, runIdOf(runs[0]!), 'pre-fill')).toMatch(/^done: 16 MiB written once before the first pass; first write [\d.]+–[\d.]+ MB\/s over 2 fills$/);
    const md = await runCli(['report', runs[0]!]);
    expect(md.stdout).toContain('### first-write — first write (pre-fill)');
  });

  it('three runs pooled: three fills a side, Welch p adjusted with every other comparison of the report (Holm), the family counting it', async () => {
    const holm = await jsonReport([...runs, '--pool', 'source']);
    const none = await jsonReport([...runs, '--pool', 'source', '--correction', 'none']);
    const row = (r: JsonReport) => r.tests.find((t) => t.test.id === 'first-write')!.comparisons.find((c) => c.axis === 'target')!.rows[0]!;
    const h = row(holm);
    expect([h.comparison.candidate.n, h.comparison.baseline.n]).toEqual([3, 3]);
    expect(h.comparison.welch).not.toBeNull();
    const raw = row(none).comparison.pAdjusted!;
    expect(raw).toBe(h.comparison.welch!.p);
    // the random-read test's five metrics and the first write's MB/s: one family of six
    const members = holm.tests.flatMap((t) => t.comparisons.flatMap((c) => c.rows.filter((x) => x.comparison.welch !== null)));
    expect(holm.summary.family.size).toBe(members.length);
    expect(holm.summary.family.size).toBeGreaterThan(members.filter((x) => x.metric === 'bytesPerSecond').length);
    expect(h.comparison.pAdjusted!).toBeGreaterThanOrEqual(raw);
    const ps = members.map((x) => x.comparison.welch!.p).sort((a, b) => a - b);
    // Holm: the smallest p times the family size, each later one at least the one before
    expect(h.comparison.pAdjusted!).toBeCloseTo(Math.min(1, Math.max(...ps.slice(0, ps.indexOf(raw) + 1).map((p, i) => (ps.length - i) * p))), 12);
  });
});

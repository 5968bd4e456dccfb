// End to end on a real OpenSSH server on 127.0.0.1 with real fio: the CrystalDiskMark 8 default
// preset (smoke-test timing) through `storsweep run`, then `results` and `report` on the run dir.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROFILES } from '../../src/workloads/profiles.ts';
import type { ResultRecord } from '../../src/results/record.ts';
import { runCli, stackTraceLines, type CliResult } from '../helpers/cli.ts';
import { startLabGuest, tinyPlaybook, type LabGuest } from '../helpers/lab-guest.ts';

// CrystalDiskMark 8 runs every read test, then every write test (DiskBench.cpp ExecDiskBenchAll)
const CDM8_IDS = ['seq-1m-q8t1-read', 'seq-1m-q1t1-read', 'rnd-4k-q32t1-read', 'rnd-4k-q1t1-read', 'seq-1m-q8t1-write', 'seq-1m-q1t1-write', 'rnd-4k-q32t1-write', 'rnd-4k-q1t1-write'];

let guest: LabGuest;
let playbook: string;
let run: CliResult;
let runDir: string;

beforeAll(async () => {
  guest = await startLabGuest();
  // what no host reports, as a study writes it down: stored with the run, shown in its reports
  const environment = ['environment:', '  array: lab guest on 127.0.0.1', '  raid: none', '  qos: 0', '  thin: false', ''].join('\n');
  playbook = await guest.writePlaybook('quick.yaml', tinyPlaybook({ name: 'foundation' }) + environment);
  // two permutations of two repetitions, for the dry run and plan below
  await guest.writePlaybook('two.yaml', tinyPlaybook({ name: 'two', profiles: ['cdm8-default', 'quick'], repeat: 2 }));
  run = await runCli(['run', playbook, '-i', guest.inventory, '--out', guest.runsDir, '--json']);
  const last = run.stdout.trim().split('\n').at(-1)!;
  runDir = (JSON.parse(last) as { runDir: string }).runDir;
});

afterAll(async () => {
  await guest?.stop();
});

// The run is made once (beforeAll); what each test runs reads it or plans anew: they run at once.
describe.concurrent('storsweep run over SSH with real fio', () => {
  it('exits 0 and prints {"runDir": …} as the last line of --json output', () => {
    expect(run.stderr).not.toMatch(/FAILED/);
    expect(run.code).toBe(0);
    const last = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(Object.keys(last)).toEqual(['runDir']);
    expect(path.dirname(runDir)).toBe(guest.runsDir);
    expect(fs.existsSync(path.join(runDir, 'run.sqlite'))).toBe(true);
  });

  it('records every test of the cdm8-default preset with iops > 0 and bytesPerSecond > 0', () => {
    expect(PROFILES['cdm8-default']!.tests.map((t) => t.id)).toEqual(CDM8_IDS);
    const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
    const records = (db.prepare('SELECT record FROM results').all() as Array<{ record: string }>).map((r) => JSON.parse(r.record) as ResultRecord);
    const perms = db.prepare('SELECT status, completed_repetitions AS reps FROM permutations').all();
    db.close();
    expect(perms).toEqual([{ status: 'done', reps: 1 }]);
    expect(records.map((r) => r.test.id).sort()).toEqual([...CDM8_IDS].sort());
    for (const r of records) {
      expect(r.iops, r.test.id).toBeGreaterThan(0);
      expect(r.bytesPerSecond, r.test.id).toBeGreaterThan(0);
      expect(r.repetition).toBe(1);
      expect(r.axes).toEqual({ 'workload.profile': 'cdm8-default' });
      expect(r.tool.name).toBe('fio');
      expect(r.tool.version).toMatch(/^fio-\d/);
      expect(r.latencyUs.mean).toBeGreaterThan(0);
      // bytes/s = IOPS × block size (fio's own rounding aside)
      expect(r.bytesPerSecond! / (r.iops! * r.test.blockSizeBytes)).toBeCloseTo(1, 1);
    }
    expect(records.find((r) => r.test.id === 'rnd-4k-q32t1-write')!.test).toEqual({ id: 'rnd-4k-q32t1-write', pattern: 'randwrite', blockSizeBytes: 4096, queueDepth: 32, threads: 1, readPercent: 0 });
  });

  it('keeps the raw fio JSON of every record at its rawPath', () => {
    const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
    const records = (db.prepare('SELECT record FROM results').all() as Array<{ record: string }>).map((r) => JSON.parse(r.record) as ResultRecord);
    db.close();
    for (const r of records) {
      expect(r.rawPath).toBeTruthy();
      const file = path.resolve(runDir, r.rawPath!);
      expect(file.startsWith(runDir + path.sep)).toBe(true);
      const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as { 'fio version': string; jobs: Array<{ jobname: string }> };
      expect(raw['fio version']).toBe(r.tool.version);
      expect(raw.jobs).toHaveLength(1);
    }
  });

  it('`results --json` prints the same records, one per line', async () => {
    const r = await runCli(['results', runDir, '--json']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as ResultRecord);
    expect(lines).toHaveLength(8);
    expect(new Set(lines.map((l) => l.test.id))).toEqual(new Set(CDM8_IDS));
    expect(lines.every((l) => l.runId === lines[0]!.runId && l.permutationId === 'p577ca69eed2a')).toBe(true);
  });

  it('`results --csv` has a header and one row per record', async () => {
    const r = await runCli(['results', runDir, '--csv']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(9);
  });

  it('`report --format md` renders the run with every test', async () => {
    const r = await runCli(['report', runDir, '--format', 'md']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^# storsweep report — r[0-9a-z]+$/m);
    expect(r.stdout).toContain('- 8 records, 1 permutations, 8 tests');
    expect(r.stdout).toContain('workload.profile = cdm8-default');
    // one section per test, each with a table row for the permutation
    for (const id of CDM8_IDS) expect(r.stdout).toMatch(new RegExp(`^### ${id} — [^\\n]+\\n[^#]*\\n\\| p577ca69eed2a \\| 1 \\| [\\d,.]+ \\| [\\d,.]+ \\|`, 'm'));
    // the run itself also wrote report.md
    const own = fs.readFileSync(path.join(runDir, 'report.md'), 'utf8');
    expect(own).toContain('cdm8-default');
    // the overview grid is its first table: one column for the one permutation, a row per test
    expect(own.split('\n').find((l) => l.startsWith('|'))).toBe('| test | p577ca69eed2a |');
    expect(own).toMatch(/\n\| SEQ1M Q8T1 read<br>seq-1m-q8t1-read \| [\d,.]+ \[[\d,.]+\] \|\n/);
    // the playbook's environment, stored with the run and shown beside the measured fingerprint
    const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
    const meta = JSON.parse((db.prepare("SELECT value FROM meta WHERE key = 'meta'").get() as { value: string }).value) as { environment?: unknown };
    db.close();
    expect(meta.environment).toEqual({ array: 'lab guest on 127.0.0.1', raid: 'none', qos: '0', thin: 'false' });
    expect(own).toContain('**Environment (as the playbook states it)**\n\n| key | value |\n| --- | --- |\n| array | lab guest on 127.0.0.1 |\n| raid | none |\n| qos | 0 |\n| thin | false |');
    expect(own).toContain('**Measured fingerprint (as read from the hosts)**');
  });

  it('`run --dry-run --json` prints one JSON line per planned call and creates no run dir', async () => {
    const two = path.join(guest.dir, 'two.yaml');
    const out = path.join(guest.dir, 'dry-runs');
    const r = await runCli(['run', two, '-i', guest.inventory, '--out', out, '--dry-run', '--json']);
    expect(r.code).toBe(0);
    const all = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    // ssh target: per permutation its test file marked, one workload call, the test file removed
    const perPermutation = [
      ['test-file', 'ssh', false],
      ['workload', 'ssh', false],
      ['teardown test-file', 'ssh', false],
    ];
    expect(all.map((l) => [l.step, l.provider, l.destructive])).toEqual([...perPermutation, ...perPermutation]);
    const lines = all.filter((l) => l.step === 'workload');
    expect(lines.map((l) => (l.arguments as { profile: string }).profile)).toEqual(['cdm8-default', 'quick']);
    expect((lines[0]!.arguments as { repetitions: number; tests: string[] }).repetitions).toBe(2);
    expect((lines[0]!.arguments as { tests: string[] }).tests).toEqual(CDM8_IDS);
    expect(lines[0]!.permutationId).toBe('p577ca69eed2a');
    expect(fs.existsSync(out)).toBe(false);
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it('`plan --json` is the same permutations with the same ids', async () => {
    const two = path.join(guest.dir, 'two.yaml');
    const r = await runCli(['plan', two, '-i', guest.inventory, '--json']);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as { permutations: Array<{ permutationId: string; repetitions: number }>; totalEstimateSec: number };
    expect(plan.permutations.map((p) => p.permutationId)).toEqual(['p577ca69eed2a', expect.stringMatching(/^p[0-9a-f]{12}$/)]);
    expect(plan.permutations.every((p) => p.repetitions === 2)).toBe(true);
    // 2 permutations × 2 repetitions × 8 tests × 1 s
    expect(plan.totalEstimateSec).toBe(32);
  });
});

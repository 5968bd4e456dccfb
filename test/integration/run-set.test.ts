// One playbook for the lab and the real run: `--set` overrides its settings and target on `run`,
// with real fio; the run records the values (plan.json, run.sqlite) and `--resume` keeps them,
// refusing another set before anything runs.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { startLabGuest, type LabGuest } from '../helpers/lab-guest.ts';

let guest: LabGuest;
let playbook: string;
let run: CliResult;
let runDir: string;

const SET = ['--set', 'settings.fileSize=8m', '--set', 'target=lab-local', '--set', 'settings.runtimeSec=1'];

beforeAll(async () => {
  guest = await startLabGuest();
  // the real study's playbook: a target the lab does not have, a real file size and runtime
  playbook = await guest.writePlaybook(
    'real.yaml',
    ['name: real-study', 'target: array-01', 'matrix:', '  workload:', '    profile: [rd]', 'workloads:', '  rd: { iometer: "4k 100% read 100% random" }', 'settings: { fileSize: 64g, runtimeSec: 600, passes: 1, warmupPass: false }', ''].join('\n'),
  );
  run = await runCli(['run', playbook, '-i', guest.inventory, '--out', guest.runsDir, '--no-report', '--json', ...SET]);
  runDir = (JSON.parse(run.stdout.trim().split('\n').at(-1)! || '{}') as { runDir: string }).runDir;
}, 120_000);

afterAll(async () => {
  await guest?.stop();
});

describe('run --set', { timeout: 120_000 }, () => {
  it('without --set the playbook names a target the lab inventory does not have: refused at its line', async () => {
    const r = await runCli(['validate', playbook, '-i', guest.inventory]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/real\.yaml:2:9: target: no target "array-01"/);
  });

  it('a --set value a file would refuse (alias, custom tag) is a usage error (exit 2) naming the argument, not an internal error', async () => {
    const cases = [
      ['target=*a', 'alias *a has no anchor &a before it'],
      ['settings.fileSize=!custom 16m', 'Unresolved tag: !custom'],
    ] as const;
    const results = await Promise.all(cases.map(([arg]) => runCli(['validate', playbook, '-i', guest.inventory, '--set', arg])));
    for (const [i, [arg, why]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`--set ${arg}: the value is not a plain YAML value: ${why}`);
      expect(r.stderr).not.toMatch(/ReferenceError|internal error/i);
    }
  });

  it('measures with the overridden values: fio ran 1 s passes on an 8 MiB file on lab-local', () => {
    expect(run.code, run.stderr).toBe(0);
    const plan = JSON.parse(fs.readFileSync(path.join(runDir, 'plan.json'), 'utf8')) as { target: string; overrides: string[]; profiles: Record<string, { fileSizeBytes: number; runtimeSec: number }> };
    expect(plan.target).toBe('lab-local');
    expect(plan.overrides).toEqual(['settings.fileSize=8m', 'target=lab-local', 'settings.runtimeSec=1']);
    expect(plan.profiles.rd).toMatchObject({ fileSizeBytes: 8 * 1024 * 1024, runtimeSec: 1 });
    const rawDir = path.join(runDir, 'raw');
    const raws = fs.readdirSync(rawDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.json'));
    expect(raws.length).toBeGreaterThan(0);
    const raw = JSON.parse(fs.readFileSync(path.join(raws[0]!.parentPath, raws[0]!.name), 'utf8')) as { jobs: Array<{ 'job options': Record<string, string> }> };
    const opts = raw.jobs[0]!['job options'];
    expect(Number(opts.size ?? opts.filesize)).toBe(8 * 1024 * 1024);
    // the 1 s pass as fio itself records what it was told (the playbook's would be 600)
    expect(opts.runtime).toBe('1');
    // the kept playbook is the file as written; the values are in the plan
    expect(fs.readFileSync(path.join(runDir, 'playbook.yaml'), 'utf8')).toContain('fileSize: 64g');
  });

  it('--resume: another set is refused (exit 2) naming both; the same set, or none, resumes with the run\'s values', async () => {
    const other = await runCli(['run', '--resume', runDir, '--no-report', '--set', 'settings.fileSize=16m', '--set', 'target=lab-local', '--set', 'settings.runtimeSec=1']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--set settings.fileSize=16m --set target=lab-local --set settings.runtimeSec=1 differs from what this run started with (--set settings.fileSize=8m --set target=lab-local --set settings.runtimeSec=1)');
    const same = await runCli(['run', '--resume', runDir, playbook, '--no-report', '--json', ...SET.slice(2), ...SET.slice(0, 2)]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toContain('1 already done');
    const none = await runCli(['run', '--resume', runDir, playbook, '--no-report', '--json']);
    expect(none.code, none.stderr).toBe(0);
  });

  it('--resume with --out is refused (exit 2) before the run directory is opened: a resume continues in its own directory', async () => {
    const before = fs.readdirSync(runDir).sort();
    const out = path.join(path.dirname(runDir), 'elsewhere');
    const r = await runCli(['run', '--resume', runDir, '--no-report', '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('run --resume: --out is not used by a resume');
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(runDir).sort()).toEqual(before);
  });
});

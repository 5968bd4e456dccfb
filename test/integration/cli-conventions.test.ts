// Conventions of the CLI (issue 31), through the CLI as a user runs it: --quiet drops the progress
// lines of a run (the run still happens: its records and log are written), -q/-v together are
// refused; help titles are bold only when colour is wanted (--color, NO_COLOR, FORCE_COLOR).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-conventions-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const BOLD = '\x1b[1m';

describe('--quiet and --verbose', () => {
  const run = (flags: string[]) =>
    runCli(['run', path.join(REPO_ROOT, 'playbooks', 'quickstart.yaml'), '-i', path.join(REPO_ROOT, 'inventories', 'lab.yaml'), '--set', 'target=lab-local', '--set', 'repeat=1', '--set', 'settings.fileSize=4m', '--no-report', ...flags], { cwd: dir });

  it('a run prints its progress on stderr; with --quiet none, and it still measures and logs everything', async () => {
    const normal = await run([]);
    expect(normal.code, normal.stderr).toBe(0);
    expect(normal.stderr).toMatch(/\[1\/1\] p[0-9a-f]+ profile=cdm8-default/);
    const quiet = await run(['--quiet']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');
    const runDir = path.resolve(dir, quiet.stdout.trim());
    expect(fs.readFileSync(path.join(runDir, 'results.jsonl'), 'utf8').trim().split('\n').length).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(runDir, 'log.jsonl'), 'utf8')).toContain('"type":"permutation-start"');
  });

  it('--quiet with --verbose is refused before anything runs', async () => {
    const r = await runCli(['validate', 'playbooks/quickstart.yaml', '-q', '-v']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('--quiet and --verbose: give one of them\n');
  });
});

describe('colour in the help', () => {
  it('none in a pipe, nor with NO_COLOR or --color never; --color always and FORCE_COLOR give bold titles', async () => {
    expect((await runCli(['validate', '--help'])).stdout).not.toContain('\x1b');
    expect((await runCli(['validate', '--help', '--color', 'never'], { env: { NO_COLOR: undefined, FORCE_COLOR: '1' } })).stdout).not.toContain('\x1b');
    expect((await runCli(['validate', '--help', '--color', 'always'])).stdout).toContain(`${BOLD}Usage:\x1b[22m`);
    expect((await runCli(['--help'], { env: { NO_COLOR: undefined, FORCE_COLOR: '1' } })).stdout).toContain(`${BOLD}Options:\x1b[22m`);
    expect((await runCli(['--help'], { env: { NO_COLOR: '1', FORCE_COLOR: '1' } })).stdout).not.toContain('\x1b');
    const bad = await runCli(['--color', 'sometimes', 'validate', 'x.yaml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('auto, always, never');
  });
});

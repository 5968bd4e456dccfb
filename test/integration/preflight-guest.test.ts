// preflight's guest checks both ways on a local target (the guest is this machine), and what `run`
// does with a stored preflight (issue 29): its age and ✗ said, `run --preflight` stopping on a ✗.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

let dir: string;
interface Report {
  ok: boolean;
  targets: Array<{ target: string; checks: Array<{ check: string; status: string; detail: string; remedy?: string }> }>;
}
const checkOf = (r: Report, name: string) => r.targets[0]!.checks.find((c) => c.check === name);

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-pfguest-'));
  await fs.mkdir(path.join(dir, 'work'));
  const target = (fio: string) => ['targets:', '  here:', '    provider: local', `    workdir: ${path.join(dir, 'work')}`, `    fioPath: ${fio}`, ''].join('\n');
  await fs.writeFile(path.join(dir, 'good.yaml'), target('fio'));
  await fs.writeFile(path.join(dir, 'nofio.yaml'), target('/nonexistent/fio'));
  await fs.writeFile(path.join(dir, 'pb.yaml'), ['name: pf-guest', 'target: here', 'matrix:', '  workload: {profile: [quick]}', ''].join('\n'));
  // a guest clock ten minutes ahead: `date` on the PATH the local target's shell sees
  await fs.mkdir(path.join(dir, 'skew'));
  await fs.writeFile(path.join(dir, 'skew', 'date'), '#!/bin/sh\nexec /bin/date -d @$(( $(/bin/date +%s) + 600 )) "$@"\n', { mode: 0o755 });
});
afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const preflight = async (inv: string, env: Record<string, string> = {}) => {
  const r = await runCli(['preflight', path.join(dir, 'pb.yaml'), '-i', path.join(dir, inv), '--json', '-o', path.join(dir, 'runs')], { cwd: dir, env });
  return { code: r.code, report: JSON.parse(r.stdout) as Report };
};

describe('guest checks', () => {
  it('a guest with fio and a right clock: every check ✓, exit 0', async () => {
    const { code, report } = await preflight('good.yaml');
    expect(code).toBe(0);
    expect(checkOf(report, 'guest fio')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^fio-\d/) });
    expect(checkOf(report, 'guest clock')?.status).toBe('ok');
  });

  it('a guest without fio: ✗ with the remedy, exit 1', async () => {
    const { code, report } = await preflight('nofio.yaml');
    expect(code).toBe(1);
    expect(checkOf(report, 'guest fio')).toMatchObject({ status: 'fail', remedy: expect.stringContaining('install fio') });
  });

  it('a guest clock ten minutes off: ! with the offset', async () => {
    const { report } = await preflight('good.yaml', { PATH: `${path.join(dir, 'skew')}:${process.env.PATH ?? ''}` });
    const clock = checkOf(report, 'guest clock')!;
    expect(clock.status).toBe('warn');
    expect(clock.detail).toMatch(/^\+(59\d|60\d)\.\d s from this machine's$/);
  });
});

describe('run and the stored preflight', () => {
  it('run --preflight stops on the ✗ before a run directory exists (exit 2)', async () => {
    const out = path.join(dir, 'runs-pf');
    const r = await runCli(['run', path.join(dir, 'pb.yaml'), '-i', path.join(dir, 'nofio.yaml'), '-o', out, '--preflight'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('✗ guest fio: fio did not answer');
    expect(r.stderr).toContain('run --preflight: a check failed');
    expect(await fs.readdir(out)).toEqual(['preflight-pf-guest.json']);
  });

  it('run says how old the last preflight is and what failed in it', async () => {
    await preflight('nofio.yaml');
    const r = await runCli(['run', path.join(dir, 'pb.yaml'), '-i', path.join(dir, 'good.yaml'), '-o', path.join(dir, 'runs'), '--json', '--no-report'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/note: the last preflight of this playbook ran \d+ min ago \(20\d\d-.*\): 1 check\(s\) failed/);
    expect(r.stderr).toContain('✗ here: guest fio');
  });
});

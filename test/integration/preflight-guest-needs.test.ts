// preflight's guest checks beyond the tool, both ways (issue 29): room on the guest's filesystem for a
// file test's file (a local target: the guest is this machine; the free space read back with
// statfs), and `sudo -n` where the target's guest.sudo says the login reaches root through it (a
// vSphere target whose guest is a real sshd logging in a non-root account; its sudoers drop-in is
// the host state that decides).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { diskPlaybook } from '../helpers/disk-playbook.ts';
import { startLabGuest, type LabGuest } from '../helpers/lab-guest.ts';
import { useNonRootGuest } from '../helpers/non-root-guest.ts';

interface Check {
  check: string;
  status: string;
  detail: string;
  remedy?: string;
}
const checksOf = (stdout: string): Check[] => (JSON.parse(stdout) as { targets: Array<{ checks: Check[] }> }).targets[0]!.checks;
const GiB = 1024 ** 3;

describe('room for the test file', () => {
  let guest: LabGuest;
  beforeAll(async () => {
    guest = await startLabGuest();
  }, 60_000);
  afterAll(async () => {
    await guest?.stop();
  });

  const preflight = async (name: string, fileSize: string) => {
    const pb = await guest.writePlaybook(`${name}.yaml`, [`name: ${name}`, 'target: lab-local', 'matrix:', '  workload: {profile: [cdm3]}', `settings: {fileSize: ${fileSize}}`, ''].join('\n'));
    const r = await runCli(['preflight', pb, '-i', guest.inventory, '--json', '-o', guest.runsDir], { cwd: guest.dir });
    return { code: r.code, room: checksOf(r.stdout).find((c) => c.check === 'guest free space'), stderr: r.stderr };
  };

  it('a 16 MiB file on the work directory’s filesystem: ✓ with what it needs and what is free', async () => {
    const { code, room, stderr } = await preflight('room-ok', '16m');
    expect(code, stderr).toBe(0);
    expect(room).toMatchObject({ status: 'ok', detail: expect.stringContaining(`${path.join(guest.workdir, 'storsweep-test.dat')} needs 16.0 MiB (settings.fileSize); the filesystem on /`) });
  });

  it('a 64 TiB file: ✗ naming the path, what is free (as statfs reads it) and what is needed, exit 1', async () => {
    const { code, room } = await preflight('room-short', '64t');
    expect(code).toBe(1);
    expect(room).toMatchObject({ status: 'fail', remedy: expect.stringMatching(/^free \d+\.\d TiB on \/\S*, set a smaller settings\.fileSize, or point the target's workdir \(or testFile\) at a larger filesystem$/) });
    expect(room!.detail).toContain(`${path.join(guest.workdir, 'storsweep-test.dat')} needs 64.0 TiB (settings.fileSize)`);
    // the free space it names is the filesystem's, read here independently
    const m = /has (\d+\.\d) (GiB|TiB) free/.exec(room!.detail)!;
    const said = Number(m[1]) * (m[2] === 'TiB' ? 1024 * GiB : GiB);
    const st = fs.statfsSync(guest.workdir);
    expect(Math.abs(said - st.bavail * st.bsize)).toBeLessThan(2 * GiB);
  });
});

describe('sudo -n where the guest uses it', () => {
  // a user of its own: guest-disk.test.ts toggles another one's sudoers at the same time
  const g = useNonRootGuest('ss-pf-sudo', 'Pf-Sudo');
  let inventory: string;
  let pb: string;

  beforeAll(async () => {
    if (!g.setup.ok) return;
    inventory = path.join(g.vlab.dir, 'inventory-sudo.yaml');
    fs.writeFileSync(inventory, fs.readFileSync(g.vlab.inventory, 'utf8').replace(/^( {6}byIdDir: .*)$/m, '$1\n      sudo: true'));
    pb = await g.vlab.writePlaybook('sudo.yaml', diskPlaybook({ name: 'pf-sudo', target: 'lab-vcenter', format: 'thin' }));
  });

  const preflight = async () => {
    const r = await runCli(['preflight', pb, '-i', inventory, '--json', '--no-canary', '-o', await g.vlab.newRunsDir('pf')]);
    return { code: r.code, checks: checksOf(r.stdout), stderr: r.stderr };
  };

  it('sudo asks for a password: ✗ with the remedy, and it is the only ✗ (exit 1)', async (ctx) => {
    if (!g.setup.ok) return ctx.skip();
    const { code, checks } = await preflight();
    expect(code).toBe(1);
    expect(checks.filter((c) => c.status === 'fail')).toEqual([{ check: 'guest sudo', status: 'fail', detail: 'guest.sudo is set but sudo asks for a password ("sudo: a password is required")', remedy: expect.stringContaining('NOPASSWD sudo') }]);
    expect(checks.find((c) => c.check === 'guest reachable')).toMatchObject({ status: 'ok' });
  }, 120_000);

  it('NOPASSWD sudo for the login: ✓ and exit 0', async (ctx) => {
    if (!g.setup.ok) return ctx.skip();
    g.allowSudo();
    const { code, checks, stderr } = await preflight();
    expect(checks.find((c) => c.check === 'guest sudo')).toMatchObject({ status: 'ok', detail: expect.stringContaining('sudo -n true works') });
    expect(code, stderr).toBe(0);
  }, 120_000);
});

// preflight's guest checks beyond the tool, both ways (issue 29): room on the guest's filesystem for a
// file test's file (a local target: the guest is this machine; the free space read back with
// statfs), and `sudo -n` where the target's guest.sudo says the login reaches root through it (a
// vSphere target whose guest is a real sshd logging in a non-root account; its sudoers drop-in is
// the host state that decides).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { diskPlaybook } from '../helpers/disk-playbook.ts';
import { startLabGuest, type LabGuest } from '../helpers/lab-guest.ts';
import { ensureSystemUser } from '../helpers/system-user.ts';
import { startVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';

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
  const user = 'ss-pf-sudo';
  const sudoers = `/etc/sudoers.d/${user}`;
  let sshGuest: LabGuest;
  let vlab: VsphereLab;
  let workdir: string;
  let inventory: string;
  let pb: string;
  let setup: { ok: true } | { ok: false; reason: string };

  beforeAll(async () => {
    setup = ensureSystemUser(user, `Pf-Sudo-${Math.random().toString(36).slice(2, 10)}`);
    if (!setup.ok) return;
    fs.rmSync(sudoers, { force: true });
    sshGuest = await startLabGuest();
    // sshd reads AuthorizedKeysFile as the logging-in user: let that user reach it
    fs.chmodSync(sshGuest.dir, 0o755);
    fs.chmodSync(path.join(sshGuest.dir, 'sshd'), 0o755);
    workdir = fs.mkdtempSync('/tmp/ss-pf-sudo-work-');
    execFileSync('chown', [user, workdir]);
    vlab = await startVsphereLab({ version: '8.0', sshGuest: { sshd: sshGuest.sshd, user, keyPath: sshGuest.keyPath, knownHostsFile: sshGuest.knownHostsFile, workdir } });
    inventory = path.join(vlab.dir, 'inventory-sudo.yaml');
    fs.writeFileSync(inventory, fs.readFileSync(vlab.inventory, 'utf8').replace(/^( {6}byIdDir: .*)$/m, '$1\n      sudo: true'));
    pb = await vlab.writePlaybook('sudo.yaml', diskPlaybook({ name: 'pf-sudo', target: 'lab-vcenter', format: 'thin' }));
  }, 120_000);

  afterAll(async () => {
    fs.rmSync(sudoers, { force: true });
    await vlab?.stop();
    await sshGuest?.stop();
    if (workdir) fs.rmSync(workdir, { recursive: true, force: true });
  });

  const preflight = async () => {
    const r = await runCli(['preflight', pb, '-i', inventory, '--json', '--no-canary', '-o', await vlab.newRunsDir('pf')]);
    return { code: r.code, checks: checksOf(r.stdout), stderr: r.stderr };
  };

  it('sudo asks for a password: ✗ with the remedy, and it is the only ✗ (exit 1)', async (ctx) => {
    if (!setup.ok) return ctx.skip();
    const { code, checks } = await preflight();
    expect(code).toBe(1);
    expect(checks.filter((c) => c.status === 'fail')).toEqual([{ check: 'guest sudo', status: 'fail', detail: 'guest.sudo is set but sudo asks for a password ("sudo: a password is required")', remedy: expect.stringContaining('NOPASSWD sudo') }]);
    expect(checks.find((c) => c.check === 'guest reachable')).toMatchObject({ status: 'ok' });
  }, 120_000);

  it('NOPASSWD sudo for the login: ✓ and exit 0', async (ctx) => {
    if (!setup.ok) return ctx.skip();
    fs.writeFileSync(sudoers, `${user} ALL=(ALL) NOPASSWD: ALL\n`, { mode: 0o440 });
    const { code, checks, stderr } = await preflight();
    expect(checks.find((c) => c.check === 'guest sudo')).toMatchObject({ status: 'ok', detail: expect.stringContaining('sudo -n true works') });
    expect(code, stderr).toBe(0);
  }, 120_000);
});

// A vSphere lab whose Linux guest is a real sshd logging in a non-root local account, for the tests
// of `sudo -n` in the guest (guest.sudo): the account made (root only; else `setup.ok` is false and
// the tests skip), its sudoers drop-in removed before and after, a work directory it owns, then the
// lab. Started in the describe's beforeAll, stopped and removed in its afterAll.
//
//   const g = useNonRootGuest('ss-pf-sudo', 'Pf-Sudo');   // a user of its own per test file
//   it('…', async (ctx) => { if (!g.setup.ok) return ctx.skip(); g.allowSudo(); … g.vlab.inventory … });
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startLabGuest, type LabGuest } from './lab-guest.ts';
import { ensureSystemUser } from './system-user.ts';
import { startVsphereLab, type VsphereLab } from './vsphere-lab.ts';

export interface NonRootGuest {
  /** whether the account could be made (root only) */
  readonly setup: { ok: true } | { ok: false; reason: string };
  readonly vlab: VsphereLab;
  readonly sshGuest: LabGuest;
  /** the guest's work directory, owned by the account */
  readonly workdir: string;
  /** gives the account NOPASSWD sudo (its /etc/sudoers.d drop-in; removed by the afterAll) */
  allowSudo(): void;
}

export function useNonRootGuest(user: string, passwordPrefix: string): NonRootGuest {
  const sudoers = `/etc/sudoers.d/${user}`;
  let setup: NonRootGuest['setup'] = { ok: false, reason: 'beforeAll has not run' };
  let sshGuest: LabGuest | undefined;
  let vlab: VsphereLab | undefined;
  let workdir: string | undefined;
  beforeAll(async () => {
    setup = ensureSystemUser(user, `${passwordPrefix}-${Math.random().toString(36).slice(2, 10)}`);
    if (!setup.ok) return;
    fs.rmSync(sudoers, { force: true });
    // the lab sshd takes the same key for any user (its own AuthorizedKeysFile)
    sshGuest = await startLabGuest();
    // sshd reads AuthorizedKeysFile as the logging-in user: let that user reach it
    fs.chmodSync(sshGuest.dir, 0o755);
    fs.chmodSync(path.join(sshGuest.dir, 'sshd'), 0o755);
    workdir = fs.mkdtempSync(`/tmp/${user}-work-`);
    execFileSync('chown', [user, workdir]);
    vlab = await startVsphereLab({ version: '8.0', sshGuest: { sshd: sshGuest.sshd, user, keyPath: sshGuest.keyPath, knownHostsFile: sshGuest.knownHostsFile, workdir } });
    // a real guest's /dev/disk/by-id is world-readable; so is the lab's
    fs.chmodSync(vlab.dir, 0o755);
  }, 120_000);
  afterAll(async () => {
    fs.rmSync(sudoers, { force: true });
    await vlab?.stop();
    await sshGuest?.stop();
    if (workdir) fs.rmSync(workdir, { recursive: true, force: true });
  });
  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`useNonRootGuest: ${what} read before its beforeAll started it`);
    return v;
  };
  return {
    get setup() {
      return setup;
    },
    get vlab() {
      return ready(vlab, 'vlab');
    },
    get sshGuest() {
      return ready(sshGuest, 'sshGuest');
    },
    get workdir() {
      return ready(workdir, 'workdir');
    },
    allowSudo() {
      fs.writeFileSync(sudoers, `${user} ALL=(ALL) NOPASSWD: ALL\n`, { mode: 0o440 });
    },
  };
}

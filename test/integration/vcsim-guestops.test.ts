// VMware Tools guest operations in the vcsim harness (src/lab/harness/vcsim/guestops.go,
// guestwin.go): the real harness, driven by pyVmomi (test/harness/pyvmomi/probe.py) as an
// independent client, the lab guests checked on this machine (/proc, file owners, loop devices).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { probe, probeOne } from '../helpers/pyvmomi-probe.ts';
import { waitFor } from '../helpers/wait.ts';

const WINDOWS_STANDINS = fileURLToPath(new URL('../../src/lab/harness/windows/', import.meta.url));
const LINUX_VM = 'DC0_H0_VM0';
const WINDOWS_VM = 'DC0_H0_VM1';
const OTHER_VM = 'DC0_C0_RP0_VM0';
const LINUX = { vm: LINUX_VM, guestUser: 'storsweep-guest', guestPassword: "g'pw $(x) \"y\" ;z" };
const WINDOWS = { vm: WINDOWS_VM, guestUser: 'Administrator', guestPassword: 'W1n-guest pw' };

interface Proc {
  pid: number;
  name: string;
  owner: string;
  cmdLine: string;
  startTime: string;
  endTime: string | null;
  exitCode: number | null;
}

/**
 * Waits (on the harness's own process list) until guest process `pid` ended, then reads it as
 * VMware Tools reports it, through pyVmomi (ListProcessesInGuest).
 */
async function waitExit(vc: VcsimHandle, guest: typeof LINUX, pid: number): Promise<Proc> {
  await waitFor(async () => (await vc.control.guestOps()).processes.some((p) => p.vm === guest.vm && p.pid === pid && !p.running), { what: `guest process ${pid} ended` });
  const r = await probeOne(vc, { op: 'guest-list', ...guest, pids: [pid] });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  const p = (r.processes as Proc[])[0];
  expect(p?.endTime, JSON.stringify(r)).toBeTruthy();
  return p!;
}

/** The signals a process ignores (/proc/PID/status SigIgn), as a bit mask; 0n once it is gone. */
async function ignoredSignals(pid: number): Promise<bigint> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const m = /^SigIgn:\s+([0-9a-f]+)$/m.exec(status);
  return m ? BigInt(`0x${m[1]}`) : 0n;
}
const SIGTERM_BIT = 1n << 14n;

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)('vcsim harness guest operations', () => {
  let vc: VcsimHandle;
  let logFile: string;
  let work: string;
  let guestDisks: string;
  /** the local account the vc harness made for the Linux guest */
  let guestUid: number;
  let guestAccount: string;

  beforeAll(async () => {
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'guestops-'));
    await fs.chmod(work, 0o755);
    logFile = path.join(work, 'vcsim.log');
    guestDisks = path.join(work, 'guest-disks');
    vc = await startVcsim({
      logFile,
      guestDisks,
      guestOps: {
        vms: [
          { vm: LINUX_VM, os: 'linux', username: LINUX.guestUser, password: LINUX.guestPassword, sudo: true },
          { vm: WINDOWS_VM, os: 'windows', username: WINDOWS.guestUser, password: WINDOWS.guestPassword },
        ],
      },
    });
    const acct = (await vc.control.guestOps()).accounts.find((a) => a.vm === LINUX_VM)!;
    guestUid = acct.uid;
    guestAccount = acct.account;
    expect(acct.username).toBe(LINUX.guestUser);
    expect(uidOf(guestAccount)).toBe(guestUid);
  }, 120_000);

  afterAll(async () => {
    await vc?.stop();
    if (work) await fs.rm(work, { recursive: true, force: true });
  });

  it('publishes VMware Tools running and the guest OS for configured VMs only', async () => {
    const [l, w, o] = await probe(vc, [
      { op: 'guest-vm', vm: LINUX_VM },
      { op: 'guest-vm', vm: WINDOWS_VM },
      { op: 'guest-vm', vm: OTHER_VM },
    ]);
    expect(l).toMatchObject({ ok: true, guestId: 'ubuntu64Guest', guestFamily: 'linuxGuest', toolsRunningStatus: 'guestToolsRunning', guestOperationsReady: true });
    expect(w).toMatchObject({ ok: true, guestFamily: 'windowsGuest', toolsRunningStatus: 'guestToolsRunning' });
    expect(String(w!.guestId)).toMatch(/^windows/);
    expect(o).toMatchObject({ ok: true, toolsRunningStatus: 'guestToolsNotRunning' });
  });

  it('uploads a job, runs it as the guest user, lists it until it exits, downloads its output', async () => {
    const dir = path.join(work, 'linux-job');
    await fs.mkdir(dir);
    await fs.chown(dir, guestUid, 0);
    const job = `${dir}/job.sh`;
    const out = `${dir}/out.txt`;
    const up = await probeOne(vc, { op: 'guest-upload', ...LINUX, path: job, content: 'echo "job ran as $(id -un) in $PWD"\nexit 3\n' });
    expect(up).toMatchObject({ ok: true, status: 200 });
    expect(String(up.url)).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/guestFile\?id=\d+&token=[0-9a-f]+$/);
    // written in the guest as the guest user
    expect((await fs.stat(job)).uid).toBe(guestUid);
    // the upload URL is single-use
    const again = await fetchStatus(vc, String(up.url), 'PUT', 'x');
    expect(again).toBe(404);

    const started = await probeOne(vc, { op: 'guest-start', ...LINUX, program: '/bin/sh', arguments: `${job} > ${out} 2>&1`, workingDirectory: dir });
    expect(started.ok, JSON.stringify(started)).toBe(true);
    const pid = started.pid as number;
    const p = await waitExit(vc, LINUX, pid);
    expect(p).toMatchObject({ pid, name: 'sh', owner: LINUX.guestUser, exitCode: 3 });
    // the command line Tools builds: the program path quoted, the arguments as given (vixTools.c)
    expect(p.cmdLine).toBe(`"/bin/sh" ${job} > ${out} 2>&1`);
    expect(Date.parse(p.endTime!)).toBeGreaterThanOrEqual(Date.parse(p.startTime));

    const down = await probeOne(vc, { op: 'guest-download', ...LINUX, path: out });
    expect(down).toMatchObject({ ok: true, content: `job ran as ${guestAccount} in ${dir}\n`, attributes: 'GuestPosixFileAttributes', ownerId: guestUid });
    expect(down.size).toBe(Buffer.byteLength(down.content as string));

    // an exit code of 0 is sent (govmomi's type would omit it)
    const ok = await probeOne(vc, { op: 'guest-start', ...LINUX, program: '/bin/true' });
    expect((await waitExit(vc, LINUX, ok.pid as number)).exitCode).toBe(0);

    const env = await probeOne(vc, { op: 'guest-env', ...LINUX, names: ['USER', 'NOPE'] });
    expect(env).toMatchObject({ ok: true, env: [`USER=${LINUX.guestUser}`] });

    const { calls } = await vc.control.guestOps();
    const methods = calls.filter((c) => c.vm === LINUX_VM).map((c) => c.method);
    expect(methods).toEqual(expect.arrayContaining(['InitiateFileTransferToGuest', 'PUT /guestFile', 'StartProgramInGuest', 'ListProcessesInGuest', 'InitiateFileTransferFromGuest', 'GET /guestFile', 'ReadEnvironmentVariableInGuest']));
  }, 90_000);

  it('terminates a program but not what it spawned, as in a guest: those stay listed until terminated themselves', async () => {
    const started = await probeOne(vc, { op: 'guest-start', ...LINUX, program: '/bin/sh', arguments: "-c 'sleep 120 & sleep 120; wait'" });
    expect(started.ok, JSON.stringify(started)).toBe(true);
    const pid = started.pid as number;
    // both sleeps spawned
    const ours = await waitFor(async () => {
      const procs = (await vc.control.guestProcesses()).filter((p) => p.vm === LINUX_VM);
      return procs.filter((p) => p.child).length === 2 ? procs : null;
    }, { what: 'the two sleeps the shell spawned' });
    expect(ours.map((p) => p.pid)).toContain(pid);
    expect(ours.filter((p) => p.child).map((p) => p.name), JSON.stringify(ours)).toEqual(['sleep', 'sleep']);
    const listed = await probeOne(vc, { op: 'guest-list', ...LINUX });
    expect((listed.processes as Proc[]).filter((p) => p.endTime === null).map((p) => p.name).sort()).toEqual(['sh', 'sleep', 'sleep']);

    // TERM reaches the shell only (TerminateProcessInGuest: "the process is sent a TERM signal")
    expect(await probeOne(vc, { op: 'guest-terminate', ...LINUX, pid })).toMatchObject({ ok: true });
    expect((await waitExit(vc, LINUX, pid)).exitCode).toBe(128 + 15);
    const left = (await vc.control.guestProcesses()).filter((p) => p.vm === LINUX_VM);
    expect(left.map((p) => p.name)).toEqual(['sleep', 'sleep']);
    expect((await processesOf(guestUid)).length).toBe(2);
    // each is a guest process of its own: terminated by its pid, nothing is left
    for (const p of left) expect(await probeOne(vc, { op: 'guest-terminate', ...LINUX, pid: p.pid })).toMatchObject({ ok: true });
    // (the call returns once it ended: the harness's list and /proc catch up on the reap)
    await waitFor(async () => (await vc.control.guestProcesses()).length === 0 && (await processesOf(guestUid)).length === 0, { what: 'no guest process left' });
    // a pid that is not running in the guest
    expect(await probeOne(vc, { op: 'guest-terminate', ...LINUX, pid })).toMatchObject({ ok: false, fault: 'GuestProcessNotFound' });
  }, 60_000);

  it('waits 5 s after TERM before KILL, as Tools does (procMgrPosix.c ProcMgr_KillByPid)', async () => {
    const started = await probeOne(vc, { op: 'guest-start', ...LINUX, program: '/bin/bash', arguments: `-c "trap '' TERM; while :; do sleep 0.2; done"` });
    expect(started.ok, JSON.stringify(started)).toBe(true);
    // TERM is ignored once bash ran its trap (the process is this machine's: /proc shows it)
    await waitFor(async () => ((await ignoredSignals(started.pid as number)) & SIGTERM_BIT) !== 0n, { what: 'the trap set' });
    const t0 = Date.now();
    expect(await probeOne(vc, { op: 'guest-terminate', ...LINUX, pid: started.pid })).toMatchObject({ ok: true });
    // it waited (TERM had no effect) and then KILLed: a lower bound and the signal that ended it
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4900);
    expect((await waitExit(vc, LINUX, started.pid as number)).exitCode).toBe(128 + 9);
  }, 60_000);

  it('quotes the program path as Tools does: a path with a space or ; is one path, never shell syntax', async () => {
    const dir = path.join(work, 'quote-job');
    const odd = path.join(dir, 'my tools;touch pwned');
    await fs.mkdir(odd, { recursive: true });
    await fs.writeFile(path.join(odd, 'job'), '#!/bin/sh\necho "ran $1" > out.txt\n', { mode: 0o755 });
    await fs.chown(dir, guestUid, 0);
    const started = await probeOne(vc, { op: 'guest-start', ...LINUX, program: path.join(odd, 'job'), arguments: 'once', workingDirectory: dir });
    expect(started.ok, JSON.stringify(started)).toBe(true);
    const p = await waitExit(vc, LINUX, started.pid as number);
    expect(p.exitCode).toBe(0);
    expect(p.cmdLine).toBe(`"${path.join(odd, 'job')}" once`);
    expect(await fs.readFile(path.join(dir, 'out.txt'), 'utf8')).toBe('ran once\n');
    await expect(fs.stat(path.join(dir, 'pwned'))).rejects.toThrow();
  }, 60_000);

  it('returns the documented faults', async () => {
    const bad = { ...LINUX, guestPassword: 'wrong' };
    const plain = path.join(work, 'plain.txt');
    await fs.writeFile(plain, 'not a program\n', { mode: 0o644 });
    const r = await probe(vc, [
      { op: 'guest-list', ...bad },
      { op: 'guest-start', ...bad, program: '/bin/true' },
      { op: 'guest-upload', ...bad, path: '/tmp/x', content: 'x' },
      { op: 'guest-start', ...LINUX, guestUser: 'root', program: '/bin/true' },
      { op: 'guest-start', ...LINUX, program: '/no/such/program' },
      { op: 'guest-start', ...LINUX, program: plain },
      { op: 'guest-start', ...LINUX, program: '/bin/true', workingDirectory: '/no/such/dir' },
      { op: 'guest-list', ...LINUX, vm: OTHER_VM },
      { op: 'guest-download', ...LINUX, path: '/no/such/file' },
      { op: 'guest-download', ...LINUX, path: '/etc/shadow' },
      { op: 'guest-upload', ...LINUX, path: '/no/such/dir/file', content: 'x' },
      { op: 'guest-upload', ...LINUX, path: '/etc/storsweep-guest-test', content: 'x' },
      { op: 'guest-upload', ...LINUX, path: plain, content: 'x', overwrite: false },
    ]);
    expect(r.map((x) => x.fault)).toEqual([
      'InvalidGuestLogin',
      'InvalidGuestLogin',
      'InvalidGuestLogin',
      'InvalidGuestLogin',
      'FileNotFound',
      'GuestPermissionDenied',
      'FileNotFound',
      'GuestOperationsUnavailable',
      'FileNotFound',
      'GuestPermissionDenied',
      'FileNotFound',
      'GuestPermissionDenied',
      'FileAlreadyExists',
    ]);
    await expect(fs.stat('/etc/storsweep-guest-test')).rejects.toThrow();

    // an upload of another size than announced is refused and writes nothing
    const dir = path.join(work, 'size');
    await fs.mkdir(dir);
    await fs.chown(dir, guestUid, 0);
    const sized = await probeOne(vc, { op: 'guest-upload', ...LINUX, path: `${dir}/f`, content: 'abc', size: 10 });
    expect(sized).toMatchObject({ ok: true, status: 400 });
    await expect(fs.stat(`${dir}/f`)).rejects.toThrow();

    // Tools stopped in the guest
    await vc.control.guestTools(LINUX_VM, false);
    try {
      expect(await probeOne(vc, { op: 'guest-list', ...LINUX })).toMatchObject({ ok: false, fault: 'GuestOperationsUnavailable' });
      expect(await probeOne(vc, { op: 'guest-vm', vm: LINUX_VM })).toMatchObject({ toolsRunningStatus: 'guestToolsNotRunning', guestOperationsReady: false });
    } finally {
      await vc.control.guestTools(LINUX_VM, true);
    }
    expect(await probeOne(vc, { op: 'guest-list', ...LINUX })).toMatchObject({ ok: true });

    // a powered-off VM: InvalidPowerState ("if the VM is not powered on"), checked before the login
    expect(await probeOne(vc, { op: 'power', vm: LINUX_VM, on: false })).toMatchObject({ ok: true });
    try {
      expect(await probeOne(vc, { op: 'guest-start', ...bad, program: '/bin/true' })).toMatchObject({ ok: false, fault: 'InvalidPowerState' });
      expect(await probeOne(vc, { op: 'guest-vm', vm: LINUX_VM })).toMatchObject({ toolsRunningStatus: 'guestToolsNotRunning', guestOperationsReady: false });
    } finally {
      expect(await probeOne(vc, { op: 'power', vm: LINUX_VM, on: true })).toMatchObject({ ok: true });
    }
    expect(await probeOne(vc, { op: 'guest-list', ...LINUX })).toMatchObject({ ok: true });
    expect(await probeOne(vc, { op: 'guest-vm', vm: LINUX_VM })).toMatchObject({ toolsRunningStatus: 'guestToolsRunning', guestOperationsReady: true });

    const { calls } = await vc.control.guestOps();
    expect(calls.some((c) => c.method === 'StartProgramInGuest' && c.fault === 'InvalidGuestLogin')).toBe(true);
    // the guest passwords are in no log
    const log = await fs.readFile(logFile, 'utf8').catch(() => '');
    for (const secret of [LINUX.guestPassword, WINDOWS.guestPassword]) {
      expect(log).not.toContain(secret);
      expect(JSON.stringify(calls)).not.toContain(secret);
    }
  }, 60_000);

  it('makes and deletes directories and files as the guest user', async () => {
    const tmp = await probeOne(vc, { op: 'guest-tempdir', ...LINUX, prefix: 'storsweep-', suffix: '.d' });
    expect(tmp.ok, JSON.stringify(tmp)).toBe(true);
    const dir = tmp.path as string;
    expect(dir).toMatch(/^\/tmp\/storsweep-[0-9a-f]{8}\.d$/);
    expect((await fs.stat(dir)).uid).toBe(guestUid);
    const r = await probe(vc, [
      { op: 'guest-mkdir', ...LINUX, path: `${dir}/a/b` },
      { op: 'guest-mkdir', ...LINUX, path: `${dir}/a/b`, parents: true },
      { op: 'guest-mkdir', ...LINUX, path: `${dir}/a/b` },
      { op: 'guest-upload', ...LINUX, path: `${dir}/a/b/f`, content: 'x' },
      { op: 'guest-rm', ...LINUX, path: `${dir}/a` },
      { op: 'guest-rmdir', ...LINUX, path: `${dir}/a` },
      { op: 'guest-rmdir', ...LINUX, path: `${dir}/a/b/f` },
      { op: 'guest-mkdir', ...LINUX, path: '/etc/storsweep-guest-test' },
      { op: 'guest-rm', ...LINUX, path: `${dir}/a/b/f` },
      { op: 'guest-rm', ...LINUX, path: `${dir}/a/b/f` },
      { op: 'guest-rmdir', ...LINUX, path: dir, recursive: true },
    ]);
    expect(r.map((x) => x.fault ?? 'ok')).toEqual(['FileNotFound', 'ok', 'FileAlreadyExists', 'ok', 'NotAFile', 'DirectoryNotEmpty', 'NotADirectory', 'GuestPermissionDenied', 'ok', 'FileNotFound', 'ok']);
    await expect(fs.stat(dir)).rejects.toThrow();
    await expect(fs.stat('/etc/storsweep-guest-test')).rejects.toThrow();

    const w = await probe(vc, [
      { op: 'guest-mkdir', ...WINDOWS, path: 'C:\\storsweep\\run1', parents: true },
      { op: 'guest-upload', ...WINDOWS, path: 'C:\\STORSWEEP\\Run1\\args.txt', content: 'x' },
      { op: 'guest-rmdir', ...WINDOWS, path: 'c:\\storsweep', recursive: true },
      { op: 'guest-download', ...WINDOWS, path: 'C:\\storsweep\\run1\\args.txt' },
    ]);
    expect(w.map((x) => x.fault ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'FileNotFound']);
  }, 60_000);

  it('gives the Linux guest user the attached disks under byIdDir', async () => {
    const added = await probeOne(vc, { op: 'add-disk', vm: LINUX_VM, unit: 3, capacityKB: 4096 });
    expect(added.ok, JSON.stringify(added)).toBe(true);
    const byId = path.join(guestDisks, 'by-id');
    const links = await fs.readdir(byId);
    expect(links.length).toBeGreaterThan(0);
    const dir = path.join(work, 'disk-job');
    await fs.mkdir(dir);
    await fs.chown(dir, guestUid, 0);
    const out = `${dir}/disk.txt`;
    const link = `${byId}/${links[0]}`;
    const started = await probeOne(vc, {
      op: 'guest-start',
      ...LINUX,
      program: '/bin/sh',
      arguments: `-c 'readlink -f ${link}; blockdev --getsize64 ${link}; dd if=${link} of=/dev/null bs=4096 count=1 2>/dev/null && echo readable' > ${out} 2>&1`,
    });
    expect((await waitExit(vc, LINUX, started.pid as number)).exitCode).toBe(0);
    const text = (await probeOne(vc, { op: 'guest-download', ...LINUX, path: out })).content as string;
    expect(text).toMatch(/^\/dev\/loop\d+\n4194304\nreadable\n$/);
    const ownLoop = text.split('\n')[0]!;

    // another VM's disk (another lab's guest, as far as this guest knows) is a loop device on the
    // same machine: this guest's user must not open it, nor the host's disks (it is not in group disk)
    const other = await probeOne(vc, { op: 'add-disk', vm: OTHER_VM, unit: 3, capacityKB: 4096 });
    expect(other.ok, JSON.stringify(other)).toBe(true);
    const otherLink = (await fs.readdir(byId)).find((l) => !links.includes(l));
    expect(otherLink).toBeDefined();
    const otherLoop = await fs.realpath(`${byId}/${otherLink}`);
    expect(otherLoop).not.toBe(ownLoop);
    expect((await fs.stat(ownLoop)).uid).toBe(guestUid);
    expect((await fs.stat(otherLoop)).uid).toBe(0);
    const diskGid = readFileSync('/etc/group', 'utf8').split('\n').find((l) => l.startsWith('disk:'))!.split(':')[2];
    const access = await probeOne(vc, {
      op: 'guest-start',
      ...LINUX,
      program: '/bin/sh',
      arguments: `-c 'for d in ${ownLoop} ${otherLoop}; do if test -w $d; then echo $d w; else echo $d -; fi; done; dd if=${otherLoop} of=/dev/null count=1 2>/dev/null || echo denied; id -G' > ${dir}/access.txt 2>&1`,
      workingDirectory: dir,
    });
    expect((await waitExit(vc, LINUX, access.pid as number)).exitCode).toBe(0);
    const seen = ((await probeOne(vc, { op: 'guest-download', ...LINUX, path: `${dir}/access.txt` })).content as string).split('\n');
    expect(seen.slice(0, 3)).toEqual([`${ownLoop} w`, `${otherLoop} -`, 'denied']);
    expect(seen[3]!.split(' ')).not.toContain(diskGid);

    // a prepared benchmark account: root through sudo -n (guest.sudo), never a password prompt
    const sudo = await probeOne(vc, { op: 'guest-start', ...LINUX, program: '/bin/sh', arguments: `-c 'id -u; sudo -n id -u' > ${dir}/sudo.txt 2>${dir}/sudo.err`, workingDirectory: dir });
    // (stderr apart: sudo warns "unable to resolve host" on a machine whose hostname has no /etc/hosts entry, a fresh root's case)
    expect((await waitExit(vc, LINUX, sudo.pid as number)).exitCode).toBe(0);
    expect((await probeOne(vc, { op: 'guest-download', ...LINUX, path: `${dir}/sudo.txt` })).content).toBe(`${guestUid}\n0\n`);
  }, 60_000);

  it('runs diskspd through cmd.exe /c in the Windows guest and downloads its XML', async () => {
    const temp = 'C:\\Users\\Administrator\\AppData\\Local\\Temp';
    const up = await probeOne(vc, { op: 'guest-upload', ...WINDOWS, path: `${temp}\\note.txt`, content: 'hi' });
    expect(up).toMatchObject({ ok: true, status: 200 });
    // disk 0 is the system disk; the disk attached now arrives as disk 1, offline and read-only
    // (SAN policy OfflineShared, guest_storage.py)
    const added = await probeOne(vc, { op: 'add-disk', vm: WINDOWS_VM, unit: 2, capacityKB: 8192 });
    expect(added.ok, JSON.stringify(added)).toBe(true);
    const started = await probeOne(vc, {
      op: 'guest-start',
      ...WINDOWS,
      program: 'C:\\Windows\\System32\\cmd.exe',
      arguments: `/c C:\\Tools\\diskspd.exe -b4K -d1 -W0 -o4 -t1 -r -Sh -L -Rxml #1 > ${temp}\\out.xml 2>&1`,
      workingDirectory: temp,
    });
    expect(started.ok, JSON.stringify(started)).toBe(true);
    const p = await waitExit(vc, WINDOWS, started.pid as number);
    expect(p).toMatchObject({ name: 'cmd.exe', owner: 'Administrator', exitCode: 0 });
    expect(p.cmdLine.startsWith('"C:\\Windows\\System32\\cmd.exe" /c ')).toBe(true);
    // NTFS names are case-insensitive
    const down = await probeOne(vc, { op: 'guest-download', ...WINDOWS, path: 'c:\\users\\administrator\\appdata\\local\\temp\\OUT.XML' });
    expect(down).toMatchObject({ ok: true, attributes: 'GuestWindowsFileAttributes' });
    expect(down.content as string).toContain('<Results>');
    expect(down.content as string).toContain(`<ComputerName>${WINDOWS_VM}</ComputerName>`);

    const r = await probe(vc, [
      { op: 'guest-start', ...WINDOWS, program: 'C:\\Tools\\nope.exe' },
      { op: 'guest-start', ...WINDOWS, program: 'C:\\Windows\\System32\\cmd.exe', arguments: `/c diskspd.exe -d1 #1 > ${temp}\\bare.txt` },
      // writes to the offline disk fail as on Windows (ERROR_WRITE_PROTECT)
      { op: 'guest-start', ...WINDOWS, program: 'C:\\Windows\\System32\\cmd.exe', arguments: `/c C:\\Tools\\diskspd.exe -b4K -d1 -W0 -w30 -Rxml #1 > ${temp}\\w.txt` },
    ]);
    expect(r[0]).toMatchObject({ ok: false, fault: 'FileNotFound' });
    expect((await waitExit(vc, WINDOWS, r[1]!.pid as number)).exitCode).toBe(9009);
    expect((await waitExit(vc, WINDOWS, r[2]!.pid as number)).exitCode).toBe(1);
    expect((await probeOne(vc, { op: 'guest-download', ...WINDOWS, path: `${temp}\\w.txt` })).content).toContain('error code: 19');
  }, 90_000);

  it('runs the provider\'s PowerShell shapes in the Windows guest: Get-Disk, Set-Disk, diskspd through Start-Process, stopped by its own pid', async () => {
    const work = 'C:\\storsweep';
    expect(await probeOne(vc, { op: 'guest-mkdir', ...WINDOWS, path: work })).toMatchObject({ ok: true });
    const ps = 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe';
    const files = (n: string) => ({ out: `${work}\\${n}.out`, err: `${work}\\${n}.err`, pid: `${work}\\${n}.pid` });
    const run = async (shape: 'call' | 'run' | 'remove', data: Record<string, unknown>) => {
      const started = await probeOne(vc, { op: 'guest-start', ...WINDOWS, program: ps, arguments: psArguments(shape, data), workingDirectory: work });
      expect(started.ok, JSON.stringify(started)).toBe(true);
      return started.pid as number;
    };
    const read = async (p: string) => (await probeOne(vc, { op: 'guest-download', ...WINDOWS, path: p })).content as string;

    const vmDisks = (await probeOne(vc, { op: 'vm-disks', vm: WINDOWS_VM })).disks as { unitNumber?: number; uuid?: string }[];
    const attached = vmDisks.find((d) => d.unitNumber === 2);
    expect(attached?.uuid, JSON.stringify(vmDisks)).toMatch(/^6000C29/i);
    const f1 = files('a');
    const p1 = await run('call', { calls: [{ cmdlet: 'Get-Disk', params: {}, select: ['Number', 'SerialNumber', 'UniqueId', 'Size', 'IsOffline', 'IsReadOnly', 'IsSystem'] }], ...f1 });
    expect((await waitExit(vc, WINDOWS, p1)).exitCode).toBe(0);
    const disks = JSON.parse(await read(f1.out)) as { Number: number; SerialNumber: string | null; Size: number; IsOffline: boolean; IsSystem: boolean }[];
    expect(disks.find((d) => d.Number === 0)).toMatchObject({ IsSystem: true });
    const d1 = disks.find((d) => d.Number === 1);
    expect(d1, JSON.stringify(disks)).toMatchObject({ Size: 8192 * 1024, IsOffline: true, IsSystem: false });
    // its serial is the VMDK's backing uuid without dashes (disk.EnableUUID = TRUE)
    expect(d1!.SerialNumber).toBe(attached!.uuid!.replace(/-/g, '').toLowerCase());

    const f2 = files('b');
    const p2 = await run('call', { calls: [{ cmdlet: 'Set-Disk', params: { Number: 1, IsOffline: false } }, { cmdlet: 'Set-Disk', params: { Number: 1, IsReadOnly: false } }], ...f2 });
    expect((await waitExit(vc, WINDOWS, p2)).exitCode, await read(f2.err).catch(() => '')).toBe(0);

    // diskspd through Start-Process: a process of its own, its pid in the pid file
    const f3 = files('c');
    const p3 = await run('run', { exe: 'C:\\Tools\\diskspd.exe', args: '-b4K -d60 -W0 -o1 -t1 -w30 -Rxml #1', ...f3 });
    // the pid file holds "<pid> <start time, round-trip format>" (TOOLS_RUN_BODY)
    const pidFile = await waitFor(async () => ((await probeOne(vc, { op: 'guest-download', ...WINDOWS, path: f3.pid })).content as string | undefined) || null, { what: 'the pid file', intervalMs: 100 });
    const [pidText, startedAt] = pidFile.split(' ');
    const child = Number(pidText) || 0;
    expect(child, pidFile).toBeGreaterThan(0);
    expect(startedAt, pidFile).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
    const listed = (await probeOne(vc, { op: 'guest-list', ...WINDOWS })).processes as Proc[];
    expect(listed.find((p) => p.pid === child)).toMatchObject({ name: 'diskspd.exe', owner: 'Administrator' });
    expect(listed.find((p) => p.pid === p3)).toMatchObject({ name: 'powershell.exe', endTime: null });
    expect(await probeOne(vc, { op: 'guest-terminate', ...WINDOWS, pid: child })).toMatchObject({ ok: true });
    expect((await waitExit(vc, WINDOWS, p3)).exitCode).toBe(1);
    await waitFor(async () => (await vc.control.guestProcesses()).filter((p) => p.vm === WINDOWS_VM).length === 0, { what: 'no process left in the Windows guest' });

    const p4 = await run('remove', { files: [...Object.values(f1), ...Object.values(f2), ...Object.values(f3)] });
    expect((await waitExit(vc, WINDOWS, p4)).exitCode).toBe(0);
    expect(await probeOne(vc, { op: 'guest-download', ...WINDOWS, path: f1.out })).toMatchObject({ ok: false, fault: 'FileNotFound' });

    // anything but the provider's shapes is refused
    const bad = await probeOne(vc, { op: 'guest-start', ...WINDOWS, program: ps, arguments: '-Command Get-Disk', workingDirectory: work });
    expect((await waitExit(vc, WINDOWS, bad.pid as number)).exitCode).toBe(64);
  }, 120_000);
});

describe.skipIf(!isRoot)('vcsim harness guest operations on a standalone ESXi host', () => {
  let esx: VcsimHandle;
  let other: VcsimHandle;
  beforeAll(async () => {
    esx = await startVcsim({ esx: true, guestOps: { vms: [{ vm: 'ha-host_VM0', os: 'linux', username: LINUX.guestUser, password: LINUX.guestPassword }] } });
    // a second lab on the same machine, its guest configured with the same login
    other = await startVcsim({ guestOps: { vms: [{ vm: LINUX_VM, os: 'linux', username: LINUX.guestUser, password: LINUX.guestPassword }] } });
  }, 120_000);
  afterAll(async () => {
    await esx?.stop();
    await other?.stop();
  });

  it("returns transfer URLs with the host '*' (the server the call went to), which take the upload there", async () => {
    const guest = { ...LINUX, vm: 'ha-host_VM0' };
    const tmp = await probeOne(esx, { op: 'guest-tempdir', ...guest });
    const up = await probeOne(esx, { op: 'guest-upload', ...guest, path: `${tmp.path as string}/f`, content: 'on esx' });
    expect(up).toMatchObject({ ok: true, status: 200 });
    expect(String(up.url)).toMatch(/^https:\/\/\*\/guestFile\?id=\d+&token=/);
    expect(await probeOne(esx, { op: 'guest-download', ...guest, path: `${tmp.path as string}/f` })).toMatchObject({ ok: true, content: 'on esx' });
    expect(await probeOne(esx, { op: 'guest-rmdir', ...guest, path: tmp.path, recursive: true })).toMatchObject({ ok: true });
  }, 60_000);

  it("gives each lab's guest an account of its own: another lab's guest cannot write its scratch directory or signal its programs", async () => {
    const guest = { ...LINUX, vm: 'ha-host_VM0' };
    const mine = (await esx.control.guestOps()).accounts[0]!;
    const theirs = (await other.control.guestOps()).accounts[0]!;
    expect(mine.uid).not.toBe(theirs.uid);
    const home = ((await probeOne(other, { op: 'guest-env', ...LINUX, names: ['HOME'] })).env as string[])[0]!.slice('HOME='.length);
    const sleeper = await probeOne(other, { op: 'guest-start', ...LINUX, program: '/bin/sleep', arguments: '60' });
    expect(sleeper.ok, JSON.stringify(sleeper)).toBe(true);
    const tmp = (await probeOne(esx, { op: 'guest-tempdir', ...guest })).path as string;
    const probeRun = await probeOne(esx, {
      op: 'guest-start',
      ...guest,
      program: '/bin/sh',
      arguments: `-c 'if touch ${home}/from-other 2>/dev/null; then echo wrote; else echo denied; fi; if kill -0 ${sleeper.pid as number} 2>/dev/null; then echo signalled; else echo nosignal; fi' > ${tmp}/out.txt`,
    });
    expect((await waitExit(esx, guest, probeRun.pid as number)).exitCode).toBe(0);
    expect((await probeOne(esx, { op: 'guest-download', ...guest, path: `${tmp}/out.txt` })).content).toBe('denied\nnosignal\n');
    await expect(fs.stat(`${home}/from-other`)).rejects.toThrow();
    expect(await probeOne(other, { op: 'guest-terminate', ...LINUX, pid: sleeper.pid })).toMatchObject({ ok: true });
    expect(await probeOne(esx, { op: 'guest-rmdir', ...guest, path: tmp, recursive: true })).toMatchObject({ ok: true });
  }, 60_000);

  it('kills every guest process when the harness stops, also what a program left behind, and removes its account', async () => {
    const guest = { ...LINUX, vm: 'ha-host_VM0' };
    const { uid, account } = (await esx.control.guestOps()).accounts[0]!;
    expect(uidOf(account)).toBe(uid);
    const started = await probeOne(esx, { op: 'guest-start', ...guest, program: '/bin/sh', arguments: "-c 'sleep 300 & exit 0'" });
    expect((await waitExit(esx, guest, started.pid as number)).exitCode).toBe(0);
    expect((await esx.control.guestProcesses()).map((p) => p.name)).toEqual(['sleep']);
    expect(await processesOf(uid)).toHaveLength(1);
    await esx.stop();
    // killed by the harness on its way out: gone once reaped
    await waitFor(async () => (await processesOf(uid)).length === 0, { what: `no process of uid ${uid} left` });
    expect(() => uidOf(account)).toThrow(/no local user/);
  }, 60_000);
});

/** powershell.exe arguments for one of the provider's guest-operations script shapes (built by the stand-in's own copy of them). */
function psArguments(shape: 'call' | 'run' | 'remove', data: Record<string, unknown>): string {
  const py = [
    'import sys, json, base64',
    `sys.path.insert(0, ${JSON.stringify(WINDOWS_STANDINS)})`,
    'import vsphere_guest as g',
    "shape, data = sys.argv[1], json.loads(sys.argv[2])",
    "body = {'call': g.TOOLS_CALL_BODY, 'run': g.TOOLS_RUN_BODY, 'remove': g.TOOLS_REMOVE_BODY}[shape]",
    "script = g.ps_standin.PRELUDE.replace('{DATA}', base64.b64encode(json.dumps(data).encode()).decode()) + body + '\\n'",
    "print('-NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand ' + base64.b64encode(script.encode('utf-16le')).decode())",
  ].join('\n');
  return execFileSync('/usr/bin/python3', ['-c', py, shape, JSON.stringify(data)], { encoding: 'utf8' }).trim();
}

function uidOf(name: string): number {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.split(':')[0] === name);
  if (!line) throw new Error(`no local user ${name}`);
  return Number(line.split(':')[2]);
}

async function processesOf(uid: number): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const status = await fs.readFile(`/proc/${e}/status`, 'utf8').catch(() => '');
    const m = /^Uid:\s+(\d+)/m.exec(status);
    const state = /^State:\s+(\S)/m.exec(status);
    if (m && Number(m[1]) === uid && state?.[1] !== 'Z') out.push(`${e}: ${/^Name:\s+(.*)$/m.exec(status)?.[1]}`);
  }
  return out;
}

async function fetchStatus(vc: VcsimHandle, url: string, method: string, body: string): Promise<number> {
  const https = await import('node:https');
  const ca = await fs.readFile(vc.certFile);
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = https.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, ca, headers: { 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

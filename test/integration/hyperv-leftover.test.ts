// A diskspd left running in a Hyper-V guest by a storsweep killed with -9 (docs/decisions.md, "A diskspd
// left by a run killed with -9"). Over a real OpenSSH server whose PATH holds the strict powershell.exe
// stand-in (src/lab/harness/windows): a pass is started in the VM with Start-Process (GUEST_RUN_BODY),
// a real background process of the stand-in's VM (guest_process.py) that outlives the SSH session and
// the storsweep that started it, with its pid and start time in a pidfile in the VM. `cleanup` and
// `run --resume` stop it (Stop-Process) before the first teardown call, and only while
// Get-CimInstance Win32_Process shows that pid with the name diskspd.exe and the recorded start time:
// a process that got the pid since (another name, or the same name started later) is left running.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addGuestProcess, defaultHypervState, GUEST_CREDENTIAL, guestProcesses, hostStartTicks, LAB_VM, readPsLog, seedHypervState, type PsLogEntry } from '../../src/lab/harness/windows/state.ts';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import type { HypervTargetConfig } from '../../src/providers/hyperv/config.ts';
import { ownedGuestFiles } from '../../src/providers/hyperv/powershell.ts';
import { runGuestDiskspdArgv, stopOwnedInGuest } from '../../src/providers/hyperv/provider.ts';
import { parseDiskspdXml } from '../../src/workloads/diskspd.ts';
import { startWindowsStandin, type WindowsStandin } from '../helpers/windows-standin.ts';
import { REPO_ROOT, runCli, type CliResult } from '../helpers/cli.ts';
import { waitFor } from '../helpers/wait.ts';

const target: HypervTargetConfig = { host: 'hv-standin', vmName: 'bench-vm', volumes: { '100': 'D:\\bench' }, allowedDisks: [] };
const OWNER = 'r1tabcdef01';
const EXE = 'C:\\Tools\\diskspd.exe';

/** where the stand-in keeps a file of the VM (guest-fs/<vm>/<drive>/…, lower case as NTFS compares) */
const guestFile = (stateDir: string, win: string) => path.join(stateDir, 'guest-fs', LAB_VM, win[0]!.toLowerCase(), ...win.slice(3).toLowerCase().split('\\'));
const alive = (pid: number) => hostStartTicks(pid) !== null;
const sleeper = (): ChildProcess => spawn('sleep', ['600'], { stdio: 'ignore' });
/** the text of a file in the VM, '' while it is missing */
const readGuestFile = (stateDir: string, win: string) => fs.readFile(guestFile(stateDir, win), 'utf8').catch(() => '');
/** the pidfiles (`<pid> <start time>`) of owned programs in the VM, whatever their owner */
async function ownedPidFiles(stateDir: string): Promise<string[]> {
  const dir = path.dirname(guestFile(stateDir, ownedGuestFiles('any').pid));
  const names = (await fs.readdir(dir).catch(() => [])).filter((n) => /^\.storsweep-run-[a-z0-9]+\.pid$/.test(n));
  const texts = await Promise.all(names.map((n) => fs.readFile(path.join(dir, n), 'utf8').catch(() => '')));
  return texts.filter((t) => /^\d+ \S+$/.test(t));
}

describe('hyperv: an owned diskspd in the guest (stand-in powershell.exe)', () => {
  let hv: WindowsStandin;
  const sleepers: ChildProcess[] = [];
  beforeAll(async () => {
    hv = await startWindowsStandin('ss-hvleft-');
  });
  afterAll(async () => {
    for (const s of sleepers) s.kill('SIGKILL');
    await hv?.stop();
  });

  it('a pass runs as a process of the VM with its pidfile (<pid> <start time>) while it runs; afterwards nothing is left: no process, no file', async () => {
    const state = defaultHypervState() as { vms: Record<string, { drives: Record<string, unknown>; guestDisks: Record<string, string> }>; files: Record<string, unknown> };
    state.vms[LAB_VM]!.drives['SCSI:0:1'] = { Path: 'D:\\bench\\ss-r1-p1-disk.vhdx' };
    state.vms[LAB_VM]!.guestDisks['1'] = 'SCSI:0:1';
    state.files['D:\\bench\\ss-r1-p1-disk.vhdx'] = { type: 'Fixed', size: 8 * 1024 ** 3, fileSize: 8 * 1024 ** 3, block: 0, logical: 512, physical: 4096 };
    await seedHypervState(hv.stateDir, state);
    const runner = await hv.connect();
    const argv = ['-b4K', '-o1', '-t1', '-r', '-w0', '-d2', '-W0', '-L', '-Rxml', '#1'];
    const pass = runGuestDiskspdArgv(runner, target, GUEST_CREDENTIAL, argv, { diskspdPath: EXE, owner: OWNER });
    // while it runs: its process in the VM and its pidfile
    const seen = await waitFor(async () => {
      const procs = await guestProcesses(hv.stateDir);
      return procs.length && (await readGuestFile(hv.stateDir, ownedGuestFiles(OWNER).pid)) ? procs : null;
    }, { what: 'the pass running in the VM, its pidfile written' });
    expect(seen.map((p) => [p.Name, p.CommandLine])).toEqual([['diskspd.exe', `"${EXE}" ${argv.join(' ')}`]]);
    const pidText = await readGuestFile(hv.stateDir, ownedGuestFiles(OWNER).pid);
    expect(pidText).toBe(`${seen[0]!.ProcessId} ${seen[0]!.CreationDate}`);
    expect(pidText).toMatch(/^\d+ \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
    const xml = await pass;
    expect(parseDiskspdXml(xml, 'guest').timeSpans[0]!.read.iops).toBeGreaterThan(0);
    expect(await guestProcesses(hv.stateDir)).toEqual([]);
    expect(alive(seen[0]!.hostPid!)).toBe(false);
    expect(await fs.readdir(path.dirname(guestFile(hv.stateDir, ownedGuestFiles(OWNER).pid)))).toEqual([]);
    // the data sent: the program, its command line, the owner's files; no credential
    const log = (await readPsLog(hv.stateDir)).filter((l) => l.shape === 'guest-run');
    expect(log.map((l) => l.data)).toEqual([{ vmName: LAB_VM, run: { exe: EXE, args: argv.join(' '), ...ownedGuestFiles(OWNER) } }]);
    expect(JSON.stringify(await readPsLog(hv.stateDir))).not.toContain(GUEST_CREDENTIAL.password);
    await runner.close();
  }, 60_000);

  /** the owner's pidfile in the VM names process 4000 started at `start`; the VM runs `impostor` as that pid */
  async function seedPid(start: string, impostor: { Name: string; CreationDate: string }): Promise<ChildProcess> {
    await seedHypervState(hv.stateDir, defaultHypervState());
    const file = guestFile(hv.stateDir, ownedGuestFiles(OWNER).pid);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, `4000 ${start}`);
    const s = sleeper();
    sleepers.push(s);
    await waitFor(() => hostStartTicks(s.pid!) !== null, { what: 'the impostor process started' });
    await addGuestProcess(hv.stateDir, { ProcessId: 4000, ...impostor, CommandLine: null, ExecutablePath: null, hostPid: s.pid! });
    return s;
  }

  const stopCalls = async () => (await readPsLog(hv.stateDir)).flatMap((l) => l.data.calls ?? []).filter((c) => c.cmdlet === 'Stop-Process');

  it('pid reused: a process with the recorded pid but another name, or diskspd.exe started 10 s later, is not stopped; the matching one is', async () => {
    const t0 = '2026-12-02T03:00:00.1234567Z';
    const runner = await hv.connect();
    for (const impostor of [
      { Name: 'notepad.exe', CreationDate: t0 },
      { Name: 'diskspd.exe', CreationDate: '2026-12-02T03:00:10.1234567Z' },
      { Name: 'diskspd.exe', CreationDate: '2026-12-02T02:59:57.9000000Z' },
    ]) {
      const s = await seedPid(t0, impostor);
      const r = await stopOwnedInGuest(runner, target, GUEST_CREDENTIAL, OWNER, EXE, { pollMs: 50 });
      expect(r, JSON.stringify(impostor)).toEqual({ pgid: 4000, outcome: 'not-running' });
      expect(await stopCalls()).toEqual([]);
      expect(alive(s.pid!)).toBe(true);
      expect((await guestProcesses(hv.stateDir)).map((p) => p.ProcessId)).toEqual([4000]);
      // the pidfile names nothing that runs: it goes
      await expect(fs.stat(guestFile(hv.stateDir, ownedGuestFiles(OWNER).pid))).rejects.toThrow(/ENOENT/);
    }
    // the same name, started within 2 s of the recorded time (Win32_Process has microseconds): that is it
    const s = await seedPid(t0, { Name: 'DISKSPD.EXE', CreationDate: '2026-12-02T03:00:01.0000000Z' });
    expect(await stopOwnedInGuest(runner, target, GUEST_CREDENTIAL, OWNER, EXE, { pollMs: 50 })).toEqual({ pgid: 4000, outcome: 'stopped', signal: 'KILL', pids: [4000] });
    expect((await stopCalls()).map((c) => c.params)).toEqual([{ Id: 4000, Force: true }]);
    // Stop-Process -Force: the stand-in kills the host process behind it
    await waitFor(() => !alive(s.pid!), { what: `the stopped process ${s.pid} gone` });
    expect(await guestProcesses(hv.stateDir)).toEqual([]);
    // no pidfile at all: nothing was started for this owner, nothing is looked up
    await seedHypervState(hv.stateDir, defaultHypervState());
    expect(await stopOwnedInGuest(runner, target, GUEST_CREDENTIAL, OWNER, EXE)).toEqual({ pgid: null, outcome: 'not-started' });
    expect((await readPsLog(hv.stateDir)).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet)).toEqual(['Get-Item']);
    await runner.close();
  }, 60_000);

  it('the stand-in answers as Windows does: Stop-Process of a pid no process has or of System, Import-Csv of a missing file; Win32_Process lists System', async () => {
    await seedHypervState(hv.stateDir, defaultHypervState());
    const runner = await hv.connect();
    const { runGuestCalls } = await import('../../src/providers/hyperv/powershell.ts');
    const call = (c: Parameters<typeof runGuestCalls>[3]) => runGuestCalls(runner, LAB_VM, GUEST_CREDENTIAL, c);
    await expect(call([{ cmdlet: 'Stop-Process', params: { Id: 4444, Force: true } }])).rejects.toThrow(/Cannot find a process with the process identifier 4444\./);
    await expect(call([{ cmdlet: 'Stop-Process', params: { Id: 4 } }])).rejects.toThrow(/Cannot stop process "System \(4\)".*Access is denied/);
    await expect(call([{ cmdlet: 'Import-Csv', params: { LiteralPath: 'C:\\ProgramData\\storsweep\\none.pid', Delimiter: ' ', Header: ['ProcessId', 'StartTime'] } }])).rejects.toThrow(/Could not find file/);
    // every Windows lists System Idle Process and System; a CreationDate comes back as ConvertTo-Json (5.1) writes a DateTime
    expect(await call([{ cmdlet: 'Get-CimInstance', params: { ClassName: 'Win32_Process', Filter: 'ProcessId = 4' }, select: ['ProcessId', 'Name'] }])).toEqual([{ ProcessId: 4, Name: 'System' }]);
    await runner.close();
  }, 60_000);
});

// --- end to end: kill -9 during a pass, then cleanup / run --resume on a lab of our own -----------------

interface PsCallAt {
  at: number;
  cmdlet: string;
  params: Record<string, unknown>;
}
/** every cmdlet call the stand-in received, in order, with the index of its powershell.exe invocation */
const callsOf = (log: PsLogEntry[]): PsCallAt[] => log.flatMap((l, at) => (l.data.calls ?? []).map((c) => ({ at, cmdlet: c.cmdlet, params: c.params })));
/** what takes the measured disk away: its drive detached, the VHDX deleted, a pass-through disk back online, a guest volume cleared */
const isTeardown = (c: PsCallAt) =>
  (['Remove-VMHardDiskDrive', 'Remove-Item', 'Clear-Disk'].includes(c.cmdlet) && !(typeof c.params.LiteralPath === 'string' && c.params.LiteralPath.includes('\\ProgramData\\'))) || (c.cmdlet === 'Set-Disk' && c.params.IsOffline === false);

describe('kill -9 during a diskspd pass on lab-hyperv', () => {
  let root: string;
  let lab: LabState;
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-hvkill-'));
    lab = await labUp(root, { vcsim: false });
    // one permutation of the lab's Hyper-V study (playbooks/hyperv-volume-size.yaml), so that a resume is short
    const text = await fs.readFile(path.join(REPO_ROOT, 'playbooks', 'hyperv-volume-size.yaml'), 'utf8');
    const one = text.replace(/sizeGb: \[100, 500, 2000\]/, 'sizeGb: [100]').replace(/^repeat: 3$/m, 'repeat: 1');
    expect(one).not.toBe(text);
    await fs.writeFile(path.join(root, 'hv-one.yaml'), one);
    // and one test of it, 30 s long, no pre-fill: killed in that pass, the resume looks well before it would end by itself
    const long = one.replace(/profile: \[cdm5\]/, 'profile: ["4k 100% read 100% random"]').replace(/^ {2}runtimeSec: 1\b.*$/m, '  runtimeSec: 30\n  prefill: false');
    expect(long).toMatch(/runtimeSec: 30\n {2}prefill: false/);
    await fs.writeFile(path.join(root, 'hv-long.yaml'), long);
  }, 120_000);
  afterAll(async () => {
    // nothing of a failed test keeps running
    for (const p of await guestProcesses(lab.standinState).catch(() => [])) if (p.hostPid) process.kill(p.hostPid, 'SIGKILL');
    if (lab) await stopPid(lab.ssh.pid);
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  /**
   * runs a one-permutation playbook and kills storsweep (-9) during the first diskspd pass whose
   * command line matches `pass`, once the VM has its pidfile (what cleanup and resume find it by);
   * returns the run directory
   */
  async function killedRun(playbook: string, out: string, pass: RegExp, extra: string[]): Promise<{ runDir: string; diskspd: { ProcessId: number; hostPid: number } }> {
    let pid = 0;
    let seen: Awaited<ReturnType<typeof guestProcesses>> = [];
    let ended = false;
    const watch = (async () => {
      const found = await waitFor(async () => {
        if (ended) return 'ended';
        const procs = (await guestProcesses(lab.standinState).catch(() => [])).filter((p) => pass.test(p.CommandLine ?? ''));
        if (!procs.length || !pid) return null;
        const pids = (await ownedPidFiles(lab.standinState)).map((t) => Number(t.split(' ')[0]));
        if (!pids.includes(procs[0]!.ProcessId)) return null;
        seen = procs;
        return 'seen';
      }, { what: `a diskspd pass matching ${String(pass)} with its pidfile`, timeoutMs: 240_000, intervalMs: 50 });
      if (found === 'seen') process.kill(pid, 'SIGKILL');
    })();
    const cli: CliResult = await runCli(['run', path.join(root, playbook), '-i', labPaths(root).inventory, '--json', '--out', out, ...extra], {
      cwd: root,
      timeoutMs: 240_000,
      onSpawn: (p) => (pid = p),
    }).finally(() => (ended = true));
    await watch;
    expect(seen.length, `no measured diskspd pass was seen in the VM; run exit ${cli.code}: ${cli.stderr.slice(-2000)}`).toBe(1);
    expect(cli.code).toBeNull();
    const [dir] = await fs.readdir(out);
    return { runDir: path.join(out, dir!), diskspd: { ProcessId: seen[0]!.ProcessId, hostPid: seen[0]!.hostPid! } };
  }

  /** the diskspd of the dead run still runs in the VM; what the next command sends stops it before anything goes */
  async function expectStoppedBeforeTeardown(from: number, diskspd: { ProcessId: number; hostPid: number }) {
    const calls = callsOf((await readPsLog(lab.standinState)).slice(from));
    const stop = calls.findIndex((c) => c.cmdlet === 'Stop-Process');
    const teardown = calls.findIndex(isTeardown);
    const shown = calls.map((c) => c.cmdlet).join(' ');
    expect(stop, shown).toBeGreaterThanOrEqual(0);
    expect(calls[stop]!.params).toEqual({ Id: diskspd.ProcessId, Force: true });
    expect(teardown, shown).toBeGreaterThan(stop);
    // between the stop and the first teardown call, the VM was asked for that pid and no longer had it running
    const looks = calls.slice(stop + 1, teardown).filter((c) => c.cmdlet === 'Get-CimInstance' && c.params.Filter === `ProcessId = ${diskspd.ProcessId}`);
    expect(looks.length, shown).toBeGreaterThan(0);
    expect(alive(diskspd.hostPid)).toBe(false);
    expect(await guestProcesses(lab.standinState)).toEqual([]);
  }

  it('`cleanup` stops the diskspd the dead run left in the VM (by its pidfile: pid, name, start time) before it detaches and deletes the disk', async () => {
    // during a measured pass (60 s long, no pre-fill)
    const { runDir, diskspd } = await killedRun('hv-one.yaml', path.join(root, 'runs-cleanup'), / -d60 /, ['--set', 'settings.runtimeSec=60', '--set', 'settings.prefill=false']);
    // nothing stopped it: the dead run's diskspd still runs in the VM
    expect((await guestProcesses(lab.standinState)).map((p) => p.ProcessId)).toEqual([diskspd.ProcessId]);
    expect(alive(diskspd.hostPid)).toBe(true);
    const from = (await readPsLog(lab.standinState)).length;
    const cl = await runCli(['cleanup', runDir], { cwd: root, timeoutMs: 180_000 });
    expect(cl.code, cl.stderr + cl.stdout).toBe(0);
    expect(cl.stdout).toMatch(new RegExp(`^stopped diskspd left running on lab-hyperv \\(pids ${diskspd.ProcessId}, SIGKILL\\)$`, 'm'));
    await expectStoppedBeforeTeardown(from, diskspd);
    const status = JSON.parse((await runCli(['status', runDir, '--json'], { cwd: root })).stdout) as { leftovers: unknown[] };
    expect(status.leftovers).toEqual([]);
  }, 400_000);

  it('`run --resume` stops it before it tears the interrupted permutation down, then finishes the run; no guest process is left', async () => {
    // during its one 30 s pass, so that the resumed run is short
    const { runDir, diskspd } = await killedRun('hv-long.yaml', path.join(root, 'runs-resume'), / -d30 /, []);
    expect(alive(diskspd.hostPid)).toBe(true);
    const from = (await readPsLog(lab.standinState)).length;
    const r = await runCli(['run', '--resume', runDir, '--json'], { cwd: root, timeoutMs: 300_000 });
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    await expectStoppedBeforeTeardown(from, diskspd);
    const status = JSON.parse((await runCli(['status', runDir, '--json'], { cwd: root })).stdout) as { permutations: { status: string }[]; leftovers: unknown[] };
    expect(status.leftovers).toEqual([]);
    expect(status.permutations.every((p) => p.status === 'done')).toBe(true);
  }, 400_000);
});

// The benchmark through vSphere alone: playbooks/linux-guest-tools.yaml and windows-guest-tools.yaml
// run on the lab (`labUp`: the vcsim harness with its guest operations, a local user as the Linux
// guest, the Windows stand-ins as the Windows guest) through VMware Tools guest operations only.
// Asserted from outside our code: the lab's sshd accepted no connection during the runs (and the
// tools targets name no sshHost), the harness logged the guest operations on each VM, records carry
// tool.name fio resp. diskspd, records name the disk measured (its WWN, found in the guest) and carry
// the host's figures, the guest passwords are in no file of the run directories (also not a wrong
// one, which the guest refuses: InvalidGuestLogin), and a run interrupted (SIGINT) while the guest's
// fio or diskspd runs leaves no process in the guest (the harness's own process list, which includes
// what the started program spawned). A run killed with -9 cannot stop anything: its fio or diskspd
// runs on in the guest until `cleanup` (or `run --resume`) stops it through guest operations, before
// the disk goes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { labPaths, TOOLS_LINUX_VM, TOOLS_WINDOWS_VM, TOOLS_WINDOWS_WORKDIR } from '../../src/lab/lab.ts';
import { getProfile } from '../../src/workloads/profiles.ts';
import { REPO_ROOT, runCli, stackTraceLines } from '../helpers/cli.ts';
import { toolsWindowsPidFiles } from '../helpers/tools-guest.ts';
import { waitFor } from '../helpers/wait.ts';
import { runLabPlaybook, useEmbeddedLab } from '../helpers/embedded-lab.ts';

interface RecordLine {
  permutationId: string;
  test: { id: string };
  iops: number;
  tool: { name: string };
  metadata: Record<string, unknown>;
  host?: Record<string, unknown>;
}


async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const sshdLog = () => fs.readFile(path.join(labPaths(lab.root).sshd, 'sshd.log'), 'utf8').catch(() => '');
const accepted = (log: string) => log.split('\n').filter((l) => /Accepted |Connection from /.test(l)).length;

// a measured pass: fio with a test's job name (`fio --version` of the fingerprint and `command -v fio`
// are fio words too, but run before any pass; the pre-fill's job is storsweep-prefill)
const FIO = /(^|[\s/'"])fio\s+--name=(?!storsweep-prefill)/;
const DISKSPD = /(^|[\s\\/'"])diskspd(\.exe)?([\s'"]|$)/i;
// a measured diskspd pass as the guest lists it (`"…\diskspd.exe" … -L … #N`), not the fingerprint's `diskspd -?`
const DISKSPD_PASS = /diskspd\.exe"? .* -L( |$)/i;

/** A shipped playbook on the lab's inventory (test/helpers/embedded-lab.ts runLabPlaybook). */
const runPlaybook = (file: string, extra: string[] = [], onSpawn?: (pid: number) => void, timeoutMs = 300_000) =>
  runLabPlaybook<RecordLine>(lab.root, path.join(REPO_ROOT, 'playbooks', file), { extra, ...(onSpawn ? { onSpawn } : {}), timeoutMs });

async function expectNoPassword(runDir: string, passwords: string[]): Promise<void> {
  const files = await filesUnder(runDir);
  expect(files.length).toBeGreaterThan(3);
  for (const f of files) {
    const bytes = await fs.readFile(f);
    for (const pw of passwords) expect(bytes.includes(Buffer.from(pw)), `${f} holds a guest password`).toBe(false);
  }
}

const lab = useEmbeddedLab('ss-gtools-', { vcsim: true });

const passwords = async () => [(await fs.readFile(labPaths(lab.root).toolsLinuxPassword, 'utf8')).trim(), (await fs.readFile(labPaths(lab.root).toolsWindowsPassword, 'utf8')).trim()];

describe('the tools targets of the lab inventory', () => {
  it('name no sshHost: nothing of theirs can reach a guest over SSH', async () => {
    const inv = await fs.readFile(labPaths(lab.root).inventory, 'utf8');
    for (const t of ['lab-vcenter-tools-linux', 'lab-vcenter-tools-windows']) {
      const entry = inv.slice(inv.indexOf(`  ${t}:\n`)).split(/\n {2}\S/)[0]!;
      expect(entry).toContain('via: tools');
      expect(entry).not.toMatch(/sshHost/);
    }
  });
});

const SHIPPED = [
  { file: 'linux-guest-tools.yaml', vm: TOOLS_LINUX_VM, tool: 'fio' },
  { file: 'windows-guest-tools.yaml', vm: TOOLS_WINDOWS_VM, tool: 'diskspd' },
];
// Both shipped playbooks run at once, as a lab user could run them: each its own VM, guest and run
// directory on the one simulator (one after the other they took the two runs' sum). Everything
// below is read per VM; the sshd's count spans both runs, so "no connection" holds for each.
const shipped = new Map<string, Awaited<ReturnType<typeof runPlaybook>>>();
let sshBefore: number;
let sshAfter: number;
let calls: Array<{ method: string; vm: string }>;

describe.each(SHIPPED)('playbooks/$file', ({ file, vm, tool }) => {
  let run: Awaited<ReturnType<typeof runPlaybook>>;
  beforeAll(async () => {
    if (!shipped.size) {
      sshBefore = accepted(await sshdLog());
      const done = await Promise.all(SHIPPED.map((s) => runPlaybook(s.file)));
      SHIPPED.forEach((s, i) => shipped.set(s.file, done[i]!));
      sshAfter = accepted(await sshdLog());
      calls = (await lab.control.guestOps()).calls;
    }
    run = shipped.get(file)!;
  }, 360_000);

  it('runs every permutation and test through guest operations, with the right tool', () => {
    expect(run.cli.code, run.cli.stderr).toBe(0);
    expect(stackTraceLines(run.cli.stderr)).toEqual([]);
    const tests = getProfile('cdm8-default')!.tests.length;
    expect(run.records).toHaveLength(2 * tests);
    for (const r of run.records) {
      expect(r.tool.name).toBe(tool);
      expect(r.iops).toBeGreaterThan(0);
    }
    // the guest operations the harness received on that VM: programs started, watched, output read back
    const mine = calls.filter((c) => c.vm === vm).map((c) => c.method);
    for (const m of ['StartProgramInGuest', 'ListProcessesInGuest', 'InitiateFileTransferFromGuest']) expect(mine).toContain(m);
  });

  it('names in every record the disk measured, by the WWN found in the guest, and the filesystem; every record carries the host\'s figures', () => {
    expect(run.records.length).toBeGreaterThan(0);
    const wwns = new Set<string>();
    for (const r of run.records) {
      const m = r.metadata;
      expect(String(m.deviceWwn)).toMatch(/^6000c29[0-9a-f]{25}$/);
      wwns.add(String(m.deviceWwn));
      expect(m.filesystem).toBe('raw');
      // Linux: the loop device the link led to; Windows: Get-Disk's number and the serial it reported (the WWN)
      if (tool === 'fio') expect(m).toMatchObject({ device: expect.stringMatching(/^\/dev\/loop\d+$/), testPath: m.device });
      else expect(m).toMatchObject({ guestDisk: expect.any(Number), guestDiskId: expect.stringMatching(new RegExp(`^${String(m.deviceWwn)}$`, 'i')) });
      // a vSphere run: what PerformanceManager saw of the same disk beside the guest's figures (synthetic series)
      expect(r.host, JSON.stringify(r.host)).toMatchObject({ source: 'vsphere-perf', latencyUs: expect.any(Number), virtualDisk: { instance: expect.stringMatching(/^scsi\d+:\d+$/) } });
    }
    // one disk per permutation, each its own
    expect(wwns.size).toBe(new Set(run.records.map((r) => r.permutationId)).size);
  });

  it('runs diskspd as CrystalDiskMark passes it (-S, never -Sh) and never -c on the raw disk: what the guest was told to run', async (ctx) => {
    if (tool !== 'diskspd') return ctx.skip('diskspd only');
    // every program StartProgramInGuest ran on that VM (kept 5 min after it ended): powershell.exe with
    // the run script (-EncodedCommand: UTF-16LE), whose data ($p: exe, args) is base64 JSON in it
    const started = (await lab.control.guestOps()).processes.filter((p) => p.vm === vm && !p.child && /powershell\.exe/i.test(p.name));
    const runs = started.flatMap((p) => {
      const script = Buffer.from(p.cmdLine.trim().split(/\s+/).pop()!, 'base64').toString('utf16le');
      const data = /FromBase64String\('([A-Za-z0-9+/=]+)'\)/.exec(script);
      const d = data ? (JSON.parse(Buffer.from(data[1]!, 'base64').toString('utf8')) as { exe?: string; args?: string }) : {};
      return d.exe && DISKSPD.test(d.exe) ? [d.args ?? ''] : [];
    });
    // once per run, the fingerprint reads diskspd's version from its usage banner (diskspd -?)
    expect(runs.filter((a) => a === '-?')).toHaveLength(1);
    const ran = runs.filter((a) => a !== '-?');
    const passes = ran.filter((a) => / -L( |$)/.test(a));
    // one measured pass per test (passes: 1, no warm-up pass in the lab timing), the rest the fill
    expect(passes).toHaveLength(run.records.length);
    expect(ran.length - passes.length).toBeGreaterThanOrEqual(2);
    for (const a of ran) {
      expect(a).toMatch(/(^| )-S( |$)/);
      expect(a).not.toMatch(/(^| )-S[a-z]/);
      expect(a).not.toMatch(/(^| )-c\d/);
      expect(a).toMatch(/(^| )-f16M( |$)/);
      expect(a).toMatch(/ #\d+$/);
    }
  });

  it('names the tool\'s version, the ESXi product and VMware Tools in the fingerprint the report shows', async () => {
    const md = await fs.readFile(path.join(run.runDir, 'report.md'), 'utf8');
    expect(md).toMatch(tool === 'fio' ? /\| guest\.tool \| fio-\d/ : /\| guest\.tool \| diskspd \d/);
    for (const k of ['vsphere.product', 'esxi.product', 'vmwareTools.version', 'vm.guestFullName']) expect(md).toContain(`| ${k} |`);
    // a Windows guest's own edition and build (Get-CimInstance Win32_OperatingSystem in the guest: the lab's Windows Server 2022)
    if (tool === 'diskspd') expect(md).toMatch(/\| guest\.os \| Microsoft Windows Server 2022 Datacenter \|[\s\S]*\| guest\.osBuild \| 10\.0\.20348 \|/);
  });

  it('opens no SSH connection to any guest (the lab sshd accepted none during the run)', () => {
    expect(sshAfter).toBe(sshBefore);
  });

  it('keeps the guest passwords out of every file of the run directory', async () => {
    await expectNoPassword(run.runDir, await passwords());
  });

  it('leaves no process running in the guest', async () => {
    expect((await lab.control.guestProcesses()).filter((p) => p.vm === vm)).toEqual([]);
  });
});

describe('a wrong guest password', () => {
  it('is refused by the guest (InvalidGuestLogin), said plainly; nothing measured, the disk removed, neither password in the run directory', async () => {
    const wrong = `wrong-${Math.random().toString(36).slice(2, 12)}`;
    const labDir = path.dirname(labPaths(lab.root).inventory);
    await fs.writeFile(path.join(labDir, 'wrong-guest-password'), `${wrong}\n`, { mode: 0o600 });
    const inv = (await fs.readFile(labPaths(lab.root).inventory, 'utf8')).replace('${file:vcenter-linux-guest-password}', '${file:wrong-guest-password}');
    expect(inv).toContain('${file:wrong-guest-password}');
    const invFile = path.join(labDir, 'inventory-wrong-password.yaml');
    await fs.writeFile(invFile, inv);
    const out = path.join(lab.root, 'wrong-password-runs');
    const cli = await runCli(['run', path.join(REPO_ROOT, 'playbooks', 'linux-guest-tools.yaml'), '-i', invFile, '--out', out, '--json'], { cwd: lab.root, timeoutMs: 240_000 });
    expect(cli.code, cli.stderr).toBe(1);
    expect(stackTraceLines(cli.stderr)).toEqual([]);
    expect(cli.stderr).toMatch(/InvalidGuestLogin/);
    const [dir] = await fs.readdir(out);
    const runDir = path.join(out, dir!);
    const status = JSON.parse((await runCli(['status', runDir, '--json'], { cwd: lab.root })).stdout) as { permutations: Array<{ status: string; reason?: string }>; leftovers: unknown[] };
    expect(status.permutations.map((p) => p.status)).toContain('failed');
    expect(status.leftovers).toEqual([]);
    await expect(fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8').catch(() => '')).resolves.toBe('');
    expect((await lab.control.guestProcesses()).filter((p) => p.vm === TOOLS_LINUX_VM)).toEqual([]);
    await expectNoPassword(runDir, [wrong, ...(await passwords())]);
  }, 300_000);
});

/**
 * Runs `file` with long passes and no pre-fill and, once the guest of `vm` lists the tool (what
 * StartProgramInGuest started, or what that spawned) in a measured pass, sends the CLI `signal`.
 * In the Windows guest the pass must also have its pidfile (what a stop and `cleanup` find diskspd
 * by: PowerShell writes it once Start-Process returned). Watches until then or until the run ends
 * (on a loaded machine the disk steps before the first pass can take long).
 */
async function interruptDuringTool(file: string, vm: string, tool: RegExp, signal: NodeJS.Signals, extra: string[] = []) {
  let pid = 0;
  let sawTool = false;
  // what the watcher last saw, for the failure message (a run that never showed the tool, a list that failed)
  let lastSeen = '(nothing yet)';
  let ended = false;
  const watch = (async () => {
    const found = await waitFor(async () => {
      if (ended) return 'ended';
      const all = await lab.control.guestProcesses().catch((e: unknown) => {
        lastSeen = `guestProcesses failed: ${String(e)}`;
        return [];
      });
      if (all.length) lastSeen = JSON.stringify(all.map((p) => ({ vm: p.vm, name: p.name, cmdLine: p.cmdLine }))).slice(0, 2000);
      // the harness lists what StartProgramInGuest started (the sh wrapper, powershell.exe), as
      // open-vm-tools' ListProcessesEx does for its own children, and what those spawned; the tool
      // is a word of that command line (' fio --name=…'), not its start
      const procs = all.filter((p) => p.vm === vm && (tool.test(p.name) || tool.test(p.cmdLine)));
      if (!pid || !procs.length) return null;
      if (vm === TOOLS_WINDOWS_VM) {
        const recorded = (await toolsWindowsPidFiles(labPaths(lab.root).toolsGuests, vm, TOOLS_WINDOWS_WORKDIR)).map((r) => r.pid);
        if (!procs.some((p) => recorded.includes(p.pid))) return null;
      }
      return 'seen';
    }, { what: `${String(tool)} in the guest of ${vm}`, timeoutMs: 240_000, intervalMs: 100 });
    if (found === 'seen') {
      sawTool = true;
      process.kill(pid, signal);
    }
  })();
  const run = await runPlaybook(file, ['--set', 'settings.runtimeSec=60', '--set', 'settings.prefill=false', ...extra], (p) => (pid = p), 240_000).finally(() => (ended = true));
  await watch;
  expect(sawTool, `the guest never listed ${String(tool)}; last seen: ${lastSeen}; run exit ${run.cli.code}: ${run.cli.stderr.slice(-2000)}`).toBe(true);
  return run;
}


// The two SIGINT cases run at once: each its own VM, guest and run, and each case reads only its
// own (one after the other they took their sum). The kill -9 cases stay one after the other: the
// Windows one reads the order of the calls that follow its cleanup in the harness's call log.
let sigintRuns: Record<'fio' | 'diskspd', ReturnType<typeof interruptDuringTool>> | undefined;
function sigintRun(which: 'fio' | 'diskspd'): ReturnType<typeof interruptDuringTool> {
  if (!sigintRuns) {
    sigintRuns = {
      fio: interruptDuringTool('linux-guest-tools.yaml', TOOLS_LINUX_VM, FIO, 'SIGINT'),
      diskspd: interruptDuringTool('windows-guest-tools.yaml', TOOLS_WINDOWS_VM, DISKSPD, 'SIGINT'),
    };
    // each is awaited by its own case; until then a failure of one is not an unhandled rejection
    for (const p of Object.values(sigintRuns)) p.catch(() => undefined);
  }
  return sigintRuns[which];
}

describe('interrupted while the guest runs its tool', () => {
  it('SIGINT during fio: the run stops (exit 130) and the guest lists no process of it afterwards', async () => {
    const run = await sigintRun('fio');
    expect(run.cli.code, run.cli.stderr.slice(-4000)).toBe(130);
    expect((await lab.control.guestProcesses()).filter((p) => p.vm === TOOLS_LINUX_VM)).toEqual([]);
    await expectNoPassword(run.runDir, await passwords());
  }, 300_000);

  it('SIGINT during diskspd: the run stops (exit 130); PowerShell and the diskspd it started are both gone from the guest', async () => {
    const run = await sigintRun('diskspd');
    expect(run.cli.code, run.cli.stderr.slice(-4000)).toBe(130);
    expect((await lab.control.guestProcesses()).filter((p) => p.vm === TOOLS_WINDOWS_VM)).toEqual([]);
    await expectNoPassword(run.runDir, await passwords());
  }, 300_000);

  it('kill -9 during fio: the guest\'s fio outlives storsweep; `cleanup` stops it through guest operations, then removes the disk', async () => {
    const out = path.join(lab.root, 'killed-runs');
    const run = await interruptDuringTool('linux-guest-tools.yaml', TOOLS_LINUX_VM, FIO, 'SIGKILL', ['--out', out]);
    expect(run.cli.code).toBeNull();
    const [dir] = await fs.readdir(out);
    const runDir = path.join(out, dir!);
    // nothing stopped it: the dead run's fio still runs in the guest
    const listed = await lab.control.guestProcesses();
    const orphans = listed.filter((p) => p.vm === TOOLS_LINUX_VM && (FIO.test(p.name) || FIO.test(p.cmdLine)));
    expect(orphans.length, JSON.stringify(listed)).toBeGreaterThan(0);
    const sshBefore = accepted(await sshdLog());
    const cl = await runCli(['cleanup', runDir], { cwd: lab.root, timeoutMs: 180_000 });
    expect(cl.code, cl.stderr + cl.stdout).toBe(0);
    expect(cl.stdout).toMatch(/^stopped fio left running on lab-vcenter-tools-linux \(pids [\d, ]+, SIG(TERM|KILL)\)$/m);
    expect((await lab.control.guestProcesses()).filter((p) => p.vm === TOOLS_LINUX_VM)).toEqual([]);
    // the disk went after the stop, and nothing is left for a later cleanup; still no SSH to the guest
    const status = JSON.parse((await runCli(['status', runDir, '--json'], { cwd: lab.root })).stdout) as { leftovers: unknown[] };
    expect(status.leftovers).toEqual([]);
    expect(accepted(await sshdLog())).toBe(sshBefore);
    await expectNoPassword(runDir, await passwords());
  }, 400_000);

  it('kill -9 during diskspd: the guest\'s diskspd outlives storsweep; `cleanup` stops it (by the run\'s pidfile in the guest) before it removes the disk', async () => {
    const out = path.join(lab.root, 'killed-windows-runs');
    const run = await interruptDuringTool('windows-guest-tools.yaml', TOOLS_WINDOWS_VM, DISKSPD_PASS, 'SIGKILL', ['--out', out]);
    expect(run.cli.code).toBeNull();
    const [dir] = await fs.readdir(out);
    const runDir = path.join(out, dir!);
    const diskspd = (p: { vm: string; name: string }) => p.vm === TOOLS_WINDOWS_VM && /^diskspd\.exe$/i.test(p.name);
    // nothing stopped it: the dead run's diskspd (and the PowerShell waiting for it) still run in the guest
    const listed = await lab.control.guestProcesses();
    expect(listed.filter(diskspd).length, JSON.stringify(listed)).toBe(1);
    const logFrom = (await lab.control.log()).length;
    const cl = await runCli(['cleanup', runDir], { cwd: lab.root, timeoutMs: 180_000 });
    expect(cl.code, cl.stderr + cl.stdout).toBe(0);
    expect(cl.stdout).toMatch(/^stopped diskspd left running on lab-vcenter-tools-windows \(pids \d+, SIGKILL\)$/m);
    expect((await lab.control.guestProcesses()).filter((p) => p.vm === TOOLS_WINDOWS_VM)).toEqual([]);
    // the order vSphere saw: the guest process ended before the disk was detached or deleted
    const calls = (await lab.control.log()).slice(logFrom);
    const stop = calls.findIndex((c) => c.method === 'TerminateProcessInGuest');
    const teardown = calls.findIndex((c) => (c.method === 'ReconfigVM_Task' && (c.devices ?? []).some((d) => d.startsWith('remove '))) || /^Delete/.test(c.method));
    expect(stop, calls.map((c) => c.method).join(' ')).toBeGreaterThanOrEqual(0);
    expect(teardown, calls.map((c) => c.method).join(' ')).toBeGreaterThan(stop);
    const status = JSON.parse((await runCli(['status', runDir, '--json'], { cwd: lab.root })).stdout) as { leftovers: unknown[] };
    expect(status.leftovers).toEqual([]);
    await expectNoPassword(runDir, await passwords());
  }, 400_000);
});

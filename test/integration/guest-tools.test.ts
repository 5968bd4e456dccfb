// The benchmark through vSphere alone: playbooks/linux-guest-tools.yaml and windows-guest-tools.yaml
// run on the lab (`labUp`: the vcsim harness with its guest operations, a local user as the Linux
// guest, the Windows stand-ins as the Windows guest) through VMware Tools guest operations only.
// Asserted from outside our code: the lab's sshd accepted no connection during the runs (and the
// tools targets name no sshHost), the harness logged the guest operations on each VM, records carry
// tool.name fio resp. diskspd, the guest passwords are in no file of the run directories, and a run
// interrupted (SIGINT) while the guest's fio runs leaves no process in the guest (the harness's own
// process list, which includes what the started program spawned).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, labUp, TOOLS_LINUX_VM, TOOLS_WINDOWS_VM, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { stopVcsimPid, vcsimControl, type VcsimControl } from '../../src/lab/vcsim.ts';
import { getProfile } from '../../src/workloads/profiles.ts';
import { REPO_ROOT, runCli, stackTraceLines, type CliResult } from './helpers/cli.ts';

interface RecordLine {
  permutationId: string;
  test: { id: string };
  iops: number;
  tool: { name: string };
  metadata: Record<string, unknown>;
}

let root: string;
let lab: LabState;
let control: VcsimControl;

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const sshdLog = () => fs.readFile(path.join(labPaths(root).sshd, 'sshd.log'), 'utf8').catch(() => '');
const accepted = (log: string) => log.split('\n').filter((l) => /Accepted |Connection from /.test(l)).length;

async function runPlaybook(file: string, extra: string[] = [], onSpawn?: (pid: number) => void, timeoutMs = 300_000): Promise<{ cli: CliResult; runDir: string; records: RecordLine[] }> {
  const cli = await runCli(['run', path.join(REPO_ROOT, 'playbooks', file), '-i', labPaths(root).inventory, '--json', ...extra], { cwd: root, timeoutMs, ...(onSpawn ? { onSpawn } : {}) });
  const last = cli.stdout.trim().split('\n').pop() ?? '{}';
  let runDir = '';
  try {
    runDir = path.resolve(root, (JSON.parse(last) as { runDir?: string }).runDir ?? '');
  } catch {
    runDir = '';
  }
  const text = runDir ? await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8').catch(() => '') : '';
  return { cli, runDir, records: text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as RecordLine) };
}

async function expectNoPassword(runDir: string, passwords: string[]): Promise<void> {
  const files = await filesUnder(runDir);
  expect(files.length).toBeGreaterThan(3);
  for (const f of files) {
    const bytes = await fs.readFile(f);
    for (const pw of passwords) expect(bytes.includes(Buffer.from(pw)), `${f} holds a guest password`).toBe(false);
  }
}

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-gtools-'));
  // the Linux lab guest is a local user: its work directory under this root must be reachable
  await fs.chmod(root, 0o755);
  lab = await labUp(root, { vcsim: true });
  control = vcsimControl({ url: lab.vcsim!.url, certFile: lab.vcsim!.certFile });
}, 300_000);

afterAll(async () => {
  if (lab?.vcsim) await stopVcsimPid(lab.vcsim.pid);
  if (lab) await stopPid(lab.ssh.pid);
  if (root) await fs.rm(root, { recursive: true, force: true });
}, 120_000);

const passwords = async () => [(await fs.readFile(labPaths(root).toolsLinuxPassword, 'utf8')).trim(), (await fs.readFile(labPaths(root).toolsWindowsPassword, 'utf8')).trim()];

describe('the tools targets of the lab inventory', () => {
  it('name no sshHost: nothing of theirs can reach a guest over SSH', async () => {
    const inv = await fs.readFile(labPaths(root).inventory, 'utf8');
    for (const t of ['lab-vcenter-tools-linux', 'lab-vcenter-tools-windows']) {
      const entry = inv.slice(inv.indexOf(`  ${t}:\n`)).split(/\n {2}\S/)[0]!;
      expect(entry).toContain('via: tools');
      expect(entry).not.toMatch(/sshHost/);
    }
  });
});

describe.each([
  { file: 'linux-guest-tools.yaml', vm: TOOLS_LINUX_VM, tool: 'fio' },
  { file: 'windows-guest-tools.yaml', vm: TOOLS_WINDOWS_VM, tool: 'diskspd' },
])('playbooks/$file', ({ file, vm, tool }) => {
  let run: Awaited<ReturnType<typeof runPlaybook>>;
  let sshBefore: number;
  let sshAfter: number;
  let calls: Array<{ method: string; vm: string }>;
  beforeAll(async () => {
    sshBefore = accepted(await sshdLog());
    run = await runPlaybook(file);
    sshAfter = accepted(await sshdLog());
    calls = (await control.guestOps()).calls;
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

  it('opens no SSH connection to any guest (the lab sshd accepted none during the run)', () => {
    expect(sshAfter).toBe(sshBefore);
  });

  it('keeps the guest passwords out of every file of the run directory', async () => {
    await expectNoPassword(run.runDir, await passwords());
  });

  it('leaves no process running in the guest', async () => {
    expect((await control.guestProcesses()).filter((p) => p.vm === vm)).toEqual([]);
  });
});

describe('interrupted while the guest runs fio', () => {
  it('SIGINT: the run stops (exit 130) and the guest lists no process of it afterwards', async () => {
    let pid = 0;
    let sawFio = false;
    // what the watcher last saw, for the failure message (a run that never showed fio, a list that failed)
    let lastSeen = '(nothing yet)';
    let ended = false;
    // watches until fio shows or the run ends (not a fixed number of polls: on a loaded machine the
    // disk steps before the first pass can outlast one)
    const watch = (async () => {
      while (!sawFio && !ended) {
        const all = await control.guestProcesses().catch((e: unknown) => {
          lastSeen = `guestProcesses failed: ${String(e)}`;
          return [];
        });
        const procs = all.filter((p) => p.vm === TOOLS_LINUX_VM);
        if (all.length) lastSeen = JSON.stringify(all.map((p) => ({ vm: p.vm, name: p.name, cmdLine: p.cmdLine }))).slice(0, 2000);
        // the harness lists what StartProgramInGuest started (the sh wrapper), as open-vm-tools' ListProcessesEx
        // does for its own children; fio is a word of that command line (' fio --name=…'), not its start
        if (procs.some((p) => p.name === 'fio' || /(^|[\s/'"])fio(\s|$)/.test(p.cmdLine))) {
          sawFio = true;
          // a moment into the measured pass, then Ctrl-C
          await new Promise((r) => setTimeout(r, 1500));
          process.kill(pid, 'SIGINT');
          return;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const run = await runPlaybook('linux-guest-tools.yaml', ['--set', 'settings.runtimeSec=60', '--set', 'settings.prefill=false'], (p) => (pid = p), 240_000).finally(() => (ended = true));
    await watch;
    expect(sawFio, `the guest never listed fio; last seen: ${lastSeen}; run exit ${run.cli.code}: ${run.cli.stderr.slice(-2000)}`).toBe(true);
    expect(run.cli.code, run.cli.stderr.slice(-4000)).toBe(130);
    expect((await control.guestProcesses()).filter((p) => p.vm === TOOLS_LINUX_VM)).toEqual([]);
    await expectNoPassword(run.runDir, await passwords());
  }, 300_000);
});

// vm.count on Hyper-V (issue 32 item 1, "differencing disks of a template VHDX"), on the lab
// (`labUp`: real OpenSSH, the strict powershell.exe stand-in whose New-VHD -Differencing, New-VM,
// Start-VM, Stop-VM and Remove-VM follow Hyper-V's documented rules: hyperv_vms.py). Checked in the
// stand-in's own state afterwards: no VM and no VHDX of the run left, the template byte-for-byte as
// before and still nobody's parent; member records per VM and one aggregate per pass; and a run
// killed with -9 while diskspd measures in both members, then `run --resume`, leaves nothing either.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { guestProcesses, LAB_TEMPLATE, LAB_VM, readHypervState, readPsLog } from '../../src/lab/harness/windows/state.ts';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { runCli, stackTraceLines } from '../helpers/cli.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { runCliWhen } from '../helpers/vsphere-lab.ts';

const playbook = (counts: string, runtimeSec: number) =>
  [
    'name: hyperv-vm-count',
    'target: lab-hyperv',
    'matrix:',
    '  volume:',
    '    sizeGb: [100]',
    '  disk:',
    '    format: [vhdx-dynamic]',
    '    sizeGb: [1]',
    '  vm:',
    `    count: ${counts}`,
    '  workload:',
    '    profile: ["4k 0% read 100% random"]',
    // no pre-fill: a fresh dynamic VHDX per member, the write test measures it as it comes
    ...quickSettings({ fileSize: '16m', runtimeSec, prefill: false }),
    '',
  ].join('\n');

interface Rec {
  axes: Record<string, unknown>;
  iops: number | null;
  latencyUs?: { mean: number | null; p99: number | null } | null;
  metadata: Record<string, unknown>;
  vm?: { role: string; count: number; index?: number; name?: string; startSkewMs?: number };
}
interface HvState {
  vms: Record<string, { state?: string; drives: Record<string, { Path?: string }> }>;
  files: Record<string, Record<string, unknown>>;
}

let root: string;
let lab: LabState;
let templateBefore: Record<string, unknown>;
const state = async () => (await readHypervState(lab.standinState)) as unknown as HvState;
const records = async (runDir: string): Promise<Rec[]> => (await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
/** how many calls the stand-in has logged so far */
const readPsLogSync = (dir: string) => readFileSync(path.join(dir, 'commands.jsonl'), 'utf8').split('\n').filter(Boolean);
const isOurs = (name: string) => /(^|\\)ss-/.test(name);

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-hvvmc-'));
  lab = await labUp(root, { vcsim: false });
  templateBefore = (await state()).files[LAB_TEMPLATE]!;
}, 300_000);
afterAll(async () => {
  if (lab) await stopPid(lab.ssh.pid);
  if (root) await fs.rm(root, { recursive: true, force: true });
});

/** Nothing of any run on the host: only the lab's VM, only the template among the files, the template as it was and nobody's parent. */
async function expectNothingLeft(): Promise<void> {
  const st = await state();
  expect(Object.keys(st.vms)).toEqual([LAB_VM]);
  expect(Object.keys(st.vms[LAB_VM]!.drives)).toEqual(['SCSI:0:0']);
  expect(Object.keys(st.files).filter(isOurs)).toEqual([]);
  expect(st.files[LAB_TEMPLATE]).toEqual(templateBefore);
  expect(Object.values(st.files).filter((f) => f.parentPath !== undefined)).toEqual([]);
}

/** The member VMs whose guest runs a diskspd now (the stand-in's process tables), polled until stopped. */
function watchMeasuring(): { now: () => string[]; stop: () => Promise<void> } {
  let measuring: string[] = [];
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const vms = Object.keys((await state().catch(() => ({ vms: {} }) as unknown as HvState)).vms).filter((v) => v.startsWith('ss-'));
      const busy = await Promise.all(vms.map(async (v) => ((await guestProcesses(lab.standinState, v).catch(() => [])).some((p) => p.Name === 'diskspd.exe') ? v : null)));
      measuring = busy.filter((v): v is string => v !== null);
      await new Promise((r) => setTimeout(r, 30));
    }
  })();
  return { now: () => measuring, stop: async () => void ((polling = false), await poll) };
}

describe('vm.count [1, 2] on lab-hyperv', () => {
  it('each member a VM on a differencing child of the template, measured in its own guest; killed with -9 while both members measure, run --resume stops each diskspd in its own VM, redoes the permutation; member and aggregate records; nothing left, the template untouched', async () => {
    const pb = path.join(root, 'hv-vmc.yaml');
    // passes long enough that the killed run's diskspd outlives the resume's start
    await fs.writeFile(pb, playbook('[1, 2]', 5));
    const runsDir = path.join(root, 'runs');
    const watch = watchMeasuring();
    let atKill: string[] = [];
    let logAtKill = 0;
    const killed = await runCliWhen(['run', pb, '-i', labPaths(root).inventory, '--out', runsDir, '--json', '--no-report'], { runsDir }, () => watch.now().length >= 2, (pid) => {
      process.kill(pid, 'SIGKILL');
      atKill = [...watch.now()];
      logAtKill = readPsLogSync(lab.standinState).length;
    });
    await watch.stop();
    expect(killed.fired, `diskspd never ran in both members at once: ${killed.stdout}${killed.stderr}`).toBe(true);
    expect(killed.code).toBeNull();
    expect(atKill).toHaveLength(2);
    // the killed run left both members of the 2-VM permutation running; the 1-VM one was done and gone
    expect(Object.keys((await state()).vms).filter((v) => v.startsWith('ss-')).sort()).toEqual([...atKill].sort());
    const resumed = await runCli(['run', '--resume', killed.runDir!, '--json', '--no-report'], { cwd: root, timeoutMs: 120_000 });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(stackTraceLines(resumed.stderr)).toEqual([]);
    const log = await readPsLog(lab.standinState);
    const afterKill = log.slice(logAtKill);
    for (const vm of atKill) {
      // its diskspd stopped through its own guest (Stop-Process over PowerShell Direct into that VM) before its disk was detached
      const stopped = afterKill.findIndex((l) => l.shape === 'guest-call' && l.data.vmName === vm && (l.data.calls ?? []).some((c) => c.cmdlet === 'Stop-Process'));
      const detached = afterKill.findIndex((l) => (l.data.calls ?? []).some((c) => c.cmdlet === 'Remove-VMHardDiskDrive' && c.params.VMName === vm));
      expect(stopped, `nothing stopped the diskspd in ${vm}`).toBeGreaterThanOrEqual(0);
      expect(stopped).toBeLessThan(detached);
    }
    // records: per count, one member record per VM and one aggregate summing them
    const recs = await records(killed.runDir!);
    const of = (count: number) => recs.filter((x) => x.axes['vm.count'] === count);
    for (const count of [1, 2]) {
      const members = of(count).filter((x) => x.vm?.role === 'member');
      expect(members.map((m) => m.vm!.index).sort()).toEqual(Array.from({ length: count }, (_, k) => k + 1));
      for (const m of members) {
        expect(m.vm!.name).toMatch(new RegExp(`^ss-.*-vm${m.vm!.index}$`));
        expect(m.iops).toBeGreaterThan(0);
      }
      const [agg, ...more] = of(count).filter((x) => x.vm?.role === 'aggregate');
      expect(more).toEqual([]);
      expect(agg!.vm!.count).toBe(count);
      expect(agg!.iops).toBeCloseTo(members.reduce((sum, m) => sum + m.iops!, 0), 6);
    }
    // diskspd prints no histogram: two members' p99 cannot be merged, so it is null with a note; the mean stays
    const agg2 = of(2).find((x) => x.vm?.role === 'aggregate')!;
    expect(agg2.latencyUs).toMatchObject({ mean: expect.any(Number), p99: null });
    expect(agg2.metadata.vmLatencyNote).toMatch(/histogram|percentile/i);
    // every diskspd pass ran in a member's own VM, none in the lab's VM
    const runs = log.filter((l) => l.shape === 'guest-run').map((l) => l.data.vmName!);
    expect(runs.length).toBeGreaterThanOrEqual(5);
    expect(runs.every((vm) => vm.startsWith('ss-'))).toBe(true);
    const calls = log.flatMap((l) => (l.shape === 'call' ? (l.data.calls ?? []) : []));
    const diffs = calls.filter((c) => c.cmdlet === 'New-VHD' && c.params.Differencing === true);
    // 1 + 2 members, then the 2-VM permutation's again on resume: each a child of the template, each a Generation 2 VM on its child
    expect(diffs.map((c) => c.params.ParentPath)).toEqual(Array(5).fill(LAB_TEMPLATE));
    const vms = calls.filter((c) => c.cmdlet === 'New-VM').map((c) => c.params);
    expect(vms.map((p) => [p.Generation, p.MemoryStartupBytes, p.VHDPath])).toEqual(diffs.map((d) => [2, 2147483648, d.params.Path]));
    for (const cmdlet of ['Start-VM', 'Stop-VM', 'Remove-VM']) expect(calls.filter((c) => c.cmdlet === cmdlet).map((c) => String(c.params.Name)).sort()).toEqual(vms.map((p) => String(p.Name)).sort());
    // each VM: turned off after its measured disk was detached, removed after it was off (its last life: the resume's)
    for (const name of new Set(vms.map((p) => p.Name))) {
      const last = (cmdlet: string) => calls.findLastIndex((c) => c.cmdlet === cmdlet && (c.params.Name === name || c.params.VMName === name));
      expect(last('Remove-VMHardDiskDrive')).toBeLessThan(last('Stop-VM'));
      expect(last('Stop-VM')).toBeLessThan(last('Remove-VM'));
    }
    // the template was only ever read: never an argument of a call that writes, attaches or removes
    const written = calls.filter((c) => ['Remove-Item', 'Add-VMHardDiskDrive', 'New-VM'].includes(c.cmdlet) || (c.cmdlet === 'New-VHD' && c.params.Differencing !== true));
    expect(written.map((c) => String(c.params.LiteralPath ?? c.params.Path ?? c.params.VHDPath).toLowerCase())).not.toContain(LAB_TEMPLATE.toLowerCase());
    await expectNothingLeft();
  }, 150_000);
});

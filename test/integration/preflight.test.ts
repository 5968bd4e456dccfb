// `storsweep preflight` and the capacity gate on the lab (issue 29), through the CLI as a user runs
// them against `labUp` in a temp root (vcsim harness, real sshd with the ESXi stand-ins, real fio).
// Proven on the hosts afterwards: the vcsim harness's call log and the stand-ins' command log.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { stopVcsimPid, vcsimControl, type VcsimControl } from '../../src/lab/vcsim.ts';
import { BLANK_DEV, readCommands, releaseEsxiGuestDisks } from '../../src/lab/harness/esxi/state.ts';
import { listVcsimLuns } from '../../src/lab/vsphere-inventory.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';

let root: string;
let lab: LabState;
let control: VcsimControl;
let inventory: string;
let vmfsDevice: string;

interface Report {
  ok: boolean;
  targets: Array<{ target: string; checks: Array<{ check: string; status: string; detail: string; remedy?: string }> }>;
  canary?: { runDir: string; ok: boolean; permutations: Array<{ permutationId: string; status: string; identity?: string; provisionSec?: number; teardownSec?: number }>; estimate?: { plannedSec: number; revisedSec: number } };
}

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-preflight-'));
  await fs.chmod(root, 0o755);
  lab = await labUp(root, { vcsim: true, listLuns: (info) => listVcsimLuns(info) });
  control = vcsimControl({ url: lab.vcsim!.url, certFile: lab.vcsim!.certFile });
  inventory = labPaths(root).inventory;
  vmfsDevice = /lab-vcenter:\n(?:.*\n)*?\s+vmfsDevice: (\S+)/.exec(await fs.readFile(inventory, 'utf8'))![1]!;
}, 300_000);

afterAll(async () => {
  if (lab) await releaseEsxiGuestDisks(lab.standinState);
  if (lab?.vcsim) await stopVcsimPid(lab.vcsim.pid);
  if (lab) await stopPid(lab.ssh.pid);
  if (root) await fs.rm(root, { recursive: true, force: true });
}, 120_000);

const playbook = async (name: string, target: string, sizeGb: number, kind: string, format = 'eagerzeroedthick') => {
  const file = path.join(root, `${name}.yaml`);
  await fs.writeFile(file, [`name: ${name}`, `target: ${target}`, 'matrix:', `  datastore: {kind: [${kind}]}`, `  disk: {format: [${format}], sizeGb: [${sizeGb}]}`, '  workload: {profile: [cdm3]}', 'settings: {fileSize: 16m, runtimeSec: 1, passes: 1, warmupPass: false, intervalSec: 0}', ''].join('\n'));
  return file;
};

describe('preflight of playbooks/vmfs6-block-size.yaml on the default lab', () => {
  let r: Awaited<ReturnType<typeof runCli>>;
  let report: Report;
  let log: Awaited<ReturnType<VcsimControl['log']>>;
  beforeAll(async () => {
    await control.reset();
    r = await runCli(['preflight', path.join(REPO_ROOT, 'playbooks/vmfs6-block-size.yaml'), '-i', inventory, '--json', '-o', path.join(root, 'runs'), '--confirm-destroy', vmfsDevice], { cwd: root, timeoutMs: 300_000 });
    report = JSON.parse(r.stdout) as Report;
    log = await control.log();
  }, 320_000);

  it('passes every check and exits 0', () => {
    expect(r.code, r.stderr).toBe(0);
    expect(report.ok).toBe(true);
    const checks = report.targets.flatMap((t) => t.checks.map((c) => `${t.target} ${c.check} ${c.status}`));
    expect(checks.filter((c) => !c.endsWith(' ok'))).toEqual([]);
    const names = report.targets.find((t) => t.target === 'lab-vcenter')!.checks.map((c) => c.check);
    expect(names).toEqual(expect.arrayContaining(['connection', 'version', 'API version', 'privilege Host.Config.Storage', 'privilege Datastore.AllocateSpace', 'privilege VirtualMachine.Config.AddNewDisk', 'host metrics', `capacity LUN ${vmfsDevice}`, 'guest reachable', 'guest fio', 'guest clock']));
  });

  it('runs the canary: one 1 GiB permutation per datastore kind, found in the guest by its WWN, with its times and a revised estimate', () => {
    const c = report.canary!;
    expect(c.ok).toBe(true);
    expect(c.permutations).toHaveLength(2); // vmfs5 and vmfs6 (eager-zeroed thick on the one controller)
    for (const p of c.permutations) {
      expect(p.status).toBe('done');
      expect(p.identity).toMatch(/^wwn-0x6000c29[0-9a-f]{25}$/);
      expect(p.provisionSec).toEqual(expect.any(Number));
      expect(p.teardownSec).toEqual(expect.any(Number));
    }
    expect(c.estimate!.plannedSec).toBeGreaterThan(0);
    expect(c.estimate!.revisedSec).toEqual(expect.any(Number));
  });

  it("the lab's call log shows each canary datastore and disk created, and destroyed", () => {
    const runId = path.basename(report.canary!.runDir).replace(/^preflight-canary-/, '');
    const created = log.filter((e) => e.method === 'CreateVmfsDatastore');
    expect(created).toHaveLength(2);
    expect(log.filter((e) => e.method === 'RemoveDatastore')).toHaveLength(2);
    const adds = log.flatMap((e) => e.devices ?? []).filter((d) => d.startsWith('add '));
    const removes = log.flatMap((e) => e.devices ?? []).filter((d) => d.startsWith('remove '));
    expect(adds).toHaveLength(2);
    expect(adds.every((d) => d.includes(`ss-${runId}-`))).toBe(true);
    expect(removes.map((d) => d.replace(/^remove /, '')).sort()).toEqual(adds.map((d) => d.replace(/^add /, '')).sort());
  });
});

describe('a disk larger than its LUN', () => {
  it('preflight says ✗ capacity with the LUN size read from the host, exit 1, and creates nothing', async () => {
    await control.reset();
    const file = await playbook('too-big-vc', 'lab-vcenter', 100, 'vmfs6');
    const r = await runCli(['preflight', file, '-i', inventory, '--json', '-o', path.join(root, 'runs'), '--confirm-destroy', vmfsDevice], { cwd: root });
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    const cap = report.targets[0]!.checks.find((c) => c.check === `capacity LUN ${vmfsDevice}`)!;
    expect(cap.status).toBe('fail');
    expect(cap.detail).toMatch(/needs 100 GiB eagerzeroedthick disk .* has room for \d+\.\d GiB: LUN .* is \d+\.\d GiB \(HostScsiDisk\.capacity\)/);
    expect(cap.remedy).toMatch(/at most \d+ GiB/);
    expect(report.canary).toBeUndefined();
    expect((await control.log()).map((e) => e.method).filter((m) => /^(CreateVmfsDatastore|CreateNasDatastore|ReconfigVM_Task|CreateVirtualDisk_Task)$/.test(m))).toEqual([]);
  });

  it('vSphere: run is refused before the LUN is formatted (no CreateVmfsDatastore)', async () => {
    await control.reset();
    const file = await playbook('too-big-run-vc', 'lab-vcenter', 100, 'vmfs6');
    const r = await runCli(['run', file, '-i', inventory, '-o', path.join(root, 'runs'), '--confirm-destroy', vmfsDevice], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`refusing to run: target lab-vcenter: LUN ${vmfsDevice} needs 100 GiB eagerzeroedthick disk`);
    expect((await control.log()).map((e) => e.method)).not.toContain('CreateVmfsDatastore');
  });

  it('ESXi shell: a 4000 GB eager-zeroed thick disk on the 20 GiB LUN is refused before partedUtil setptbl or vmkfstools -C', async () => {
    const before = (await readCommands(lab.standinState)).length;
    const file = await playbook('too-big-run-esxi', 'lab-esxi', 4000, 'vmfs6');
    const r = await runCli(['run', file, '-i', inventory, '-o', path.join(root, 'runs'), '--confirm-destroy', BLANK_DEV], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`LUN ${BLANK_DEV} needs 4000 GiB eagerzeroedthick disk (4000.0 GiB`);
    expect(r.stderr).toContain('is 20.0 GiB (partedUtil getptbl)');
    const after = (await readCommands(lab.standinState)).slice(before).map((c) => [c.tool, ...c.argv].join(' '));
    expect(after).toEqual([`partedUtil getptbl /vmfs/devices/disks/${BLANK_DEV}`]);
  });

  it('a thin disk of the same size may overcommit: preflight counts only what the workload writes', async () => {
    const file = await playbook('thin-big-esxi', 'lab-esxi', 4000, 'vmfs6', 'thin');
    const r = await runCli(['preflight', file, '-i', inventory, '--json', '--no-canary', '-o', path.join(root, 'runs')], { cwd: root });
    const report = JSON.parse(r.stdout) as Report;
    const cap = report.targets[0]!.checks.find((c) => c.check === `capacity LUN ${BLANK_DEV}`)!;
    expect(cap).toMatchObject({ status: 'ok' });
    expect(cap.detail).toContain('needs 4000 GiB thin disk (0.0 GiB');
  });
});

describe('a vCenter user without Datastore.AllocateSpace (the harness restricted role)', () => {
  it('preflight gives ✗ naming the privilege and the object, exits 1, and creates nothing', async () => {
    await control.restrictedUser({ username: 'bench-ro@vsphere.local', password: 'Ro-secret-1', privileges: ['System.View', 'Host.Config.Storage', 'VirtualMachine.Config.AddNewDisk', 'VirtualMachine.Config.RemoveDisk'] });
    const dir = labPaths(root).dir;
    await fs.writeFile(path.join(dir, 'ro-password'), 'Ro-secret-1\n', { mode: 0o600 });
    const restricted = path.join(dir, 'inventory-ro.yaml');
    const text = await fs.readFile(inventory, 'utf8');
    await fs.writeFile(restricted, text.replace('username: administrator@vsphere.local', 'username: bench-ro@vsphere.local').replace('password: ${file:vcsim-password}', 'password: ${file:ro-password}'));
    await control.reset();
    const r = await runCli(['preflight', path.join(REPO_ROOT, 'playbooks/vmfs6-block-size.yaml'), '-i', restricted, '--json', '-o', path.join(root, 'runs'), '--confirm-destroy', vmfsDevice], { cwd: root });
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    const failed = report.targets.flatMap((t) => t.checks).filter((c) => c.status === 'fail');
    expect(failed).toEqual([expect.objectContaining({ check: 'privilege Datastore.AllocateSpace', detail: expect.stringMatching(/^not granted on the datacenter .*\(Datacenter datacenter-\d+\) to /), remedy: expect.stringContaining('Datastore.AllocateSpace') })]);
    expect(report.targets[0]!.checks.find((c) => c.check === 'privilege Host.Config.Storage')?.status).toBe('ok');
    expect(report.canary).toBeUndefined();
    const methods = (await control.log()).map((e) => e.method);
    expect(methods).toContain('HasPrivilegeOnEntity');
    expect(methods.filter((m) => /^(CreateVmfsDatastore|CreateNasDatastore|ReconfigVM_Task|CreateVirtualDisk_Task)$/.test(m))).toEqual([]);
  });

  it('the restricted session is refused by the harness as by vCenter: NoPermission for a disk it may not allocate', async () => {
    const r = await runCli(['run', path.join(REPO_ROOT, 'playbooks/vmfs6-block-size.yaml'), '-i', path.join(labPaths(root).dir, 'inventory-ro.yaml'), '-o', path.join(root, 'runs'), '--confirm-destroy', vmfsDevice, '--set', 'repeat=1', '--no-report', '--fail-fast'], { cwd: root, timeoutMs: 300_000 });
    expect(r.code).toBe(1);
    const log = await control.log();
    // the disk's ReconfigVM_Task was refused (logged on arrival, answered with the fault), the datastore made for it removed again
    expect(r.stderr).toMatch(/NoPermission|Datastore\.AllocateSpace/);
    expect(log.filter((e) => e.method === 'CreateVmfsDatastore')).toHaveLength(1);
    expect(log.filter((e) => e.method === 'RemoveDatastore')).toHaveLength(1);
    const vm = await probeOne({ url: lab.vcsim!.url, username: lab.vcsim!.username, password: (await fs.readFile(labPaths(root).vcsimPassword, 'utf8')).trim(), certFile: lab.vcsim!.certFile }, { op: 'vm-disks', vm: 'DC0_H0_VM0' });
    expect((vm.disks as Array<{ fileName: string }>).filter((d) => d.fileName.includes('ss-'))).toEqual([]);
  });
});

describe('an ESXi host over SSH (the stand-ins)', () => {
  it('every check ✓, and the canary formats, creates, finds the disk by its uuid, and removes it all', async () => {
    const before = (await readCommands(lab.standinState)).length;
    const file = await playbook('esxi-ok', 'lab-esxi', 4, 'vmfs6');
    const r = await runCli(['preflight', file, '-i', inventory, '--json', '-o', path.join(root, 'runs'), '--confirm-destroy', BLANK_DEV], { cwd: root, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.targets.flatMap((t) => t.checks).filter((c) => c.status !== 'ok')).toEqual([]);
    const names = report.targets[0]!.checks.map((c) => c.check);
    expect(names).toEqual(expect.arrayContaining(['connection', 'version', 'command esxcli', 'command vim-cmd', 'command vmkfstools', 'command partedUtil', 'host metrics', `capacity LUN ${BLANK_DEV}`]));
    const [p] = report.canary!.permutations;
    expect(p).toMatchObject({ status: 'done', identity: expect.stringMatching(/^wwn-0x6000c29[0-9a-f]{25}$/) });
    const runId = path.basename(report.canary!.runDir).replace(/^preflight-canary-/, '');
    const sent = (await readCommands(lab.standinState)).slice(before).map((c) => [c.tool, ...c.argv].join(' '));
    const base = `ss-${runId}-${p!.permutationId}`;
    expect(sent).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^vmkfstools -C vmfs6 .*-S ${base}-ds `)), `vmkfstools -c 1g -d eagerzeroedthick /vmfs/volumes/${base}-ds/${base}-disk.vmdk`, `vmkfstools -U /vmfs/volumes/${base}-ds/${base}-disk.vmdk`, `esxcli storage filesystem unmount -l ${base}-ds`]));
  });

  it('an inventory that states another release: ✗ version with the one to write', async () => {
    const other = path.join(labPaths(root).dir, 'inventory-70.yaml');
    await fs.writeFile(other, (await fs.readFile(inventory, 'utf8')).replace(/(lab-esxi:\n(?:.*\n)*?\s+version: )"8\.0"/, '$1"7.0"'));
    const file = await playbook('esxi-70', 'lab-esxi', 4, 'vmfs6');
    const r = await runCli(['preflight', file, '-i', other, '--json', '--no-canary', '-o', path.join(root, 'runs')], { cwd: root });
    expect(r.code).toBe(1);
    const v = (JSON.parse(r.stdout) as Report).targets[0]!.checks.find((c) => c.check === 'version')!;
    expect(v).toMatchObject({ status: 'fail', detail: 'the host runs ESXi 8.0.0, the inventory says 7.0', remedy: 'set version: "8.0" in the target' });
  });
});

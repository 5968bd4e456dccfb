// Per-object privileges on the vCenter simulator (issue 29 item 4): the harness's restricted user
// holds Datastore.AllocateSpace on the root folder, but on datastore LocalDS_0 a role without it
// (the simulator's own AuthorizationManager: AddAuthorizationRole + SetEntityPermissions; vCenter's
// rule: the nearest permission up the inventory wins). Preflight names exactly that datastore ✗ and
// the datacenter (which the datastores the plan creates inherit) ✓; `run --preflight` stops before
// anything is created (call log); the simulator refuses the real call on LocalDS_0 with NoPermission
// {object, privilegeId} and lets the same user create a disk on a datastore the run made.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import { VsphereFault } from '../../src/providers/vsphere/fault.ts';
import { reconfigVMTask } from '../../src/providers/vsphere/methods.ts';
import { runCli } from '../helpers/cli.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { addDiskSpec } from '../helpers/vsphere-disk-spec.ts';
import { runDirOf, startVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';

const RO = { username: 'bench-ro@vsphere.local', password: 'Ro-secret-1' };
const CREATING = /^(CreateVmfsDatastore|CreateNasDatastore|ReconfigVM_Task|CreateVirtualDisk_Task)$/;

let lab: VsphereLab;
let roInventory: string;
let pb: string;

interface Check {
  check: string;
  status: string;
  detail: string;
  remedy?: string;
}

beforeAll(async () => {
  lab = await startVsphereLab({ version: '8.0' });
  await lab.sim.control.restrictedUser({
    ...RO,
    privileges: ['System.View', 'Host.Config.Storage', 'VirtualMachine.Config.AddNewDisk', 'VirtualMachine.Config.RemoveDisk', 'VirtualMachine.Config.AddRemoveDevice', 'Datastore.AllocateSpace'],
    // on LocalDS_0 only: a role that may browse it, not allocate space on it
    permissions: [{ entity: { type: 'Datastore', name: 'LocalDS_0' }, privileges: ['Datastore.Browse'], propagate: true }],
  });
  await fs.writeFile(path.join(lab.dir, 'ro-password'), RO.password + '\n', { mode: 0o600 });
  roInventory = path.join(lab.dir, 'inventory-ro.yaml');
  const text = await fs.readFile(lab.inventory, 'utf8');
  await fs.writeFile(roInventory, text.replace('username: administrator@vsphere.local', `username: ${RO.username}`).replace('${file:vc-password}', '${file:ro-password}'));
  expect(await fs.readFile(roInventory, 'utf8')).toContain(RO.username);
  const matrix = (kinds: string) => ['matrix:', `  datastore: {kind: [${kinds}]}`, '  disk: {format: [thin], sizeGb: [1]}', '  workload: {profile: [quick]}', 'workloads:', '  quick:', '    iometer: "4k 100% read 100% random"', ...quickSettings({ runtimeSec: 1, direct: false, repeat: 1 }), ''];
  pb = await lab.writePlaybook('perm.yaml', ['name: pf-perm', 'target: lab-vcenter', ...matrix('existing, vmfs6')].join('\n'));
  await lab.writePlaybook('perm-vmfs6.yaml', ['name: pf-perm-vmfs6', 'target: lab-vcenter', ...matrix('vmfs6')].join('\n'));
}, 300_000);

afterAll(async () => {
  await lab?.stop();
});

describe('a role without Datastore.AllocateSpace on one datastore', () => {
  it('preflight: ✗ naming the privilege and exactly LocalDS_0, ✓ on the datacenter; exit 1, nothing created', async () => {
    await lab.sim.control.reset();
    const r = await runCli(['preflight', pb, '-i', roInventory, '--json', '--no-canary', '-o', await lab.newRunsDir('pf')], { cwd: lab.dir });
    expect(r.code, r.stderr).toBe(1);
    const checks = (JSON.parse(r.stdout) as { targets: Array<{ checks: Check[] }> }).targets[0]!.checks;
    const ds = await lab.connect().then(async (c) => {
      try {
        return await c.findDatastoreOrNone('LocalDS_0', await c.findDatacenter('DC0'));
      } finally {
        await c.logout();
      }
    });
    expect(checks.filter((c) => c.status === 'fail')).toEqual([{ check: 'privilege Datastore.AllocateSpace', status: 'fail', detail: `not granted on datastore LocalDS_0 (Datastore ${ds!.value}) to ${RO.username}`, remedy: 'give the account a role with Datastore.AllocateSpace on datastore LocalDS_0' }]);
    expect(checks.filter((c) => c.check === 'privilege Datastore.AllocateSpace' && c.status === 'ok')).toEqual([expect.objectContaining({ detail: expect.stringMatching(/^granted on the datacenter .*\(Datacenter datacenter-\d+\)$/) })]);
    const log = await lab.sim.control.log();
    expect(log.filter((e) => e.method === 'HasPrivilegeOnEntity').length).toBeGreaterThan(0);
    expect(log.map((e) => e.method).filter((m) => CREATING.test(m))).toEqual([]);
  });

  it('run --preflight stops on that ✗ before anything is created (exit 2; the call log has no create)', async () => {
    await lab.sim.control.reset();
    const r = await runCli(['run', pb, '-i', roInventory, '--out', await lab.newRunsDir('run-pf'), '--confirm-destroy', lab.vmfsDevice, '--preflight', '--no-report'], { cwd: lab.dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('✗ privilege Datastore.AllocateSpace: not granted on datastore LocalDS_0');
    expect((await lab.sim.control.log()).map((e) => e.method).filter((m) => CREATING.test(m))).toEqual([]);
  });

  it('the simulator refuses the real call on LocalDS_0: NoPermission with that datastore as object and the privilege, no disk added', async () => {
    const c = await VsphereClient.connect({ url: lab.sim.url, ...RO, thumbprint: lab.sim.thumbprint });
    try {
      const dc = await c.findDatacenter('DC0');
      const vm = await c.findVm('DC0_H0_VM0', dc);
      const ds = (await c.findDatastoreOrNone('LocalDS_0', dc))!;
      const scsi = (await c.devices(vm)).find((d) => /SCSI|LsiLogic|BusLogic/.test(d._type ?? ''))!;
      const err = await reconfigVMTask(c.session, vm, addDiskSpec({ fileName: '[LocalDS_0] ro-denied.vmdk', controllerKey: scsi.key, unitNumber: 3, sizeMB: 1 })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VsphereFault);
      const f = err as VsphereFault;
      expect(f.faultName).toBe('NoPermission');
      expect(f.details.detail).toMatchObject({ privilegeId: 'Datastore.AllocateSpace' });
      expect(JSON.stringify(f.details.detail.object)).toContain(ds.value);
      const files = (await c.devices(vm)).map((d) => JSON.stringify(d));
      expect(files.filter((d) => d.includes('ro-denied'))).toEqual([]);
    } finally {
      await c.logout();
    }
  });

  it('the same user may allocate on a datastore the run creates (it inherits the datacenter\u2019s permission): the vmfs6 permutation runs', async () => {
    await lab.sim.control.reset();
    const out = await lab.newRunsDir('run-vmfs6');
    const r = await runCli(['run', path.join(lab.dir, 'perm-vmfs6.yaml'), '-i', roInventory, '--out', out, '--confirm-destroy', lab.vmfsDevice, '--no-report', '--json'], { cwd: lab.dir, timeoutMs: 240_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(runDirOf(r)).toBeTruthy();
    const log = await lab.sim.control.log();
    expect(log.filter((e) => e.method === 'CreateVmfsDatastore')).toHaveLength(1);
    expect(log.flatMap((e) => e.devices ?? []).filter((d) => d.startsWith('add '))).toHaveLength(1);
    expect(await lab.leftovers()).toEqual({ datastores: [], disks: [], files: [] });
  });
});

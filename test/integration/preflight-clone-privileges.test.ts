// A vm.count permutation clones the target's VM (CloneVM_Task) and then works on each clone: powers
// it on, cuts its network cards, adds its disk, destroys it. `preflight` asks the server for the
// privileges each of these needs, where it needs them (providers/vsphere/preflight.ts
// clonePrivileges): VirtualMachine.Provisioning.Clone on the template, the rest on the folder the
// clones inherit from, not on the template. The harness's restricted user is refused the real
// CloneVM_Task without the privilege (NoPermission, as vCenter): read back, no clone is made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import { isFault } from '../../src/providers/vsphere/fault.ts';
import { vspherePreflight } from '../../src/providers/vsphere/preflight.ts';
import { planVsphereSteps } from '../../src/providers/vsphere/steps.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';
import { simTarget } from '../helpers/vsphere-lab.ts';

const RO = { username: 'bench-clone@vsphere.local', password: 'Clone-secret-1' };
const PREFIX = 'ss-r1priv-p0123456789ab';
let sim: VcsimHandle;

// everything a vm.count run needs but VirtualMachine.Provisioning.Clone
const GRANTED = [
  'System.View', 'VirtualMachine.Config.AddNewDisk', 'VirtualMachine.Config.RemoveDisk', 'VirtualMachine.Config.EditDevice', 'Datastore.AllocateSpace',
  'VirtualMachine.Inventory.CreateFromExisting', 'VirtualMachine.Inventory.Delete', 'Resource.AssignVMToPool', 'VirtualMachine.Interact.PowerOn', 'VirtualMachine.Interact.PowerOff',
  'VirtualMachine.GuestOperations.Execute', 'VirtualMachine.GuestOperations.Modify', 'VirtualMachine.GuestOperations.Query',
];

beforeAll(async () => {
  sim = await startVcsim({ username: 'administrator@vsphere.local', password: `vc-Secret-${Math.random().toString(36).slice(2, 10)}` });
  await sim.control.restrictedUser({ ...RO, privileges: GRANTED });
}, 120_000);

afterAll(async () => {
  await sim?.stop();
});

describe('a role without VirtualMachine.Provisioning.Clone', () => {
  it('preflight names the privilege on the template; the clones\' disk privileges are asked on their folder; the real clone is refused', async () => {
    const target = simTarget(sim, ['naa.unused0', 'naa.unused1']);
    const ro = { ...target.vcenter, username: RO.username, password: RO.password };
    const steps = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'vm.count': 2 }, { ...target, guestOs: 'linux' }, { prefix: PREFIX });
    expect(steps.filter((s) => s.operation === 'CloneVM_Task')).toHaveLength(2);
    const pf = vspherePreflight(() => VsphereClient.connect(ro), () => VsphereClient.connect(ro), target, true);
    const checks = await pf.checks!(steps);
    // (the simulator's plain VM runs no VMware Tools and lacks disk.EnableUUID: those checks are not this test's)
    const failed = checks.filter((c) => c.status === 'fail' && c.check.startsWith('privilege '));
    expect(failed.map((c) => c.check)).toEqual(['privilege VirtualMachine.Provisioning.Clone']);
    expect(failed[0]!.detail).toMatch(/^not granted on VM DC0_H0_VM0 \(VirtualMachine vm-\d+\) to bench-clone@vsphere\.local$/);
    // what the run does to the clones is asked where they inherit it from: the template's folder
    const addDisk = checks.filter((c) => c.check === 'privilege VirtualMachine.Config.AddNewDisk');
    expect(addDisk).toEqual([expect.objectContaining({ status: 'ok', detail: expect.stringMatching(/^granted on the folder of the clones .*\(Folder [\w-]+\)$/) })]);
    for (const p of ['VirtualMachine.Inventory.CreateFromExisting', 'Resource.AssignVMToPool', 'VirtualMachine.Interact.PowerOn', 'VirtualMachine.Config.EditDevice', 'VirtualMachine.Inventory.Delete']) {
      expect(checks.filter((c) => c.check === `privilege ${p}`).map((c) => c.status), p).toEqual(['ok']);
    }
    expect(checks.filter((c) => c.check === 'privilege Datastore.AllocateSpace' && c.detail.includes('the clones\' copies'))).toHaveLength(1);

    // the host refuses the clone as vCenter does, and makes nothing
    const c = await VsphereClient.connect(ro);
    try {
      const err = await c.cloneVm(await c.findVm('DC0_H0_VM0', await c.findDatacenter('DC0')), { name: `${PREFIX}-vm1`, beforeSend: () => undefined }).then(() => null, (e: unknown) => e);
      expect(isFault(err, 'NoPermission'), String(err)).toBe(true);
    } finally {
      await c.logout();
    }
    expect(((await probeOne(sim, { op: 'about' })).vms as string[]).filter((n) => n.startsWith(PREFIX))).toEqual([]);
  }, 120_000);
});

// A vm.count clone is a full copy of the template VM: every disk it has, on the datastore(s) those
// disks live on, plus a swap file when it runs (providers/vsphere/clones.ts checkCloneRoom). A
// template with a large data disk, cloned N times, fills the datastore it shares with other VMs
// before CloneVM_Task fails. The step refuses before the first clone is sent when the permutation's
// clones do not all fit: checked on the host afterwards (call log: no CloneVM_Task; pyvmomi: no
// clone listed, the datastore's free space as before), never by our error alone.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderContext } from '../../src/contract/provider.ts';
import { InvalidArgument } from '../../src/errors.ts';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { cloneVm } from '../../src/providers/vsphere/operations/clone-vm.ts';
import { vspherePreflight } from '../../src/providers/vsphere/preflight.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { planVsphereSteps } from '../../src/providers/vsphere/steps.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';
import { simTarget } from '../helpers/vsphere-lab.ts';

const PREFIX = 'ss-r1room-p0123456789ab';
let sim: VcsimHandle;
let dir: string;

// a send gives the step up at once (no 10-minute wait for a guest the simulator's VM does not have): what was sent stays on the host
function stopAtSend(): ProviderContext {
  const stop = new AbortController();
  return { runId: 'r1room', permutationId: 'p0123456789ab', axes: {}, signal: stop.signal, log: () => undefined, sent: () => stop.abort() };
}
const vms = async () => (await probeOne(sim, { op: 'about' })).vms as string[];
const freeSpace = async () => Number((await probeOne(sim, { op: 'datastore', name: 'LocalDS_0' })).freeSpace);

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-clone-room-'));
  sim = await startVcsim({ username: 'administrator@vsphere.local', password: `vc-Secret-${Math.random().toString(36).slice(2, 10)}` });
}, 120_000);

afterAll(async () => {
  await sim?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('cloning the template VM for vm.count', () => {
  it('counts each clone\'s disk under test where it lands: a clone that fits alone, with its disk does not', async () => {
    const free = await freeSpace();
    const provider = createVsphereProvider(simTarget(sim, ['naa.unused0', 'naa.unused1']));
    try {
      // the disk under test takes all the free space of the template's datastore: the clone's own files no longer fit beside it
      const step = cloneVm.step({ step: 'clone vm1', arguments: { host: 'DC0_H0', vm: 'DC0_H0_VM0', datacenter: 'DC0', name: `${PREFIX}-d1`, member: 1, count: 1, diskDatastore: 'LocalDS_0', diskBytes: free, clone: 'full' }, destructive: false, creates: { kind: 'vm', name: `${PREFIX}-d1` } });
      const refused = await provider.apply(step, stopAtSend()).then(() => null, (e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidArgument);
      expect(String((refused as Error).message)).toMatch(/1 full clone of VM DC0_H0_VM0 needs .* on datastore LocalDS_0 \(each: .*its disk under test/);
    } finally {
      await provider.close();
    }
    expect((await sim.control.log()).filter((x) => x.method === 'CloneVM_Task')).toEqual([]);
    expect(await freeSpace()).toBe(free);
  }, 120_000);

  it('refuses, before any CloneVM_Task, clones that would not all fit the template\'s datastore', async () => {
    // the template gets a thick data disk of 40 % of the free space (left: 60 %): one clone fits, two do not
    const free = await freeSpace();
    const dataKb = Math.floor((free * 0.4) / 1024 / 1024) * 1024;
    const added = await probeOne(sim, { op: 'add-disk', vm: 'DC0_H0_VM0', unit: 5, capacityKB: dataKb, thin: false });
    expect(added.ok, JSON.stringify(added)).toBe(true);
    const before = await freeSpace();

    // preflight says so first, for the largest count of the plan
    const target = simTarget(sim, ['naa.unused0', 'naa.unused1']);
    const plan = [1, 2].flatMap((n) => planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'vm.count': n }, { ...target, guestOs: 'linux' }, { prefix: `${PREFIX}-${n}` }));
    const pf = vspherePreflight(() => VsphereClient.connect(target.vcenter), () => VsphereClient.connect(target.vcenter), target, true);
    const room = (await pf.checks!(plan)).filter((x) => x.check === 'clone room');
    expect(room).toEqual([expect.objectContaining({ status: 'fail', detail: expect.stringMatching(/^2 full clones of VM DC0_H0_VM0 need .* on datastore LocalDS_0/) })]);

    const provider = createVsphereProvider(target);
    try {
      const step = cloneVm.step({ step: 'clone vm1', arguments: { host: 'DC0_H0', vm: 'DC0_H0_VM0', datacenter: 'DC0', name: `${PREFIX}-vm1`, member: 1, count: 2, clone: 'full' }, destructive: false, creates: { kind: 'vm', name: `${PREFIX}-vm1` } });
      const refused = await provider.apply(step, stopAtSend()).then(() => null, (e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidArgument);
      expect(String((refused as Error).message)).toMatch(/2 full clones of VM DC0_H0_VM0 need .* on datastore LocalDS_0/);
    } finally {
      await provider.close();
    }
    // the host: nothing sent, nothing made, no space taken
    expect((await sim.control.log()).filter((x) => x.method === 'CloneVM_Task')).toEqual([]);
    expect((await vms()).filter((n) => n.startsWith(PREFIX))).toEqual([]);
    expect(await freeSpace()).toBe(before);

    // one clone of the same template fits, and is made
    const c = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
    try {
      const source = await c.findVm('DC0_H0_VM0', await c.findDatacenter('DC0'));
      await c.cloneVm(source, { name: `${PREFIX}-vm2`, copies: 1, beforeSend: () => undefined });
      expect(await vms()).toContain(`${PREFIX}-vm2`);
      expect((await sim.control.log()).filter((x) => x.method === 'CloneVM_Task')).toHaveLength(1);
    } finally {
      await c.logout();
    }
  }, 120_000);
});

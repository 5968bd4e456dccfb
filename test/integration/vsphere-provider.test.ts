// The vSphere client and provider against the vcsim harness, read back through pyvmomi (an
// independent client) and the harness's own call counter.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { UnsafeOperation } from '../../src/errors.ts';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { VsphereClient, type MoRef } from '../../src/providers/vsphere/client.ts';
import type { VsphereTargetConfig } from '../../src/providers/vsphere/config.ts';
import { TaskFailed } from '../../src/providers/vsphere/fault.ts';
import { SoapTransportError } from '../../src/providers/vsphere/soap.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { planVsphereSteps } from '../../src/providers/vsphere/steps.ts';
import type { CreatedObject, Provider, ProviderContext } from '../../src/contract/provider.ts';
import { pyvmomi } from '../helpers/pyvmomi-verify.ts';
import { simTarget } from '../helpers/vsphere-lab.ts';
import { count, taskAwaited } from '../helpers/vcsim-log.ts';
import { waitFor } from '../helpers/wait.ts';


const events: string[] = [];
function ctx(permutationId: string): ProviderContext {
  return { runId: 'it', permutationId, axes: {}, signal: new AbortController().signal, log: (m) => events.push(m), sent: () => undefined };
}

let sim: VcsimHandle;
let client: VsphereClient;
let host: MoRef;
let luns: string[];

beforeAll(async () => {
  sim = await startVcsim();
  client = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
  host = await client.findHost('DC0_H0');
  luns = (await client.listVmfsCandidateDisks(host)).map((d) => d.canonicalName).sort();
});

afterAll(async () => {
  await client?.logout();
  await sim?.stop();
});

const target = (over: Partial<VsphereTargetConfig> = {}) => simTarget(sim, luns, over);

/** Apply a permutation's steps and tear down in reverse, like the executor does. */
async function runPermutation(provider: Provider, axes: Record<string, string | number>, prefix: string, inspect: (created: CreatedObject[]) => Promise<void>, t = target()): Promise<void> {
  // the provider here has no guest: the guest-disk step is guest-disk.test.ts's
  const steps = planVsphereSteps(axes, t, { prefix }).filter((s) => s.step !== 'guest-disk');
  const created: CreatedObject[] = [];
  try {
    for (const s of steps) {
      const obj = await provider.apply(s, ctx(prefix));
      if (obj) created.push(obj);
    }
    await inspect(created);
  } finally {
    for (const o of created.reverse()) await provider.destroy(o, ctx(prefix));
  }
}

describe('inventory', () => {
  it('finds objects by name and by inventory path, and names the candidates when not found', async () => {
    const dc = await client.findDatacenter();
    expect(dc.type).toBe('Datacenter');
    expect(await client.findHost('DC0/host/DC0_C0/DC0_C0_H1')).toEqual((await client.list('HostSystem')).find((h) => h.name === 'DC0_C0_H1')!.ref);
    expect((await client.findVm('DC0_H0_VM1', dc)).type).toBe('VirtualMachine');
    await expect(client.findVm('no-such-vm')).rejects.toThrow(/VM "no-such-vm" not found on .*there are: .*DC0_H0_VM0/);
  });

  it('pages through ContinueRetrievePropertiesEx with maxObjects and gets what pyvmomi sees', async () => {
    await sim.control.reset();
    const vms = await client.list('VirtualMachine', undefined, { maxObjects: 1 });
    const calls = await sim.control.calls();
    const py = await pyvmomi(sim, { count: 'VirtualMachine' });
    expect(vms).toHaveLength(py.count!);
    expect(py.count).toBeGreaterThanOrEqual(3);
    // one page per VM: the first from RetrievePropertiesEx, the rest continued
    expect(calls.ContinueRetrievePropertiesEx).toBe(py.count! - 1);
    expect(new Set(vms.map((v) => v.ref.value)).size).toBe(vms.length);
  });
});

describe('datastores at every VMFS version and block size', () => {
  const cases: Array<[Record<string, string | number>, number, number]> = [
    [{ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 1 }, 3, 1],
    [{ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 2 }, 3, 2],
    [{ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 4 }, 3, 4],
    [{ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 8 }, 3, 8],
    [{ 'datastore.kind': 'vmfs5', 'datastore.blockSizeMb': 1 }, 5, 1],
    [{ 'datastore.kind': 'vmfs6', 'datastore.blockSizeMb': 1 }, 6, 1],
  ];
  for (const [axes, major, mb] of cases) {
    it(`${String(axes['datastore.kind'])} ${mb} MB: pyvmomi reads majorVersion ${major}, blockSizeMb ${mb}`, async () => {
      if (major === 3) {
        // only ESXi 5.x creates VMFS3 (src/providers/esxi-version.ts; the harness's version.go)
        await sim.control.version('5.5');
        onTestFinished(async () => void (await sim.control.version('8.0')));
      }
      const provider = createVsphereProvider(target());
      const prefix = `ss-it-v${major}b${mb}`;
      try {
        await runPermutation(provider, { ...axes, 'disk.format': 'thin', 'disk.sizeGb': 1 }, prefix, async (created) => {
          expect(created.map((c) => c.kind)).toEqual(['datastore', 'disk']);
          const py = await pyvmomi(sim, { datastores: [`${prefix}-ds`], vm: 'DC0_H0_VM0' });
          expect(py.datastores[`${prefix}-ds`]).toMatchObject({ type: 'VMFS', infoType: 'VmfsDatastoreInfo', majorVersion: major, blockSizeMb: mb, extents: [luns[0]] });
          const ours = await client.readDatastore(await client.findDatastore(`${prefix}-ds`));
          expect(ours.info.vmfs).toMatchObject({ majorVersion: major, blockSizeMb: mb });
          expect(py.disks!.find((d) => d.fileName === `[${prefix}-ds] ${prefix}-disk.vmdk`)).toMatchObject({ thinProvisioned: true });
        });
        const after = await pyvmomi(sim, { datastores: [`${prefix}-ds`], vm: 'DC0_H0_VM0' });
        expect(after.datastores[`${prefix}-ds`]).toBeNull();
        expect(after.disks!.some((d) => d.fileName.includes(prefix))).toBe(false);
      } finally {
        await provider.close();
      }
    });
  }

  it('vmfs6 with 64 KB blocks: blockSize 64 (KiB)', async () => {
    const provider = createVsphereProvider(target());
    try {
      await runPermutation(provider, { 'datastore.kind': 'vmfs6', 'datastore.blockSizeKb': 64, 'disk.format': 'thin', 'disk.sizeGb': 1 }, 'ss-it-v6k64', async () => {
        const py = await pyvmomi(sim, { datastores: ['ss-it-v6k64-ds'] });
        expect(py.datastores['ss-it-v6k64-ds']).toMatchObject({ majorVersion: 6, blockSize: 64 });
        // the unmap granularity follows the block size (QueryVmfsConfigOption), not the 1024 KB of the create options
        const ours = await client.readDatastore(await client.findDatastore('ss-it-v6k64-ds'));
        expect(ours.info.vmfs).toMatchObject({ blockSize: 64, unmapGranularity: 64 });
      });
    } finally {
      await provider.close();
    }
  });

  it('a disk the datastore cannot hold is refused before ReconfigVM_Task: VMFS3 maxFileSize, then free space', async () => {
    await sim.control.version('5.5'); // VMFS3: ESXi 5.x
    onTestFinished(async () => void (await sim.control.version('8.0')));
    const provider = createVsphereProvider(target());
    const [dsStep, diskStep] = planVsphereSteps({ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 1, 'disk.format': 'thin', 'disk.sizeGb': 1 }, target(), { prefix: 'ss-it-room' });
    const created = await provider.apply(dsStep!, ctx('room'));
    try {
      await sim.control.reset();
      // a plan the planner would refuse (an older stored plan, or an existing VMFS3 datastore the planner cannot know)
      const sized = (gib: number) => ({ ...diskStep!, arguments: { ...diskStep!.arguments, sizeGb: gib, sizeBytes: gib * 1024 ** 3 } });
      await expect(provider.apply(sized(300), ctx('room'))).rejects.toThrow(/300 GiB disk is larger than the largest file datastore ss-it-room-ds stores \(maxFileSize 274877906944 bytes: VMFS3 with 1 MB blocks\)/);
      await expect(provider.apply(sized(200), ctx('room'))).rejects.toThrow(/200 GiB disk does not fit datastore ss-it-room-ds \([\d.]+ GiB free\)/);
      expect((await sim.control.calls()).ReconfigVM_Task).toBeUndefined();
    } finally {
      await provider.destroy(created!, ctx('room'));
      await provider.close();
    }
  });

  it('a combination the host rejects fails with the host fault and creates nothing', async () => {
    const provider = createVsphereProvider(target());
    try {
      // The planner refuses VMFS5 with 8 MB blocks (providers/vmfs-block-size.ts) ...
      expect(() => planVsphereSteps({ 'datastore.kind': 'vmfs5', 'datastore.blockSizeMb': 8, 'disk.format': 'thin', 'disk.sizeGb': 1 }, target(), { prefix: 'ss-it-bad' })).toThrow(/blockSizeMb/);
      // ... so a step that asks for it anyway (a plan stored by an older version, read on --resume)
      // meets the host's own refusal: the simulator answers with the vim fault, nothing is created.
      const [valid] = planVsphereSteps({ 'datastore.kind': 'vmfs5', 'datastore.blockSizeMb': 1, 'disk.format': 'thin', 'disk.sizeGb': 1 }, target(), { prefix: 'ss-it-bad' });
      const step = { ...valid!, arguments: { ...valid!.arguments, blockSizeMb: 8 } };
      await expect(provider.apply(step, ctx('bad'))).rejects.toMatchObject({ name: 'VsphereFault' });
      expect(await provider.find({ kind: 'datastore', name: 'ss-it-bad-ds' })).toBeNull();
    } finally {
      await provider.close();
    }
  });
});

describe('disk formats and RDMs', () => {
  const flat: Array<[string, boolean, boolean]> = [
    ['thin', true, false],
    ['lazyzeroedthick', false, false],
    ['eagerzeroedthick', false, true],
  ];
  for (const [format, thin, eager] of flat) {
    it(`${format}: thinProvisioned=${thin} eagerlyScrub=${eager} as pyvmomi reads it`, async () => {
      const provider = createVsphereProvider(target());
      const prefix = `ss-it-${format}`;
      try {
        await runPermutation(provider, { 'datastore.kind': 'existing', 'disk.format': format, 'disk.sizeGb': 2 }, prefix, async (created) => {
          const disk = created[0]!;
          const py = await pyvmomi(sim, { vm: 'DC0_H0_VM0' });
          const d = py.disks!.find((x) => x.key === Number(disk.id))!;
          expect(d).toMatchObject({ backingType: 'VirtualDiskFlatVer2BackingInfo', fileName: `[LocalDS_0] ${prefix}-disk.vmdk`, thinProvisioned: thin, eagerlyScrub: eager });
          // never on the controller's own unit
          expect(disk.data.unitNumber).not.toBe(7);
        });
      } finally {
        await provider.close();
      }
    });
  }

  for (const mode of ['physical', 'virtual'] as const) {
    it(`rdm-${mode}: compatibilityMode and deviceName as pyvmomi reads them`, async () => {
      const provider = createVsphereProvider(target());
      const prefix = `ss-it-rdm${mode}`;
      try {
        await runPermutation(provider, { 'datastore.kind': 'existing', 'disk.format': `rdm-${mode}` }, prefix, async (created) => {
          const py = await pyvmomi(sim, { vm: 'DC0_H0_VM0' });
          const d = py.disks!.find((x) => x.key === Number(created[0]!.id))!;
          expect(d).toMatchObject({
            backingType: 'VirtualDiskRawDiskMappingVer1BackingInfo',
            compatibilityMode: `${mode}Mode`,
            deviceName: `/vmfs/devices/disks/${luns[1]}`,
          });
        });
        const after = await pyvmomi(sim, { vm: 'DC0_H0_VM0' });
        expect(after.disks!.some((d) => d.backingType === 'VirtualDiskRawDiskMappingVer1BackingInfo')).toBe(false);
      } finally {
        await provider.close();
      }
    });
  }

  it('destroy is idempotent and finds objects by owned name when the id was never recorded', async () => {
    const provider = createVsphereProvider(target());
    try {
      const [step] = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, target(), { prefix: 'ss-it-orphan' });
      const obj = (await provider.apply(step!, ctx('orphan')))!;
      const found = await provider.find({ kind: 'disk', name: 'ss-it-orphan-disk' });
      expect(found?.id).toBe(obj.id);
      // nothing recorded: no VM is guessed from the inventory
      await expect(provider.destroy({ ...obj, id: null, data: {} }, ctx('orphan'))).rejects.toThrow(/records no VM/);
      // only what apply() recorded as sent (VM and file), no id: the disk is found by its owned name
      expect(await provider.destroy({ ...obj, id: null, data: { vm: obj.data.vm } }, ctx('orphan'))).toBe('removed');
      expect(await provider.destroy({ ...obj, id: null, data: { vm: obj.data.vm } }, ctx('orphan'))).toBe('absent');
      expect(await provider.find({ kind: 'disk', name: 'ss-it-orphan-disk' })).toBeNull();
    } finally {
      await provider.close();
    }
  });
});

describe('faults', () => {
  it('session expiry mid-sweep: logs in again once and the sweep continues', async () => {
    const provider = createVsphereProvider(target(), { log: (m) => events.push(m) });
    try {
      await runPermutation(provider, { 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, 'ss-it-exp1', async () => undefined);
      await sim.control.reset();
      expect(await sim.control.expireSessions()).toBeGreaterThan(0);
      await runPermutation(provider, { 'datastore.kind': 'existing', 'disk.format': 'eagerzeroedthick', 'disk.sizeGb': 1 }, 'ss-it-exp2', async (created) => {
        // read before pyvmomi logs in on its own
        const calls = await sim.control.calls();
        expect(calls.Login).toBe(1);
        expect(calls.ReconfigVM_Task).toBe(1);
        const py = await pyvmomi(sim, { vm: 'DC0_H0_VM0' });
        expect(py.disks!.find((d) => d.key === Number(created[0]!.id))).toMatchObject({ eagerlyScrub: true });
      });
      expect(events).toContain('vSphere session expired; logged in again');
    } finally {
      await provider.close();
    }
  });

  it('a failing task carries the vim fault name, and the next permutation still runs', async () => {
    const provider = createVsphereProvider(target());
    try {
      await sim.control.fault({ method: 'ReconfigVM_Task', fault: 'InvalidDeviceSpec', asTask: true, message: 'injected', fields: { deviceIndex: 0 } });
      const [step] = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, target(), { prefix: 'ss-it-taskfail' });
      const err = await provider.apply(step!, ctx('tf')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TaskFailed);
      expect((err as TaskFailed).faultName).toBe('InvalidDeviceSpec');
      expect((err as TaskFailed).message).toMatch(/InvalidDeviceSpec: injected/);
      await runPermutation(provider, { 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, 'ss-it-aftertf', async (created) => {
        expect(created).toHaveLength(1);
      });
    } finally {
      await provider.close();
    }
  });

  it('waits for a slow task through WaitForUpdatesEx (no polling)', async () => {
    await sim.control.reset();
    // the disk's task stays running until released: its wait is a long poll under way, nothing read meanwhile
    await sim.control.hold('ReconfigVM_Task', { task: true });
    const provider = createVsphereProvider(target());
    try {
      const run = runPermutation(provider, { 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, 'ss-it-slow', async (created) => {
        expect(created).toHaveLength(1);
      });
      const during = await waitFor(async () => {
        const log = await sim.control.log();
        return taskAwaited(log, 'ReconfigVM_Task') ? log : null;
      }, { what: 'the running task awaited by a long poll' });
      // no polling: after the task was answered, no read but the long poll
      const answered = during.find((e) => e.method === 'ReconfigVM_Task')!.end;
      expect(during.filter((e) => e.start > answered && /^RetrieveProperties/.test(e.method))).toEqual([]);
      expect((await sim.control.release('ReconfigVM_Task')).tasks).toBe(1);
      await run;
      const calls = await sim.control.calls();
      // at least: initial state (running), then the blocking call that returns success
      expect(calls.WaitForUpdatesEx).toBeGreaterThanOrEqual(2);
      // the session's one collector (wait.ts): task waits go through its one task view (a
      // ListView and one filter), no filter per wait (a filter's destroy goes out after its wait ended)
      const after = await waitFor(async () => {
        const c = await sim.control.calls();
        return (c.CreateFilter ?? 0) === (c.DestroyPropertyFilter ?? 0) + (c.CreateListView ?? 0) ? c : null;
      }, { what: 'every filter but the task view\'s destroyed', timeoutMs: 30_000 });
      expect(after.CreatePropertyCollector ?? 0).toBeLessThanOrEqual(1);
      expect(after.CreateListView ?? 0).toBeLessThanOrEqual(1);
      expect(after.ModifyListView).toBeGreaterThanOrEqual(1);
      expect(count(await sim.control.log(), 'ReconfigVM_Task')).toBe(2);
    } finally {
      await sim.control.release('ReconfigVM_Task');
      await provider.close();
    }
  });

  it('refuses to format a disk that is not allowed: nothing is sent', async () => {
    await sim.control.reset();
    const err = await client
      .createVmfsDatastore(host, { deviceCanonicalName: luns[2]!, vmfsMajorVersion: 6, name: 'ss-it-notallowed', allowedDevices: [luns[0]!] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeOperation);
    expect((err as Error).message).toContain(`refusing to format ${luns[2]} as VMFS: it is not in the inventory's allowedDevices`);
    const calls = await sim.control.calls();
    expect(calls.CreateVmfsDatastore ?? 0).toBe(0);
    expect(calls.QueryVmfsDatastoreCreateOptions ?? 0).toBe(0);
  });

  it('refuses to format a disk in use by a datastore: CreateVmfsDatastore is never called', async () => {
    const dev = luns[3]!;
    const ds = await client.createVmfsDatastore(host, { deviceCanonicalName: dev, vmfsMajorVersion: 6, name: 'ss-it-inuse', allowedDevices: [dev] });
    try {
      await sim.control.reset();
      const err = await client.createVmfsDatastore(host, { deviceCanonicalName: dev, vmfsMajorVersion: 5, name: 'ss-it-inuse2', allowedDevices: [dev] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnsafeOperation);
      expect((err as Error).message).toMatch(/does not report it as an unused disk/);
      const calls = await sim.control.calls();
      expect(calls.CreateVmfsDatastore ?? 0).toBe(0);
      expect(calls.QueryAvailableDisksForVmfs).toBe(1);
    } finally {
      expect(await client.removeDatastore(host, ds)).toBe('removed');
    }
    expect(await client.removeDatastore(host, ds)).toBe('absent');
  });

  it('a dropped connection on a read is replayed; on a mutation it is ambiguous and find() reconciles', async () => {
    const provider = createVsphereProvider(target());
    try {
      await sim.control.drop({ method: 'RetrievePropertiesEx', when: 'before' });
      expect((await client.list('HostSystem')).map((h) => h.name)).toContain('DC0_H0');

      await sim.control.drop({ method: 'ReconfigVM_Task', when: 'after' });
      const [step] = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, target(), { prefix: 'ss-it-drop' });
      const err = await provider.apply(step!, ctx('drop')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SoapTransportError);
      expect((err as SoapTransportError).details).toMatchObject({ method: 'ReconfigVM_Task', ambiguous: true });
      // the call ran before the connection closed: the disk exists and is found by its owned name
      const found = await provider.find({ kind: 'disk', name: 'ss-it-drop-disk' });
      expect(found).not.toBeNull();
      expect(await provider.destroy({ ...found!, id: found!.id }, ctx('drop'))).toBe('removed');
    } finally {
      await provider.close();
    }
  });
});

describe('NFS', () => {
  it('nfs permutation mounts the share as a datastore and unmounts it on teardown', async () => {
    const provider = createVsphereProvider(target({ nfs: { remoteHost: 'nas.lab', remotePath: '/export/bench' } }));
    try {
      await runPermutation(
        provider,
        { 'datastore.kind': 'nfs', 'disk.format': 'thin', 'disk.sizeGb': 1 },
        'ss-it-nfs',
        async (created) => {
          const py = await pyvmomi(sim, { datastores: ['ss-it-nfs-ds'], vm: 'DC0_H0_VM0' });
          expect(py.datastores['ss-it-nfs-ds']).toMatchObject({ type: 'NFS', infoType: 'NasDatastoreInfo' });
          expect(py.disks!.find((d) => d.key === Number(created[1]!.id))).toMatchObject({ fileName: '[ss-it-nfs-ds] ss-it-nfs-disk.vmdk', thinProvisioned: true });
        },
        target({ nfs: { remoteHost: 'nas.lab', remotePath: '/export/bench' } }),
      );
      expect((await pyvmomi(sim, { datastores: ['ss-it-nfs-ds'] })).datastores['ss-it-nfs-ds']).toBeNull();
    } finally {
      await provider.close();
    }
  });
});

describe('power and guest', () => {
  it('power off/on are idempotent and awaited; a guest without tools never reports an IP', async () => {
    const vm = await client.findVm('DC0_H0_VM1');
    await client.powerOff(vm);
    await client.powerOff(vm);
    expect((await client.readProps(vm, ['runtime.powerState']))['runtime.powerState']).toBe('poweredOff');
    await client.powerOn(vm);
    expect((await client.readProps(vm, ['runtime.powerState']))['runtime.powerState']).toBe('poweredOn');
    // vcsim VMs have no tools, so this exercises the bounded WaitForUpdatesEx wait and its error
    await expect(client.waitForGuestIp(vm, { timeoutMs: 1500 })).rejects.toThrow(/VirtualMachine vm-\d+: guest.ipAddress not ready after 1500 ms/);
  });
});

// A disk create places from what its session last saw of the VM (src/providers/vsphere/known-devices.ts,
// docs/decisions.md "A disk create places from what its session last saw"), against the vcsim
// harness: no read before a create that follows the session's own disk operation on the VM; a
// stale list (another client took the unit) is refused by the host once, read, and placed on a
// free unit, with the other client's disk untouched (read back by pyvmomi); any other reconfigure
// or a re-login makes the next create read. Also the harness rules this rests on: a disk at a unit
// another device holds — of any type — is refused (InvalidDeviceSpec), one on a controller the VM
// does not have names it (InvalidController).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { VsphereClient, type MoRef } from '../../src/providers/vsphere/client.ts';
import { nextFreeUnit } from '../../src/providers/vsphere/disks.ts';
import { TaskFailed } from '../../src/providers/vsphere/fault.ts';
import { reconfigVMTask } from '../../src/providers/vsphere/methods.ts';
import { waitForTask } from '../../src/providers/vsphere/task.ts';
import type { DataObject } from '../../src/providers/vsphere/types.ts';
import { pyvmomi } from '../helpers/pyvmomi-verify.ts';
import { addDiskChange } from '../helpers/vsphere-disk-spec.ts';

const DS = 'LocalDS_0';
const MB = 2 ** 20;
let sim: VcsimHandle;
let a: VsphereClient;
let vm: MoRef;
let pv: number;

beforeAll(async () => {
  sim = await startVcsim();
  a = await connect();
  vm = await a.findVm('DC0_H0_VM0');
  pv = (await a.devices(vm)).find((d) => d._type === 'ParaVirtualSCSIController')!.key;
}, 120_000);

afterAll(async () => {
  await a?.logout();
  await sim?.stop();
});

beforeEach(async () => {
  await sim.control.reset();
});

function connect(): Promise<VsphereClient> {
  return VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
}

/** The calls `fn` made, by method (the harness's counter). */
async function callsOf(fn: () => Promise<unknown>): Promise<Record<string, number>> {
  await sim.control.reset();
  await fn();
  return sim.control.calls();
}

const create = (c: VsphereClient, name: string) => c.createDisk(vm, { datastore: DS, fileName: `${name}.vmdk`, sizeBytes: MB, format: 'thin' });

/** ReconfigVM_Task on `vm` through `c`; 'ok' or the fault's name. */
async function reconfigure(c: VsphereClient, deviceChange: DataObject[]): Promise<string> {
  const task = await reconfigVMTask(c.session, vm, { deviceChange });
  return waitForTask(c.session, c.serviceContent, task).then(
    () => 'ok',
    (e: unknown) => (e instanceof TaskFailed ? e.faultName : String(e)),
  );
}

const diskAt = (controllerKey: number, unitNumber: number, name: string): DataObject => addDiskChange({ fileName: `[${DS}] ${name}.vmdk`, controllerKey, unitNumber, sizeMB: 1 });

describe('a disk create places from what its session last saw', { timeout: 120_000 }, () => {
  it('after the session’s own create or detach on the VM, the create sends no read first; a detach always reads', async () => {
    // nothing known yet (a reconfigure of the VM or a re-login drops what was): one read
    const first = await callsOf(() => create(a, 'ss-place-1'));
    expect(first.ReconfigVM_Task).toBe(1);
    const d1 = (await a.devices(vm)).find((d) => d.backing?.fileName === `[${DS}] ss-place-1.vmdk`)!;
    // a plain read is no reconfigure: what the session knew stays
    const c2 = await callsOf(() => create(a, 'ss-place-2'));
    expect(c2.RetrievePropertiesEx).toBeUndefined();
    expect(c2.ReconfigVM_Task).toBe(1);
    const c3 = await callsOf(async () => {
      expect(await a.detachDisk(vm, d1.key, { deleteFile: true })).toBe('removed');
    });
    expect(c3.RetrievePropertiesEx).toBe(1);
    const c4 = await callsOf(() => create(a, 'ss-place-3'));
    expect(c4.RetrievePropertiesEx).toBeUndefined();
    const placed = (await pyvmomi(sim, { vm: 'DC0_H0_VM0' })).disks!;
    const p2 = placed.find((d) => d.fileName === `[${DS}] ss-place-2.vmdk`)!;
    const p3 = placed.find((d) => d.fileName === `[${DS}] ss-place-3.vmdk`)!;
    // the detached disk's unit was free again in what the session knew: the lowest free unit
    expect(p3.unitNumber).toBe(d1.unitNumber);
    expect(p3.unitNumber).toBeLessThan(p2.unitNumber!);
    for (const d of [p2, p3]) expect(await a.detachDisk(vm, d.key, { deleteFile: true })).toBe('removed');
  });

  it('another client takes the unit the session would pick: the host refuses once, the create reads and lands on a free unit, the other disk untouched', async () => {
    const d1 = await create(a, 'ss-place-stale-1');
    // what A now knows: d1 placed; A's next create would take the lowest free unit of that list
    const known = await a.devices(vm);
    const wanted = nextFreeUnit(known, known.find((d) => d.key === pv)!, 20)!;
    const b = await connect();
    try {
      expect(await reconfigure(b, [diskAt(pv, wanted, 'ss-place-foreign')])).toBe('ok');
      const before = (await pyvmomi(sim, { vm: 'DC0_H0_VM0' })).disks!;
      const foreign = before.find((d) => d.fileName === `[${DS}] ss-place-foreign.vmdk`)!;
      expect(foreign.unitNumber).toBe(wanted);
      let d2 = undefined as Awaited<ReturnType<typeof create>> | undefined;
      let sends = 0;
      const calls = await callsOf(async () => (d2 = await a.createDisk(vm, { datastore: DS, fileName: 'ss-place-stale-2.vmdk', sizeBytes: MB, format: 'thin', beforeSend: () => void sends++ })));
      // refused at the taken unit (no file made), read, sent once more; the ledger's `sent` before each send
      expect(calls.ReconfigVM_Task).toBe(2);
      expect(sends).toBe(2);
      expect(calls.RetrievePropertiesEx).toBe(1);
      const log = await sim.control.log();
      expect(log.filter((e) => e.method === 'ReconfigVM_Task').map((e) => e.devices)).toEqual([[`add [${DS}] ss-place-stale-2.vmdk`], [`add [${DS}] ss-place-stale-2.vmdk`]]);
      expect(d2!.unitNumber).not.toBe(wanted);
      const after = (await pyvmomi(sim, { vm: 'DC0_H0_VM0' })).disks!;
      // the other client's disk is as it was; ours is where the client said, carrying our file
      expect(after.find((d) => d.key === foreign.key)).toEqual(foreign);
      expect(after.find((d) => d.key === d2!.key)).toMatchObject({ fileName: `[${DS}] ss-place-stale-2.vmdk`, controllerKey: pv, unitNumber: d2!.unitNumber });
      expect(after.length).toBe(before.length + 1);
      for (const d of [d1, d2!]) expect(await a.detachDisk(vm, d.key, { deleteFile: true })).toBe('removed');
      expect(await b.detachDisk(vm, foreign.key, { deleteFile: true })).toBe('removed');
    } finally {
      await b.logout();
    }
  });

  it('another client removes the controller the session would use: the host names it (InvalidController), the create reads, and refuses as a fresh read would', async () => {
    expect(await reconfigure(a, [{ operation: 'add', device: { _type: 'VirtualLsiLogicController', key: -100, busNumber: 1, sharedBus: 'noSharing' } }])).toBe('ok');
    const lsi = (await a.devices(vm)).find((d) => d._type === 'VirtualLsiLogicController')!;
    const onLsi = (name: string) => a.createDisk(vm, { datastore: DS, fileName: `${name}.vmdk`, sizeBytes: MB, format: 'thin', controllerKey: lsi.key });
    const d1 = await onLsi('ss-place-ctl-1');
    const b = await connect();
    try {
      expect(await b.detachDisk(vm, d1.key, { deleteFile: true })).toBe('removed');
      expect(await b.removeController(vm, { key: lsi.key, type: 'VirtualLsiLogicController', busNumber: 1 })).toBe('removed');
    } finally {
      await b.logout();
    }
    let err: unknown;
    const calls = await callsOf(() => onLsi('ss-place-ctl-2').catch((e: unknown) => (err = e)));
    // the remembered list still had the controller: sent without a read, refused, read, and the
    // named controller is gone — nothing placed anywhere else
    expect(String(err)).toMatch(/no controller with key/);
    expect(calls.ReconfigVM_Task).toBe(1);
    expect(calls.RetrievePropertiesEx).toBe(1);
    expect((await pyvmomi(sim, { vm: 'DC0_H0_VM0' })).disks!.filter((d) => /ss-place-ctl/.test(d.fileName))).toEqual([]);
  });

  it('any other reconfigure of the VM through the session, or a re-login, makes the next create read', async () => {
    const d1 = await create(a, 'ss-place-other-1');
    expect(await reconfigure(a, [])).toBe('ok');
    const c1 = await callsOf(() => create(a, 'ss-place-other-2'));
    expect(c1.RetrievePropertiesEx).toBe(1);
    expect(await sim.control.expireSessions()).toBeGreaterThan(0);
    // the session logs in again on its next call (here a plain read); what it knew is of the old login
    const g0 = a.session.generation;
    await a.devices(vm);
    expect(a.session.generation).toBe(g0 + 1);
    const c2 = await callsOf(() => create(a, 'ss-place-other-3'));
    expect(c2.RetrievePropertiesEx).toBe(1);
    for (const d of (await a.devices(vm)).filter((x) => /ss-place-other-/.test(String(x.backing?.fileName)))) expect(await a.detachDisk(vm, d.key, { deleteFile: true })).toBe('removed');
    expect((await a.devices(vm)).some((x) => x.key === d1.key)).toBe(false);
  });
});

describe('the harness refuses a disk placement as a host does', { timeout: 120_000 }, () => {
  it('a disk at a unit any other device holds (here a CD-ROM; vcsim 0.24 let a disk onto it): InvalidDeviceSpec; a controller key the VM does not have: InvalidController', async () => {
    const devices = await a.devices(vm);
    const unit = nextFreeUnit(devices, devices.find((d) => d.key === pv)!, 20)!;
    const cdrom: DataObject = { _type: 'VirtualCdrom', key: -200, backing: { _type: 'VirtualCdromRemotePassthroughBackingInfo', deviceName: '', exclusive: false }, controllerKey: pv, unitNumber: unit };
    expect(await reconfigure(a, [{ operation: 'add', device: cdrom }])).toBe('ok');
    const cd = (await a.devices(vm)).find((d) => d._type === 'VirtualCdrom' && d.controllerKey === pv && d.unitNumber === unit)!;
    try {
      expect(await reconfigure(a, [diskAt(pv, unit, 'ss-place-on-cdrom')])).toBe('InvalidDeviceSpec');
      expect(await reconfigure(a, [diskAt(99_999, 0, 'ss-place-no-ctl')])).toBe('InvalidController');
      // a unit taken by a disk: refused as before; two adds at one unit in one spec: the second
      const disk = (await a.devices(vm)).find((d) => d._type === 'VirtualDisk' && d.controllerKey === pv)!;
      expect(await reconfigure(a, [diskAt(pv, disk.unitNumber!, 'ss-place-on-disk')])).toBe('InvalidDeviceSpec');
      expect(await reconfigure(a, [diskAt(pv, unit + 1, 'ss-place-twice-a'), diskAt(pv, unit + 1, 'ss-place-twice-b')])).toBe('InvalidDeviceSpec');
      // a remove frees its unit only for the adds after it (deviceChange in order, review s24 O2):
      // the disk listed before the CD-ROM's remove finds the unit taken, and the CD-ROM stays
      expect(await reconfigure(a, [diskAt(pv, unit, 'ss-place-before-remove'), { operation: 'remove', device: { _type: 'VirtualCdrom', key: cd.key, controllerKey: pv, unitNumber: unit } }])).toBe('InvalidDeviceSpec');
      expect((await a.devices(vm)).some((d) => d.key === cd.key)).toBe(true);
      const files = (await pyvmomi(sim, { vm: 'DC0_H0_VM0' })).disks!.map((d) => d.fileName);
      expect(files.filter((f) => /ss-place-(on-|no-ctl|twice|before-remove)/.test(f))).toEqual([]);
    } finally {
      expect(await reconfigure(a, [{ operation: 'remove', device: { _type: 'VirtualCdrom', key: cd.key, controllerKey: pv, unitNumber: unit } }])).toBe('ok');
    }
  });
});

// The VMs a `vm.count` permutation clones from the target's VM (operations/clone-vm.ts): made with
// CloneVM_Task, powered on, waited for until VMware Tools can run guest operations; removed with
// Destroy_Task once powered off. vSphere Web Services API reference: vim.VirtualMachine.clone
// ("Creates a clone of this virtual machine… If the virtual machine is used as a template, this
// method corresponds to the deploy command"; faults include DuplicateName, InvalidState,
// InvalidDatastore, FileFault), vim.VirtualMachine.CloneSpec (location, template, config,
// customization, powerOn, snapshot), vim.ManagedEntity.destroy (a powered-on VM fails with
// InvalidPowerState), vim.vm.GuestInfo.guestOperationsReady.
import type { Ctx } from './datastores.ts';
import { diskCapacityBytes, splitDatastorePath } from './disks.ts';
import { InvalidArgument } from '../../errors.ts';
import { isFault } from './fault.ts';
import { cloneVMTask, destroyTask, reconfigVMTask } from './methods.ts';
import { readProps } from './property.ts';
import type { MoRef } from './soap.ts';
import { arr, type DataObject } from './types.ts';
import { waitForTask } from './task.ts';
import { powerOff, powerOn, waitForProperty } from './vms.ts';

export interface CloneOptions {
  /** the new VM's name (the run's owned name: the host's mark that it is ours) */
  name: string;
  /** called once the guards passed, right before CloneVM_Task goes out (the ledger's `sent`) */
  beforeSend: () => void | Promise<void>;
  /** how many clones of the source the permutation still makes, this one included: all must fit before the first is sent */
  copies?: number;
  /** each clone's disk under test (added after it): counted with the clones where it lands */
  disk?: { datastore: string; bytes: number };
  signal?: AbortSignal;
  /**
   * A linked clone of this snapshot of the source (snapshots.ts): spec.snapshot, and
   * location.diskMoveType createNewChildDiskBacking — each disk a child of the snapshot's disk, in
   * the clone's folder (API reference, VirtualMachineRelocateDiskMoveOptions: "for a clone this
   * option is only valid when cloning from a snapshot"). Absent: a full clone.
   */
  snapshot?: MoRef;
}

const GiB = 1024 ** 3;
const gib = (n: number) => `${(n / GiB).toFixed(1)} GiB`;

/** Where one full clone of a VM puts its bytes: per datastore name, how many and of what. */
export interface CloneFootprint {
  datastore: string;
  bytes: number;
  what: string[];
}

/**
 * What one full clone of `source` takes, per datastore. A full clone copies every disk of the source
 * (vim.vm.RelocateSpec.datastore: "If not specified, the current datastore is used"; `disk`: each
 * disk's own placement), so each disk counts at its provisioned size: a thin copy may grow to it, as
 * checkRoom (operations/disk-room.ts) counts thin disks. Powered on, the clone also gets a swap file of
 * its memory less its reservation on its home datastore (vSphere Resource Management, "Swap Space
 * and Memory Overcommitment"). Pure.
 */
export function cloneFootprint(p: { devices: readonly DataObject[]; memoryMB: number; reservationMB: number; vmPathName: string; linked?: boolean }): CloneFootprint[] {
  const out = new Map<string, CloneFootprint>();
  const add = (datastore: string | undefined, bytes: number, what: string) => {
    if (!datastore || !(bytes > 0)) return;
    const f = out.get(datastore) ?? { datastore, bytes: 0, what: [] };
    f.bytes += bytes;
    f.what.push(what);
    out.set(datastore, f);
  };
  for (const d of p.linked ? [] : p.devices) {
    if (d._type !== 'VirtualDisk') continue;
    const file = typeof (d.backing as DataObject | undefined)?.fileName === 'string' ? String((d.backing as DataObject).fileName) : '';
    const bytes = diskCapacityBytes(d as never);
    add(splitDatastorePath(file)?.datastore, bytes, `disk ${splitDatastorePath(file)?.file ?? '?'} ${gib(bytes)}`);
  }
  add(splitDatastorePath(p.vmPathName)?.datastore, Math.max(0, p.memoryMB - p.reservationMB) * 1024 ** 2, `swap file ${gib(Math.max(0, p.memoryMB - p.reservationMB) * 1024 ** 2)}`);
  return [...out.values()];
}

/**
 * Why `copies` clones of `source` do not fit the free space of a datastore they land on
 * (summary.freeSpace), or null when they fit (or the server says too little to tell).
 */
export async function cloneRoomShortfall(ctx: Ctx, source: MoRef, copies: number, disk?: { datastore: string; bytes: number }, linked = false): Promise<string | null> {
  const p = await readProps(ctx.rt, ctx.sc, source, ['name', 'config.hardware.device', 'config.hardware.memoryMB', 'config.memoryAllocation.reservation', 'config.files.vmPathName', 'datastore']);
  const footprint = cloneFootprint({
    devices: arr(p['config.hardware.device'] as DataObject[] | undefined),
    memoryMB: Number(p['config.hardware.memoryMB'] ?? 0) || 0,
    reservationMB: Number(p['config.memoryAllocation.reservation'] ?? 0) || 0,
    vmPathName: typeof p['config.files.vmPathName'] === 'string' ? p['config.files.vmPathName'] : '',
    linked,
  });
  const mine = disk && disk.bytes > 0 ? footprint.find((f) => f.datastore === disk.datastore) : undefined;
  if (disk && disk.bytes > 0) {
    if (mine) {
      mine.bytes += disk.bytes;
      mine.what.push(`its disk under test ${gib(disk.bytes)}`);
    } else footprint.push({ datastore: disk.datastore, bytes: disk.bytes, what: [`its disk under test ${gib(disk.bytes)}`] });
  }
  for (const ref of arr(p.datastore as MoRef[] | undefined)) {
    const d = await readProps(ctx.rt, ctx.sc, ref, ['name', 'summary.freeSpace']);
    const f = footprint.find((x) => x.datastore === d.name);
    const free = Number(d['summary.freeSpace']);
    if (!f || !Number.isFinite(free) || f.bytes * copies <= free) continue;
    return `${copies} ${linked ? 'linked' : 'full'} clone${copies === 1 ? '' : 's'} of VM ${String(p.name)} need${copies === 1 ? 's' : ''} ${gib(f.bytes * copies)} on datastore ${f.datastore} (each: ${f.what.join(', ')}), which has ${gib(free)} free`;
  }
  return null;
}

/**
 * Refused before any clone is sent when `copies` clones of `source` do not all fit: a full clone of
 * a VM with a large data disk would otherwise fill the datastore it shares with other VMs before
 * CloneVM_Task fails.
 */
async function checkCloneRoom(ctx: Ctx, source: MoRef, copies: number, disk?: { datastore: string; bytes: number }, linked = false): Promise<void> {
  const short = await cloneRoomShortfall(ctx, source, copies, disk, linked);
  if (short) throw new InvalidArgument(`vm.count: ${short}; nothing was cloned. Use a template VM with smaller disks, or a smaller vm.count`, { name: 'vm.count', value: String(copies) });
}

/** A network card of any kind (vim.vm.device.VirtualEthernetCard's subtypes). */
const NIC_TYPES = new Set(['VirtualE1000', 'VirtualE1000e', 'VirtualPCNet32', 'VirtualVmxnet', 'VirtualVmxnet2', 'VirtualVmxnet3', 'VirtualVmxnet3Vrdma', 'VirtualSriovEthernetCard']);

/**
 * A clone's network cards left disconnected, not connected at power-on, and out of the guest's
 * control. A clone is reached through VMware Tools only; without this it would boot on the
 * source's network with the source's IP configuration and host name (and a manual MAC address
 * kept by the clone), colliding with the running source (vim.vm.device.VirtualDevice.ConnectInfo:
 * startConnected, allowGuestControl, connected).
 */
async function isolateNics(ctx: Ctx, vm: MoRef): Promise<void> {
  const devices = arr((await readProps(ctx.rt, ctx.sc, vm, ['config.hardware.device']))['config.hardware.device'] as DataObject[] | undefined);
  const nics = devices.filter((d) => NIC_TYPES.has(String(d._type)));
  if (nics.length === 0) return;
  const connectable = { _type: 'VirtualDeviceConnectInfo', startConnected: false, allowGuestControl: false, connected: false };
  const deviceChange = nics.map((d) => ({ operation: 'edit', device: { ...d, connectable } }));
  await waitForTask(ctx.rt, ctx.sc, await reconfigVMTask(ctx.rt, vm, { deviceChange }), { host: ctx.endpoint });
}

/**
 * A full (or, given a snapshot, linked) clone of `source` in the source's folder and resource pool,
 * on the source's datastore (its system disk is not the disk under test: that goes on the
 * permutation's datastore later). Left powered off by the task (`powerOn: false`); powerOn() below starts it.
 */
export async function cloneVm(ctx: Ctx, source: MoRef, o: CloneOptions): Promise<MoRef> {
  const p = await readProps(ctx.rt, ctx.sc, source, ['parent', 'resourcePool']);
  const folder = p.parent as MoRef | undefined;
  const pool = p.resourcePool as MoRef | undefined;
  if (!folder) throw new Error(`VM ${source.value} on ${ctx.endpoint} reports no parent folder to clone into`);
  // VirtualMachineCloneSpec and RelocateSpec in WSDL order; RelocateSpec.pool: the source's (a template has none)
  const location = { ...(o.snapshot ? { diskMoveType: 'createNewChildDiskBacking' } : {}), ...(pool ? { pool } : {}) };
  const spec = { location, template: false, powerOn: false, ...(o.snapshot ? { snapshot: o.snapshot } : {}) };
  // a linked clone's disks are children of the snapshot's: only its swap file and disk under test take room
  await checkCloneRoom(ctx, source, o.copies ?? 1, o.disk, o.snapshot !== undefined);
  await o.beforeSend();
  const task = await cloneVMTask(ctx.rt, source, folder, o.name, spec);
  const clone = (await waitForTask(ctx.rt, ctx.sc, task, { host: ctx.endpoint, ...(o.signal ? { signal: o.signal } : {}) })) as MoRef;
  // still powered off: its network cards are cut before it ever boots
  await isolateNics(ctx, clone);
  return clone;
}

/**
 * The clone tasks of `source` still queued or running on the server: those in the source's own
 * recentTask and the TaskManager's (ManagedEntity.recentTask, TaskManager.recentTask: "tasks that
 * completed recently, that are currently running, or that are queued to run"; read once here, never
 * waited on). A CloneVM_Task's info names the source as its entity and `VirtualMachine.clone…` as
 * its descriptionId. Tasks the server no longer knows are skipped.
 */
export async function runningClones(ctx: Ctx, source: MoRef): Promise<MoRef[]> {
  const lists = await Promise.all([
    readProps(ctx.rt, ctx.sc, source, ['recentTask']).then((p) => arr(p.recentTask as MoRef[] | undefined)),
    ctx.sc.taskManager ? readProps(ctx.rt, ctx.sc, ctx.sc.taskManager, ['recentTask']).then((p) => arr(p.recentTask as MoRef[] | undefined)) : Promise.resolve([]),
  ]);
  const tasks = [...new Map([...lists[0], ...lists[1]].map((t) => [t.value, t])).values()];
  const out: MoRef[] = [];
  for (const task of tasks) {
    let info: DataObject;
    try {
      info = ((await readProps(ctx.rt, ctx.sc, task, ['info'])).info ?? {}) as DataObject;
    } catch (err) {
      if (isFault(err, 'ManagedObjectNotFound')) continue;
      throw err;
    }
    const entity = info.entity as MoRef | undefined;
    const live = info.state === 'queued' || info.state === 'running';
    if (live && entity?.value === source.value && typeof info.descriptionId === 'string' && info.descriptionId.startsWith('VirtualMachine.clone')) out.push(task);
  }
  return out;
}

/** Powered on, then waited for until Tools report guest operations ready (GuestInfo.guestOperationsReady). */
export async function startClone(ctx: Ctx, vm: MoRef, o: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
  await powerOn(ctx, vm);
  const ready = (v: unknown): v is true => v === true || v === 'true';
  await waitForProperty(ctx, vm, 'guest.guestOperationsReady', ready, { timeoutMs: o.timeoutMs, ...(o.signal ? { signal: o.signal } : {}) });
}

/** Powered off, then destroyed with its files; 'absent' when the host no longer has it. */
export async function destroyVm(ctx: Ctx, vm: MoRef): Promise<'removed' | 'absent'> {
  try {
    await powerOff(ctx, vm);
    await waitForTask(ctx.rt, ctx.sc, await destroyTask(ctx.rt, vm), { host: ctx.endpoint });
    return 'removed';
  } catch (err) {
    if (isFault(err, 'ManagedObjectNotFound')) return 'absent';
    throw err;
  }
}

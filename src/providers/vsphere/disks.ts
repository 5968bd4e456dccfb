// Virtual disks and RDMs on a VM via ReconfigVM_Task, and deletion of leftover vmdk files.
import { InvalidArgument, UnsafeOperation } from '../../errors.ts';
import { freeUnit, hardwareVersion, unitRange, vmHardware } from './controllers.ts';
import { hostConfigManager, type Ctx } from './datastores.ts';
import { isFault, TaskFailed, VsphereClientError } from './fault.ts';
import { forgetDevices, rememberDevices, takeKnownDevices } from './known-devices.ts';
import { deleteVirtualDiskTask, queryAvailableDisksForVmfs, reconfigVMTask, searchDatastoreTask } from './methods.ts';
import { readProps } from './property.ts';
import { generationOf } from './session-scoped.ts';
import type { MoRef } from './soap.ts';
import { waitForTask, waitForTaskWatching } from './task.ts';
import { arr, type DataObject, type HostScsiDisk, type VirtualDevice } from './types.ts';

/** a flat VMDK's provisioning formats (disk.format's flat values) */
export const DISK_FORMATS = ['thin', 'lazyzeroedthick', 'eagerzeroedthick'] as const;
export type DiskFormat = (typeof DISK_FORMATS)[number];
/** an RDM's compatibility mode, by the disk.format value that asks for it */
export const RDM_COMPATIBILITY = { 'rdm-physical': 'physicalMode', 'rdm-virtual': 'virtualMode' } as const;
export type RdmCompatibility = (typeof RDM_COMPATIBILITY)[keyof typeof RDM_COMPATIBILITY];

const SCSI_CONTROLLERS = new Set(['ParaVirtualSCSIController', 'VirtualLsiLogicController', 'VirtualLsiLogicSASController', 'VirtualBusLogicController', 'VirtualSCSIController']);
const OTHER_CONTROLLERS = new Set(['VirtualAHCIController', 'VirtualSATAController', 'VirtualNVMEController', 'VirtualIDEController']);

export function isScsiController(d: VirtualDevice): boolean {
  return SCSI_CONTROLLERS.has(d._type ?? '');
}

export function isController(d: VirtualDevice): boolean {
  return isScsiController(d) || OTHER_CONTROLLERS.has(d._type ?? '');
}

/**
 * The lowest unit number free on `controller`; SCSI skips the controller's own unit (7), and PVSCSI
 * on hardware version ≥ 14 has 64 targets (controllers.ts). undefined when the controller is full.
 */
export function nextFreeUnit(devices: VirtualDevice[], controller: VirtualDevice, hw = 0): number | undefined {
  return freeUnit(devices, controller, hw);
}

export async function vmDevices(ctx: Ctx, vm: MoRef): Promise<VirtualDevice[]> {
  const p = await readProps(ctx.rt, ctx.sc, vm, ['config.hardware.device']);
  return arr(p['config.hardware.device'] as VirtualDevice[] | undefined);
}

/** Pick the controller (given key, else the first SCSI controller) and a free unit on it. */
export function placeDisk(devices: VirtualDevice[], vmLabel: string, controllerKey?: number, unitNumber?: number, hw = 0): { controllerKey: number; unitNumber: number } {
  const controller = controllerKey === undefined ? devices.filter(isScsiController).sort((a, b) => (a.busNumber ?? 0) - (b.busNumber ?? 0))[0] : devices.find((d) => d.key === controllerKey);
  if (!controller || !isController(controller)) {
    throw new InvalidArgument(
      controllerKey === undefined ? `VM ${vmLabel} has no SCSI controller to attach a disk to` : `VM ${vmLabel} has no controller with key ${controllerKey}`,
      { name: 'controllerKey', value: String(controllerKey ?? '') },
    );
  }
  if (unitNumber !== undefined) {
    const taken = devices.some((d) => d.controllerKey === controller.key && d.unitNumber === unitNumber);
    const range = unitRange(controller, hw);
    const reserved = unitNumber === range.reserved;
    if (taken || reserved) {
      throw new InvalidArgument(`unit ${unitNumber} on controller ${controller.key} of VM ${vmLabel} is ${reserved ? 'reserved for the controller' : 'in use'}`, { name: 'unitNumber', value: String(unitNumber) });
    }
    if (!Number.isInteger(unitNumber) || unitNumber < 0 || unitNumber >= range.end) {
      throw new InvalidArgument(`unit ${unitNumber} on controller ${controller.key} of VM ${vmLabel} is out of range (0–${range.end - 1})`, { name: 'unitNumber', value: String(unitNumber) });
    }
    return { controllerKey: controller.key, unitNumber };
  }
  const free = nextFreeUnit(devices, controller, hw);
  if (free === undefined) throw new InvalidArgument(`controller ${controller.key} of VM ${vmLabel} has no free unit`, { name: 'controllerKey', value: String(controller.key) });
  return { controllerKey: controller.key, unitNumber: free };
}

export function datastorePath(datastore: string, fileName: string): string {
  return fileName.startsWith('[') ? fileName : `[${datastore}] ${fileName}`;
}

export interface AttachedDisk {
  key: number;
  fileName: string;
  controllerKey: number;
  unitNumber: number;
  backing: DataObject;
}

/** A disk's capacity in bytes as the host reports it (capacityInBytes, else capacityInKB). */
export function diskCapacityBytes(d: VirtualDevice): number {
  const b = Number(d.capacityInBytes ?? 0);
  return b > 0 ? b : Number(d.capacityInKB ?? 0) * 1024;
}

async function reconfigure(ctx: Ctx, vm: MoRef, deviceChange: DataObject[]): Promise<void> {
  const task = await reconfigVMTask(ctx.rt, vm, { deviceChange });
  await waitForTask(ctx.rt, ctx.sc, task);
}

/**
 * ReconfigVM_Task adding a disk, and the VM's devices as they were when the task's success was
 * reported: the task's filter carries config.hardware.device (task.ts waitForTaskWatching), so
 * finding the new disk's key costs no RetrievePropertiesEx after the task. undefined when the
 * server did not report the devices.
 */
async function reconfigureAdding(ctx: Ctx, vm: MoRef, deviceChange: DataObject[]): Promise<VirtualDevice[] | undefined> {
  const task = await reconfigVMTask(ctx.rt, vm, { deviceChange });
  const { watched } = await waitForTaskWatching(ctx.rt, ctx.sc, task, { obj: vm, paths: ['config.hardware.device'] });
  const devices = watched['config.hardware.device'];
  return devices === undefined ? undefined : arr(devices as VirtualDevice[]);
}

/**
 * The disk at controllerKey:unitNumber after our reconfigure put it there, and the device list it
 * was found in: in `reported` (the devices that came with the task's success), else read from the
 * VM. A list that does not show it yet (a server that reported the task before the device) is read
 * again rather than trusted. The reconfigure succeeded at a unit it asked for, so the disk there is
 * the one it created — unless another client removed it and put another there meanwhile: the disk
 * must carry the file we asked for (`fileName`), else it is not taken as ours (its key would be
 * recorded, and a teardown would remove it).
 */
async function findAt(ctx: Ctx, vm: MoRef, controllerKey: number, unitNumber: number, fileName: string, reported?: VirtualDevice[]): Promise<{ disk: AttachedDisk; devices: VirtualDevice[] }> {
  const at = (devices: VirtualDevice[]) => devices.find((x) => x._type === 'VirtualDisk' && x.controllerKey === controllerKey && x.unitNumber === unitNumber);
  let devices = reported;
  let d = reported && at(reported);
  if (!d) {
    devices = await vmDevices(ctx, vm);
    d = at(devices);
  }
  if (!d) {
    throw new VsphereClientError('not-found', `reconfigure of ${vm.value} succeeded but no disk appeared at ${controllerKey}:${unitNumber}`, { method: 'ReconfigVM_Task', host: ctx.endpoint });
  }
  const backing: DataObject = d.backing ?? {};
  const found = typeof backing.fileName === 'string' ? backing.fileName : '';
  if (found !== fileName) {
    throw new VsphereClientError('bad-reply', `reconfigure of ${vm.value} succeeded but the disk at ${controllerKey}:${unitNumber} is backed by ${found || 'no file'}, not ${fileName}; not taking it as ours`, {
      method: 'ReconfigVM_Task',
      host: ctx.endpoint,
    });
  }
  return { disk: { key: d.key, fileName: found, controllerKey, unitNumber, backing }, devices: devices! };
}

/**
 * The faults by which a host refuses a disk's placement: a unit already taken ("Invalid
 * configuration for device '0'", InvalidDeviceSpec: "if the device configuration is invalid",
 * ReconfigVM_Task in the vSphere Web Services API reference) or a controller key it cannot find
 * (InvalidController, a subtype: "thrown if a device refers to a controller that cannot be
 * found"). A create placed from a device list its session remembered is refused so when the list
 * was stale; it reads the devices and tries once more.
 */
const PLACEMENT_REFUSED = new Set(['InvalidDeviceSpec', 'InvalidController']);

function placementRefused(err: unknown): boolean {
  return (err instanceof TaskFailed && PLACEMENT_REFUSED.has(err.faultName)) || isFault(err, ...PLACEMENT_REFUSED);
}

export interface CreateDiskOptions {
  /** datastore name */
  datastore: string;
  /** file name relative to the datastore root, or a full "[ds] path" */
  fileName: string;
  sizeBytes: number;
  format: DiskFormat;
  controllerKey?: number;
  unitNumber?: number;
  /** default independent_persistent: benchmark disks stay out of snapshots */
  diskMode?: string;
  /** called right before ReconfigVM_Task is sent */
  beforeSend?: () => void | Promise<void>;
  /** a storage policy (SPBM profile id) for the new disk: VirtualDeviceConfigSpec.profile (storage-policy.ts) */
  profileId?: string;
}

export function flatBacking(fileName: string, format: DiskFormat, diskMode: string): DataObject {
  return {
    _type: 'VirtualDiskFlatVer2BackingInfo',
    fileName,
    diskMode,
    thinProvisioned: format === 'thin',
    eagerlyScrub: format === 'eagerzeroedthick',
  };
}

/**
 * The provisioning a flat backing reports (pyvmomi docs/vim/vm/device/VirtualDisk/FlatVer2BackingInfo.rst):
 * thin = thinProvisioned; eager-zeroed thick = eagerlyScrub; neither = lazy-zeroed thick.
 */
export function provisionedFormat(backing: DataObject): DiskFormat {
  if (backing.thinProvisioned === true) return 'thin';
  if (backing.eagerlyScrub === true) return 'eagerzeroedthick';
  return 'lazyzeroedthick';
}

/**
 * Creates a disk and attaches it. The controller and unit come from the VM's devices as this
 * session last saw them after its own disk operation on the VM (known-devices.ts), else from a
 * read. A stale list can only make the host refuse the placement (PLACEMENT_REFUSED); the
 * devices are then read and the create sent once more — nothing is removed or overwritten by a
 * create. `beforeSend` runs before each send (the second sends the same disk and file).
 */
export async function createDisk(ctx: Ctx, vm: MoRef, o: CreateDiskOptions): Promise<AttachedDisk> {
  if (!Number.isSafeInteger(o.sizeBytes) || o.sizeBytes <= 0 || o.sizeBytes % 1024 !== 0) {
    throw new InvalidArgument(`disk size ${o.sizeBytes} must be a positive multiple of 1024 bytes`, { name: 'sizeBytes', value: String(o.sizeBytes) });
  }
  const fileName = datastorePath(o.datastore, o.fileName);
  const generation = generationOf(ctx.rt);
  let known = takeKnownDevices(ctx.rt, vm);
  for (;;) {
    const { devices, hw } = known ?? (await vmHardware(ctx, vm));
    let place: { controllerKey: number; unitNumber: number };
    try {
      place = placeDisk(devices, vm.value, o.controllerKey, o.unitNumber, hw);
    } catch (err) {
      // what the remembered list cannot place (a controller added since, no free unit in it): read
      if (known) {
        known = undefined;
        continue;
      }
      throw err;
    }
    const device: DataObject = {
      _type: 'VirtualDisk',
      key: -1,
      backing: flatBacking(fileName, o.format, o.diskMode ?? 'independent_persistent'),
      controllerKey: place.controllerKey,
      unitNumber: place.unitNumber,
      // Both, consistent: capacityInBytes is required for new disks since API 5.5.
      capacityInKB: o.sizeBytes / 1024,
      capacityInBytes: o.sizeBytes,
    };
    // before each send (the ledger's `sent`, same data): the executor refuses a send once the step gave up
    await o.beforeSend?.();
    let reported: VirtualDevice[] | undefined;
    try {
      const profile = o.profileId ? { profile: [{ _type: 'VirtualMachineDefinedProfileSpec', profileId: o.profileId }] } : {};
      reported = await reconfigureAdding(ctx, vm, [{ operation: 'add', fileOperation: 'create', device, ...profile }]);
    } catch (err) {
      // placed from a remembered list and refused for the placement: read, and once more
      if (known && placementRefused(err)) {
        known = undefined;
        continue;
      }
      throw err;
    }
    const { disk, devices: after } = await findAt(ctx, vm, place.controllerKey, place.unitNumber, fileName, reported);
    rememberDevices(ctx.rt, vm, { devices: after, hw }, generation);
    return disk;
  }
}

export interface AttachRdmOptions {
  deviceCanonicalName: string;
  compatibilityMode: RdmCompatibility;
  /** datastore that holds the mapping file */
  datastore: string;
  fileName: string;
  controllerKey?: number;
  unitNumber?: number;
  /** when given, the LUN must be listed here and unused on the host (benchmarks overwrite it) */
  allowedDevices?: readonly string[];
  /** called after every guard passed, right before ReconfigVM_Task is sent */
  beforeSend?: () => void | Promise<void>;
}

export async function hostLuns(ctx: Ctx, host: MoRef): Promise<HostScsiDisk[]> {
  const { storageSystem } = await hostConfigManager(ctx, host);
  const p = await readProps(ctx.rt, ctx.sc, storageSystem, ['storageDeviceInfo']);
  const info = p.storageDeviceInfo as DataObject | undefined;
  return arr(info?.scsiLun as HostScsiDisk[] | undefined);
}

export async function attachRdm(ctx: Ctx, vm: MoRef, o: AttachRdmOptions): Promise<AttachedDisk> {
  const dev = o.deviceCanonicalName;
  const target = `${dev} on ${ctx.endpoint}`;
  if (o.allowedDevices && !o.allowedDevices.includes(dev)) {
    throw new UnsafeOperation(`refusing to map ${dev} as RDM: it is not in the inventory's allowedDevices (${o.allowedDevices.join(', ') || 'none'})`, { operation: 'ReconfigVM_Task', target });
  }
  const vmProps = await readProps(ctx.rt, ctx.sc, vm, ['runtime.host', 'config.hardware.device', 'config.version']);
  const host = vmProps['runtime.host'] as MoRef | undefined;
  if (!host) throw new VsphereClientError('not-found', `VM ${vm.value} has no runtime.host`, { method: 'RetrievePropertiesEx', host: ctx.endpoint });
  const lun = (await hostLuns(ctx, host)).find((l) => l.canonicalName === dev);
  if (!lun || lun.lunType !== 'disk') {
    throw new InvalidArgument(`host ${host.value} has no SCSI disk ${dev}`, { name: 'deviceCanonicalName', value: dev });
  }
  if (o.allowedDevices) {
    const { datastoreSystem } = await hostConfigManager(ctx, host);
    const free = await queryAvailableDisksForVmfs(ctx.rt, datastoreSystem);
    if (!free.some((d) => d.canonicalName === dev)) {
      throw new UnsafeOperation(`refusing to map ${dev} as RDM: the host reports it in use`, { operation: 'ReconfigVM_Task', target });
    }
  }
  const devices = arr(vmProps['config.hardware.device'] as VirtualDevice[] | undefined);
  const place = placeDisk(devices, vm.value, o.controllerKey, o.unitNumber, hardwareVersion(vmProps['config.version']));
  const capacityBytes = lun.capacity ? lun.capacity.block * lun.capacity.blockSize : 0;
  const backing: DataObject = {
    _type: 'VirtualDiskRawDiskMappingVer1BackingInfo',
    fileName: datastorePath(o.datastore, o.fileName),
    lunUuid: lun.uuid,
    deviceName: lun.devicePath ?? lun.deviceName,
    compatibilityMode: o.compatibilityMode,
    // diskMode does not apply to physical compatibility (no snapshots at all).
    diskMode: o.compatibilityMode === 'virtualMode' ? 'independent_persistent' : undefined,
  };
  const device: DataObject = {
    _type: 'VirtualDisk',
    key: -1,
    backing,
    controllerKey: place.controllerKey,
    unitNumber: place.unitNumber,
    capacityInKB: Math.floor(capacityBytes / 1024),
  };
  await o.beforeSend?.();
  const reported = await reconfigureAdding(ctx, vm, [{ operation: 'add', fileOperation: 'create', device }]);
  return (await findAt(ctx, vm, place.controllerKey, place.unitNumber, backing.fileName as string, reported)).disk;
}

/**
 * Remove a disk from the VM, optionally deleting its file(s). 'absent' if no such device. What is
 * removed is what the VM carries under `key` now (read here, every time: never a remembered
 * list); that read, minus the removed disk, is what the session then knows of the VM's devices
 * for its next create's placement (known-devices.ts).
 */
export async function detachDisk(ctx: Ctx, vm: MoRef, key: number, opts: { deleteFile: boolean }): Promise<'removed' | 'absent'> {
  const generation = generationOf(ctx.rt);
  forgetDevices(ctx.rt, vm);
  const { devices, hw } = await vmHardware(ctx, vm);
  const device = devices.find((d) => d.key === key);
  if (!device) {
    rememberDevices(ctx.rt, vm, { devices, hw }, generation);
    return 'absent';
  }
  if (device._type !== 'VirtualDisk') {
    throw new InvalidArgument(`device ${key} of VM ${vm.value} is a ${device._type ?? 'device'}, not a disk`, { name: 'key', value: String(key) });
  }
  // Only what identifies the device; echoing every read-only field back invites InvalidDeviceSpec.
  const ref: DataObject = {
    _type: 'VirtualDisk',
    key: device.key,
    backing: device.backing,
    controllerKey: device.controllerKey,
    unitNumber: device.unitNumber,
    capacityInKB: device.capacityInKB ?? 0,
  };
  await reconfigure(ctx, vm, [{ operation: 'remove', fileOperation: opts.deleteFile ? 'destroy' : undefined, device: ref }]);
  rememberDevices(ctx.rt, vm, { devices: devices.filter((d) => d.key !== key), hw }, generation);
  return 'removed';
}

/** `[ds] dir/name.vmdk` → datastore name, folder path (`[ds] dir` or `[ds]`) and file name. */
export function splitDatastorePath(path: string): { datastore: string; folder: string; file: string } | undefined {
  const m = /^\[([^\]]+)\]\s*(.*)$/.exec(path);
  if (!m || m[2] === undefined || m[2] === '' || m[2].endsWith('/')) return undefined;
  const rel = m[2];
  const slash = rel.lastIndexOf('/');
  const dir = slash < 0 ? '' : rel.slice(0, slash);
  return { datastore: m[1]!, folder: dir ? `[${m[1]}] ${dir}` : `[${m[1]}]`, file: rel.slice(slash + 1) };
}

/** The Datacenter a datastore belongs to: up its `parent` chain (datastore folder(s) → datacenter). */
export async function datacenterOf(ctx: Ctx, obj: MoRef): Promise<MoRef> {
  let cur = obj;
  for (let depth = 0; depth < 32; depth++) {
    const parent = (await readProps(ctx.rt, ctx.sc, cur, ['parent'])).parent as MoRef | undefined;
    if (!parent) break;
    if (parent.type === 'Datacenter') return parent;
    cur = parent;
  }
  throw new VsphereClientError('not-found', `${obj.type} ${obj.value} on ${ctx.endpoint} is in no datacenter`, { method: 'RetrievePropertiesEx', host: ctx.endpoint });
}

/**
 * Whether `[ds] dir/name` exists, asked of the datastore's own browser (SearchDatastore_Task with
 * the exact name as matchPattern). A missing folder is an answer too (FileNotFound: not there).
 */
export async function datastoreFileExists(ctx: Ctx, datastore: MoRef, path: string): Promise<boolean> {
  const parts = splitDatastorePath(path);
  if (!parts) throw new InvalidArgument(`${path} is not a datastore file path like "[datastore] dir/name.vmdk"`, { name: 'fileName', value: path });
  const browser = (await readProps(ctx.rt, ctx.sc, datastore, ['browser'])).browser as MoRef | undefined;
  if (!browser) throw new VsphereClientError('unsupported', `datastore ${parts.datastore} on ${ctx.endpoint} has no browser`, { method: 'SearchDatastore_Task', host: ctx.endpoint });
  let result: unknown;
  try {
    const task = await searchDatastoreTask(ctx.rt, browser, parts.folder, { _type: 'HostDatastoreBrowserSearchSpec', matchPattern: [parts.file] });
    result = await waitForTask(ctx.rt, ctx.sc, task);
  } catch (err) {
    if (err instanceof TaskFailed && err.faultName === 'FileNotFound') return false;
    throw err;
  }
  const files = arr((result as DataObject | undefined)?.file as DataObject[] | undefined);
  return files.some((f) => f.path === parts.file);
}

/**
 * Delete a vmdk (descriptor + extents) that no VM holds any more, on `datastore`. Looks first and
 * says 'absent' only when the datastore's browser does not list the file; vCenter needs the
 * datacenter of a datastore path (VirtualDiskManager.DeleteVirtualDisk_Task: "datacenter … required
 * if the name is a datastore path" when connected to vCenter, pyvmomi docs/vim/VirtualDiskManager.rst),
 * so it is looked up from the datastore, never guessed. Any fault of the delete is the caller's
 * (remove-failed), and a file still listed afterwards is an error, not 'removed'.
 */
export async function deleteVirtualDisk(ctx: Ctx, fileName: string, datastore: MoRef): Promise<'removed' | 'absent'> {
  if (!ctx.sc.virtualDiskManager) throw new VsphereClientError('unsupported', `${ctx.endpoint} has no VirtualDiskManager`, { method: 'DeleteVirtualDisk_Task', host: ctx.endpoint });
  if (!(await datastoreFileExists(ctx, datastore, fileName))) return 'absent';
  const dc = await datacenterOf(ctx, datastore);
  const task = await deleteVirtualDiskTask(ctx.rt, ctx.sc.virtualDiskManager, fileName, dc);
  await waitForTask(ctx.rt, ctx.sc, task);
  if (await datastoreFileExists(ctx, datastore, fileName)) {
    throw new VsphereClientError('bad-reply', `DeleteVirtualDisk_Task on ${fileName} succeeded but the datastore still lists the file`, { method: 'DeleteVirtualDisk_Task', host: ctx.endpoint });
  }
  return 'removed';
}

// PURE: the vSphere steps of one permutation, from its axes and the target. No I/O; the result is
// what `run --dry-run --json` prints and all that `apply` later consumes (plus the target's
// connection and allow-list, which never appear in a plan).
import path from 'node:path';
import { InvalidArgument } from '../../errors.ts';
import type { Axes } from '../../contract/axis.ts';
import type { PlannedStep } from '../../contract/provider.ts';
import { checkVmfsBlockSize, isVmfsKind } from '../vmfs-block-size.ts';
import { checkBlockSizeKbSupported, checkNvmeSupported, checkVmfs3FileSize, checkVmfsCreatable, parseEsxiVersion } from '../esxi-version.ts';
import { GUEST_DISK_OPERATION, GUEST_FS_OPERATION, LINUX_GUEST_FILESYSTEMS } from '../guest-disk.ts';
import { createNasDatastore, createVmfsDatastore, guestDisk, guestFilesystem, guestSettings, reconfigVm, windowsGuestDisk, windowsGuestVolume, windowsWriteCache } from './operations/index.ts';
import { GUEST_WINDOWS_DISK_OPERATION, GUEST_WINDOWS_VOLUME_OPERATION } from './operations/windows-guest-disk.ts';
import { RDM_COMPATIBILITY } from './disks.ts';
import { GUEST_FILESYSTEMS as WINDOWS_GUEST_FILESYSTEMS, VOLUME_SPECS } from '../hyperv/guest-volume.ts';
import { guestSettingsWanted, writeCacheWanted } from '../guest-settings-axes.ts';
import { VSPHERE_BLOCK_SIZES_KB, VSPHERE_BLOCK_SIZES_MB, VSPHERE_CONTROLLERS, VSPHERE_DATASTORE_KINDS, VSPHERE_DISK_FORMATS } from './axes.ts';
import type { VsphereStepTarget } from './config.ts';
import { cloneKindOf, memberSteps, vmCountOf, VM_COUNT_AXIS } from './vm-count.ts';

// the guest-disk step's operations (operations/guest-disk.ts, operations/windows-guest-disk.ts)
export { GUEST_DISK_OPERATION, GUEST_FS_OPERATION, GUEST_WINDOWS_DISK_OPERATION, GUEST_WINDOWS_VOLUME_OPERATION };

export type DatastoreKind = (typeof VSPHERE_DATASTORE_KINDS)[number];
/** a VMFS kind's vmfsMajorVersion (CreateVmfsDatastore) */
const VMFS_MAJOR = { vmfs3: 3, vmfs5: 5, vmfs6: 6 } as const;
export type DiskFormatAxis = (typeof VSPHERE_DISK_FORMATS)[number];

function bad(axis: string, value: unknown, expected: string): never {
  throw new InvalidArgument(`axis ${axis} = ${JSON.stringify(value)}: expected ${expected}`, { name: axis, value: String(value) });
}

function oneOf<T extends string>(axes: Axes, axis: string, allowed: readonly T[], fallback?: T): T {
  const v = axes[axis] ?? fallback;
  if (v === undefined) bad(axis, v, `one of ${allowed.join(', ')}`);
  if (!allowed.includes(v as T)) bad(axis, v, `one of ${allowed.join(', ')}`);
  return v as T;
}

function num(axes: Axes, axis: string, allowed?: readonly number[]): number | undefined {
  const v = axes[axis];
  if (v === undefined) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n) || n <= 0) bad(axis, v, allowed ? `one of ${allowed.join(', ')}` : 'a positive number');
  if (allowed && !allowed.includes(n)) bad(axis, v, `one of ${allowed.join(', ')}`);
  return n;
}

function need<T>(value: T | undefined, key: string, why: string): T {
  if (value === undefined || value === '') {
    throw new InvalidArgument(`vSphere target needs ${key} ${why}`, { name: key, value: '' });
  }
  return value;
}

/**
 * Plan entries that are the same for every permutation of a target (a controller step's arguments,
 * the list of what a LUN step destroys): made once per target and frozen, then shared. A plan is
 * read-only data; 100,000 permutations would otherwise hold 100,000 copies.
 */
const sharedEntries = new WeakMap<VsphereStepTarget, Map<string, unknown>>();
function shared<T extends object>(target: VsphereStepTarget, key: string, make: () => T): T {
  let m = sharedEntries.get(target);
  if (!m) sharedEntries.set(target, (m = new Map<string, unknown>()));
  let v = m.get(key) as T | undefined;
  if (!v) m.set(key, (v = Object.freeze(make())));
  return v;
}

type Kind = (typeof VSPHERE_DATASTORE_KINDS)[number];
type Format = (typeof VSPHERE_DISK_FORMATS)[number];
type Controller = (typeof VSPHERE_CONTROLLERS)[number];
/** a permutation's choices the steps after the datastore need */
interface Disk {
  kind: Kind;
  datastore: string;
  controller: Controller | undefined;
  blockSizeMb: number | undefined;
  prefix: string;
}

export function planVsphereSteps(axes: Axes, target: VsphereStepTarget, names: { prefix: string }): PlannedStep[] {
  const kind = oneOf(axes, 'datastore.kind', VSPHERE_DATASTORE_KINDS, target.datastore ? 'existing' : undefined);
  const format = oneOf(axes, 'disk.format', VSPHERE_DISK_FORMATS);
  const controller = axes['disk.controller'] === undefined ? undefined : oneOf(axes, 'disk.controller', VSPHERE_CONTROLLERS);
  const { blockSizeMb, blockSizeKb } = blockSizes(axes, kind);
  // Argument objects spell their keys out (absent values are undefined, dropped by JSON): object
  // spreads give each of 100,000 plan entries its own V8 hidden class, doubling time and memory.
  const steps: PlannedStep[] = [];
  const datastore = datastoreStep(target, kind, format, names.prefix, blockSizeMb, blockSizeKb, steps);
  if (controller !== undefined) {
    if (controller === 'nvme') checkNvmeSupported(target.version === undefined ? undefined : parseEsxiVersion(target.version), target.host);
    // The disk goes on a controller of this type: one the VM has with a free unit, else one this
    // step adds (and teardown removes). controllers.ts has the limits a host enforces.
    steps.push(reconfigVm.step({
      step: 'controller',
      arguments: shared(target, `controller ${controller}`, () => ({ host: target.host, vm: target.vm, datacenter: target.datacenter, deviceChange: 'add' as const, device: 'controller' as const, controller })),
      destructive: false,
      creates: { kind: 'controller', name: `${names.prefix}-ctl` },
    }));
  }
  const disk: Disk = { kind, datastore, controller, blockSizeMb, prefix: names.prefix };
  const count = vmCountOf(axes);
  const clone = cloneKindOf(axes, count);
  if (count !== undefined) {
    // N clones of the target's VM, each with its own disk on the datastore (vm-count.ts)
    if (target.guestOs === 'windows') bad(VM_COUNT_AXIS, count, 'no value with a Windows guest (clones of Linux guests only for now)');
    const flat = format as Exclude<Format, 'rdm-physical' | 'rdm-virtual'>;
    return [...steps, ...memberSteps(count, target, names.prefix, (member, prefix) => flatDiskSteps(axes, member, flat, { ...disk, prefix }), clone)];
  }
  if (format === 'rdm-physical' || format === 'rdm-virtual') steps.push(...rdmSteps(axes, target, format, disk));
  else steps.push(...flatDiskSteps(axes, target, format, disk));
  const settings = guestSettingsWanted(axes, target.guestOs);
  // after guest-disk (it finds the disk), torn down before it: restored while the disk is attached
  if (settings) steps.push(guestSettings.step({ step: 'guest-settings', arguments: { host: target.host, vm: target.vm, datacenter: target.datacenter, ...settings }, destructive: false, creates: { kind: 'guest-settings', name: `${names.prefix}-guest-settings` } }));
  // the Windows guest's: the disk's write cache (../windows-write-cache.ts), after guest-disk like the Linux settings
  const cache = writeCacheWanted(axes, target.guestOs);
  if (cache) steps.push(windowsWriteCache.step({ step: 'guest-settings', arguments: { host: target.host, vm: target.vm, datacenter: target.datacenter, ...cache }, destructive: false, creates: { kind: 'guest-write-cache', name: `${names.prefix}-guest-write-cache` } }));
  return steps;
}

/** The block size axes: one of them at most, only on a VMFS kind, as the VMFS rule allows. */
function blockSizes(axes: Axes, kind: Kind): { blockSizeMb: number | undefined; blockSizeKb: number | undefined } {
  const blockSizeMb = num(axes, 'datastore.blockSizeMb', VSPHERE_BLOCK_SIZES_MB);
  const blockSizeKb = num(axes, 'datastore.blockSizeKb', VSPHERE_BLOCK_SIZES_KB);
  if (blockSizeMb !== undefined && blockSizeKb !== undefined) bad('datastore.blockSizeKb', axes['datastore.blockSizeKb'], 'no value when datastore.blockSizeMb is set');
  const blockAxis = blockSizeKb !== undefined ? 'datastore.blockSizeKb' : 'datastore.blockSizeMb';
  const blockSize = blockSizeKb ?? blockSizeMb;
  if (blockSize !== undefined) {
    if (!isVmfsKind(kind)) bad(blockAxis, blockSize, `no block size with datastore.kind ${kind}`);
    checkVmfsBlockSize(kind, blockAxis, blockSize); // the one VMFS rule (../vmfs-block-size.ts)
  }
  return { blockSizeMb, blockSizeKb };
}

/** The datastore step of the kind (none for `existing`); the datastore's name. */
function datastoreStep(target: VsphereStepTarget, kind: Kind, format: Format, prefix: string, blockSizeMb: number | undefined, blockSizeKb: number | undefined, steps: PlannedStep[]): string {
  if (kind === 'existing') return need(target.datastore, 'datastore', 'for datastore.kind existing');
  const datastore = `${prefix}-ds`;
  if (kind === 'nfs') {
    const nfs = need(target.nfs, 'nfs (remoteHost, remotePath)', 'for datastore.kind nfs');
    // "On NFS datastores that do not support Hardware Acceleration, only thin format is available"
    // (vSphere 6.5–8.0 docs, "About Virtual Disk Provisioning Policies"): without VAAI-NAS a thick
    // disk comes back thin (mislabelled results) or fails. With it, the provider still compares
    // the backing it got with the format asked for (operations/disk.ts).
    if (!nfs.vaaiNas && (format === 'lazyzeroedthick' || format === 'eagerzeroedthick')) {
      bad('disk.format', format, 'thin with datastore.kind nfs: an NFS datastore without VAAI-NAS (the inventory\'s nfs.vaaiNas) has thin disks only');
    }
    steps.push(createNasDatastore.step({
      step: 'datastore',
      arguments: { host: target.host, vm: target.vm, datacenter: target.datacenter, name: datastore, remoteHost: nfs.remoteHost, remotePath: nfs.remotePath, type: 'NFS', accessMode: 'readWrite' },
      destructive: false,
      creates: { kind: 'datastore', name: datastore },
    }));
    return datastore;
  }
  const device = need(target.vmfsDevice, 'vmfsDevice', `to create a ${kind} datastore`);
  // what the host's release cannot create is refused before the LUN is formatted
  const release = target.version === undefined ? undefined : parseEsxiVersion(target.version);
  checkVmfsCreatable(kind, release, target.host);
  if (blockSizeKb !== undefined) checkBlockSizeKbSupported(release, target.host);
  steps.push(createVmfsDatastore.step({
    step: 'datastore',
    arguments: { host: target.host, vm: target.vm, datacenter: target.datacenter, name: datastore, device, vmfsMajorVersion: VMFS_MAJOR[kind], blockSizeMb, blockSizeKb },
    destructive: true,
    destroys: shared(target, `destroys ${device}`, () => [device]),
    creates: { kind: 'datastore', name: datastore },
  }));
  return datastore;
}

/** An RDM of rdmDevice, and the guest-disk step that finds it. */
function rdmSteps(axes: Axes, target: VsphereStepTarget, format: 'rdm-physical' | 'rdm-virtual', d: Disk): PlannedStep[] {
  const device = need(target.rdmDevice, 'rdmDevice', `for disk.format ${format}`);
  if (d.kind === 'nfs') bad('disk.format', format, 'a flat disk format with datastore.kind nfs (RDM mapping files need VMFS)');
  if (d.kind !== 'existing' && device === target.vmfsDevice) bad('disk.format', format, `an RDM device other than the VMFS device ${device}`);
  if (axes['disk.policy'] !== undefined) bad('disk.policy', axes['disk.policy'], 'no value with an RDM disk.format (a policy applies to a virtual disk here)');
  const name = `${d.prefix}-rdm`;
  const rdm = reconfigVm.step({
    step: 'disk',
    arguments: {
      host: target.host,
      vm: target.vm,
      datacenter: target.datacenter,
      deviceChange: 'add+create',
      backing: 'rdm',
      device,
      compatibilityMode: RDM_COMPATIBILITY[format],
      datastore: d.datastore,
      fileName: `${name}.vmdk`,
      controller: d.controller,
    },
    // The benchmark overwrites whatever the LUN holds.
    destructive: true,
    destroys: shared(target, `destroys ${device}`, () => [device]),
    creates: { kind: 'rdm', name },
  });
  return [rdm, guestDiskStep(axes, target, name, d.prefix, shared(target, `destroys ${device}`, () => [device]))];
}

/** A flat VMDK of the format and size, and the guest-disk step that finds it. */
function flatDiskSteps(axes: Axes, target: VsphereStepTarget, format: Exclude<Format, 'rdm-physical' | 'rdm-virtual'>, d: Disk): PlannedStep[] {
  const sizeGb = num(axes, 'disk.sizeGb');
  if (sizeGb === undefined) bad('disk.sizeGb', undefined, 'a positive number of GiB for a virtual disk');
  if (d.kind === 'vmfs3') checkVmfs3FileSize(d.blockSizeMb ?? 1, sizeGb);
  const name = `${d.prefix}-disk`;
  const disk = reconfigVm.step({
    step: 'disk',
    arguments: {
      host: target.host,
      vm: target.vm,
      datacenter: target.datacenter,
      deviceChange: 'add+create',
      backing: 'flat',
      format,
      datastore: d.datastore,
      fileName: `${name}.vmdk`,
      sizeGb,
      sizeBytes: Math.round(sizeGb * 1024 ** 3),
      controller: d.controller,
      ...(axes['disk.policy'] !== undefined ? { policy: String(axes['disk.policy']) } : {}),
    },
    destructive: false,
    creates: { kind: 'disk', name },
  });
  return [disk, guestDiskStep(axes, target, name, d.prefix)];
}

/**
 * The disk the previous step attached, found in the guest by its WWN and checked (a blank disk of
 * the provisioned size, not the system disk: providers/guest-disk.ts); the workload measures it.
 * Raw, it writes nothing: the disk step's `destroys` already names an RDM's LUN. A Linux
 * filesystem or a Windows volume step writes a partition table on the disk: on an RDM it names the
 * LUN it destroys (`rdmLun`) too.
 */
function guestDiskStep(axes: Axes, target: VsphereStepTarget, disk: string, prefix: string, rdmLun?: readonly string[]): PlannedStep {
  const where = { host: target.host, vm: target.vm, datacenter: target.datacenter, disk };
  // a partition table and a filesystem written on the disk: on an RDM that is the LUN itself, named as the disk step names it
  const writes = { step: 'guest-disk', destructive: rdmLun !== undefined, ...(rdmLun ? { destroys: [...rdmLun] } : {}) };
  if (target.guestOs === 'windows') {
    const filesystem = oneOf(axes, 'guest.filesystem', WINDOWS_GUEST_FILESYSTEMS, 'raw');
    if (filesystem === 'raw') return windowsGuestDisk.step({ step: 'guest-disk', arguments: { ...where, filesystem }, destructive: false });
    // GPT, one partition, formatted (the Hyper-V guest's cmdlets: ../hyperv/windows-guest-volume.ts);
    // cleared at teardown (Clear-Disk) only when the disk holds nothing but what this step made
    const spec = VOLUME_SPECS[filesystem];
    return windowsGuestVolume.step({ ...writes, arguments: { ...where, filesystem, fileSystem: spec.fileSystem, allocationUnitBytes: spec.allocationUnitBytes }, creates: { kind: 'guest-volume', name: `${prefix}-volume` } });
  }
  const filesystem = oneOf(axes, 'guest.filesystem', LINUX_GUEST_FILESYSTEMS, 'raw');
  if (filesystem === 'raw') return guestDisk.step({ step: 'guest-disk', arguments: { ...where, filesystem }, destructive: false });
  // One GPT partition, mkfs, mounted in a directory of ours: torn down (unmounted, our table wiped)
  // before the disk is detached. Nothing but the disk this permutation attached is touched.
  const name = `${prefix}-fs`;
  const workdir = need(target.guestWorkdir, 'guest.workdir', `to mount guest.filesystem ${filesystem}`);
  return guestFilesystem.step({ ...writes, arguments: { ...where, filesystem, mountpoint: path.posix.join(workdir, name) }, creates: { kind: 'guest-filesystem', name } });
}

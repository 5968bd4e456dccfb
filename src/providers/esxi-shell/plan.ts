// Pure: one permutation's axes + the host's target config → the ESXi-shell steps. No I/O; the
// arguments recorded here are exactly what apply() will send (what `run --dry-run` shows).
import { InvalidArgument } from '../../errors.ts';
import type { Axes, AxisValue } from '../../contract/axis.ts';
import type { PlannedStep } from '../../contract/provider.ts';
import { ESXI_SHELL_DATASTORE_KINDS, ESXI_SHELL_DISK_FORMATS, VMDK_FORMAT_OF, type EsxiDiskFormat } from './axes.ts';
import { checkEsxiShellTarget, type EsxiShellTargetConfig } from './config.ts';
import { VMFS_GPT_GUID, VMFS_MBR_TYPE, type VmfsKind } from './partedutil.ts';
import { checkEsxi, checkInt, ESXI_MAX_DISK_GB } from './validate.ts';
import { checkBlockSize } from './vmkfstools.ts';
import { checkVmfs3FileSize, checkVmfsCreatable, parseEsxiVersion } from '../esxi-version.ts';
import { isLinuxGuestFilesystem, LINUX_GUEST_FILESYSTEMS, wwnOfLun } from '../guest-disk.ts';
import { RDM_MODES } from './operations/create-rdm.ts';
import { attach, createDisk, createRdmPhysical, createRdmVirtual, createVmfs, guestDisk, guestFilesystem, partition } from './operations/index.ts';
import path from 'node:path';

export type DatastoreKind = VmfsKind | 'existing';
export type { EsxiDiskFormat };

/** Owned names derive from `base` = `ss-<runId>-<permutationId>` (see ownedBase). */
export interface OwnedNames {
  base: string;
}

export function ownedBase(runId: string, permutationId: string): string {
  return checkEsxi('label', `ss-${runId}-${permutationId}`, 'owned name');
}

function axis(axes: Axes, key: string): AxisValue {
  const v = axes[key];
  if (v === undefined) throw new InvalidArgument(`axis ${key} is required by the esxi-shell provider`, { name: key, value: '' });
  return v;
}

/** The axis's value, one of `allowed` (its values as axes.ts states them). */
function oneOf<T extends AxisValue>(axes: Axes, key: string, allowed: readonly T[]): T {
  const v = axis(axes, key);
  if (!(allowed as readonly AxisValue[]).includes(v)) throw new InvalidArgument(`axis ${key}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`, { name: key, value: String(v) });
  return v as T;
}

type Target = ReturnType<typeof checkEsxiShellTarget>;
type Kind = (typeof ESXI_SHELL_DATASTORE_KINDS)[number];
/** how the guest will name the disk: a VMDK's or virtual RDM's uuid (vmkfstools -J getuuid), a physical RDM's LUN id */
type Identity = { path: string; by: 'disk uuid' | 'LUN id'; lun?: string; sizeBytes?: number };

export function planEsxiShellSteps(axes: Axes, targetIn: EsxiShellTargetConfig, names: OwnedNames): PlannedStep[] {
  const target = checkEsxiShellTarget(targetIn);
  const base = checkEsxi('label', names.base, 'owned name');
  const kind = oneOf(axes, 'datastore.kind', ESXI_SHELL_DATASTORE_KINDS);
  const format = oneOf(axes, 'disk.format', ESXI_SHELL_DISK_FORMATS);
  const steps: PlannedStep[] = [];
  const volumePath = datastoreSteps(axes, target, base, kind, format, steps);
  const diskPath = checkEsxi('vmdkPath', `${volumePath}/${base}-disk.vmdk`, 'disk path');
  const identity = diskStep(axes, target, base, kind, format, diskPath, steps);
  steps.push(attach.step({
    step: 'attach',
    // on the lowest free unit of the bus (apply reads the VM's devices): the guest-disk step finds
    // the disk by its identity, so no unit is fixed in the inventory
    arguments: { vmid: target.vmid, path: diskPath, bus: target.scsiBus },
    destructive: false,
    creates: { kind: 'disk-attachment', name: `${base}-attach` },
  }));
  steps.push(guestDiskStep(axes, target, base, identity));
  return steps;
}

/** The partition and datastore steps of a VMFS kind (none for `existing`); the datastore's volume path. */
function datastoreSteps(axes: Axes, target: Target, base: string, kind: Kind, format: EsxiDiskFormat, steps: PlannedStep[]): string {
  if (kind === 'existing') {
    const blockSizeMb = axes['datastore.blockSizeMb'];
    // an existing datastore keeps its block size: a block size axis would only repeat the permutation
    if (blockSizeMb !== undefined) throw new InvalidArgument(`axis datastore.blockSizeMb = ${JSON.stringify(blockSizeMb)}: expected no block size with datastore.kind existing`, { name: 'datastore.blockSizeMb', value: String(blockSizeMb) });
    if (!target.datastoreVolumePath) throw new InvalidArgument(`${target.host}: datastore.kind existing needs datastoreVolumePath in the inventory`, { name: 'datastoreVolumePath', value: '' });
    return target.datastoreVolumePath;
  }
  const device = target.vmfsDevice;
  if (!device) throw new InvalidArgument(`${target.host}: datastore.kind ${kind} needs vmfsDevice in the inventory`, { name: 'vmfsDevice', value: '' });
  const blockSizeMb = checkBlockSize(kind, axes['datastore.blockSizeMb'] ?? 1);
  // what this host's release cannot create is refused before the LUN is partitioned
  checkVmfsCreatable(kind, target.version === undefined ? undefined : parseEsxiVersion(target.version), target.host);
  if (kind === 'vmfs3' && format in VMDK_FORMAT_OF) {
    checkVmfs3FileSize(blockSizeMb, checkInt(axis(axes, 'disk.sizeGb'), 'disk.sizeGb', 1, ESXI_MAX_DISK_GB));
  }
  const label = checkEsxi('label', `${base}-ds`, 'datastore label');
  const volumePath = `/vmfs/volumes/${label}`;
  steps.push(partition.step({
    step: 'partition',
    arguments: { device, vmfsVersion: kind, label: kind === 'vmfs3' ? 'msdos' : 'gpt', partition: 1, startSector: kind === 'vmfs3' ? 128 : 2048, endSector: 'last usable (partedUtil getUsableSectors)', type: kind === 'vmfs3' ? VMFS_MBR_TYPE : VMFS_GPT_GUID },
    destructive: true,
    destroys: [device],
    creates: { kind: 'vmfs-partition', name: `${base}-part` },
  }));
  steps.push(createVmfs.step({
    step: 'datastore',
    arguments: { device, partition: 1, vmfsVersion: kind, blockSizeMb, label, volumePath },
    destructive: true,
    destroys: [device],
    creates: { kind: 'datastore', name: label },
  }));
  return volumePath;
}

/** The disk step: an RDM of rdmDevice, or a VMDK of the format and size; what the guest will name it by. */
function diskStep(axes: Axes, target: Target, base: string, kind: Kind, format: EsxiDiskFormat, diskPath: string, steps: PlannedStep[]): Identity {
  const diskName = `${base}-disk`;
  if (format === 'rdm-physical' || format === 'rdm-virtual') {
    const device = target.rdmDevice;
    if (!device) throw new InvalidArgument(`${target.host}: disk.format ${format} needs rdmDevice in the inventory`, { name: 'rdmDevice', value: '' });
    // the datastore holding the mapping file was just made on vmfsDevice: the LUN mapped raw must be another one
    // (the vSphere planner's rule too); apply would refuse it as partitioned, validate refuses it first
    if (kind !== 'existing' && device === target.vmfsDevice) {
      throw new InvalidArgument(`axis disk.format = ${JSON.stringify(format)}: expected an RDM device other than the VMFS device ${device} (the datastore holding the mapping file is made on it, and the workload would overwrite it)`, { name: 'disk.format', value: format });
    }
    const { mode } = RDM_MODES[format];
    // a physical RDM passes the LUN's inquiry data through: the guest names it by the LUN's NAA id,
    // and an eui./t10./mpx. LUN has none to find it by
    if (mode === 'physical' && !wwnOfLun(device)) {
      throw new InvalidArgument(`axis disk.format = "rdm-physical": expected an rdmDevice with an NAA id (naa.<hex>), got ${device}: the guest names a physical RDM by the LUN's WWN, and ${device} has none, so the disk could not be found in the guest by identity`, { name: 'disk.format', value: format });
    }
    const rdm = { step: 'disk', destructive: true, destroys: [device], creates: { kind: 'rdm', name: diskName } };
    // the workload writes to a LUN this run did not create
    steps.push(mode === 'physical' ? createRdmPhysical.step({ ...rdm, arguments: { device, path: diskPath, compatibilityMode: mode } }) : createRdmVirtual.step({ ...rdm, arguments: { device, path: diskPath, compatibilityMode: mode } }));
    return { path: diskPath, by: mode === 'physical' ? 'LUN id' : 'disk uuid', lun: device };
  }
  const sizeGb = checkInt(axis(axes, 'disk.sizeGb'), 'disk.sizeGb', 1, ESXI_MAX_DISK_GB);
  steps.push(createDisk.step({
    step: 'disk',
    arguments: { path: diskPath, sizeGb, format: VMDK_FORMAT_OF[format] },
    destructive: false,
    creates: { kind: 'disk', name: diskName },
  }));
  return { path: diskPath, by: 'disk uuid', sizeBytes: sizeGb * 1024 ** 3 };
}

/**
 * The disk found in the guest by its WWN and checked (../guest-disk.ts); for ext4/xfs partitioned,
 * formatted and mounted in a directory of ours. It writes nothing but to the disk just attached:
 * an RDM's LUN is already named by the disk step's `destroys`.
 */
function guestDiskStep(axes: Axes, target: Target, base: string, identity: Identity): PlannedStep {
  const filesystem = axes['guest.filesystem'] ?? 'raw';
  if (!isLinuxGuestFilesystem(filesystem)) {
    throw new InvalidArgument(`axis guest.filesystem = ${JSON.stringify(filesystem)}: expected one of ${LINUX_GUEST_FILESYSTEMS.join(', ')}`, { name: 'guest.filesystem', value: String(filesystem) });
  }
  if (filesystem === 'raw') return guestDisk.step({ step: 'guest-disk', arguments: { vmid: target.vmid, ...identity, filesystem: 'raw' }, destructive: false });
  const name = `${base}-fs`;
  if (!target.guestWorkdir) throw new InvalidArgument(`${target.host}: guest.filesystem ${String(filesystem)} is mounted under the guest's workdir, and the target names none`, { name: 'guest.filesystem', value: String(filesystem) });
  return guestFilesystem.step({
    step: 'guest-disk',
    arguments: { vmid: target.vmid, ...identity, filesystem, mountpoint: path.posix.join(target.guestWorkdir, name) },
    destructive: false,
    creates: { kind: 'guest-filesystem', name },
  });
}

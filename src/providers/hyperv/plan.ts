// Pure: axes + host target → Hyper-V steps (New-VHD or Set-Disk offline, then Add-VMHardDiskDrive).
import { InvalidArgument } from '../../errors.ts';
import type { Axes } from '../../contract/axis.ts';
import type { PlannedStep } from '../../contract/provider.ts';
import { checkHypervTarget, type HypervTargetConfig } from './config.ts';
import { checkHyperv, joinWin } from './validate.ts';
import { hostDiskName } from './passthrough.ts';
import { newVhdCall, SECTOR_SIZES } from './vhd.ts';
import { GUEST_FILESYSTEMS, isGuestFilesystem, VOLUME_SPECS } from './guest-volume.ts';
import { HYPERV_DISK_FORMATS, VHDX_TYPE_OF, type HypervDiskFormat } from './axes.ts';
import { attachDrive, guestDisk as guestDiskOp, guestVolume as guestVolumeOp, newVhd, offlineDisk, writeCache } from './operations/index.ts';
import { writeCacheWanted } from '../guest-settings-axes.ts';
import { hypervMemberSteps, hypervVmCountOf } from './vm-count.ts';

export type { HypervDiskFormat };

export interface OwnedNames {
  base: string;
}

const GiB = 1024 ** 3;

function opt(axes: Axes, key: string): number | undefined {
  const v = axes[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number') throw new InvalidArgument(`axis ${key}: expected a number, got ${JSON.stringify(v)}`, { name: key, value: String(v) });
  return v;
}

/** A sector size axis: absent, or one New-VHD takes. */
function sectors(axes: Axes, key: string): (typeof SECTOR_SIZES)[number] | undefined {
  const v = opt(axes, key);
  if (v === undefined || (SECTOR_SIZES as readonly number[]).includes(v)) return v as (typeof SECTOR_SIZES)[number] | undefined;
  throw new InvalidArgument(`axis ${key}: expected one of ${SECTOR_SIZES.join(', ')}, got ${v}`, { name: key, value: String(v) });
}

const isDiskFormat = (v: unknown): v is HypervDiskFormat => (HYPERV_DISK_FORMATS as readonly unknown[]).includes(v);

type Filesystem = (typeof GUEST_FILESYSTEMS)[number];
type Slot = { vmName: string; controllerType: 'SCSI'; controllerNumber: number; controllerLocation: number };

export function planHypervSteps(axes: Axes, targetIn: HypervTargetConfig, names: OwnedNames): PlannedStep[] {
  const t = checkHypervTarget(targetIn);
  const base = checkHyperv('ownedName', names.base, 'owned name');
  const format = axes['disk.format'];
  const filesystem = axes['guest.filesystem'] ?? 'raw';
  if (!isGuestFilesystem(filesystem)) throw new InvalidArgument(`axis guest.filesystem: expected one of ${GUEST_FILESYSTEMS.join(', ')}, got ${JSON.stringify(filesystem)}`, { name: 'guest.filesystem', value: String(filesystem) });
  if (!isDiskFormat(format)) throw new InvalidArgument(`axis disk.format: expected one of ${HYPERV_DISK_FORMATS.join(', ')}, got ${JSON.stringify(format)}`, { name: 'disk.format', value: String(format) });
  const count = hypervVmCountOf(axes, t.vmTemplate, t.host);
  // Exactly the inventory's scsiLocation (default 1); apply refuses if a drive already sits there
  // rather than moving ours elsewhere. In the guest the disk is then found by that location and
  // what it is (the guest-disk step), never by a disk number written in the inventory.
  const slotOf = (vmName: string): Slot => ({ vmName, controllerType: 'SCSI', controllerNumber: t.scsiController, controllerLocation: t.scsiLocation });
  // the guest disk's write cache policy: after the guest-disk step found the disk, torn down
  // before it (restored while the disk is attached); a Hyper-V guest is a Windows guest
  const wanted = writeCacheWanted(axes, 'windows');
  const cacheSteps = wanted ? [writeCache.step({ step: 'guest-settings', arguments: { vmName: t.vmName, ...wanted }, destructive: false, creates: { kind: 'guest-write-cache', name: `${base}-guest-write-cache` } })] : [];
  if (format === 'passthrough') {
    const n = t.passthroughDisk;
    const entry = t.allowedDisks.find((d) => d.number === n);
    if (n === undefined || !entry) throw new InvalidArgument(`${t.host}: disk.format passthrough needs passthroughDisk listed in allowedDisks`, { name: 'passthroughDisk', value: String(n) });
    const destroys = [hostDiskName(entry)];
    const slot = slotOf(t.vmName);
    return [
      offlineDisk.step({ step: 'offline', arguments: { diskNumber: n, serialNumber: entry.serialNumber ?? null, uniqueId: entry.uniqueId ?? null }, destructive: true, destroys, creates: { kind: 'disk-offline', name: `${base}-offline` } }),
      attachDrive.step({ step: 'attach', arguments: { ...slot, diskNumber: n }, destructive: true, destroys, creates: { kind: 'disk-attachment', name: `${base}-attach` } }),
      ...guestSteps(slot, { diskNumber: n }, filesystem, base, { destroys }),
      ...cacheSteps,
    ];
  }
  const volKey = axes['volume.sizeGb'];
  const folder = volKey === undefined ? undefined : t.volumes[String(volKey)];
  if (!folder) throw new InvalidArgument(`${t.host}: axis volume.sizeGb ${JSON.stringify(volKey)} has no entry in the inventory's volumes (${Object.keys(t.volumes).join(', ') || 'none'})`, { name: 'volume.sizeGb', value: String(volKey) });
  const sizeGb = opt(axes, 'disk.sizeGb');
  if (sizeGb === undefined || !Number.isInteger(sizeGb) || sizeGb < 1) throw new InvalidArgument(`axis disk.sizeGb: expected a whole number of GiB ≥ 1, got ${JSON.stringify(axes['disk.sizeGb'])}`, { name: 'disk.sizeGb', value: String(axes['disk.sizeGb']) });
  const spec = {
    sizeBytes: sizeGb * GiB,
    type: VHDX_TYPE_OF[format],
    blockSizeBytes: opt(axes, 'disk.blockSizeBytes'),
    logicalSectorBytes: sectors(axes, 'disk.logicalSectorBytes'),
    physicalSectorBytes: sectors(axes, 'disk.physicalSectorBytes'),
  };
  const vhdxSteps = (vmName: string, b: string, member?: number): PlannedStep[] => {
    const full = { path: joinWin(folder, `${b}-disk.vhdx`), ...spec };
    newVhdCall(full); // validates now, so a bad permutation fails at plan time
    const args = Object.fromEntries(Object.entries(full).filter(([, v]) => v !== undefined)) as typeof full;
    const slot = slotOf(vmName);
    return [
      newVhd.step({ step: 'vhdx', arguments: args, destructive: false, creates: { kind: 'vhdx', name: `${b}-disk` } }),
      attachDrive.step({ step: 'attach', arguments: { ...slot, path: full.path }, destructive: false, creates: { kind: 'disk-attachment', name: `${b}-attach` } }),
      // New-VHD makes an uninitialised disk: the guest sees it blank (Microsoft's New-VHD examples pipe
      // it into Initialize-Disk | New-Partition | Format-Volume before it is usable)
      ...guestSteps(slot, { path: full.path }, filesystem, b, member === undefined ? {} : { member }),
    ];
  };
  // vm.count: each member VM made from the template, with its own VHDX of the permutation (vm-count.ts)
  if (count !== undefined) return hypervMemberSteps(count, t.vmTemplate!, folder, base, vhdxSteps);
  return [...vhdxSteps(t.vmName, base), ...cacheSteps];
}

/**
 * In the guest: find the attached disk by identity, bring it online and writable (Windows' SAN
 * policy leaves a new disk on a shared bus offline and read-only), refuse a system disk or one
 * carrying partitions. What it finds is recorded; the workload measures that disk (a member's disk
 * says which member it is). Then a volume on it (guest.filesystem other than raw): GPT, one
 * partition, formatted; found again by the same identity; cleared at teardown only when it holds
 * nothing but what this step made.
 */
function guestSteps(slot: Slot, disk: { path: string } | { diskNumber: number }, filesystem: Filesystem, base: string, o: { destroys?: string[]; member?: number }): PlannedStep[] {
  const danger = { destructive: o.destroys !== undefined, ...(o.destroys ? { destroys: o.destroys } : {}) };
  const member = o.member === undefined ? {} : { member: o.member };
  const steps = [guestDiskOp.step({ step: 'guest-disk', arguments: { ...slot, ...disk, ...member }, ...danger, creates: { kind: 'guest-disk', name: `${base}-guestdisk` } })];
  if (filesystem === 'raw') return steps;
  const volume = { ...slot, ...disk, ...member, filesystem, fileSystem: VOLUME_SPECS[filesystem].fileSystem, allocationUnitBytes: VOLUME_SPECS[filesystem].allocationUnitBytes };
  return [...steps, guestVolumeOp.step({ step: 'guest-volume', arguments: volume, ...danger, creates: { kind: 'guest-volume', name: `${base}-volume` } })];
}

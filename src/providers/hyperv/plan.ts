// Pure: axes + host target → Hyper-V steps (New-VHD or Set-Disk offline, then Add-VMHardDiskDrive).
import { InvalidArgument } from '../../errors.ts';
import type { Axes } from '../../contract/axis.ts';
import type { PlannedStep } from '../../contract/provider.ts';
import { checkHypervTarget, type HypervTargetConfig } from './config.ts';
import { checkHyperv, joinWin } from './validate.ts';
import { isWindowsPhysicalDrive } from '../../workloads/test-target.ts';
import { hostDiskName } from './passthrough.ts';
import { newVhdCall } from './vhd.ts';

export type HypervDiskFormat = 'vhdx-fixed' | 'vhdx-dynamic' | 'passthrough';

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

/**
 * A disk this toolkit hands the guest blank (no partition, no volume) can be measured only as a
 * physical drive: a file (`T:\storsweep.dat`) or partition (`E:`) target would be on some other guest
 * volume, or nowhere. Refused at the permutation's disk.format and at the inventory's guestTestPath.
 */
function blankDiskNeedsPhysicalDrive(host: string, guestTestPath: string | undefined, format: string, what: string): void {
  if (guestTestPath === undefined || isWindowsPhysicalDrive(guestTestPath)) return;
  throw new InvalidArgument(
    `${host}: disk.format ${format} measures ${what}, which reaches the guest blank (no partition, no volume; storsweep does not partition or format it in the guest — a guest filesystem axis is not supported yet), but the inventory's guestTestPath ${JSON.stringify(guestTestPath)} is not a physical drive, so diskspd would measure another volume or nothing; set guestTestPath to the guest's number for the disk at scsiLocation, e.g. #1 or \\\\.\\PhysicalDrive1 (a raw device: the run then needs --confirm-destroy naming it)`,
    { name: 'disk.format', value: format, inventoryField: 'guestTestPath' },
  );
}

export function planHypervSteps(axes: Axes, targetIn: HypervTargetConfig, names: OwnedNames): PlannedStep[] {
  const t = checkHypervTarget(targetIn);
  const base = checkHyperv('ownedName', names.base, 'owned name');
  const format = axes['disk.format'];
  if (format !== 'vhdx-fixed' && format !== 'vhdx-dynamic' && format !== 'passthrough') {
    throw new InvalidArgument(`axis disk.format: expected vhdx-fixed, vhdx-dynamic or passthrough, got ${JSON.stringify(format)}`, { name: 'disk.format', value: String(format) });
  }
  // Exactly the inventory's scsiLocation (default 1), which guestTestPath was written for; apply
  // refuses if a drive already sits there rather than moving ours elsewhere.
  const slot = { vmName: t.vmName, controllerType: 'SCSI', controllerNumber: t.scsiController, controllerLocation: t.scsiLocation };
  const steps: PlannedStep[] = [];
  if (format === 'passthrough') {
    const n = t.passthroughDisk;
    const entry = t.allowedDisks.find((d) => d.number === n);
    if (n === undefined || !entry) throw new InvalidArgument(`${t.host}: disk.format passthrough needs passthroughDisk listed in allowedDisks`, { name: 'passthroughDisk', value: String(n) });
    // The disk is handed over blank (no partitions): in the guest it is a raw disk with no volume,
    // so diskspd can only measure it as a physical drive; a file or partition target would be on
    // some other guest volume, or nowhere.
    blankDiskNeedsPhysicalDrive(t.host, t.guestTestPath, format, `the raw host disk ${hostDiskName(entry)}`);
    const destroys = [hostDiskName(entry)];
    steps.push({ step: 'offline', provider: 'hyperv', operation: 'Set-Disk -IsOffline', arguments: { diskNumber: n, serialNumber: entry.serialNumber ?? null, uniqueId: entry.uniqueId ?? null }, destructive: true, destroys, creates: { kind: 'disk-offline', name: `${base}-offline` } });
    steps.push({ step: 'attach', provider: 'hyperv', operation: 'Add-VMHardDiskDrive', arguments: { ...slot, diskNumber: n }, destructive: true, destroys, creates: { kind: 'disk-attachment', name: `${base}-attach` } });
    return steps;
  }
  // New-VHD makes an uninitialised disk: the guest sees it blank too (Microsoft's New-VHD examples
  // pipe it into Initialize-Disk | New-Partition | Format-Volume), and this toolkit formats nothing
  // in the guest yet, so only the physical drive is the new VHDX.
  blankDiskNeedsPhysicalDrive(t.host, t.guestTestPath, format, 'a new VHDX');
  const volKey = axes['volume.sizeGb'];
  const folder = volKey === undefined ? undefined : t.volumes[String(volKey)];
  if (!folder) throw new InvalidArgument(`${t.host}: axis volume.sizeGb ${JSON.stringify(volKey)} has no entry in the inventory's volumes (${Object.keys(t.volumes).join(', ') || 'none'})`, { name: 'volume.sizeGb', value: String(volKey) });
  const sizeGb = opt(axes, 'disk.sizeGb');
  if (sizeGb === undefined || !Number.isInteger(sizeGb) || sizeGb < 1) throw new InvalidArgument(`axis disk.sizeGb: expected a whole number of GiB ≥ 1, got ${JSON.stringify(axes['disk.sizeGb'])}`, { name: 'disk.sizeGb', value: String(axes['disk.sizeGb']) });
  const spec = {
    path: joinWin(folder, `${base}-disk.vhdx`),
    sizeBytes: sizeGb * GiB,
    type: format === 'vhdx-fixed' ? ('Fixed' as const) : ('Dynamic' as const),
    blockSizeBytes: opt(axes, 'disk.blockSizeBytes'),
    logicalSectorBytes: opt(axes, 'disk.logicalSectorBytes') as 512 | 4096 | undefined,
    physicalSectorBytes: opt(axes, 'disk.physicalSectorBytes') as 512 | 4096 | undefined,
  };
  newVhdCall(spec); // validates now, so a bad permutation fails at plan time
  const args = Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined));
  steps.push({ step: 'vhdx', provider: 'hyperv', operation: 'New-VHD', arguments: args, destructive: false, creates: { kind: 'vhdx', name: `${base}-disk` } });
  steps.push({ step: 'attach', provider: 'hyperv', operation: 'Add-VMHardDiskDrive', arguments: { ...slot, path: spec.path }, destructive: false, creates: { kind: 'disk-attachment', name: `${base}-attach` } });
  return steps;
}

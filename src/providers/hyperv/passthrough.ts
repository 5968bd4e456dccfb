// Pass-through disks: a host disk taken offline and handed to the VM whole. Guarded: the disk must
// be listed in the inventory by number AND serial/unique id, and Get-Disk must report it as not
// system, not boot, without partitions — checked on the host right before Set-Disk is sent.
import { UnsafeOperation } from '../../errors.ts';
import type { AllowedDisk } from './config.ts';
import type { PsCall } from './powershell.ts';

/**
 * The canonical name of a host disk in `destroys` and `--confirm-destroy`: `disk<Number>:<id>`, the
 * id being the inventory's serialNumber (or its uniqueId when it gives no serial), e.g.
 * `disk2:S4EWNX0R123456`. Number and serial together: a disk number alone can change between boots.
 * HOST_DISK_NAME reads one back (number, id).
 */
export function hostDiskName(d: AllowedDisk): string {
  return `disk${d.number}:${(d.serialNumber ?? d.uniqueId ?? '').trim()}`;
}

export const HOST_DISK_NAME = /^disk(\d+):(.+)$/;

export const DISK_PROPS = ['Number', 'SerialNumber', 'UniqueId', 'FriendlyName', 'Size', 'IsSystem', 'IsBoot', 'IsOffline', 'NumberOfPartitions', 'PartitionStyle'];

export const getDiskCall = (n: number): PsCall => ({ cmdlet: 'Get-Disk', params: { Number: n }, select: DISK_PROPS });
/** every disk the host sees (Get-Disk's default parameter set, no -Number) */
export const listDisksCall = (): PsCall => ({ cmdlet: 'Get-Disk', params: {}, select: DISK_PROPS });
/** every VM on the host, running or not */
export const listVmsCall = (): PsCall => ({ cmdlet: 'Get-VM', params: {}, select: ['Name'] });
export const setDiskOfflineCall = (n: number, offline: boolean): PsCall => ({ cmdlet: 'Set-Disk', params: { Number: n, IsOffline: offline } });

export interface HostDisk {
  Number: number;
  SerialNumber: string | null;
  UniqueId: string | null;
  IsSystem: boolean;
  IsBoot: boolean;
  IsOffline: boolean;
  NumberOfPartitions: number;
  PartitionStyle: string;
}

/** Throws UnsafeOperation unless `disk` (as Get-Disk reports it) may be taken offline. */
export function checkPassthroughDisk(host: string, allowed: AllowedDisk[], n: number, disk: HostDisk | undefined, opts: { alreadyOffline?: boolean } = {}): void {
  const refuse = (why: string): never => {
    throw new UnsafeOperation(`${host}: refusing to take disk ${n} offline for pass-through: ${why}`, { operation: 'Set-Disk -IsOffline', target: `disk ${n}` });
  };
  const entry = allowed.find((a) => a.number === n);
  if (!entry) return refuse('not in allowedDisks of the inventory');
  if (!disk) return refuse('Get-Disk does not report it');
  const norm = (s: string | null | undefined) => (s ?? '').trim();
  if (entry.serialNumber !== undefined && norm(entry.serialNumber) !== norm(disk.SerialNumber)) refuse(`serial number is ${JSON.stringify(disk.SerialNumber)}, the inventory expects ${JSON.stringify(entry.serialNumber)}`);
  if (entry.uniqueId !== undefined && norm(entry.uniqueId) !== norm(disk.UniqueId)) refuse(`unique id is ${JSON.stringify(disk.UniqueId)}, the inventory expects ${JSON.stringify(entry.uniqueId)}`);
  if (disk.IsSystem) refuse('it is the system disk');
  if (disk.IsBoot) refuse('it is the boot disk');
  if (disk.NumberOfPartitions > 0) refuse(`it has ${disk.NumberOfPartitions} partition(s)`);
  if (disk.IsOffline && !opts.alreadyOffline) refuse('it is already offline (in use by another VM or by an administrator)');
}

/** What proves a host disk is the one a run took offline: serial number and unique id as Get-Disk reported them then. */
export interface DiskIdentity {
  serialNumber: string | null;
  uniqueId: string | null;
}

const trimmed = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

/** The recorded identity, or null when the ledger has neither (a run of an older storsweep). */
export function recordedIdentity(data: Record<string, unknown>): DiskIdentity | null {
  const serialNumber = trimmed(data.serialNumber);
  const uniqueId = trimmed(data.uniqueId);
  if (serialNumber === '' && uniqueId === '') return null;
  return { serialNumber: serialNumber || null, uniqueId: uniqueId || null };
}

/** Same disk: both ids equal to what was recorded (an id recorded empty must still be empty). */
export function sameDisk(disk: Pick<HostDisk, 'SerialNumber' | 'UniqueId'>, id: DiskIdentity): boolean {
  return trimmed(disk.SerialNumber) === (id.serialNumber ?? '') && trimmed(disk.UniqueId) === (id.uniqueId ?? '');
}

export function describeIdentity(id: DiskIdentity): string {
  return [id.serialNumber !== null ? `serial ${id.serialNumber}` : '', id.uniqueId !== null ? `unique id ${id.uniqueId}` : ''].filter(Boolean).join(', ');
}

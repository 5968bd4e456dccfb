// The disk this run attached, as the guest sees it: found by identity (where Hyper-V put it and
// what it is), never by a number fixed in the inventory. Pure: guest cmdlet calls and the rules
// that pick and check the disk.
//
// What the guest can see of a Hyper-V drive (Get-Disk, the MSFT_Disk class: Number, Location,
// SerialNumber, UniqueId, Size, IsOffline, IsReadOnly, IsSystem, IsBoot, PartitionStyle,
// NumberOfPartitions — learn.microsoft.com/windows-hardware/drivers/storage/msft-disk):
// - Location: a Hyper-V synthetic SCSI disk reads "Integrated : Adapter <a> : Port 0 : Target 0 :
//   LUN <n>", the LUN being the drive's controller location (Learn, "Manage disks in standalone
//   Storage Spaces on Windows Server hosted in Azure": a data disk at LUN 2 shows "Integrated :
//   Adapter 1 : Port 0 : Target 0 : LUN 2"). The adapter is the guest's own numbering of the VM's
//   SCSI controllers, which is not documented to equal -ControllerNumber: it is not relied on. So the
//   location alone does not single a disk out when the VM has several SCSI controllers.
// - Size: the VHDX's virtual size (New-VHD -SizeBytes), or the pass-through host disk's size.
// - SerialNumber / UniqueId: what they hold for a VHDX or a pass-through disk is not documented
//   (UNVERIFIED; see docs/decisions.md): recorded as the guest reports them, never required to
//   match the host's, except that a pass-through disk whose guest serial is set and differs from
//   the host disk's serial is not ours.
// The disk numbers the guest gives change (MSFT_StorageNodeToDisk.DiskNumber: "Disk numbers may not
// necessarily remain the same across reboots"; StorageDsc's Disk resource: "The Disk Number is not a
// reliable method of selecting a disk"): the number measured comes from this lookup, every time.
import { UnsafeOperation, type DiskIdentityMismatch } from '../../errors.ts';
import type { GuestCall } from './powershell.ts';

export const GUEST_DISK_PROPS = ['Number', 'Location', 'SerialNumber', 'UniqueId', 'FriendlyName', 'Size', 'IsOffline', 'IsReadOnly', 'IsSystem', 'IsBoot', 'PartitionStyle', 'NumberOfPartitions', 'Guid'];

export interface GuestDisk {
  Number: number;
  Location: string | null;
  SerialNumber: string | null;
  UniqueId: string | null;
  Size: number;
  IsOffline: boolean;
  IsReadOnly: boolean;
  IsSystem: boolean;
  IsBoot: boolean;
  PartitionStyle: string;
  NumberOfPartitions: number;
  Guid?: string | null;
}

export const listGuestDisksCall = (): GuestCall => ({ cmdlet: 'Get-Disk', params: {}, select: GUEST_DISK_PROPS });
export const getGuestDiskCall = (n: number): GuestCall => ({ cmdlet: 'Get-Disk', params: { Number: n }, select: GUEST_DISK_PROPS });
/** -IsOffline and -IsReadOnly are in separate parameter sets of Set-Disk: two calls (psdocs storage/Set-Disk.md). */
export const setGuestDiskOnlineCall = (n: number): GuestCall => ({ cmdlet: 'Set-Disk', params: { Number: n, IsOffline: false } });
export const setGuestDiskWritableCall = (n: number): GuestCall => ({ cmdlet: 'Set-Disk', params: { Number: n, IsReadOnly: false } });

/** The LUN in a Hyper-V guest disk's Location ("… : Target 0 : LUN 1"), or null for another kind of location. */
export function lunOf(location: unknown): number | null {
  if (typeof location !== 'string') return null;
  const m = /:\s*Target\s+0\s*:\s*LUN\s+(\d+)\s*$/i.exec(location.trim());
  return m ? Number(m[1]) : null;
}

/** What the host says is at the drive's slot: the guest's disk must look like it. */
export interface ExpectedGuestDisk {
  vmName: string;
  controllerNumber: number;
  controllerLocation: number;
  sizeBytes: number;
  /** a pass-through disk's serial on the host */
  hostSerialNumber?: string | null;
}

const trimmed = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

/**
 * The one guest disk that is the drive this run attached: at LUN `controllerLocation`, of the
 * expected size, not the system or boot disk. Throws UnsafeOperation (nothing is measured) when no
 * disk or more than one qualifies, or when the one that does is the system/boot disk or carries
 * partitions (a disk this run attached reaches the guest blank: partitions on it are someone else's).
 */
export function pickGuestDisk(host: string, disks: readonly GuestDisk[], e: ExpectedGuestDisk): GuestDisk {
  const where = `${e.vmName} SCSI ${e.controllerNumber}:${e.controllerLocation}`;
  const refuse = (why: string): never => {
    throw new UnsafeOperation(`${host}: refusing to measure in ${e.vmName}: ${why}; nothing was measured`, { operation: 'Get-Disk (guest)', target: where });
  };
  const atLun = disks.filter((d) => lunOf(d.Location) === e.controllerLocation);
  const sized = atLun.filter((d) => d.Size === e.sizeBytes);
  const hostSerial = trimmed(e.hostSerialNumber);
  const candidates = sized.filter((d) => hostSerial === '' || trimmed(d.SerialNumber) === '' || trimmed(d.SerialNumber) === hostSerial);
  const list = (ds: readonly GuestDisk[]) => ds.map((d) => `disk ${d.Number} (${JSON.stringify(d.Location)}, ${d.Size} bytes)`).join(', ');
  if (candidates.length === 0) {
    return refuse(
      atLun.length === 0
        ? `no guest disk reports LUN ${e.controllerLocation} (the drive this run attached at ${where}); guest disks: ${list(disks) || 'none'}`
        : `no guest disk at LUN ${e.controllerLocation} has the attached disk's size ${e.sizeBytes}${hostSerial ? ` and serial ${hostSerial}` : ''} (at that LUN: ${list(atLun)})`,
    );
  }
  if (candidates.length > 1) return refuse(`guest disks ${candidates.map((d) => d.Number).join(', ')} all report LUN ${e.controllerLocation} and ${e.sizeBytes} bytes (the VM has several SCSI controllers); cannot tell which is the drive this run attached at ${where}`);
  const d = candidates[0]!;
  checkBlankGuestDisk(host, e.vmName, d);
  return d;
}

/** The found disk may be prepared and measured: not the system or boot disk, and nothing on it. */
export function checkBlankGuestDisk(host: string, vmName: string, d: GuestDisk): void {
  const refuse = (why: string): never => {
    throw new UnsafeOperation(`${host}: refusing to measure guest disk ${d.Number} of ${vmName}: ${why}; nothing was measured`, { operation: 'Get-Disk (guest)', target: `${vmName} disk ${d.Number}` });
  };
  if (d.IsSystem) refuse('it is the guest system disk');
  if (d.IsBoot) refuse('it is the guest boot disk');
  if (d.NumberOfPartitions > 0) refuse(`it carries ${d.NumberOfPartitions} partition(s) this run did not create (partition style ${d.PartitionStyle})`);
  if (d.PartitionStyle !== 'RAW') refuse(`it is initialized (partition style ${d.PartitionStyle}) and this run did not initialize it`);
}

/** The guest disk as records and the ledger name it: number, serial (or unique id), location. */
export function guestDiskFacts(d: GuestDisk): { guestDiskNumber: number; serialNumber: string | null; uniqueId: string | null; location: string | null } {
  return { guestDiskNumber: d.Number, serialNumber: trimmed(d.SerialNumber) || null, uniqueId: trimmed(d.UniqueId) || null, location: trimmed(d.Location) || null };
}

/** Same guest disk as recorded: same location and the same serial / unique id (an id recorded empty must still be empty). */
export function sameGuestDisk(d: GuestDisk, rec: { serialNumber?: unknown; uniqueId?: unknown; location?: unknown }): boolean {
  return trimmed(d.Location) === trimmed(rec.location) && trimmed(d.SerialNumber) === trimmed(rec.serialNumber) && trimmed(d.UniqueId) === trimmed(rec.uniqueId);
}

/** A serial / unique id / WWN as hex for comparing: lower case, no separators. */
const idHex = (v: unknown): string => (typeof v === 'string' ? v.replace(/[\s:-]/g, '').toLowerCase() : '');

/**
 * The one guest disk that is the disk a vSphere step attached, found by the WWN the disk reports
 * (a VMDK's backing uuid with the VM's disk.EnableUUID = TRUE, a physical RDM's NAA id: the same
 * identity providers/guest-disk.ts finds in a Linux guest) as Get-Disk's SerialNumber or UniqueId
 * (MSFT_Disk: UniqueId is the VPD page 0x83 identifier; that a VMware virtual disk's SerialNumber is
 * its uuid without dashes is UNVERIFIED, see real-product-rules.md §8 — either matching is enough)
 * and the provisioned size. Refused like pickGuestDisk: none, several, or one not blank.
 */
export function pickGuestDiskByWwn(host: string, disks: readonly GuestDisk[], e: { vmName: string; wwn: string; sizeBytes: number; source: string }): GuestDisk {
  const want = idHex(e.wwn);
  const byId = disks.filter((d) => idHex(d.SerialNumber) === want || idHex(d.UniqueId) === want || idHex(d.UniqueId).endsWith(want));
  const refuse = (why: string, identity?: DiskIdentityMismatch): never => {
    throw new UnsafeOperation(`${host}: refusing to measure in ${e.vmName}: ${why}; nothing was measured`, { operation: 'Get-Disk (guest)', target: `${e.vmName} wwn ${e.wwn}`, ...(identity ? { identity } : {}) });
  };
  const list = (ds: readonly GuestDisk[]) => ds.map((d) => `disk ${d.Number} (serial ${JSON.stringify(d.SerialNumber)}, ${d.Size} bytes)`).join(', ');
  // as fields (preflight --json): the disks of the provisioned size, by the serial and unique id they report instead
  const seen = disks.filter((d) => d.Size === e.sizeBytes && !d.IsSystem && !d.IsBoot).map((d) => {
    const wwn = idHex(d.UniqueId) || idHex(d.SerialNumber);
    return { name: String(d.SerialNumber ?? d.UniqueId ?? ''), ...(/^[0-9a-f]+$/.test(wwn) ? { wwn } : {}), device: `\\\\.\\PhysicalDrive${d.Number}` };
  });
  const mismatch: DiskIdentityMismatch = { object: e.source, sizeBytes: e.sizeBytes, expected: { wwn: want, name: e.wwn }, seen };
  if (byId.length === 0) return refuse(`no guest disk reports the WWN ${e.wwn} of ${e.source} as its serial number or unique id (is disk.EnableUUID = TRUE on the VM?); guest disks: ${list(disks) || 'none'}`, mismatch);
  if (byId.length > 1) return refuse(`guest disks ${byId.map((d) => d.Number).join(', ')} all report the WWN ${e.wwn}; cannot tell which is ${e.source}`);
  const d = byId[0]!;
  if (d.Size !== e.sizeBytes) return refuse(`guest disk ${d.Number} reports the WWN ${e.wwn} but has ${d.Size} bytes, not the ${e.sizeBytes} provisioned`);
  checkBlankGuestDisk(host, e.vmName, d);
  return d;
}

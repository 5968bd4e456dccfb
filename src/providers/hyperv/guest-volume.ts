// The `guest.filesystem` axis: how the disk found in the guest is prepared before it is measured.
// `raw` measures the disk itself (diskspd `#N`); the others partition and format it and measure a
// test file on the volume, as a user of the guest would see it. Pure: values and cmdlet calls.
//
// Initialize-Disk works only on a RAW disk, GPT by default (psdocs storage/Initialize-Disk.md);
// New-Partition -DiskNumber -UseMaximumSize -AssignDriveLetter (storage/New-Partition.md);
// Format-Volume -DriveLetter -FileSystem NTFS|ReFS -AllocationUnitSize <bytes> (storage/Format-Volume.md);
// Clear-Disk -RemoveData returns the disk to RAW (MSFT_Disk.Clear: "Removes partition information
// and uninitializes a disk, returning it to a RAW state"; storage/Clear-Disk.md).
// NTFS allocation units are the classic study axis; ReFS "supports both 4K and 64K cluster sizes"
// (Learn, "Resilient File System (ReFS) overview", which applies to Windows Server 2012–2022: a
// client edition of Windows may refuse to format ReFS).
import type { GuestCall } from './powershell.ts';
import { VOLUME_FILESYSTEMS } from '../windows-volume-room.ts';

export { VOLUME_FILESYSTEMS };
export const GUEST_FILESYSTEMS = ['raw', ...VOLUME_FILESYSTEMS] as const;
export type GuestFilesystem = (typeof GUEST_FILESYSTEMS)[number];
/** Format-Volume -FileSystem values we use */
export const FILE_SYSTEMS = ['NTFS', 'ReFS'] as const;

export interface VolumeSpec {
  fileSystem: (typeof FILE_SYSTEMS)[number];
  allocationUnitBytes: number;
}

/** What each non-raw value formats: file system and allocation unit (cluster) size. */
export const VOLUME_SPECS: Record<Exclude<GuestFilesystem, 'raw'>, VolumeSpec> = {
  'ntfs-4k': { fileSystem: 'NTFS', allocationUnitBytes: 4096 },
  'ntfs-64k': { fileSystem: 'NTFS', allocationUnitBytes: 65536 },
  // ReFS at its recommended 4 KiB cluster (the overview: "4K is the recommended cluster size for most deployments")
  refs: { fileSystem: 'ReFS', allocationUnitBytes: 4096 },
};

export function isGuestFilesystem(v: unknown): v is GuestFilesystem {
  return typeof v === 'string' && (GUEST_FILESYSTEMS as readonly string[]).includes(v);
}

/** The file diskspd measures on a formatted volume (created by the pre-fill's `-c`). */
export const TEST_FILE_NAME = 'storsweep.dat';
/** The label Format-Volume gives our volumes: says whose it is to someone looking at the guest (not proof: the recorded GUIDs are). */
export const VOLUME_LABEL = 'storsweep';

export const PARTITION_PROPS = ['DiskNumber', 'PartitionNumber', 'DriveLetter', 'Guid', 'Offset', 'Size', 'Type'];
export const VOLUME_PROPS = ['DriveLetter', 'FileSystem', 'AllocationUnitSize', 'FileSystemLabel', 'Size'];

export const initializeDiskCall = (n: number): GuestCall => ({ cmdlet: 'Initialize-Disk', params: { Number: n, PartitionStyle: 'GPT' } });
export const newPartitionCall = (n: number): GuestCall => ({ cmdlet: 'New-Partition', params: { DiskNumber: n, UseMaximumSize: true, AssignDriveLetter: true }, select: PARTITION_PROPS });
export const partitionsCall = (n: number): GuestCall => ({ cmdlet: 'Get-Partition', params: { DiskNumber: n }, select: PARTITION_PROPS });
export const formatVolumeCall = (letter: string, spec: VolumeSpec): GuestCall => ({
  cmdlet: 'Format-Volume',
  params: { DriveLetter: letter, FileSystem: spec.fileSystem, AllocationUnitSize: spec.allocationUnitBytes, NewFileSystemLabel: VOLUME_LABEL, Confirm: false },
  select: VOLUME_PROPS,
});
export const getVolumeCall = (letter: string): GuestCall => ({ cmdlet: 'Get-Volume', params: { DriveLetter: letter }, select: VOLUME_PROPS });
/** Only ever on the disk this run identified and formatted, after its partitions were proven ours. */
export const clearDiskCall = (n: number): GuestCall => ({ cmdlet: 'Clear-Disk', params: { Number: n, RemoveData: true, Confirm: false } });

/** A drive letter as Get-Partition reports it: a letter, or none ('' / NUL char when the partition has none). */
export function driveLetterOf(v: unknown): string | null {
  return typeof v === 'string' && /^[A-Za-z]$/.test(v) ? v.toUpperCase() : null;
}

// Room for diskspd's test file on the volume a run formatted in a Windows guest, asked before diskspd
// creates it: Get-Volume's SizeRemaining against the file's size plus a margin. A file that does not
// fit would make diskspd fail at `-c` (SetEndOfFile: ERROR_DISK_FULL) after a step's worth of work;
// it is refused before, naming the volume, what it needs and what is free.
//
// MSFT_Volume (Learn, "MSFT_Volume class"): `Size` is the volume's total size in bytes and
// `SizeRemaining` the available space on it in bytes, both UInt64.
// Shared by both ways into a Windows guest (Hyper-V's PowerShell Direct, vSphere's VMware Tools)
// and by preflight, which compares with the disk before the volume exists (preflight/windows-volume.ts).
import { NoRoomForTestFile } from '../errors.ts';
import { sizeText } from '../text/size.ts';
import type { GuestCall } from './windows-guest.ts';

/** the guest.filesystem values that make a volume on a Windows guest's disk (hyperv/guest-volume.ts VOLUME_SPECS says what each formats) */
export const VOLUME_FILESYSTEMS = ['ntfs-4k', 'ntfs-64k', 'refs'] as const;

/**
 * What the file system may still write beside the test file once it exists (its own metadata grows
 * with the file: the MFT's record and the volume bitmap on NTFS, ReFS' allocator tables): 64 MiB.
 */
export const VOLUME_MARGIN_BYTES = 64 * 1024 ** 2;

export const volumeRoomCall = (letter: string): GuestCall => ({ cmdlet: 'Get-Volume', params: { DriveLetter: letter }, select: ['DriveLetter', 'Size', 'SizeRemaining'] });

export interface VolumeRoom {
  /** `E:` */
  volume: string;
  needBytes: number;
  freeBytes: number;
  fits: boolean;
}

/** The drive letter of a test file on a volume (`E:\storsweep.dat` → `E`); null for a raw target (`#3`). */
export function testFileLetter(target: string): string | null {
  const m = /^([A-Za-z]):\\[^\\]/.exec(target);
  return m ? m[1]!.toUpperCase() : null;
}

/** Get-Volume of the test file's volume, against `fileBytes` plus the margin; null for a raw target. */
export async function volumeRoom(calls: (c: GuestCall[]) => Promise<Record<string, unknown>[]>, target: string, fileBytes: number): Promise<VolumeRoom | null> {
  const letter = testFileLetter(target);
  if (!letter) return null;
  const [v] = await calls([volumeRoomCall(letter)]);
  const free = v?.SizeRemaining;
  if (typeof free !== 'number' || !Number.isSafeInteger(free) || free < 0) throw new NoRoomForTestFile(`${letter}: Get-Volume gave no SizeRemaining (${JSON.stringify(free ?? null)}); diskspd's test file was not created`, { volume: `${letter}:`, needBytes: fileBytes + VOLUME_MARGIN_BYTES, freeBytes: -1 });
  const needBytes = fileBytes + VOLUME_MARGIN_BYTES;
  return { volume: `${letter}:`, needBytes, freeBytes: free, fits: needBytes <= free };
}

/** The words for a volume too small: the volume, the need and the free bytes. */
export function volumeRoomText(where: string, target: string, r: VolumeRoom): string {
  return `${where}: the test file ${target} needs ${sizeText(r.needBytes)} (${r.needBytes} bytes: settings.fileSize plus ${sizeText(VOLUME_MARGIN_BYTES)} for the file system) on ${r.volume}, which has ${sizeText(r.freeBytes)} free (${r.freeBytes} bytes, Get-Volume SizeRemaining)`;
}

/** Refuses before diskspd creates the test file when it does not fit its volume. */
export async function checkVolumeRoom(calls: (c: GuestCall[]) => Promise<Record<string, unknown>[]>, where: string, target: string, fileBytes: number): Promise<void> {
  const r = await volumeRoom(calls, target, fileBytes);
  if (r && !r.fits) throw new NoRoomForTestFile(`${volumeRoomText(where, target, r)}; nothing was created: set a smaller settings.fileSize or a larger disk.sizeGb`, { volume: r.volume, needBytes: r.needBytes, freeBytes: r.freeBytes });
}

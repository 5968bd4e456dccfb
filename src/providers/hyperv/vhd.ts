// VHDX files and their attachment to a VM, as PowerShell cmdlet calls (data for runCalls).
import { InvalidArgument } from '../../errors.ts';
import type { PsCall } from './powershell.ts';
import { checkHyperv, isVhdxBlockSize } from './validate.ts';

export const VHD_PROPS = ['Path', 'VhdFormat', 'VhdType', 'FileSize', 'Size', 'LogicalSectorSize', 'PhysicalSectorSize', 'BlockSize', 'Attached'];

/** New-VHD's -Fixed / -Dynamic */
export const VHD_TYPES = ['Fixed', 'Dynamic'] as const;
/** the sector sizes New-VHD takes (-LogicalSectorSizeBytes, -PhysicalSectorSizeBytes) */
export const SECTOR_SIZES = [512, 4096] as const;
type SectorSize = (typeof SECTOR_SIZES)[number];

export interface NewVhdSpec {
  path: string;
  sizeBytes: number;
  type: (typeof VHD_TYPES)[number];
  blockSizeBytes?: number;
  logicalSectorBytes?: SectorSize;
  physicalSectorBytes?: SectorSize;
}

const MiB = 1024 * 1024;

export function newVhdCall(s: NewVhdSpec): PsCall {
  checkHyperv('vhdxPath', s.path, 'vhdx path');
  if (!Number.isSafeInteger(s.sizeBytes) || s.sizeBytes < MiB || s.sizeBytes % MiB !== 0) throw new InvalidArgument(`disk size must be a whole number of MiB, got ${s.sizeBytes}`, { name: 'disk.sizeGb', value: String(s.sizeBytes) });
  if (!VHD_TYPES.includes(s.type)) throw new InvalidArgument(`VHD type must be ${VHD_TYPES.join(' or ')}, got ${String(s.type)}`, { name: 'disk.format', value: String(s.type) });
  const params: Record<string, string | number | boolean> = { Path: s.path, SizeBytes: s.sizeBytes, [s.type]: true };
  if (s.blockSizeBytes !== undefined) {
    // VHDX block sizes are powers of two from 1 MiB to 256 MiB
    const b = s.blockSizeBytes;
    if (!isVhdxBlockSize(b)) throw new InvalidArgument(`disk.blockSizeBytes must be a power of two from 1 MiB to 256 MiB, got ${b}`, { name: 'disk.blockSizeBytes', value: String(b) });
    params.BlockSizeBytes = b;
  }
  for (const [key, v] of [['LogicalSectorSizeBytes', s.logicalSectorBytes], ['PhysicalSectorSizeBytes', s.physicalSectorBytes]] as const) {
    if (v === undefined) continue;
    if (!SECTOR_SIZES.includes(v)) throw new InvalidArgument(`${key} must be ${SECTOR_SIZES.join(' or ')}, got ${String(v)}`, { name: key, value: String(v) });
    params[key] = v;
  }
  return { cmdlet: 'New-VHD', params, select: VHD_PROPS };
}

export const getVhdCall = (path: string): PsCall => ({ cmdlet: 'Get-VHD', params: { Path: checkHyperv('vhdxPath', path, 'vhdx path') }, select: VHD_PROPS });
/** Lists the file if it exists, nothing otherwise (for idempotent teardown). */
export const probeFileCall = (path: string): PsCall => ({ cmdlet: 'Get-Item', params: { LiteralPath: checkHyperv('vhdxPath', path, 'vhdx path'), ErrorAction: 'SilentlyContinue' }, select: ['FullName', 'Length'] });
export const removeVhdCall = (path: string): PsCall => ({ cmdlet: 'Remove-Item', params: { LiteralPath: checkHyperv('vhdxPath', path, 'vhdx path') } });

export interface DriveSlot {
  vmName: string;
  controllerNumber: number;
  controllerLocation: number;
}

function slot(s: DriveSlot): Record<string, string | number> {
  return { VMName: checkHyperv('vmName', s.vmName, 'vmName'), ControllerType: 'SCSI', ControllerNumber: s.controllerNumber, ControllerLocation: s.controllerLocation };
}

export const DRIVE_PROPS = ['VMName', 'ControllerType', 'ControllerNumber', 'ControllerLocation', 'Path', 'DiskNumber'];

export function addDriveCall(s: DriveSlot, disk: { path: string } | { diskNumber: number }): PsCall {
  const params: Record<string, string | number | boolean> = slot(s);
  if ('path' in disk) params.Path = checkHyperv('vhdxPath', disk.path, 'vhdx path');
  else params.DiskNumber = disk.diskNumber;
  return { cmdlet: 'Add-VMHardDiskDrive', params };
}

export const removeDriveCall = (s: DriveSlot): PsCall => ({ cmdlet: 'Remove-VMHardDiskDrive', params: slot(s) });
export const listDrivesCall = (vmName: string): PsCall => ({ cmdlet: 'Get-VMHardDiskDrive', params: { VMName: checkHyperv('vmName', vmName, 'vmName') }, select: DRIVE_PROPS });

// Allow-lists for values the Hyper-V provider hands to PowerShell. They travel as JSON data (never
// source), so validation is about meaning: a VHDX under an inventory volume, not C:\Windows; a VM
// name, not a wildcard (Hyper-V cmdlets expand * and ? in -VMName).
import { InvalidArgument } from '../../errors.ts';

const PATTERNS = {
  // drive-rooted folder: D:\ or D:\bench\vols — no '..', no wildcard or reserved characters
  folder: /^[A-Za-z]:\\(?:[A-Za-z0-9 ._-]+\\?)*$/,
  vhdxPath: /^[A-Za-z]:\\(?:[A-Za-z0-9 ._-]+\\)*[A-Za-z0-9._-]+\.vhdx$/,
  vmName: /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/,
  ownedName: /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
  serial: /^[\x21-\x7e][\x20-\x7e]{0,127}$/,
} as const;

export type HypervValueKind = keyof typeof PATTERNS;

export const HYPERV_EXPECTED: Record<HypervValueKind, string> = {
  folder: 'a drive-rooted folder like D:\\bench of letters, digits, space, ".", "_" and "-" (no "..")',
  vhdxPath: 'a drive-rooted path to a .vhdx file (no "..")',
  vmName: 'a VM name of letters, digits, space, ".", "_" and "-" (max 100, starting with a letter or digit; no wildcards)',
  ownedName: 'a name of letters, digits, ".", "_" and "-" (max 100)',
  serial: 'printable ASCII, max 128 characters',
};

/** The one predicate behind checkHyperv; the inventory schema uses it too, so validate and run agree. */
export function isHypervValue(kind: HypervValueKind, value: unknown): boolean {
  return typeof value === 'string' && PATTERNS[kind].test(value) && !value.split('\\').includes('..');
}

export function checkHyperv(kind: HypervValueKind, value: unknown, name: string = kind): string {
  if (!isHypervValue(kind, value)) {
    throw new InvalidArgument(`${name}: expected ${HYPERV_EXPECTED[kind]}, got ${JSON.stringify(value)}`, { name, value: String(value) });
  }
  return value as string;
}

/** Get-Disk numbers a target may name (allowedDisks, passthroughDisk). */
export const HYPERV_DISK_NUMBER = { min: 0, max: 4096 } as const;

/** New-VHD -BlockSizeBytes: a power of two from 1 MiB to 256 MiB. */
export function isVhdxBlockSize(b: number): boolean {
  return Number.isInteger(b) && b >= 2 ** 20 && b <= 256 * 2 ** 20 && (b & (b - 1)) === 0;
}

export function joinWin(folder: string, file: string): string {
  return folder.endsWith('\\') ? `${folder}${file}` : `${folder}\\${file}`;
}

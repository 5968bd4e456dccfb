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

export function checkHyperv(kind: HypervValueKind, value: unknown, name: string = kind): string {
  if (typeof value !== 'string' || !PATTERNS[kind].test(value) || value.split('\\').includes('..')) {
    throw new InvalidArgument(`${name}: not a valid ${kind}: ${JSON.stringify(value)}`, { name, value: String(value) });
  }
  return value;
}

export function joinWin(folder: string, file: string): string {
  return folder.endsWith('\\') ? `${folder}${file}` : `${folder}\\${file}`;
}

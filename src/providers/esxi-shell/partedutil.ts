// partedUtil (ESXi's partition tool): argv builders and parsers. A VMFS partition is type GUID
// AA31E02A400F11DB9590000C2911D1B8 on a GPT label starting at sector 2048 (VMFS5/6); VMFS3 used an
// MBR ("msdos") label, decimal type 251 (0xFB) and start sector 128.
import { ParseError } from '../../errors.ts';
import type { VmfsKind } from '../vmfs-block-size.ts';
import { checkInt, devfsPath } from './validate.ts';

export const VMFS_GPT_GUID = 'AA31E02A400F11DB9590000C2911D1B8';
export const VMFS_MBR_TYPE = '251';

export type DiskLabel = 'gpt' | 'msdos';

export interface PartitionEntry {
  number: number;
  startSector: number;
  endSector: number;
  /** GUID on gpt, decimal id on msdos */
  type: string;
  attributes: number;
}

export interface PartitionTable {
  label: DiskLabel | 'unknown';
  cylinders: number;
  heads: number;
  sectorsPerTrack: number;
  totalSectors: number;
  partitions: PartitionEntry[];
}

export const getptblArgv = (device: string): string[] => ['partedUtil', 'getptbl', devfsPath(device)];
export const getUsableSectorsArgv = (device: string): string[] => ['partedUtil', 'getUsableSectors', devfsPath(device)];
export const mklabelArgv = (device: string, label: DiskLabel): string[] => ['partedUtil', 'mklabel', devfsPath(device), label];
export const deletePartitionArgv = (device: string, n: number): string[] => ['partedUtil', 'delete', devfsPath(device), String(checkInt(n, 'partition', 1, 128))];

export function setptblArgv(device: string, label: DiskLabel, parts: PartitionEntry[]): string[] {
  const specs = parts.map((p) => {
    checkInt(p.number, 'partition number', 1, 128);
    checkInt(p.startSector, 'start sector', 1, Number.MAX_SAFE_INTEGER);
    checkInt(p.endSector, 'end sector', p.startSector, Number.MAX_SAFE_INTEGER);
    const typeOk = label === 'gpt' ? /^[0-9A-F]{32}$/.test(p.type) : /^[0-9]{1,3}$/.test(p.type);
    if (!typeOk) throw new ParseError(`partition type ${JSON.stringify(p.type)} is not valid for a ${label} label`, { source: 'setptbl', expected: label === 'gpt' ? '32 hex digits' : 'decimal id' });
    return `${p.number} ${p.startSector} ${p.endSector} ${p.type} ${p.attributes}`;
  });
  return ['partedUtil', 'setptbl', devfsPath(device), label, ...specs];
}

function ints(line: string, n: number, source: string, lineNo: number, what: string): number[] {
  const parts = line.trim().split(/\s+/);
  const nums = parts.map(Number);
  if (parts.length !== n || nums.some((x) => !Number.isSafeInteger(x) || x < 0)) {
    throw new ParseError(`${source}: line ${lineNo}: expected ${what}, got ${JSON.stringify(line)}`, { source, line: lineNo, expected: what });
  }
  return nums;
}

export function parseGetptbl(text: string, source = 'partedUtil getptbl'): PartitionTable {
  const lines = text.replace(/\r\n/g, '\n').split('\n').filter((l) => l.trim() !== '');
  const label = lines[0]?.trim();
  if (label !== 'gpt' && label !== 'msdos' && label !== 'unknown') {
    throw new ParseError(`${source}: line 1: expected the label gpt, msdos or unknown, got ${JSON.stringify(lines[0] ?? '')}`, { source, line: 1, expected: 'gpt|msdos|unknown' });
  }
  const [cylinders, heads, sectorsPerTrack, totalSectors] = ints(lines[1] ?? '', 4, source, 2, '<cylinders> <heads> <sectors> <totalSectors>') as [number, number, number, number];
  const partitions = lines.slice(2).map((l, i) => {
    // gpt rows carry a type name column (e.g. "vmfs") between the GUID and the attributes
    const f = l.trim().split(/\s+/);
    const nums = [f[0], f[1], f[2], f[f.length - 1]].map(Number);
    if (f.length < 5 || f.length > 6 || nums.some((x) => !Number.isSafeInteger(x))) {
      throw new ParseError(`${source}: line ${i + 3}: expected "<num> <start> <end> <type> [<name>] <attr>", got ${JSON.stringify(l)}`, { source, line: i + 3, expected: 'partition row' });
    }
    return { number: nums[0]!, startSector: nums[1]!, endSector: nums[2]!, type: f[3]!, attributes: nums[3]! };
  });
  return { label, cylinders, heads, sectorsPerTrack, totalSectors, partitions };
}

export function parseUsableSectors(text: string, source = 'partedUtil getUsableSectors'): { first: number; last: number } {
  const line = text.trim().split('\n')[0] ?? '';
  const [first, last] = ints(line, 2, source, 1, '<firstUsable> <lastUsable>') as [number, number];
  return { first, last };
}

export type { VmfsKind };

/** The one-partition layout for a VMFS of this version spanning the usable sectors. */
export function vmfsPartitionLayout(kind: VmfsKind, usable: { first: number; last: number }): { label: DiskLabel; partition: PartitionEntry } {
  const label: DiskLabel = kind === 'vmfs3' ? 'msdos' : 'gpt';
  const start = kind === 'vmfs3' ? 128 : 2048;
  if (usable.last <= start + 2048) {
    throw new ParseError(`device too small for a VMFS partition: last usable sector ${usable.last}`, { source: 'partedUtil getUsableSectors', expected: `more than ${start + 2048} sectors` });
  }
  return { label, partition: { number: 1, startSector: Math.max(start, usable.first), endSector: usable.last, type: kind === 'vmfs3' ? VMFS_MBR_TYPE : VMFS_GPT_GUID, attributes: 0 } };
}

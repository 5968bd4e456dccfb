// vmkfstools: create a VMFS on a partition, create/delete virtual disks and RDM descriptors, query a
// file system. Builders return argv vectors (joined with shJoin by the provider); parsers read the
// lines vmkfstools prints.
import { InvalidArgument, ParseError } from '../../errors.ts';
import type { VmfsKind } from './partedutil.ts';
import { checkVmfsBlockSize } from '../vmfs-block-size.ts';
import { checkEsxi, checkInt, devfsPath, ESXI_MAX_DISK_GB } from './validate.ts';

/** the provisioning formats `vmkfstools -c -d` takes */
export const VMDK_FORMATS = ['thin', 'zeroedthick', 'eagerzeroedthick'] as const;
export type VmdkFormat = (typeof VMDK_FORMATS)[number];

/** `-b <n>m`: the block sizes (MiB) `kind` is created with — the one VMFS rule (../vmfs-block-size.ts). */
export function checkBlockSize(kind: VmfsKind, blockSizeMb: unknown): number {
  return checkVmfsBlockSize(kind, 'datastore.blockSizeMb', blockSizeMb);
}

export function createVmfsArgv(kind: VmfsKind, blockSizeMb: number, label: string, device: string, partition = 1): string[] {
  checkBlockSize(kind, blockSizeMb);
  return ['vmkfstools', '-C', kind, '-b', `${blockSizeMb}m`, '-S', checkEsxi('label', label), `${devfsPath(device)}:${checkInt(partition, 'partition', 1, 128)}`];
}

export function createDiskArgv(sizeGb: number, format: VmdkFormat, path: string): string[] {
  if (!VMDK_FORMATS.includes(format)) {
    throw new InvalidArgument(`disk format must be one of ${VMDK_FORMATS.join(', ')}, got ${JSON.stringify(format)}`, { name: 'disk.format', value: String(format) });
  }
  return ['vmkfstools', '-c', `${checkInt(sizeGb, 'disk.sizeGb', 1, ESXI_MAX_DISK_GB)}g`, '-d', format, checkEsxi('vmdkPath', path)];
}

export function createRdmArgv(mode: 'physical' | 'virtual', device: string, path: string): string[] {
  return ['vmkfstools', mode === 'physical' ? '-z' : '-r', devfsPath(device), checkEsxi('vmdkPath', path)];
}

export const deleteDiskArgv = (path: string): string[] => ['vmkfstools', '-U', checkEsxi('vmdkPath', path)];
export const queryFsArgv = (volumePath: string): string[] => ['vmkfstools', '-P', checkEsxi('volumePath', volumePath)];

/** `Successfully created new volume: <uuid>` → uuid */
export function parseCreateVmfs(text: string): string {
  const m = /Successfully created new volume:\s*(\S+)/.exec(text);
  if (!m) throw new ParseError(`vmkfstools -C: no "Successfully created new volume" line in output: ${text.trim().slice(0, 300)}`, { source: 'vmkfstools -C', expected: 'Successfully created new volume: <uuid>' });
  return m[1]!;
}

export interface VmfsQuery {
  /** e.g. "VMFS-5.60" */
  version: string;
  label: string;
  capacityBytes: number;
  blockSizeBytes: number;
  uuid: string;
  partitions: string[];
}

export function parseQueryFs(text: string, source = 'vmkfstools -P'): VmfsQuery {
  const ver = /^(VMFS-[\d.]+)/m.exec(text);
  const cap = /^Capacity (\d+) \((\d+) file blocks \* (\d+)\)/m.exec(text);
  const uuid = /^UUID: (\S+)/m.exec(text);
  if (!ver || !cap || !uuid) {
    throw new ParseError(`${source}: expected the VMFS version, "Capacity … file blocks * <blockSize>" and UUID lines`, { source, expected: 'vmkfstools -P output' });
  }
  const label = /^File system label \(if any\): ?(.*)$/m.exec(text)?.[1]?.trim() ?? '';
  const spanned = text.split(/Partitions spanned[^\n]*\n/)[1] ?? '';
  const partitions = spanned.split('\n').filter((l) => /^\s+\S+:\d+\s*$/.test(l)).map((l) => l.trim());
  return { version: ver[1]!, label, capacityBytes: Number(cap[1]), blockSizeBytes: Number(cap[3]), uuid: uuid[1]!, partitions };
}

/**
 * `vmkfstools -J getuuid <vmdk>`: the virtual disk's uuid (the descriptor's ddb.uuid), the identity
 * the guest sees it by with disk.EnableUUID (../guest-disk.ts). The command as VMware HCX's
 * migration guide gives it ("vmkfstools -J getuuid /vmfs/volumes/datastore/VM/vm.vmdk").
 */
export const getDiskUuidArgv = (path: string): string[] => ['vmkfstools', '-J', 'getuuid', checkEsxi('vmdkPath', path)];

/**
 * `UUID is 60 00 C2 98 42 c7 54 f8-02 c2 d4 9b 20 6b 08 0c` → 6000c29842c754f802c2d49b206b080c: 16
 * bytes in hex, spaced, a dash after the eighth — the one output line seen from ESXi 7.0u3
 * (kjlyon/pmem_content HowToMapVMWareVShphereESXiPMemFromHostToGuestVM.md), the same form as the
 * descriptor's ddb.uuid (govmomi issue #1160). Only that form is read: anything else (another
 * release printing otherwise, an error text on stdout) is a ParseError, never a guessed identity.
 */
export function parseDiskUuid(text: string, source = 'vmkfstools -J getuuid'): string {
  const m = /^UUID is ((?:[0-9A-Fa-f]{2} ){7}[0-9A-Fa-f]{2})-((?:[0-9A-Fa-f]{2} ){7}[0-9A-Fa-f]{2})$/.exec(text.replace(/\r\n/g, '\n').trim());
  if (!m) throw new ParseError(`${source}: expected one line "UUID is xx xx xx xx xx xx xx xx-xx xx xx xx xx xx xx xx", got ${JSON.stringify(text.trim().slice(0, 200))}`, { source, expected: 'UUID is <16 hex bytes, a dash after the eighth>' });
  return (m[1]! + m[2]!).replace(/ /g, '').toLowerCase();
}

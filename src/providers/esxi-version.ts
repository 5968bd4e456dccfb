// What an ESXi release can do with VMFS, and VMFS3's file-size caps: the rules both the vSphere
// planner (CreateVmfsDatastore) and the ESXi-shell planner (vmkfstools -C) ask, so `validate`
// refuses at the playbook's value what the host would refuse after the LUN was partitioned.
// The lab's simulator and stand-ins know the same rules: test/harness/vcsim/version.go,
// test/harness/esxi/esxi_state.py (vmfs_creatable).
import { InvalidArgument } from '../errors.ts';
import type { VmfsKind } from './vmfs-block-size.ts';

/** An ESXi release as the inventory states it (`version: "8.0"`) or the host reports it (`8.0.3`). */
export interface EsxiVersion {
  major: number;
  minor: number;
}

/** `version:` in an inventory: an ESXi release 5.0 … 8.x, written `M.m` or `M.m.u` (quoted: YAML reads 8.0 as 8). */
export const ESXI_VERSION_PATTERN = /^([5-9])\.(\d{1,2})(?:\.\d{1,2})?$/;
export const ESXI_VERSION_EXPECTED = 'an ESXi release such as "5.5", "6.7", "7.0" or "8.0.3" (quoted)';

export function parseEsxiVersion(text: string): EsxiVersion | undefined {
  const m = ESXI_VERSION_PATTERN.exec(text.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

export const formatEsxiVersion = (v: EsxiVersion): string => `${v.major}.${v.minor}`;

const atLeast = (v: EsxiVersion, major: number, minor: number): boolean => v.major > major || (v.major === major && v.minor >= minor);

/**
 * Whether a host of release `v` can create a new VMFS of `kind`:
 * - VMFS3: up to ESXi 5.x. From 6.0 "you can continue to use existing VMFS3 datastores, but you
 *   cannot create new ones" (vSphere 6.0 Storage, "Understanding VMFS Datastores"); 6.7, 7.0 and
 *   8.0 list VMFS3 as not supported (vSphere 6.7/7.0 Storage, "Versions of VMFS Datastores").
 * - VMFS5: every release from 5.0 on.
 * - VMFS6: ESXi 6.5 and later; hosts of 6.0 and earlier cannot access it (vSphere 7.0 Storage,
 *   "Versions of VMFS Datastores", "Comparing VMFS5 and VMFS6").
 */
export function vmfsCreatable(kind: VmfsKind, v: EsxiVersion): boolean {
  switch (kind) {
    case 'vmfs3':
      return !atLeast(v, 6, 0);
    case 'vmfs5':
      return atLeast(v, 5, 0);
    case 'vmfs6':
      return atLeast(v, 6, 5);
  }
}

export const creatableVmfs = (v: EsxiVersion): VmfsKind[] => (['vmfs3', 'vmfs5', 'vmfs6'] as const).filter((k) => vmfsCreatable(k, v));

/** Refuses a VMFS version the host's release cannot create; the error names datastore.kind. */
export function checkVmfsCreatable(kind: VmfsKind, v: EsxiVersion | undefined, host: string): void {
  if (!v || vmfsCreatable(kind, v)) return;
  const why = kind === 'vmfs3' ? 'ESXi 6.0 and later cannot create VMFS3, only mount existing VMFS3 volumes; a VMFS3 study needs an ESXi 5.x host' : 'VMFS6 needs ESXi 6.5 or later';
  throw new InvalidArgument(
    `datastore.kind ${kind}: ${host} runs ESXi ${formatEsxiVersion(v)}, which creates ${creatableVmfs(v).join(', ')} only (${why})`,
    { name: 'datastore.kind', value: kind },
  );
}

/**
 * `datastore.blockSizeKb` is HostVmfsSpec.blockSize, "Since vSphere API 6.5" (API reference,
 * HostVmfsSpec); an older host knows only blockSizeMb. The error names datastore.blockSizeKb.
 */
export function checkBlockSizeKbSupported(v: EsxiVersion | undefined, host: string): void {
  if (!v || atLeast(v, 6, 5)) return;
  throw new InvalidArgument(`datastore.blockSizeKb: ${host} runs ESXi ${formatEsxiVersion(v)}; HostVmfsSpec.blockSize (KB) exists since 6.5: use datastore.blockSizeMb`, { name: 'datastore.blockSizeKb', value: '' });
}

const GiB = 1024 ** 3;

/**
 * VMFS3's largest file for a file block size in MiB (vSphere 4.1 Configuration Maximums: 1 MB →
 * 256 GB, 2 MB → 512 GB, 4 MB → 1 TB, 8 MB → 2 TB minus 512 B): 2^18 blocks per file, and the
 * 8 MB case held to the 2 TB − 512 B virtual disk limit. VMFS5/6 take the 62 TB VMDK.
 */
export function vmfs3MaxFileBytes(blockSizeMb: number): number {
  return Math.min(blockSizeMb * 256 * GiB, 2 * 1024 * GiB - 512);
}

/** Refuses a virtual disk larger than VMFS3 stores with that block size; the error names disk.sizeGb. */
export function checkVmfs3FileSize(blockSizeMb: number, sizeGb: number): void {
  const max = vmfs3MaxFileBytes(blockSizeMb);
  if (sizeGb * GiB <= max) return;
  const shown = max % GiB === 0 ? `${max / GiB} GiB` : `${max} bytes (2 TiB − 512 B)`;
  throw new InvalidArgument(
    `disk.sizeGb ${sizeGb}: a VMFS3 volume with ${blockSizeMb} MiB blocks stores files up to ${shown} (VMFS3: 1 MiB → 256 GiB, 2 MiB → 512 GiB, 4 MiB → 1 TiB, 8 MiB → 2 TiB − 512 B); use a larger block size or a smaller disk`,
    { name: 'disk.sizeGb', value: String(sizeGb) },
  );
}

/**
 * A virtual NVMe controller needs hardware version 13, which ESXi 6.5 introduced ("Add an NVMe
 * Controller", vSphere 6.5 Virtual Machine Administration; the lab harness: controllers.go).
 */
export function checkNvmeSupported(v: EsxiVersion | undefined, host: string): void {
  if (!v || atLeast(v, 6, 5)) return;
  throw new InvalidArgument(`disk.controller nvme: ${host} runs ESXi ${formatEsxiVersion(v)}; a virtual NVMe controller needs ESXi 6.5 or later (hardware version 13)`, { name: 'disk.controller', value: 'nvme' });
}

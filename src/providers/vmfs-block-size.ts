// The one VMFS version × file block size rule. The vSphere planner (CreateVmfsDatastore) and the
// ESXi-shell planner (vmkfstools -C -b) both ask it, and `validate` dry-runs those planners, so
// validate, plan and run refuse the same pairs.
//
// HostVmfsSpec.blockSizeMb / .blockSize (vSphere Web Services API reference, HostVmfsSpec): VMFS3
// 1, 2, 4 or 8 MB; VMFS5 1 MB only; VMFS6 64 KB or 1 MB. vmkfstools -C takes 1 MB only for VMFS5
// and VMFS6 (vSphere Storage, "Create a VMFS Datastore", vmkfstools section): the 64 KB VMFS6
// block exists through the API only, which `datastore.blockSizeKb` (KiB) expresses. blockSize (KB)
// exists since API 6.5 (blockSizeMb is deprecated there), so it also takes VMFS5's 1024 — which lets
// one axis compare VMFS5 and VMFS6 at 1 MB and VMFS6 at 64 KB — but never VMFS3, which no 6.5+
// host creates (./esxi-version.ts).
// The stand-ins know the same rule: src/lab/harness/vcsim/storage.go vmfsBlockKiB,
// src/lab/harness/esxi/vmkfstools BLOCKS.
import { InvalidArgument } from '../errors.ts';

/** the VMFS versions a datastore is created as */
export const VMFS_KINDS = ['vmfs3', 'vmfs5', 'vmfs6'] as const;
export type VmfsKind = (typeof VMFS_KINDS)[number];

/** File block sizes in KiB each VMFS version is created with (HostVmfsSpec). */
export const VMFS_BLOCK_SIZES_KB: Readonly<Record<VmfsKind, readonly number[]>> = {
  vmfs3: [1024, 2048, 4096, 8192],
  vmfs5: [1024],
  vmfs6: [64, 1024],
};

export const VMFS_BLOCK_SIZE_RULE = 'VMFS3: 1, 2, 4 or 8 MiB; VMFS5: 1 MiB; VMFS6: 1 MiB, or 64 KiB as datastore.blockSizeKb (which VMFS5/6 also take as 1024)';

export const isVmfsKind = (k: unknown): k is VmfsKind => (VMFS_KINDS as readonly unknown[]).includes(k);

/** The `datastore.blockSizeMb` values a VMFS version takes (whole MiB of its block sizes). */
export function vmfsBlockSizesMb(kind: VmfsKind): number[] {
  return VMFS_BLOCK_SIZES_KB[kind].filter((kb) => kb % 1024 === 0).map((kb) => kb / 1024);
}

/** The `datastore.blockSizeKb` values a VMFS version takes (HostVmfsSpec.blockSize, since 6.5): VMFS5's and VMFS6's; none for VMFS3. */
export function vmfsBlockSizesKb(kind: VmfsKind): readonly number[] {
  return kind === 'vmfs3' ? [] : VMFS_BLOCK_SIZES_KB[kind];
}

const union = (f: (kind: VmfsKind) => readonly number[]): number[] => [...new Set(VMFS_KINDS.flatMap(f))].sort((a, b) => a - b);
/** every `datastore.blockSizeMb` value some VMFS version takes (the axis's values: 1, 2, 4, 8) */
export const ALL_BLOCK_SIZES_MB: readonly number[] = union(vmfsBlockSizesMb);
/** every `datastore.blockSizeKb` value some VMFS version takes (64, 1024) */
export const ALL_BLOCK_SIZES_KB: readonly number[] = union(vmfsBlockSizesKb);

/**
 * Refuses a block size `kind` is not created with; returns it. `axis` says which of the two the
 * value was given as; the error names that axis (validate points at its value).
 */
export function checkVmfsBlockSize(kind: VmfsKind, axis: 'datastore.blockSizeMb' | 'datastore.blockSizeKb', value: unknown): number {
  const mb = axis === 'datastore.blockSizeMb';
  const allowed = mb ? vmfsBlockSizesMb(kind) : vmfsBlockSizesKb(kind);
  if (typeof value === 'number' && allowed.includes(value)) return value;
  const takes = mb
    ? `${kind} supports ${allowed.join(', ')} MiB blocks`
    : allowed.length
      ? `${kind} supports ${allowed.join(', ')} KiB blocks`
      : `${kind} takes no datastore.blockSizeKb (use datastore.blockSizeMb: ${vmfsBlockSizesMb(kind).join(', ')})`;
  throw new InvalidArgument(`${axis} ${JSON.stringify(value)} with datastore.kind ${kind}: ${takes} (${VMFS_BLOCK_SIZE_RULE})`, { name: axis, value: String(value) });
}

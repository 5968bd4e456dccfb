// Pure: where a permutation's disks land and what each takes. Apart from preflight.ts so a command
// that only reads a plan (validate) does not load the preflight's checks (decision 0086).
import type { PlannedStep } from '../../contract/provider.ts';
import type { SpaceNeed } from '../../contract/preflight.ts';
import { hostDiskName } from './passthrough.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/**
 * What a VHDX file holds besides its data: the header section (1 MiB), and the log, metadata region
 * and block allocation table, each at least 1 MiB and 1 MiB-aligned ([MS-VHDX] §2.1 "File
 * Structure" and §2.2 "Header Section"). A fixed VHDX is its virtual size plus these.
 */
export const VHDX_OVERHEAD_BYTES = 4 * MiB;

const folderOf = (path: string): string => path.slice(0, path.lastIndexOf('\\'));

/**
 * Pure: a permutation's disks by where they land. A fixed VHDX takes its whole size (and its
 * metadata) when New-VHD creates it; a dynamic one "at any given time is as large as the actual data
 * written to it" plus its metadata (Microsoft, Virtual Hard Disk Image Format Specification, "Dynamic
 * Hard Disk Image"; Msvm_ImageManagementService.CreateDynamicVirtualHardDisk takes only a maximum
 * size), so it may be larger than its volume's free space and needs what the workload writes.
 * real-product-rules.md says nothing of this (§6 lists New-VHD's parameter sets only). A
 * pass-through disk must hold what the workload writes.
 */
export function hypervSpaceNeeds(steps: readonly PlannedStep[], writtenBytes: number): SpaceNeed[] {
  const out: SpaceNeed[] = [];
  for (const s of steps) {
    const a = s.arguments;
    if (s.operation === 'New-VHD') {
      const size = Number(a.sizeBytes);
      const fixed = a.type === 'Fixed';
      out.push({ place: { kind: 'volume', folder: folderOf(String(a.path)) }, bytes: (fixed ? size : Math.min(size, writtenBytes)) + VHDX_OVERHEAD_BYTES, what: `${size / GiB} GiB ${fixed ? 'fixed' : 'dynamic'} VHDX` });
    }
    if (s.operation === 'Set-Disk -IsOffline') {
      const name = hostDiskName({ number: Number(a.diskNumber), ...(typeof a.serialNumber === 'string' ? { serialNumber: a.serialNumber } : {}), ...(typeof a.uniqueId === 'string' ? { uniqueId: a.uniqueId } : {}) });
      out.push({ place: { kind: 'disk', name }, bytes: writtenBytes, what: `a ${writtenBytes >= GiB ? `${(writtenBytes / GiB).toFixed(1)} GiB` : `${Math.ceil(writtenBytes / MiB)} MiB`} test on pass-through disk ${String(a.diskNumber)}` });
    }
  }
  return out;
}

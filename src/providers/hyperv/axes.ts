// The matrix axes the Hyper-V planner (plan.ts) reads, with the values it takes. `validate` refuses
// any other axis on a hyperv target and dry-runs plan.ts on every combination.
import type { AxisSpec } from '../../contract/axis.ts';
import { FLUSHING_VALUES, WRITE_CACHE_VALUES } from '../guest-settings-axes.ts';
import { VM_COUNT_AXIS_SPEC } from '../vm-count-axis.ts';
import { GUEST_FILESYSTEMS } from './guest-volume.ts';
import { isVhdxBlockSize } from './validate.ts';
import { SECTOR_SIZES, type VHD_TYPES } from './vhd.ts';

/** disk.format's VHDX values, each with the New-VHD type it is created as */
export const VHDX_TYPE_OF = { 'vhdx-fixed': 'Fixed', 'vhdx-dynamic': 'Dynamic' } as const satisfies Record<string, (typeof VHD_TYPES)[number]>;
/** a VHDX of a type above, or a host disk passed through */
export const HYPERV_DISK_FORMATS = [...(Object.keys(VHDX_TYPE_OF) as Array<keyof typeof VHDX_TYPE_OF>), 'passthrough'] as const;
export type HypervDiskFormat = (typeof HYPERV_DISK_FORMATS)[number];

export const HYPERV_AXES: readonly AxisSpec[] = [
  // which of the inventory's `volumes` holds the VHDX (the planner looks the value up there)
  { name: 'volume.sizeGb', expected: "a key of the target's volumes", accepts: (v) => typeof v === 'number' },
  { name: 'disk.format', values: HYPERV_DISK_FORMATS },
  // New-VHD -SizeBytes: the planner passes whole GiB
  { name: 'disk.sizeGb', expected: 'whole GiB', accepts: (v) => typeof v === 'number' && Number.isInteger(v) && v >= 1 },
  { name: 'disk.blockSizeBytes', expected: 'a power of two from 1048576 (1 MiB) to 268435456 (256 MiB)', accepts: (v) => typeof v === 'number' && isVhdxBlockSize(v) },
  { name: 'disk.logicalSectorBytes', values: SECTOR_SIZES },
  { name: 'disk.physicalSectorBytes', values: SECTOR_SIZES },
  // how the disk found in the guest is prepared: raw (default) or a volume (guest-volume.ts)
  { name: 'guest.filesystem', values: GUEST_FILESYSTEMS },
  // the guest disk's write cache policy (../windows-write-cache.ts), set after the guest-disk step
  { name: 'guest.writeCache', values: WRITE_CACHE_VALUES },
  { name: 'guest.writeCacheFlushing', values: FLUSHING_VALUES },
  // N member VMs made from the target's vmTemplate, measured at once (vm-count.ts)
  VM_COUNT_AXIS_SPEC,
];

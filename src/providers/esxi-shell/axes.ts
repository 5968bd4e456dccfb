// The matrix axes the ESXi-shell planner (plan.ts) reads, with the values it takes — each set
// stated once, where the operation that carries it out states it. `validate` refuses any other
// axis on an esxi-shell target and dry-runs plan.ts on every combination.
import type { AxisSpec } from '../../contract/axis.ts';
import { datastoreAxisNotMeasured } from '../rdm-datastore.ts';
import { ALL_BLOCK_SIZES_MB, VMFS_KINDS } from '../vmfs-block-size.ts';
import { ESXI_MAX_DISK_GB } from './validate.ts';
import { LINUX_GUEST_FILESYSTEMS } from '../guest-disk.ts';
import { RDM_MODES, type RdmFormat } from './operations/create-rdm.ts';
import type { VmdkFormat } from './vmkfstools.ts';

/** vmkfstools -C makes VMFS only; an NFS mount is the vSphere provider's (CreateNasDatastore). */
export const ESXI_SHELL_DATASTORE_KINDS = [...VMFS_KINDS, 'existing'] as const;
/** disk.format's VMDK values, each with the `vmkfstools -c -d` format it is created as */
export const VMDK_FORMAT_OF = { thin: 'thin', lazyzeroedthick: 'zeroedthick', eagerzeroedthick: 'eagerzeroedthick' } as const satisfies Record<string, VmdkFormat>;
export type EsxiDiskFormat = keyof typeof VMDK_FORMAT_OF | RdmFormat;
/** a VMDK of a format above, or an RDM of a mode (operations/create-rdm.ts) */
export const ESXI_SHELL_DISK_FORMATS = [...Object.keys(VMDK_FORMAT_OF), ...Object.keys(RDM_MODES)] as readonly EsxiDiskFormat[];

export const ESXI_SHELL_AXES: readonly AxisSpec[] = [
  { name: 'datastore.kind', values: ESXI_SHELL_DATASTORE_KINDS, notMeasuredWhen: datastoreAxisNotMeasured('datastore.kind') },
  // vmkfstools -b <n>m: whole MiB; no datastore.blockSizeKb (../vmfs-block-size.ts)
  { name: 'datastore.blockSizeMb', values: ALL_BLOCK_SIZES_MB, notMeasuredWhen: datastoreAxisNotMeasured('datastore.blockSizeMb') },
  { name: 'disk.format', values: ESXI_SHELL_DISK_FORMATS },
  // vmkfstools -c <n>g: whole GiB, up to the largest VMDK
  { name: 'disk.sizeGb', expected: `whole GiB up to ${ESXI_MAX_DISK_GB} (62 TiB, the largest VMDK)`, accepts: (v) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= ESXI_MAX_DISK_GB },
  // how the Linux guest measures the disk: raw, or a test file on a filesystem made on it (../guest-disk.ts)
  { name: 'guest.filesystem', values: LINUX_GUEST_FILESYSTEMS },
];

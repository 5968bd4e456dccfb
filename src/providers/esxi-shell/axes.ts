// The matrix axes the ESXi-shell planner (plan.ts) reads, with the values it takes. `validate`
// refuses any other axis on an esxi-shell target and dry-runs plan.ts on every combination.
import type { AxisSpec } from '../../contract/axis.ts';
import { datastoreAxisNotMeasured } from '../rdm-datastore.ts';
import { ESXI_MAX_DISK_GB } from './validate.ts';
import { LINUX_GUEST_FILESYSTEMS } from '../guest-disk.ts';

/** vmkfstools -C makes VMFS only; an NFS mount is the vSphere provider's (CreateNasDatastore). */
export const ESXI_SHELL_DATASTORE_KINDS = ['vmfs3', 'vmfs5', 'vmfs6', 'existing'] as const;
export const ESXI_SHELL_DISK_FORMATS = ['thin', 'lazyzeroedthick', 'eagerzeroedthick', 'rdm-physical', 'rdm-virtual'] as const;

export const ESXI_SHELL_AXES: readonly AxisSpec[] = [
  { name: 'datastore.kind', values: ESXI_SHELL_DATASTORE_KINDS, notMeasuredWhen: datastoreAxisNotMeasured('datastore.kind') },
  // vmkfstools -b <n>m: whole MiB; no datastore.blockSizeKb (../vmfs-block-size.ts)
  { name: 'datastore.blockSizeMb', values: [1, 2, 4, 8], notMeasuredWhen: datastoreAxisNotMeasured('datastore.blockSizeMb') },
  { name: 'disk.format', values: ESXI_SHELL_DISK_FORMATS },
  // vmkfstools -c <n>g: whole GiB, up to the largest VMDK
  { name: 'disk.sizeGb', expected: `whole GiB up to ${ESXI_MAX_DISK_GB} (62 TiB, the largest VMDK)`, accepts: (v) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= ESXI_MAX_DISK_GB },
  // how the Linux guest measures the disk: raw, or a test file on a filesystem made on it (../guest-disk.ts)
  { name: 'guest.filesystem', values: LINUX_GUEST_FILESYSTEMS },
];

// The matrix axes the vSphere planner (steps.ts) reads, with the values it takes. `validate` refuses
// any other axis on a vsphere target and dry-runs steps.ts on every combination (src/plan/check.ts).
import type { AxisSpec } from '../../contract/axis.ts';
import { datastoreAxisNotMeasured } from '../rdm-datastore.ts';
import { ALL_BLOCK_SIZES_KB, ALL_BLOCK_SIZES_MB, VMFS_KINDS } from '../vmfs-block-size.ts';
import { CONTROLLER_KINDS } from './controllers.ts';
import { DISK_FORMATS, RDM_COMPATIBILITY } from './disks.ts';
import { ESXI_MAX_DISK_GB } from '../esxi-shell/validate.ts';
import { LINUX_GUEST_FILESYSTEMS } from '../guest-disk.ts';
import { GUEST_FILESYSTEMS as WINDOWS_GUEST_FILESYSTEMS } from '../hyperv/guest-volume.ts';
import { isPolicyName, POLICY_AXIS, POLICY_NAME_EXPECTED } from './storage-policy.ts';
import { GUEST_SETTINGS_AXES } from '../guest-settings-axes.ts';
import { VM_CLONE_AXIS_SPEC, VM_COUNT_AXIS_SPEC } from './vm-count.ts';

export const VSPHERE_DATASTORE_KINDS = [...VMFS_KINDS, 'nfs', 'existing'] as const;
/** a flat VMDK of a provisioning format, or an RDM of a compatibility mode (disks.ts) */
export const VSPHERE_DISK_FORMATS = [...DISK_FORMATS, ...(Object.keys(RDM_COMPATIBILITY) as Array<keyof typeof RDM_COMPATIBILITY>)] as const;
/** the blockSizeMb/blockSizeKb values; which VMFS version takes which: ../vmfs-block-size.ts */
export const VSPHERE_BLOCK_SIZES_MB = ALL_BLOCK_SIZES_MB;
export const VSPHERE_BLOCK_SIZES_KB = ALL_BLOCK_SIZES_KB;
/** virtual storage controllers a disk can be placed on (controllers.ts CONTROLLER_TYPES) */
export const VSPHERE_CONTROLLERS = CONTROLLER_KINDS;

export const VSPHERE_AXES: readonly AxisSpec[] = [
  { name: 'datastore.kind', values: VSPHERE_DATASTORE_KINDS, notMeasuredWhen: datastoreAxisNotMeasured('datastore.kind') },
  { name: 'datastore.blockSizeMb', values: VSPHERE_BLOCK_SIZES_MB, notMeasuredWhen: datastoreAxisNotMeasured('datastore.blockSizeMb') },
  { name: 'datastore.blockSizeKb', values: VSPHERE_BLOCK_SIZES_KB, notMeasuredWhen: datastoreAxisNotMeasured('datastore.blockSizeKb') },
  { name: 'disk.format', values: VSPHERE_DISK_FORMATS },
  { name: 'disk.controller', values: VSPHERE_CONTROLLERS },
  // a VMDK's capacity is any number of GiB (capacityInKB), up to the largest VMDK
  { name: 'disk.sizeGb', expected: `GiB up to ${ESXI_MAX_DISK_GB} (62 TiB, the largest VMDK)`, accepts: (v) => typeof v === 'number' && v > 0 && v <= ESXI_MAX_DISK_GB },
  // how the guest measures the disk: raw, or a test file on a filesystem made on it — ext4/xfs in a
  // Linux guest (guest-disk.ts), NTFS/ReFS in a Windows one (../hyperv/windows-guest-volume.ts); which of
  // them a target takes is its guest's (index.ts validate)
  // a vCenter storage policy (SPBM) by name: the shape here, the name on vCenter at run start (storage-policy.ts)
  { name: POLICY_AXIS, expected: POLICY_NAME_EXPECTED, accepts: isPolicyName },
  { name: 'guest.filesystem', values: [...new Set([...LINUX_GUEST_FILESYSTEMS, ...WINDOWS_GUEST_FILESYSTEMS])] },
  // the Linux guest's I/O scheduler and queue depth of the disk under test (../guest-settings.ts)
  ...GUEST_SETTINGS_AXES,
  // how many VMs run the workload at once: clones of the target's VM (vm-count.ts)
  VM_COUNT_AXIS_SPEC,
  // how those VMs are cloned: full copies, or linked clones of a snapshot the run takes (vm-count.ts)
  VM_CLONE_AXIS_SPEC,
];

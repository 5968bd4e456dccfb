// A ReconfigVM_Task spec that adds one new thin VirtualDisk at a given controller and unit, sent
// as-is (not through the provider's createDisk, which picks the unit and checks it): for tests and
// benchmarks that need the raw call — a unit the host refuses, a task the harness holds slow.
import type { DataObject } from '../../src/providers/vsphere/types.ts';

export interface AddDiskSpec {
  /** `[datastore] path.vmdk` */
  fileName: string;
  controllerKey: number;
  unitNumber: number;
  sizeMB: number;
  /** vim.vm.device.VirtualDiskOption.DiskMode; 'persistent' unless given */
  diskMode?: string;
}

/** The one device change (vim.vm.device.VirtualDeviceSpec): add + create a thin flat disk. */
export function addDiskChange(o: AddDiskSpec): DataObject {
  return {
    operation: 'add',
    fileOperation: 'create',
    device: {
      _type: 'VirtualDisk',
      key: -1,
      backing: { _type: 'VirtualDiskFlatVer2BackingInfo', fileName: o.fileName, diskMode: o.diskMode ?? 'persistent', thinProvisioned: true },
      controllerKey: o.controllerKey,
      unitNumber: o.unitNumber,
      capacityInKB: o.sizeMB * 1024,
      capacityInBytes: o.sizeMB * 2 ** 20,
    },
  };
}

/** `{ deviceChange: [addDiskChange(o)] }` (vim.vm.ConfigSpec), for ReconfigVM_Task. */
export function addDiskSpec(o: AddDiskSpec): DataObject {
  return { deviceChange: [addDiskChange(o)] };
}

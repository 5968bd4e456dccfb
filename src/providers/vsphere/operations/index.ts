// The vSphere provider's operations, in the order a permutation's steps use them.
import { cloneVm } from './clone-vm.ts';
import { createNasDatastore } from './create-nas-datastore.ts';
import { createVmfsDatastore } from './create-vmfs-datastore.ts';
import { guestDisk, guestFilesystem } from './guest-disk.ts';
import { guestSettings } from './guest-settings.ts';
import { windowsWriteCache } from './windows-write-cache.ts';
import { reconfigVm } from './reconfig-vm.ts';
import { templateSnapshot } from './template-snapshot.ts';
import { windowsGuestDisk, windowsGuestVolume } from './windows-guest-disk.ts';
import { diskspd, fio } from './workload.ts';

export { cloneVm, createNasDatastore, createVmfsDatastore, guestDisk, guestFilesystem, guestSettings, reconfigVm, templateSnapshot, windowsGuestDisk, windowsGuestVolume, windowsWriteCache };
export const VSPHERE_OPERATIONS = [createVmfsDatastore, createNasDatastore, templateSnapshot, cloneVm, reconfigVm, guestDisk, guestFilesystem, windowsGuestDisk, windowsGuestVolume, guestSettings, windowsWriteCache, fio, diskspd] as const;

// The Hyper-V provider's operations, in the order a permutation's steps use them.
import { attachDrive } from './attach-drive.ts';
import { guestDisk, guestVolume } from './guest-disk.ts';
import { newDiffVhd } from './new-diff-vhd.ts';
import { newVhd } from './new-vhd.ts';
import { newVm } from './new-vm.ts';
import { offlineDisk } from './offline-disk.ts';
import { diskspd } from './workload.ts';
import { writeCache } from './write-cache.ts';

export { attachDrive, guestDisk, guestVolume, newDiffVhd, newVhd, newVm, offlineDisk, writeCache };
export const HYPERV_OPERATIONS = [newVhd, newDiffVhd, newVm, offlineDisk, attachDrive, guestDisk, guestVolume, writeCache, diskspd] as const;

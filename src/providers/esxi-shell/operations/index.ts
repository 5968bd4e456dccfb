// The ESXi-shell provider's operations, in the order a permutation's steps use them.
import { attach } from './attach.ts';
import { createDisk } from './create-disk.ts';
import { createRdmPhysical, createRdmVirtual } from './create-rdm.ts';
import { createVmfs } from './create-vmfs.ts';
import { guestDisk, guestFilesystem } from './guest-disk.ts';
import { partition } from './partition.ts';

export { attach, createDisk, createRdmPhysical, createRdmVirtual, createVmfs, guestDisk, guestFilesystem, partition };
export const ESXI_SHELL_OPERATIONS = [partition, createVmfs, createRdmPhysical, createRdmVirtual, createDisk, attach, guestDisk, guestFilesystem] as const;

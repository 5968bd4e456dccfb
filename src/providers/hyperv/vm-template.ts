// The inventory's `vmTemplate` of a Hyper-V target: what a `vm.count` member VM is made of
// (vm-count.ts). The template is a sysprepped Windows guest's system disk (a VHDX); each member boots
// a differencing child of it in a Generation 2 VM. Members log in with the target's guestCredential
// (the template's answer file sets that account), read at each call like the target's own VM.
import { z } from 'zod';
import { intIn, matching } from '../../input/fields.ts';
import { HYPERV_EXPECTED, isHypervValue } from './validate.ts';

const MiB = 1024 * 1024;
/**
 * New-VM -MemoryStartupBytes: from 512 MiB (Windows Server's least RAM, Learn "Hardware
 * requirements for Windows Server") to 1 TiB, in whole MiB. Hyper-V Manager asks for a multiple of
 * 2 MB (UNVERIFIED for New-VM: the planner passes whole MiB, the schema asks for 2 MiB steps).
 */
export const HYPERV_VM_MEMORY = { min: 512 * MiB, max: 1024 * 1024 * MiB, step: 2 * MiB } as const;

export const vmTemplateSchema = z
  .strictObject({
    vhdxPath: matching((v) => isHypervValue('vhdxPath', v), HYPERV_EXPECTED.vhdxPath).describe('The template: a sysprepped Windows guest\'s system disk (VHDX). Each vm.count member boots a differencing child of it; the template itself is never written'),
    // Generation 2 only: the member's system disk and its measured disk both go on SCSI controller 0,
    // which a Generation 1 VM boots from not at all (it boots from IDE)
    generation: z.literal(2).default(2).describe('New-VM -Generation of each member: 2 only (its system disk and its measured disk are on SCSI; a Generation 1 VM boots from IDE)'),
    memoryStartupBytes: intIn(HYPERV_VM_MEMORY.min, HYPERV_VM_MEMORY.max, 'bytes of startup memory')
      .refine((v) => v % HYPERV_VM_MEMORY.step === 0, { error: 'expected a multiple of 2 MiB (2097152 bytes), as Hyper-V asks' })
      .default(2048 * MiB)
      .describe('New-VM -MemoryStartupBytes of each member VM (default 2 GiB)'),
    switchName: matching((v) => isHypervValue('vmName', v), HYPERV_EXPECTED.vmName).optional().describe('New-VM -SwitchName: a virtual switch for each member; absent: no network (PowerShell Direct needs none)'),
  })
  .describe('What a vm.count member VM is made of: a differencing disk of this template, a VM on it');

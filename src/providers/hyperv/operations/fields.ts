// Argument fields the Hyper-V drive and guest operations share: the SCSI slot, and the disk there.
import { z } from 'zod';
import { HYPERV_EXPECTED, isHypervValue } from '../validate.ts';

export const slot = { vmName: z.string().refine((v) => isHypervValue('vmName', v), { error: `expected ${HYPERV_EXPECTED.vmName}` }), controllerType: z.literal('SCSI'), controllerNumber: z.number().int().min(0).max(3), controllerLocation: z.number().int().min(0).max(63) };
/** a slot holding a VHDX (by path) or a pass-through host disk (by number) */
export const slotWith = <E extends z.ZodRawShape>(extra: E) => z.union([z.strictObject({ ...slot, ...extra, path: z.string().min(1) }), z.strictObject({ ...slot, ...extra, diskNumber: z.number().int().min(0) })]);

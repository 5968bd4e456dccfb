// Argument fields several ESXi-shell operations share: each value a command line gets is checked
// with the predicate the command builders use (../validate.ts).
import { z } from 'zod';
import { CANONICAL_DEVICE_EXPECTED, isCanonicalDevice } from '../../canonical-device.ts';
import { VMFS_KINDS } from '../../vmfs-block-size.ts';
import { ESXI_EXPECTED, isEsxiValue, type EsxiValueKind } from '../validate.ts';

const esxi = (kind: EsxiValueKind) => z.string().refine((v) => isEsxiValue(kind, v), { error: `expected ${ESXI_EXPECTED[kind]}` });

export const device = z.string().refine(isCanonicalDevice, { error: `expected ${CANONICAL_DEVICE_EXPECTED}` });
export const vmdkPath = esxi('vmdkPath');
export const vmid = esxi('vmid');
export const label = esxi('label');
export const volumePath = esxi('volumePath');
/** the VMFS versions vmkfstools -C makes */
export const vmfsVersion = z.enum(VMFS_KINDS);

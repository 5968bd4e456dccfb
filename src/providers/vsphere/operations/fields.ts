// Argument fields the vSphere operations share.
import { z } from 'zod';
import { CANONICAL_DEVICE_EXPECTED, isCanonicalDevice } from '../../canonical-device.ts';

/** where every step acts: the target's host, VM and datacenter */
export const where = { host: z.string().min(1), vm: z.string().min(1), datacenter: z.string().optional() };
export const device = z.string().refine(isCanonicalDevice, { error: `expected ${CANONICAL_DEVICE_EXPECTED}` });

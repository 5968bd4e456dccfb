// The `version` field of a target on an ESXi host (vsphere, esxi-shell): the host's release.
import { z } from 'zod';
import { ESXI_VERSION_EXPECTED, ESXI_VERSION_PATTERN } from './esxi-version.ts';

// YAML reads an unquoted 8.0 as the number 8 and 6.50 as 6.5, so a number is taken as the release
// it was meant to be; what the planners do with it: providers/esxi-version.ts.
export const esxiVersionField = () =>
  z
    .union([z.string(), z.number()])
    .transform((v) => (typeof v === 'number' ? (Number.isInteger(v) ? v.toFixed(1) : String(v)) : v))
    .refine((v) => ESXI_VERSION_PATTERN.test(v), { error: `expected ${ESXI_VERSION_EXPECTED}` })
    .optional()
    .describe('ESXi release of the host, e.g. "8.0": validate refuses what it cannot create (VMFS3 needs 5.x, VMFS6 6.5+); when absent, run reads it from the host before any change');

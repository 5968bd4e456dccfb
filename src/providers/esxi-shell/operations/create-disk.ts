// `vmkfstools -c`: a virtual disk (VMDK) of the permutation's size and provisioning format.
import { z } from 'zod';
import { createdObject, esxiOperation } from '../host.ts';
import { ESXI_MAX_DISK_GB } from '../validate.ts';
import { createDiskArgv, VMDK_FORMATS } from '../vmkfstools.ts';
import { diskFile } from './disk-file.ts';
import { vmdkPath } from './fields.ts';

/** eager zeroing writes the whole disk; ~500 MB/s on a typical array */
const ZERO_BYTES_PER_SEC = 500e6;

export const createDisk = esxiOperation({
  name: 'vmkfstools -c',
  schema: z.strictObject({ path: vmdkPath, sizeGb: z.number().int().min(1).max(ESXI_MAX_DISK_GB), format: z.enum(VMDK_FORMATS) }),
  async apply(a, ctx) {
    const argv = createDiskArgv(a.sizeGb, a.format, a.path);
    await ctx.sent({ path: a.path });
    await ctx.host.exec(argv);
    return createdObject(ctx.step, a.path, { path: a.path });
  },
  objects: { disk: diskFile },
  estimateSec: (a) => 5 + (a.format === 'eagerzeroedthick' ? (a.sizeGb * 1024 ** 3) / ZERO_BYTES_PER_SEC : 0),
});

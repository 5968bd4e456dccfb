// ReconfigVM_Task, in its two shapes a plan uses: add a controller of the disk.controller type
// (controller.ts), or add and create a disk — a flat VMDK or an RDM (disk.ts).
import { z } from 'zod';
import { vsphereOperation } from '../host.ts';
import { addController, addControllerArgs, controllerObject } from './controller.ts';
import { addDisk, diskObject, flatDiskArgs, rdmArgs, verifyFormat } from './disk.ts';

/** eager zeroing writes the whole disk; ~500 MB/s on a typical array */
export const ZERO_BYTES_PER_SEC = 500e6;

export const reconfigVm = vsphereOperation({
  name: 'ReconfigVM_Task',
  schema: z.union([addControllerArgs, flatDiskArgs, rdmArgs]),
  async apply(a, ctx) {
    await ctx.host.client();
    ctx.signal.throwIfAborted();
    return a.deviceChange === 'add' ? addController(a, ctx) : addDisk(a, ctx);
  },
  objects: { controller: controllerObject, disk: diskObject, rdm: diskObject },
  verify: async (a, created, ctx) => (a.deviceChange === 'add+create' && a.backing === 'flat' ? verifyFormat(a, created, ctx) : undefined),
  estimateSec: (a) => 5 + (a.deviceChange === 'add+create' && a.backing === 'flat' && a.format === 'eagerzeroedthick' ? a.sizeBytes / ZERO_BYTES_PER_SEC : 0),
});

// CreateVmfsDatastore: a VMFS datastore of the permutation's version and block size on an allowed LUN.
import { z } from 'zod';
import { vsphereOperation } from '../host.ts';
import { datastore } from './datastore.ts';
import { device, where } from './fields.ts';

export const createVmfsDatastore = vsphereOperation({
  name: 'CreateVmfsDatastore',
  schema: z.strictObject({
    ...where,
    name: z.string().min(1),
    device,
    vmfsMajorVersion: z.union([z.literal(3), z.literal(5), z.literal(6)]),
    blockSizeMb: z.number().positive().optional(),
    blockSizeKb: z.number().positive().optional(),
  }),
  async apply(a, ctx) {
    const h = ctx.host;
    const c = await h.client();
    ctx.signal.throwIfAborted();
    const { name, blockSizeMb, blockSizeKb } = a;
    const hostRef = await h.host(a.host);
    ctx.log(`creating VMFS ${a.vmfsMajorVersion} datastore ${name} on ${a.device}`, { device: a.device, blockSizeMb, blockSizeKb });
    const data = { datastore: name, host: a.host, type: 'vmfs', device: a.device };
    const ds = await c.createVmfsDatastore(hostRef, {
      deviceCanonicalName: a.device,
      vmfsMajorVersion: a.vmfsMajorVersion,
      ...(blockSizeMb !== undefined ? { blockSizeMb } : {}),
      ...(blockSizeKb !== undefined ? { blockSizeKb } : {}),
      name,
      allowedDevices: h.target.allowedDevices,
      beforeSend: () => ctx.sent({ ...data }),
    });
    return { kind: 'datastore', name, provider: 'vsphere', id: ds.value, data };
  },
  objects: { datastore },
  estimateSec: () => 15,
});

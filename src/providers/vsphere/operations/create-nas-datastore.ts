// CreateNasDatastore: the inventory's NFS export mounted as a datastore of the run's owned name.
import { z } from 'zod';
import { vsphereOperation } from '../host.ts';
import { datastore } from './datastore.ts';
import { where } from './fields.ts';

export const createNasDatastore = vsphereOperation({
  name: 'CreateNasDatastore',
  schema: z.strictObject({ ...where, name: z.string().min(1), remoteHost: z.string().min(1), remotePath: z.string().min(1), type: z.literal('NFS'), accessMode: z.literal('readWrite') }),
  async apply(a, ctx) {
    const h = ctx.host;
    const c = await h.client();
    ctx.signal.throwIfAborted();
    const hostRef = await h.host(a.host);
    ctx.log(`mounting NFS ${a.remoteHost}:${a.remotePath} as ${a.name}`);
    const data = { datastore: a.name, host: a.host, type: 'nfs' };
    const ds = await c.createNasDatastore(hostRef, { remoteHost: a.remoteHost, remotePath: a.remotePath, name: a.name, beforeSend: () => ctx.sent({ ...data }) });
    return { kind: 'datastore', name: a.name, provider: 'vsphere', id: ds.value, data };
  },
  objects: { datastore },
  estimateSec: () => 5,
});

// A datastore this run created (VMFS on a LUN, or an NFS mount): found by its owned name, removed
// only while the host shows it by that name (../host.ts ownedDatastore).
import { InvalidArgument } from '../../../errors.ts';
import type { ObjectKind } from '../../../contract/operation.ts';
import type { DatastoreInfo } from '../types.ts';
import { ownedDatastore, type VsphereHost } from '../host.ts';

export const datastore: ObjectKind<VsphereHost> = {
  /**
   * The read-only half of a datastore's destroy: the host shows it by our owned name (the name
   * carries the run's id, run/teardown.ts), and says which LUNs its VMFS extents are on — what
   * RemoveDatastore destroys with it.
   */
  async planDestroy(obj, ctx) {
    const h = ctx.host;
    // recorded host only; the datastore itself is found by its owned name
    const hostName = typeof obj.data.host === 'string' ? obj.data.host : undefined;
    if (!hostName) throw new InvalidArgument(`the ledger records no host for datastore ${obj.name}; refusing to guess one`, { name: 'host', value: '' });
    const ds = await ownedDatastore(h, obj);
    if (!ds) return { outcome: 'absent' };
    const c = await h.client();
    const info = (await c.readProps(ds, ['info'])).info as DatastoreInfo | undefined;
    const luns = (info?.vmfs?.extent ?? []).map((e) => `${e.diskName}:${e.partition}`);
    const on = luns.length ? ` on ${luns.join(', ')}` : info?.nas ? ` (NFS ${info.nas.remoteHost}:${info.nas.remotePath})` : '';
    return {
      outcome: 'remove',
      acts: `datastore ${obj.name} (${ds.value})${on}`,
      run: async () => {
        ctx.log(`removing datastore ${obj.name}`);
        return c.removeDatastore(await h.host(hostName), ds);
      },
    };
  },
  async destroy(obj, ctx) {
    const plan = (await datastore.planDestroy!(obj, ctx))!;
    return plan.outcome === 'absent' ? 'absent' : plan.run();
  },
  async find(ref, _sent, h) {
    const ds = await h.findDatastore(ref.name);
    return ds ? { ...ref, provider: 'vsphere', id: ds.value, data: { datastore: ref.name, host: h.target.host } } : null;
  },
};

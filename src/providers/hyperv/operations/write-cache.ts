// In the guest: the write cache policy of the disk the guest-disk step found (guest.writeCache,
// guest.writeCacheFlushing), set through PowerShell Direct with the control codes Device Manager
// sends, read back into the records, restored at teardown (../../windows-write-cache.ts). The
// ledger row keeps the VM's name, so teardown reaches the same guest.
import { z } from 'zod';
import { InternalError } from '../../../errors.ts';
import { GUEST_WRITE_CACHE_OPERATION, writeCacheFields } from '../../guest-settings-axes.ts';
import type { WindowsGuestRunner } from '../../windows-guest.ts';
import { applyWriteCache, restoreWriteCache, verifyWriteCache } from '../../windows-write-cache.ts';
import { checkHyperv } from '../validate.ts';
import { hypervOperation, type HypervHost } from '../host.ts';
import { slot } from './fields.ts';

/** The guest of `vmName` as the shared write cache code reaches it: its storage cmdlets and the cache script. */
function guestOf(h: HypervHost, vmName: string): () => Promise<WindowsGuestRunner> {
  return async () => ({
    target: `hyperv:${h.t.host}/${vmName}`,
    calls: (calls) => h.inGuest(vmName, calls),
    diskCache: (disk, set) => h.cacheInGuest(vmName, disk, set),
    exec: () => Promise.reject(new InternalError('the write cache step runs no program in the guest')),
    close: async () => undefined,
  });
}

const wantedOf = (a: { writeCache?: 'enabled' | 'disabled' | undefined; flushing?: 'on' | 'off' | undefined }) => ({ ...(a.writeCache !== undefined ? { writeCache: a.writeCache } : {}), ...(a.flushing !== undefined ? { flushing: a.flushing } : {}) });

/** The VM the ledger row names (checked like any VM name before it reaches PowerShell). */
const recordedVm = (obj: { name: string; data: Record<string, unknown> }): string => checkHyperv('vmName', obj.data.vmName, `the VM of ${obj.name}`);

export const writeCache = hypervOperation({
  name: GUEST_WRITE_CACHE_OPERATION,
  schema: z.strictObject({ vmName: slot.vmName, ...writeCacheFields }),
  async apply(a, ctx) {
    if (!ctx.step.creates) throw new InternalError(`hyperv step ${ctx.step.step}: needs an owned name`);
    return applyWriteCache(guestOf(ctx.host, a.vmName), wantedOf(a), { provider: 'hyperv', name: ctx.step.creates.name, where: { vmName: a.vmName } }, ctx);
  },
  verify: (a, created, ctx) => verifyWriteCache(guestOf(ctx.host, a.vmName), wantedOf(a), created),
  objects: {
    'guest-write-cache': {
      destroy: (obj, ctx) => restoreWriteCache(guestOf(ctx.host, recordedVm(obj)), obj, ctx),
    },
  },
});

// The guest-settings step in a Windows guest (guest.os: windows, through guest operations): the
// write cache policy of the disk the guest-disk step found (IOCTL_DISK_SET_CACHE_INFORMATION,
// IOCTL_DISK_SET_CACHE_SETTING),
// read back into the records, and restored at teardown from the original recorded before the set
// (../../windows-write-cache.ts).
import { z } from 'zod';
import { InternalError } from '../../../errors.ts';
import type { OperationContext } from '../../../contract/operation.ts';
import { GUEST_WRITE_CACHE_OPERATION, writeCacheFields } from '../../guest-settings-axes.ts';
import { applyWriteCache, restoreWriteCache, verifyWriteCache } from '../../windows-write-cache.ts';
import { vsphereOperation, type VsphereHost } from '../host.ts';
import { where } from './fields.ts';

function windowsGuest(ctx: { host: VsphereHost }, what: string) {
  const g = ctx.host.opts.windowsGuest;
  if (!g) throw new InternalError(`vsphere ${what}: needs the target's Windows guest`);
  return () => g.open();
}

const wantedOf = (a: { writeCache?: 'enabled' | 'disabled' | undefined; flushing?: 'on' | 'off' | undefined }) => ({ ...(a.writeCache !== undefined ? { writeCache: a.writeCache } : {}), ...(a.flushing !== undefined ? { flushing: a.flushing } : {}) });

export const windowsWriteCache = vsphereOperation({
  name: GUEST_WRITE_CACHE_OPERATION,
  schema: z.strictObject({ ...where, ...writeCacheFields }),
  async apply(a, ctx: OperationContext<VsphereHost>) {
    const open = windowsGuest(ctx, `step ${ctx.step.step}`);
    if (!ctx.step.creates) throw new InternalError(`vsphere step ${ctx.step.step}: needs an owned name`);
    return applyWriteCache(open, wantedOf(a), { provider: 'vsphere', name: ctx.step.creates.name }, ctx);
  },
  verify: (a, created, ctx) => verifyWriteCache(windowsGuest(ctx, `verify of ${created.name}`), wantedOf(a), created),
  objects: {
    'guest-write-cache': {
      destroy: (obj, ctx) => restoreWriteCache(windowsGuest(ctx, `teardown of ${obj.name}`), obj, ctx),
    },
  },
});

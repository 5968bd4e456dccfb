// The guest-disk step in a Linux guest: the disk the disk step attached, found in the guest by its
// WWN and checked (../../guest-disk.ts); raw, or made into ext4/xfs and mounted in a directory of
// ours (undone at teardown). The workload measures what it found.
import { z } from 'zod';
import { InternalError } from '../../../errors.ts';
import type { OperationContext } from '../../../contract/operation.ts';
import { applyGuestDiskStep, destroyGuestFilesystem, GUEST_DISK_OPERATION, GUEST_FS_OPERATION, LINUX_FILESYSTEMS_MADE } from '../../guest-disk.ts';
import { vsphereOperation, type VsphereHost } from '../host.ts';
import { policyFactsOf, withMeasureFacts } from '../storage-policy.ts';
import { attachedDiskIdentity, guestDiskWhere } from './attached-disk.ts';

async function apply(a: { vm: string; disk: string; filesystem: string; mountpoint?: string }, ctx: OperationContext<VsphereHost>) {
  ctx = withMeasureFacts(ctx, policyFactsOf(ctx.host, a.disk)); // the disk's storage policy in its records
  await ctx.host.client();
  ctx.signal.throwIfAborted();
  const g = ctx.host.opts.guest;
  if (!g) throw new InternalError(`vsphere step ${ctx.step.step}: the provider was composed without the target's guest`);
  const { identity } = await attachedDiskIdentity(ctx.host, a, GUEST_DISK_OPERATION);
  return applyGuestDiskStep(g, identity, { provider: 'vsphere', filesystem: a.filesystem, mountpoint: a.mountpoint, ...(ctx.step.creates ? { name: ctx.step.creates.name } : {}) }, ctx);
}

export const guestDisk = vsphereOperation({
  name: GUEST_DISK_OPERATION,
  schema: z.strictObject({ ...guestDiskWhere, filesystem: z.literal('raw') }),
  apply,
});

export const guestFilesystem = vsphereOperation({
  name: GUEST_FS_OPERATION,
  schema: z.strictObject({ ...guestDiskWhere, filesystem: z.enum(LINUX_FILESYSTEMS_MADE), mountpoint: z.string().regex(/^\/[^\0]*$/) }),
  apply,
  objects: {
    'guest-filesystem': {
      destroy(obj, ctx) {
        if (!ctx.host.opts.guest) throw new InternalError(`vsphere: teardown of ${obj.name} needs the target's guest`);
        return destroyGuestFilesystem(ctx.host.opts.guest, obj, ctx);
      },
    },
  },
});

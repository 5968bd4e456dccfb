// The guest-disk step in a Linux guest: the disk the disk step attached, found in the guest by its
// WWN and checked (../../guest-disk.ts); raw, or made into ext4/xfs and mounted in a directory of
// ours (undone at teardown). The workload measures what it found.
import { z } from 'zod';
import { InternalError } from '../../../errors.ts';
import type { OperationContext } from '../../../contract/operation.ts';
import { applyGuestDiskStep, destroyGuestFilesystem, type GuestAccess, GUEST_DISK_OPERATION, GUEST_FS_OPERATION, LINUX_FILESYSTEMS_MADE } from '../../guest-disk.ts';
import { vsphereOperation, type VsphereHost } from '../host.ts';
import { policyFactsOf, withMeasureFacts } from '../storage-policy.ts';
import { attachedDiskIdentity, guestDiskWhere } from './attached-disk.ts';

/**
 * The Linux guest of `vm`: the target's own, or (a `vm.count` clone) the clone's, reached through
 * guest operations with the target's guest credential — a clone's guest is a copy of it.
 */
export function linuxGuestOf(h: VsphereHost, vm: string | undefined, what: string): GuestAccess {
  const g = vm === undefined || vm === h.target.vm ? h.opts.guest : h.opts.guestFor?.(vm);
  if (!g) throw new InternalError(`vsphere ${what}: the provider was composed without ${vm === undefined || vm === h.target.vm ? "the target's guest" : `a way to reach clone ${vm}'s guest`}`);
  return g;
}

/**
 * A member's step (`vm.count`): what it measures says which VM it is in, and what it records for
 * teardown names that VM, whose guest the destroy then opens.
 */
function asMember(ctx: OperationContext<VsphereHost>, a: { vm: string; member?: number | undefined }): OperationContext<VsphereHost> {
  if (a.member === undefined) return ctx;
  const member = { index: a.member, vm: a.vm };
  return { ...ctx, sent: (d) => ctx.sent({ ...d, vm: a.vm }), ...(ctx.measure ? { measure: (t) => ctx.measure!({ ...t, member, facts: { ...t.facts, vm: a.vm } }) } : {}) };
}

async function apply(a: { vm: string; disk: string; filesystem: string; mountpoint?: string; member?: number | undefined }, ctx: OperationContext<VsphereHost>) {
  ctx = withMeasureFacts(asMember(ctx, a), policyFactsOf(ctx.host, a.disk)); // the disk's storage policy in its records
  await ctx.host.client();
  ctx.signal.throwIfAborted();
  const g = linuxGuestOf(ctx.host, a.vm, `step ${ctx.step.step}`);
  const { identity } = await attachedDiskIdentity(ctx.host, a, GUEST_DISK_OPERATION);
  return applyGuestDiskStep(g, identity, { provider: 'vsphere', filesystem: a.filesystem, mountpoint: a.mountpoint, ...(ctx.step.creates ? { name: ctx.step.creates.name } : {}) }, ctx);
}

/** which VM of a `vm.count` permutation the step is in (1-based); absent: the target's own VM */
const member = z.number().int().positive().optional();

export const guestDisk = vsphereOperation({
  name: GUEST_DISK_OPERATION,
  schema: z.strictObject({ ...guestDiskWhere, filesystem: z.literal('raw'), member }),
  apply,
});

export const guestFilesystem = vsphereOperation({
  name: GUEST_FS_OPERATION,
  schema: z.strictObject({ ...guestDiskWhere, filesystem: z.enum(LINUX_FILESYSTEMS_MADE), mountpoint: z.string().regex(/^\/[^\0]*$/), member }),
  apply,
  objects: {
    'guest-filesystem': {
      destroy(obj, ctx) {
        // a clone's filesystem: in the clone's guest, as recorded (asMember)
        const vm = typeof obj.data.vm === 'string' ? obj.data.vm : undefined;
        return destroyGuestFilesystem(linuxGuestOf(ctx.host, vm, `teardown of ${obj.name}`), obj, ctx);
      },
    },
  },
});

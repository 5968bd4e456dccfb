// The guest-settings step in a Linux guest: the I/O scheduler and queue depth of the disk the
// guest-disk step found, set in sysfs, read back into the records, and restored at teardown from
// the originals recorded before the first write (../../guest-settings.ts).
import { z } from 'zod';
import { InternalError } from '../../../errors.ts';
import type { OperationContext } from '../../../contract/operation.ts';
import { applyGuestSettings, restoreGuestSettings, verifyGuestSettings, GUEST_SETTINGS_OPERATION } from '../../guest-settings.ts';
import { guestSettingsFields } from '../../guest-settings-axes.ts';
import { vsphereOperation, type VsphereHost } from '../host.ts';
import { where } from './fields.ts';

function linuxGuest(ctx: { host: VsphereHost }, what: string) {
  const g = ctx.host.opts.guest;
  if (!g) throw new InternalError(`vsphere ${what}: needs the target's Linux guest`);
  return g;
}

const wantedOf = (a: { scheduler?: string | undefined; queueDepth?: number | undefined }) => ({ ...(a.scheduler !== undefined ? { scheduler: a.scheduler } : {}), ...(a.queueDepth !== undefined ? { queueDepth: a.queueDepth } : {}) });

export const guestSettings = vsphereOperation({
  name: GUEST_SETTINGS_OPERATION,
  schema: z.strictObject({ ...where, ...guestSettingsFields }),
  async apply(a, ctx: OperationContext<VsphereHost>) {
    const g = linuxGuest(ctx, `step ${ctx.step.step}`);
    if (!ctx.step.creates) throw new InternalError(`vsphere step ${ctx.step.step}: needs an owned name`);
    return applyGuestSettings(g, wantedOf(a), { provider: 'vsphere', name: ctx.step.creates.name }, ctx);
  },
  verify: (a, created, ctx) => verifyGuestSettings(linuxGuest(ctx, `verify of ${created.name}`), wantedOf(a), created),
  objects: {
    'guest-settings': {
      destroy: (obj, ctx) => restoreGuestSettings(linuxGuest(ctx, `teardown of ${obj.name}`), obj, ctx),
    },
  },
});

// The disk a guest-disk step's disk step attached, found on the VM by its owned name, and what the
// guest knows it by (WWN, size, source: ../../guest-disk.ts).
import { z } from 'zod';
import { InvalidArgument, UnsafeOperation } from '../../../errors.ts';
import type { AttachedDiskIdentity } from '../../guest-disk.ts';
import { diskByOwnedName, guestIdentity } from '../guest-identity.ts';
import type { VsphereHost } from '../host.ts';
import type { VirtualDevice } from '../types.ts';
import { where } from './fields.ts';

/** a guest-disk step's arguments: where, and the owned name of the disk to find */
export const guestDiskWhere = { ...where, disk: z.string().min(1) };

/** Refused when the VM has no such disk or it reports no uuid / NAA id, before anything is asked of the guest. */
export async function attachedDiskIdentity(h: VsphereHost, a: { vm: string; disk: string }, operation: string): Promise<{ disk: VirtualDevice; identity: AttachedDiskIdentity }> {
  const d = diskByOwnedName(await (await h.client()).devices(await h.vm(a.vm)), a.disk);
  if (!d) throw new InvalidArgument(`VM ${a.vm} has no disk ${a.disk}.vmdk to find in the guest`, { name: 'disk', value: a.disk });
  const identity = guestIdentity(d);
  if (!identity) throw new UnsafeOperation(`${String(d.backing?.fileName)} on VM ${a.vm} reports no uuid or NAA id, so the guest cannot name it by WWN; nothing is measured`, { operation, target: a.disk });
  return { disk: d, identity };
}

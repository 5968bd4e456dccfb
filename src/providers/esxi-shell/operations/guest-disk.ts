// The guest-disk step: the disk the attach step put on the VM, by what the guest will call it — a
// VMDK's or virtual RDM's uuid as `vmkfstools -J getuuid` prints it, a physical RDM's LUN NAA id —
// and its size (the VMDK's, or the LUN's as esxcli lists it); then found in the guest and checked
// (../../guest-disk.ts), made into ext4/xfs when the axis says so.
import { z } from 'zod';
import { InvalidArgument, UnsafeOperation } from '../../../errors.ts';
import type { OperationContext } from '../../../contract/operation.ts';
import { applyGuestDiskStep, destroyGuestFilesystem, GUEST_DISK_OPERATION, GUEST_FS_OPERATION, LINUX_FILESYSTEMS_MADE, wwnOfLun, type AttachedDiskIdentity } from '../../guest-disk.ts';
import { deviceListArgv, parseDeviceList } from '../esxcli.ts';
import { attachedUnits, esxiOperation, type EsxiHost } from '../host.ts';
import { ESXI_MAX_DISK_GB } from '../validate.ts';
import { getDiskUuidArgv, parseDiskUuid } from '../vmkfstools.ts';
import { device, vmdkPath, vmid } from './fields.ts';

// the disk attached (its path), what the guest names it by, and its size (a VMDK's; a LUN's is read at apply)
const found = { vmid, path: vmdkPath, by: z.enum(['disk uuid', 'LUN id']), lun: device.optional(), sizeBytes: z.number().int().positive().max(ESXI_MAX_DISK_GB * 1024 ** 3).optional() };
type Found = z.output<z.ZodObject<typeof found>>;

async function identityOf(a: Found, ctx: OperationContext<EsxiHost>): Promise<AttachedDiskIdentity> {
  const h = ctx.host;
  const { vmid, path } = a;
  // the disk this permutation attached, on this VM: nothing else is looked for in the guest
  if ((await attachedUnits(h, vmid, path)).length === 0) throw new UnsafeOperation(`${h.host}: ${path} is not attached to VM ${vmid}; nothing to find in the guest, nothing measured`, { operation: ctx.step.operation, target: path });
  let sizeBytes: number;
  if (a.lun !== undefined) {
    const lun = a.lun;
    const dev = parseDeviceList((await h.exec(deviceListArgv(lun))).stdout).find((d) => d.name === lun);
    if (!dev) throw new UnsafeOperation(`${h.host}: the host no longer lists ${lun}; nothing measured`, { operation: ctx.step.operation, target: lun });
    sizeBytes = dev.sizeMb * 1024 * 1024;
  } else if (a.sizeBytes !== undefined) sizeBytes = a.sizeBytes;
  else throw new InvalidArgument(`esxi-shell step ${ctx.step.step}: names neither a LUN nor a size`, { name: 'sizeBytes', value: '' });
  if (a.by === 'disk uuid') return { wwn: parseDiskUuid((await h.exec(getDiskUuidArgv(path))).stdout, `${h.host}: vmkfstools -J getuuid ${path}`), sizeBytes, source: path };
  const wwn = a.lun === undefined ? null : wwnOfLun(a.lun);
  if (!wwn) throw new UnsafeOperation(`${h.host}: ${String(a.lun)} has no NAA id, so the guest cannot name the physical RDM by WWN; nothing measured`, { operation: ctx.step.operation, target: String(a.lun) });
  return { wwn, sizeBytes, source: `${path} (LUN ${String(a.lun)})` };
}

function guestOf(ctx: OperationContext<EsxiHost>) {
  const g = ctx.host.guest;
  if (!g) throw new InvalidArgument(`esxi-shell step ${ctx.step.step}: the provider was composed without the target's guest`, { name: 'guest', value: '' });
  return g;
}

/** raw: the disk found and measured as it is */
export const guestDisk = esxiOperation({
  name: GUEST_DISK_OPERATION,
  schema: z.strictObject({ ...found, filesystem: z.literal('raw') }),
  apply: async (a, ctx) => applyGuestDiskStep(guestOf(ctx), await identityOf(a, ctx), { provider: 'esxi-shell', filesystem: a.filesystem }, ctx),
});

/** ext4/xfs: one GPT partition, mkfs, mounted in a directory of ours; undone before the disk is detached */
export const guestFilesystem = esxiOperation({
  name: GUEST_FS_OPERATION,
  schema: z.strictObject({ ...found, filesystem: z.enum(LINUX_FILESYSTEMS_MADE), mountpoint: z.string().regex(/^\/[^\0]*$/) }),
  apply: async (a, ctx) => applyGuestDiskStep(guestOf(ctx), await identityOf(a, ctx), { provider: 'esxi-shell', filesystem: a.filesystem, mountpoint: a.mountpoint, ...(ctx.step.creates ? { name: ctx.step.creates.name } : {}) }, ctx),
  objects: {
    'guest-filesystem': {
      destroy(obj, ctx) {
        if (!ctx.host.guest) throw new InvalidArgument(`esxi-shell: teardown of ${obj.name} needs the target's guest`, { name: 'guest', value: '' });
        return destroyGuestFilesystem(ctx.host.guest, obj, ctx);
      },
    },
  },
});

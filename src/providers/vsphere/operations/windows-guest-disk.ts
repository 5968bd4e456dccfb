// The guest-disk step in a Windows guest (guest.os: windows, through guest operations): the
// attached disk found by Get-Disk (its serial number or unique id is the disk's WWN, the size the
// provisioned one: ../../hyperv/guest-disk.ts), refused unless blank and not the system or boot
// disk, then brought online and writable (a new SCSI disk stays offline and read-only under Windows
// Server's default SAN policy, real-product-rules.md §6). Raw: diskspd measures it (`#N`); nothing
// of it outlives the disk, no ledger row. With a volume: GPT, one partition, NTFS/ReFS as the
// Hyper-V guest makes it (../../windows-guest-volume.ts), a `guest-volume` row that teardown
// clears; diskspd measures a test file on it.
import { z } from 'zod';
import { InternalError, InvalidArgument, UnsafeOperation } from '../../../errors.ts';
import type { OperationContext, RecordedObject, HostContext } from '../../../contract/operation.ts';
import type { CreatedObject, MeasuredTarget } from '../../../contract/provider.ts';
import { getGuestDiskCall, guestDiskFacts, listGuestDisksCall, pickGuestDiskByWwn, setGuestDiskOnlineCall, setGuestDiskWritableCall, type GuestDisk } from '../../hyperv/guest-disk.ts';
import type { GuestCall } from '../../hyperv/powershell.ts';
import type { WindowsGuestRunner } from '../../windows-guest.ts';
import { clearGuestVolume, formatGuestVolume, guestVolumeMeasure, volumeArgs, volumeSpecOf, type GuestVolumeIo } from '../../hyperv/windows-guest-volume.ts';
import type { AttachedDiskIdentity } from '../../guest-disk.ts';
import { vsphereOperation, type VsphereHost } from '../host.ts';
import { policyFactsOf, withMeasureFacts } from '../storage-policy.ts';
import { attachedDiskIdentity, guestDiskWhere } from './attached-disk.ts';

/** A Windows guest (guest.os: windows): the disk found by Get-Disk (serial / unique id = the WWN), brought online and writable; diskspd measures it raw (#N). */
export const GUEST_WINDOWS_DISK_OPERATION = 'guest: find disk by WWN (Get-Disk), Set-Disk online';
/** The same, then a volume on it (guest.filesystem ntfs-4k, ntfs-64k, refs): GPT, one partition, Format-Volume; diskspd measures a test file there. */
export const GUEST_WINDOWS_VOLUME_OPERATION = 'guest: find disk by WWN (Get-Disk), Set-Disk online, Initialize-Disk GPT, New-Partition, Format-Volume';

const idHex = (v: unknown): string => (typeof v === 'string' ? v.replace(/[\s:-]/g, '').toLowerCase() : '');

function windowsIo(runner: WindowsGuestRunner, vmName: string): GuestVolumeIo {
  return { host: runner.target, vmName, calls: (calls: GuestCall[]) => runner.calls(calls) };
}

/** The disk with the identity's WWN, online and writable in the guest, and what the workload measures on it raw. */
async function onlineDisk(runner: WindowsGuestRunner, vmName: string, identity: AttachedDiskIdentity, ctx: OperationContext<VsphereHost>): Promise<{ now: GuestDisk; raw: MeasuredTarget }> {
  const disks = (await runner.calls([listGuestDisksCall()])) as unknown as GuestDisk[];
  const found = pickGuestDiskByWwn(runner.target, disks, { vmName, wwn: identity.wwn, sizeBytes: identity.sizeBytes, source: identity.source });
  ctx.signal.throwIfAborted();
  if (found.IsOffline) await runner.calls([setGuestDiskOnlineCall(found.Number)]);
  if (found.IsReadOnly || found.IsOffline) await runner.calls([setGuestDiskWritableCall(found.Number)]);
  const [now] = (await runner.calls([getGuestDiskCall(found.Number)])) as unknown as GuestDisk[];
  if (!now || now.IsOffline || now.IsReadOnly || idHex(now.SerialNumber ?? now.UniqueId) !== idHex(found.SerialNumber ?? found.UniqueId)) {
    throw new UnsafeOperation(`${runner.target}: guest disk ${found.Number} of ${vmName} is not online and writable after Set-Disk (or is no longer the disk found); nothing is measured`, { operation: ctx.step.operation, target: `disk ${found.Number}` });
  }
  const facts = guestDiskFacts(now);
  ctx.log(`found ${identity.source} in the guest as disk ${now.Number} (wwn ${identity.wwn})`, { guestDisk: now.Number, wwn: identity.wwn });
  const id = facts.serialNumber ?? facts.uniqueId;
  const raw: MeasuredTarget = { path: `#${now.Number}`, device: `guest disk ${now.Number}`, identity: `wwn-0x${identity.wwn}`, filesystem: 'raw', facts: { guestDisk: now.Number, ...(id ? { guestDiskId: id } : {}), deviceWwn: identity.wwn, filesystem: 'raw' } };
  return { now, raw };
}

/** a step's arguments: the disk, and (a volume step) what volumeSpecOf checks */
type Args = z.output<z.ZodObject<typeof guestDiskWhere>> & { filesystem: string };

async function apply(a: Args, ctx: OperationContext<VsphereHost>): Promise<CreatedObject | null> {
  ctx = withMeasureFacts(ctx, policyFactsOf(ctx.host, a.disk)); // the disk's storage policy in its records
  await ctx.host.client();
  ctx.signal.throwIfAborted();
  const g = ctx.host.opts.windowsGuest;
  if (!g) throw new InternalError(`vsphere step ${ctx.step.step}: the provider was composed without the target's Windows guest`);
  const volume = ctx.step.operation === GUEST_WINDOWS_VOLUME_OPERATION;
  if (volume) volumeSpecOf(a); // refused before anything is asked of the guest
  const { disk: d, identity } = await attachedDiskIdentity(ctx.host, a, ctx.step.operation);
  const runner = await g.open();
  try {
    const { now, raw } = await onlineDisk(runner, a.vm, identity, ctx);
    if (!volume) {
      ctx.measure?.(raw);
      return null;
    }
    ctx.signal.throwIfAborted();
    // what teardown needs besides the guest's own ids: the VMware disk it is on (an RDM's LUN keeps
    // what was written on it when the disk leaves the VM; a VMDK of ours is deleted with it)
    const where = `${a.vm} ${identity.source}`;
    const base = { disk: a.disk, fileName: typeof d.backing?.fileName === 'string' ? d.backing.fileName : null, backing: d.backing?._type === 'VirtualDiskRawDiskMappingVer1BackingInfo' ? 'rdm' : 'flat', wwn: identity.wwn, sizeBytes: identity.sizeBytes };
    const { id, data } = await formatGuestVolume(windowsIo(runner, a.vm), now, a, base, ctx, { operation: ctx.step.operation, where });
    ctx.measure?.(guestVolumeMeasure(raw, data, where));
    return { ...ctx.step.creates!, provider: 'vsphere', id, data };
  } finally {
    await runner.close().catch(() => undefined);
  }
}

/**
 * A volume the Windows guest-disk step made: cleared (Clear-Disk) on the guest disk carrying the
 * recorded location and ids, only when it holds nothing but the GPT table and partition this run
 * made. A disk no longer in the guest: a VMDK of ours takes the volume along (the disk row deletes
 * it); an RDM's LUN keeps it, and the row stays open.
 */
async function destroyVolume(obj: RecordedObject, ctx: HostContext<VsphereHost>): Promise<'removed' | 'absent'> {
  const d = obj.data;
  const wg = ctx.host.opts.windowsGuest;
  if (!wg) throw new InternalError(`vsphere: teardown of ${obj.name} needs the target's Windows guest`);
  if (typeof d.vmName !== 'string' || d.vmName === '') throw new InvalidArgument(`the ledger records no VM for guest-volume ${obj.name}; refusing to guess one`, { name: 'vmName', value: '' });
  const vmName = d.vmName;
  const keepOpen = (what: string, why: string): never => {
    throw new UnsafeOperation(`left alone: ${why}`, { operation: 'destroy', target: what });
  };
  const runner = await wg.open();
  try {
    return await clearGuestVolume(windowsIo(runner, vmName), d, ctx, {
      keepOpen,
      whenGone: (what) => {
        if (d.backing === 'flat') {
          ctx.log(`${what} is no longer in the guest; the volume this run made goes with ${String(d.fileName)}`);
          return 'absent';
        }
        return keepOpen(what, `${what} is no longer in the guest, and the LUN of ${String(d.fileName)} may still carry the partition this run made (${String(d.partitionGuid)}); clear it by hand where it is attached (Clear-Disk) if so`);
      },
    });
  } finally {
    await runner.close().catch(() => undefined);
  }
}

export const windowsGuestDisk = vsphereOperation({
  name: GUEST_WINDOWS_DISK_OPERATION,
  schema: z.strictObject({ ...guestDiskWhere, filesystem: z.literal('raw') }),
  apply,
});

export const windowsGuestVolume = vsphereOperation({
  name: GUEST_WINDOWS_VOLUME_OPERATION,
  schema: z.strictObject({ ...guestDiskWhere, ...volumeArgs }),
  apply,
  objects: { 'guest-volume': { destroy: destroyVolume } },
});

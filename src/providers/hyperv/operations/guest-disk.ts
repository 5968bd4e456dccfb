// In the guest: the attached disk found by identity (its SCSI location and size, the host disk's
// serial), brought online and writable (Windows' SAN policy leaves a new disk on a shared bus
// offline and read-only), refused when it is a system disk or carries partitions ('Set-Disk
// (guest)'); then, for guest.filesystem other than raw, a volume on it ('Format-Volume (guest)':
// GPT, one partition, formatted; cleared at teardown only when it holds nothing but what this
// step made). What it finds is what the workload measures.
import { z } from 'zod';
import { InvalidArgument, UnsafeOperation } from '../../../errors.ts';
import type { OperationContext } from '../../../contract/operation.ts';
import type { MeasuredTarget } from '../../../contract/provider.ts';
import { clearGuestVolume, formatGuestVolume, guestVolumeMeasure, volumeArgs, volumeSpecOf } from '../windows-guest-volume.ts';
import { getGuestDiskCall, guestDiskFacts, listGuestDisksCall, pickGuestDisk, setGuestDiskOnlineCall, setGuestDiskWritableCall, type ExpectedGuestDisk, type GuestDisk } from '../guest-disk.ts';
import { checkPassthroughDisk } from '../passthrough.ts';
import { runCalls, type GuestCall } from '../powershell.ts';
import { checkHyperv } from '../validate.ts';
import { getVhdCall, type DriveSlot } from '../vhd.ts';
import { driveAt, getDisk, hypervOperation, int, made, samePath, type HypervHost } from '../host.ts';
import { slotWith } from './fields.ts';

type SlotArgs = { vmName: string; controllerNumber: number; controllerLocation: number } & ({ path: string } | { diskNumber: number });

/**
 * The drive at the step's slot must be the one this run attached (its VHDX by path, or its
 * pass-through disk by number and allowed identity); what the guest's disk must then look like
 * (LUN, size, the host disk's serial).
 */
async function expectedAtSlot(h: HypervHost, a: SlotArgs, op: string): Promise<{ slot: DriveSlot; where: string; expected: ExpectedGuestDisk }> {
  const slot: DriveSlot = { vmName: checkHyperv('vmName', a.vmName, 'vmName'), controllerNumber: a.controllerNumber, controllerLocation: a.controllerLocation };
  const where = `${slot.vmName} SCSI ${slot.controllerNumber}:${slot.controllerLocation}`;
  const here = await driveAt(h, slot);
  if ('path' in a) {
    const path = h.ownPath(a.path, op);
    if (!here || !samePath(here.Path, path)) throw new UnsafeOperation(`${h.t.host}: ${where} does not hold ${path} (it holds ${JSON.stringify(here?.Path ?? null)}); refusing to prepare any guest disk`, { operation: op, target: where });
    const [vhd] = await runCalls(h.runner, [getVhdCall(path)]);
    return { slot, where, expected: { ...slot, sizeBytes: int(vhd?.Size, 'Get-VHD Size') } };
  }
  const n = a.diskNumber;
  if (!here || here.DiskNumber !== n) throw new UnsafeOperation(`${h.t.host}: ${where} does not hold host disk ${n} (it holds ${JSON.stringify(here?.DiskNumber ?? here?.Path ?? null)}); refusing to prepare any guest disk`, { operation: op, target: where });
  const host = await getDisk(h, n);
  checkPassthroughDisk(h.t.host, h.t.allowedDisks, n, host, { alreadyOffline: true });
  return { slot, where, expected: { ...slot, sizeBytes: int((host as unknown as { Size?: unknown }).Size, 'Get-Disk Size'), hostSerialNumber: host!.SerialNumber ?? null } };
}

/**
 * What the workload measures (ProviderContext.measure) once the guest-disk step found the disk:
 * diskspd's physical drive `#<number>`. Records carry the disk's guest number and its serial (or
 * unique id).
 */
export function guestDiskTarget(data: Record<string, unknown>, where: string): MeasuredTarget {
  const n = data.guestDiskNumber;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new InvalidArgument(`${where}: the guest disk found has no disk number (${JSON.stringify(n)}); nothing measured`, { name: 'guestDiskNumber', value: String(n) });
  const id = [data.serialNumber, data.uniqueId].find((v) => typeof v === 'string' && v !== '') as string | undefined;
  return { path: `#${n}`, device: `guest disk ${n}`, identity: id ?? '(no serial or unique id)', filesystem: 'raw', facts: { guestDisk: n, ...(id !== undefined ? { guestDiskId: id } : {}), filesystem: 'raw' } };
}

/** What the workload measures once the guest-volume step formatted that disk: the test file on its volume, with the file system and allocation unit as read back. */
export function guestVolumeTarget(data: Record<string, unknown>, where: string): MeasuredTarget {
  return guestVolumeMeasure(guestDiskTarget(data, where), data, where);
}

/** which `vm.count` member's disk a step finds (vm-count.ts): the workload runs in that VM */
const memberField = { member: z.number().int().min(1).optional() };
const asMember = (t: MeasuredTarget, member: number | undefined, vmName: string): MeasuredTarget => (member === undefined ? t : { ...t, member: { index: member, vm: vmName } });

export const guestDisk = hypervOperation({
  name: 'Set-Disk (guest)',
  schema: slotWith(memberField),
  async apply(a, ctx) {
    const h = ctx.host;
    const { slot, where, expected } = await expectedAtSlot(h, a, ctx.step.operation);
    const disks = (await h.inGuest(slot.vmName, [listGuestDisksCall()])) as unknown as GuestDisk[];
    const d = pickGuestDisk(h.t.host, disks, expected);
    const facts = { ...slot, ...guestDiskFacts(d), sizeBytes: expected.sizeBytes, wasOffline: d.IsOffline, wasReadOnly: d.IsReadOnly };
    await ctx.sent(facts);
    // Windows' SAN policy (default OfflineShared on Windows Server) leaves a new disk on a shared
    // bus offline, and an offline disk is read-only (Learn: diskpart "san"): both cleared, in two
    // calls (separate parameter sets of Set-Disk)
    const calls: GuestCall[] = [];
    if (d.IsOffline) calls.push(setGuestDiskOnlineCall(d.Number));
    calls.push(setGuestDiskWritableCall(d.Number), getGuestDiskCall(d.Number));
    const after = (await h.inGuest(slot.vmName, calls)).at(-1) as unknown as GuestDisk | undefined;
    if (!after || after.IsOffline || after.IsReadOnly) throw new UnsafeOperation(`${h.t.host}: guest disk ${d.Number} of ${slot.vmName} is still ${after?.IsOffline ? 'offline' : 'read-only'} after Set-Disk; nothing measured`, { operation: 'Set-Disk (guest)', target: `${slot.vmName} disk ${d.Number}` });
    ctx.log(`${where} is guest disk ${d.Number}${facts.serialNumber ? ` (serial ${facts.serialNumber})` : facts.uniqueId ? ` (unique id ${facts.uniqueId})` : ''}; online and writable`, { guestDiskNumber: d.Number });
    ctx.measure?.(asMember(guestDiskTarget(facts, where), a.member, slot.vmName));
    return made(ctx.step, `${slot.vmName}:disk${d.Number}`, facts);
  },
  objects: {
    'guest-disk': {
      // Brought online and writable in the guest; nothing of it outlives the drive, which the
      // attachment's teardown detaches next (what was formatted on it is a guest-volume row)
      async destroy(obj, ctx) {
        ctx.log(`${String(obj.data.vmName)} guest disk ${String(obj.data.guestDiskNumber)}: nothing to undo in the guest (the disk leaves it when its drive is detached)`);
        return 'removed';
      },
    },
  },
});

async function formatVolume(a: SlotArgs & z.output<z.ZodObject<typeof volumeArgs>> & { member?: number | undefined }, ctx: OperationContext<HypervHost>) {
  const h = ctx.host;
  const { slot, where, expected } = await expectedAtSlot(h, a, ctx.step.operation);
  volumeSpecOf(a); // refused before anything is asked of the guest
  // the same disk the guest-disk step found, looked up again (numbers are the guest's to change): still blank, now online
  const d = pickGuestDisk(h.t.host, (await h.inGuest(slot.vmName, [listGuestDisksCall()])) as unknown as GuestDisk[], expected);
  const io = { host: h.t.host, vmName: slot.vmName, calls: (calls: GuestCall[]) => h.inGuest(slot.vmName, calls) };
  const { id, data } = await formatGuestVolume(io, d, a, { ...slot, sizeBytes: expected.sizeBytes }, ctx, { operation: ctx.step.operation, where });
  const created = made(ctx.step, id, data);
  ctx.measure?.(asMember(guestVolumeTarget(created.data, where), a.member, slot.vmName));
  return created;
}

export const guestVolume = hypervOperation({
  name: 'Format-Volume (guest)',
  schema: slotWith({ ...volumeArgs, ...memberField }),
  apply: formatVolume,
  objects: {
    'guest-volume': {
      async destroy(obj, ctx) {
        const h = ctx.host;
        const d = obj.data;
        const vmName = checkHyperv('vmName', d.vmName, 'recorded vmName');
        const io = { host: h.t.host, vmName, calls: (calls: GuestCall[]) => h.inGuest(vmName, calls) };
        return clearGuestVolume(io, d, ctx, {
          keepOpen: h.keepOpen,
          whenGone: (what) => {
            // detached already: a VHDX takes what this run wrote on it along; a pass-through disk keeps it
            if (d.path !== undefined) {
              ctx.log(`${what} is no longer in the guest; the volume this run made goes with the VHDX`);
              return 'absent';
            }
            return h.keepOpen(what, `${what} is no longer in the guest, and the pass-through disk may still carry the partition this run made (${String(d.partitionGuid)}); clear it by hand where it is attached (Clear-Disk) if so`);
          },
        });
      },
    },
  },
});

// Add-VMHardDiskDrive: the VHDX (or the pass-through disk) attached at exactly the inventory's
// SCSI location — never another one: the guest-disk step looks for the disk at THAT location; a
// drive already there is the user's, and the step is refused. Detached at teardown only when the
// drive at the recorded location is ours (our VHDX path, or our pass-through disk by serial).
import { InvalidArgument, UnsafeOperation } from '../../../errors.ts';
import type { RecordedObject, HostContext } from '../../../contract/operation.ts';
import type { CreatedObject, OwnedObjectRef } from '../../../contract/provider.ts';
import { checkPassthroughDisk, describeIdentity, recordedIdentity, sameDisk, type DiskIdentity } from '../passthrough.ts';
import { runCalls } from '../powershell.ts';
import { checkHyperv } from '../validate.ts';
import { addDriveCall, removeDriveCall, type DriveSlot } from '../vhd.ts';
import { driveAt, drivesOf, getDisk, hypervOperation, int, isDiskNumber, isVirtualDiskFile, listDisks, made, recordedSlot, refuseIfHeld, samePath, type Drive, type HypervHost } from '../host.ts';
import { slotWith } from './fields.ts';

const slotId = (s: DriveSlot) => `${s.vmName}:SCSI:${s.controllerNumber}:${s.controllerLocation}`;

export const attachDrive = hypervOperation({
  name: 'Add-VMHardDiskDrive',
  schema: slotWith({}),
  async apply(a, ctx) {
    const h = ctx.host;
    const { vmName, controllerNumber, controllerLocation } = a;
    let disk: { path: string } | { diskNumber: number };
    // a pass-through drive's record also names the disk by serial/unique id: its number may change
    let identity: DiskIdentity | Record<string, never> = {};
    if ('diskNumber' in a) {
      const n = a.diskNumber;
      const host = await getDisk(h, n);
      checkPassthroughDisk(h.t.host, h.t.allowedDisks, n, host, { alreadyOffline: true });
      await refuseIfHeld(h, n);
      disk = { diskNumber: n };
      identity = { serialNumber: host!.SerialNumber ?? null, uniqueId: host!.UniqueId ?? null };
    } else disk = { path: h.ownPath(a.path, 'Add-VMHardDiskDrive') };
    const slot: DriveSlot = { vmName, controllerNumber, controllerLocation };
    // listed first: a drive already there is the user's; refuse and leave it alone
    const occupant = await driveAt(h, slot);
    if (occupant) {
      const what = typeof occupant.Path === 'string' && occupant.Path !== '' ? occupant.Path : `disk ${String(occupant.DiskNumber)}`;
      throw new UnsafeOperation(
        `${h.t.host}: SCSI ${controllerNumber}:${controllerLocation} of ${vmName} already holds ${what}, which this run did not attach; refusing to attach there. Free that location, or point the inventory's scsiLocation at a free one`,
        { operation: 'Add-VMHardDiskDrive', target: `${vmName} SCSI ${controllerNumber}:${controllerLocation}` },
      );
    }
    const call = addDriveCall(slot, disk);
    await ctx.sent({ ...slot, ...disk, ...identity });
    await runCalls(h.runner, [call]);
    ctx.log(`attached to ${vmName} at SCSI ${controllerNumber}:${controllerLocation}`, { controllerLocation });
    return made(ctx.step, slotId(slot), { ...slot, ...disk, ...identity });
  },
  objects: { 'disk-attachment': { destroy: detach, find } },
});

/** Whether the drive `here` at the recorded slot is the one this run attached; a refusal keeps the row open when it cannot be told. */
async function isOurs(h: HypervHost, d: Record<string, unknown>, here: Drive, where: string, ctx: HostContext<HypervHost>): Promise<boolean> {
  if (d.path !== undefined) return samePath(here.Path, h.ownPath(d.path, 'Remove-VMHardDiskDrive'));
  if (!isDiskNumber(here.DiskNumber)) {
    // a virtual disk file there: not a pass-through disk at all, so not ours
    if (isVirtualDiskFile(here.Path)) return false;
    // a pass-through drive whose physical disk Hyper-V does not resolve (DiskNumber empty): it
    // may be ours; neither detach it nor call it gone (the disk would then come back online
    // while the VM still references it)
    const id = recordedIdentity(d);
    return h.keepOpen(where, `${where} holds a pass-through drive whose disk Hyper-V does not resolve (DiskNumber empty, Path ${JSON.stringify(here.Path ?? null)}); cannot tell whether it is the disk this run attached (disk ${String(d.diskNumber)}${id ? `, ${describeIdentity(id)}` : ''}) — check the VM's settings, detach it by hand if it is ours, then run cleanup again`);
  }
  const recorded = int(d.diskNumber, 'recorded diskNumber');
  const id = recordedIdentity(d);
  if (id) {
    // the disk it holds now, by its current number, must carry the recorded serial/unique id
    // from the listing: Get-Disk -Number fails outright for a number no disk has
    const disk = (await listDisks(h)).find((x) => x.Number === here.DiskNumber);
    if (!disk) return h.keepOpen(where, `${where} holds disk ${here.DiskNumber}, which Get-Disk does not report; cannot tell whether it is the disk this run attached (${describeIdentity(id)})`);
    const ours = sameDisk(disk, id);
    if (ours && here.DiskNumber !== recorded) ctx.log(`${where}: the disk this run attached as disk ${recorded} is disk ${here.DiskNumber} now (same ${describeIdentity(id)})`);
    return ours;
  }
  if (here.DiskNumber === recorded) return true;
  // a run of an older storsweep recorded the number only: a renumbered disk cannot be told from another
  return h.keepOpen(where, `${where} holds disk ${here.DiskNumber}, and this run recorded disk ${recorded} without a serial number; disk numbers change on reboot, so it cannot be told whether this is the disk it attached — detach it by hand if it is`);
}

/** Only what the ledger recorded: never the inventory's location, disk number or folders' files. */
async function detach(obj: RecordedObject, ctx: HostContext<HypervHost>): Promise<'removed' | 'absent'> {
  const h = ctx.host;
  const d = obj.data;
  const slot = recordedSlot(d);
  if (d.path === undefined && d.diskNumber === undefined) throw new InvalidArgument(`${h.t.host}: the ledger records no disk for ${obj.name}; refusing to detach anything`, { name: 'data', value: obj.name });
  const here = await driveAt(h, slot);
  const where = `${slot.vmName} SCSI ${slot.controllerNumber}:${slot.controllerLocation}`;
  if (!here) return 'absent';
  if (!(await isOurs(h, d, here, where, ctx))) {
    ctx.log(`${where} holds a drive this run did not attach; left alone`);
    return 'absent';
  }
  await runCalls(h.runner, [removeDriveCall(slot)]);
  return 'removed';
}

/**
 * By owned name (the VHDX file name). A pass-through drive carries none: it is found at the slot
 * apply recorded as sent, holding the disk with the recorded serial/unique id (a retry after a
 * lost connection).
 */
async function find(ref: OwnedObjectRef, sent: Record<string, unknown> | undefined, h: HypervHost): Promise<CreatedObject | null> {
  if (sent?.diskNumber !== undefined) return findPassthroughDrive(ref, sent, h);
  const file = `\\${checkHyperv('ownedName', ref.name.replace(/-attach$/, '-disk'), 'owned name')}.vhdx`.toLowerCase();
  // a vm.count member's drive is in the member VM the step named (sent), else the target's VM
  const vmName = typeof sent?.vmName === 'string' ? checkHyperv('vmName', sent.vmName, 'sent vmName') : h.t.vmName;
  const x = (await drivesOf(h, vmName)).find((dr) => dr.ControllerType === 'SCSI' && typeof dr.Path === 'string' && dr.Path.toLowerCase().endsWith(file));
  if (!x) return null;
  const slot = { vmName, controllerNumber: int(x.ControllerNumber, 'ControllerNumber'), controllerLocation: int(x.ControllerLocation, 'ControllerLocation') };
  return { ...ref, provider: 'hyperv', id: slotId(slot), data: { ...slot, path: x.Path } };
}

async function findPassthroughDrive(ref: OwnedObjectRef, d: Record<string, unknown>, h: HypervHost): Promise<CreatedObject | null> {
  const id = recordedIdentity(d);
  if (!id) return null;
  const slot = recordedSlot(d);
  const here = await driveAt(h, slot);
  if (!here || !isDiskNumber(here.DiskNumber)) return null;
  const disk = (await listDisks(h)).find((x) => x.Number === here.DiskNumber);
  if (!disk || !sameDisk(disk, id)) return null;
  return { ...ref, provider: 'hyperv', id: slotId(slot), data: { ...slot, diskNumber: int(d.diskNumber, 'recorded diskNumber'), ...id } };
}

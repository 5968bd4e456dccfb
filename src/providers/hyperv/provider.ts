// The Hyper-V provider: planned steps → PowerShell cmdlet calls over a CommandRunner (Windows
// OpenSSH). Teardown removes only what this run created: the drive it added, the VHDX it created
// (by exact path), and a pass-through disk goes back online.
import { InvalidArgument, RemoteCommandFailed, UnsafeOperation } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { connectionLost } from '../../ssh/connection-lost.ts';
import type { GroupStop } from '../../ssh/process-group.ts';
import { isRecordedProcess, parsePidFile } from '../windows-guest.ts';
import type { CreatedObject, MeasuredTarget, OwnedObjectRef, PlannedStep, Provider, ProviderContext, ProviderName } from '../../contract/provider.ts';
import type { WorkloadProfile, WorkloadTest } from '../../workloads/spec.ts';
import { diskspdArgs } from '../../workloads/diskspd.ts';
import { checkDiskspdPath } from '../../workloads/tool-settings.ts';
import { checkHypervTarget, type HypervTargetConfig } from './config.ts';
import { checkPassthroughDisk, describeIdentity, getDiskCall, listDisksCall, listVmsCall, recordedIdentity, sameDisk, setDiskOfflineCall, type DiskIdentity, type HostDisk } from './passthrough.ts';
import { ownedGuestFiles, runCalls, runGuestCalls, runInGuest, runOwnedInGuest, type GuestCall, type GuestCredential } from './powershell.ts';
import { getGuestDiskCall, guestDiskFacts, listGuestDisksCall, pickGuestDisk, setGuestDiskOnlineCall, setGuestDiskWritableCall, type ExpectedGuestDisk, type GuestDisk } from './guest-disk.ts';
import { clearGuestVolume, formatGuestVolume, guestVolumeMeasure, volumeSpecOf } from './windows-guest-volume.ts';
import { checkHyperv } from './validate.ts';
import { addDriveCall, getVhdCall, listDrivesCall, newVhdCall, probeFileCall, removeDriveCall, removeVhdCall, type DriveSlot, type NewVhdSpec } from './vhd.ts';
import { describeHypervHost } from './fingerprint.ts';

type DestroyRef = OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> };

const num = (v: unknown, name: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new InvalidArgument(`step argument ${name}: expected an integer, got ${JSON.stringify(v)}`, { name, value: String(v) });
  return v;
};

const isDiskNumber = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
/** A drive's Path that names a virtual disk file (a pass-through drive's Path is a description, e.g. `Disk 2 500 GB Bus 0 Lun 0 Target 2`). */
const isVirtualDiskFile = (p: unknown): boolean => typeof p === 'string' && /^(?:[A-Za-z]:\\|\\\\).*\.(?:vhdx?|avhdx?)$/i.test(p.trim());

/** How the provider reaches into the VM (PowerShell Direct): the guest credential, revealed at the call. */
export interface GuestAccess {
  credential(): GuestCredential;
}

export function createHypervProvider(targetIn: HypervTargetConfig, runner: CommandRunner, guest?: GuestAccess): Provider {
  const t = checkHypervTarget(targetIn);
  const inGuest = (vmName: string, calls: GuestCall[]) => {
    if (!guest) throw new InvalidArgument(`${t.host}: the guest steps need the guest credential, and this provider was made without it`, { name: 'guestCredential', value: vmName });
    return runGuestCalls(runner, vmName, guest.credential(), calls);
  };
  const folders = Object.values(t.volumes).map((f) => (f.endsWith('\\') ? f : `${f}\\`).toLowerCase());
  /** a VHDX we may create or delete: directly in one of the inventory's volume folders */
  const ownPath = (p: unknown, op: string): string => {
    const path = checkHyperv('vhdxPath', p, 'vhdx path');
    const dir = path.slice(0, path.lastIndexOf('\\') + 1).toLowerCase();
    if (!folders.includes(dir)) throw new UnsafeOperation(`${t.host}: refusing ${op} of ${path}: not in one of the inventory's volume folders`, { operation: op, target: path });
    return path;
  };
  const getDisk = async (n: number) => (await runCalls(runner, [getDiskCall(n)]))[0] as HostDisk | undefined;
  const drivesOf = async (vmName: string) => (await runCalls(runner, [listDrivesCall(vmName)])) as Array<{ ControllerType?: unknown; ControllerNumber?: unknown; ControllerLocation?: unknown; Path?: unknown; DiskNumber?: unknown }>;
  const samePath = (a: unknown, b: unknown) => typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
  const listDisks = async () => (await runCalls(runner, [listDisksCall()])) as unknown as HostDisk[];
  const keepOpen = (target: string, why: string): never => {
    throw new UnsafeOperation(`${t.host}: left alone: ${why}`, { operation: 'destroy', target });
  };

  /**
   * The one host disk carrying the recorded serial and unique id, wherever it is numbered now (disk
   * numbers change on reboot or rescan). Throws (the row stays open) when none or several do.
   */
  async function diskWith(id: DiskIdentity, recordedNumber: number, what: string): Promise<HostDisk> {
    const matches = (await listDisks()).filter((x) => sameDisk(x, id));
    if (matches.length === 0) return keepOpen(what, `no disk on the host carries ${describeIdentity(id)} (it was disk ${recordedNumber}); nothing done to any other disk — if the disk comes back, run cleanup again`);
    if (matches.length > 1) return keepOpen(what, `disks ${matches.map((m) => m.Number).join(', ')} all carry ${describeIdentity(id)}; cannot tell which one this run took offline`);
    return matches[0]!;
  }

  /**
   * Every VM drive on the host that holds, or may hold, host disk `n` as a pass-through disk: one
   * whose DiskNumber is `n`, and one whose DiskNumber is empty while its Path is no virtual disk
   * file (Hyper-V could not resolve the physical disk it references — it may well be `n`).
   */
  async function holdersOf(n: number): Promise<string[]> {
    const vms = (await runCalls(runner, [listVmsCall()])).map((v) => v.Name).filter((x): x is string => typeof x === 'string');
    if (vms.length === 0) return [];
    // a VM's name comes from the host and travels as JSON data, never as PowerShell source
    const drives = await runCalls(runner, vms.map((vm) => ({ cmdlet: 'Get-VMHardDiskDrive' as const, params: { VMName: vm }, select: ['VMName', 'ControllerType', 'ControllerNumber', 'ControllerLocation', 'Path', 'DiskNumber'] })));
    const at = (x: Record<string, unknown>) => `${String(x.VMName)} ${String(x.ControllerType)} ${String(x.ControllerNumber)}:${String(x.ControllerLocation)}`;
    return [
      ...drives.filter((x) => x.DiskNumber === n).map(at),
      ...drives.filter((x) => !isDiskNumber(x.DiskNumber) && !isVirtualDiskFile(x.Path)).map((x) => `${at(x)} (a pass-through drive whose disk Hyper-V does not resolve, Path ${JSON.stringify(x.Path ?? null)}: possibly disk ${n})`),
    ];
  }

  async function refuseIfHeld(n: number): Promise<void> {
    const holders = await holdersOf(n);
    if (holders.length) throw new UnsafeOperation(`${t.host}: refusing to use disk ${n} for pass-through: ${holders.join(', ')} already holds it as a pass-through disk`, { operation: 'Set-Disk -IsOffline', target: `disk ${n}` });
  }

  /**
   * For a guest step: the drive at the step's slot must be the one this run attached (its VHDX by
   * path, or its pass-through disk by number and allowed identity); what the guest's disk must then
   * look like (LUN, size, the host disk's serial).
   */
  async function expectedAtSlot(a: Record<string, unknown>, op: string): Promise<{ slot: DriveSlot; where: string; expected: ExpectedGuestDisk }> {
    const slot: DriveSlot = { vmName: checkHyperv('vmName', a.vmName, 'vmName'), controllerNumber: num(a.controllerNumber, 'controllerNumber'), controllerLocation: num(a.controllerLocation, 'controllerLocation') };
    const where = `${slot.vmName} SCSI ${slot.controllerNumber}:${slot.controllerLocation}`;
    const here = (await drivesOf(slot.vmName)).find((x) => x.ControllerType === 'SCSI' && x.ControllerNumber === slot.controllerNumber && x.ControllerLocation === slot.controllerLocation);
    if (a.path !== undefined) {
      const path = ownPath(a.path, op);
      if (!here || !samePath(here.Path, path)) throw new UnsafeOperation(`${t.host}: ${where} does not hold ${path} (it holds ${JSON.stringify(here?.Path ?? null)}); refusing to prepare any guest disk`, { operation: op, target: where });
      const [vhd] = await runCalls(runner, [getVhdCall(path)]);
      return { slot, where, expected: { ...slot, sizeBytes: num(vhd?.Size, 'Get-VHD Size') } };
    }
    const n = num(a.diskNumber, 'diskNumber');
    if (!here || here.DiskNumber !== n) throw new UnsafeOperation(`${t.host}: ${where} does not hold host disk ${n} (it holds ${JSON.stringify(here?.DiskNumber ?? here?.Path ?? null)}); refusing to prepare any guest disk`, { operation: op, target: where });
    const host = await getDisk(n);
    checkPassthroughDisk(t.host, t.allowedDisks, n, host, { alreadyOffline: true });
    return { slot, where, expected: { ...slot, sizeBytes: num((host as unknown as { Size?: unknown }).Size, 'Get-Disk Size'), hostSerialNumber: host!.SerialNumber ?? null } };
  }

  async function apply(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
    const a = step.arguments;
    const made = (id: string, data: Record<string, unknown>): CreatedObject => {
      if (!step.creates) throw new InvalidArgument(`step ${step.step} creates nothing`, { name: 'step', value: step.step });
      return { ...step.creates, provider: 'hyperv', id, data };
    };
    switch (step.operation) {
      case 'New-VHD': {
        const spec = { ...(a as unknown as NewVhdSpec), path: ownPath(a.path, 'New-VHD') };
        const call = newVhdCall(spec);
        ctx.log(`creating ${spec.type} VHDX ${spec.path}`, { path: spec.path });
        await ctx.sent({ path: spec.path });
        const [vhd] = await runCalls(runner, [call]);
        return made(spec.path, { path: spec.path, vhd: vhd ?? null });
      }
      case 'Set-Disk -IsOffline': {
        const n = num(a.diskNumber, 'diskNumber');
        const disk = await getDisk(n);
        checkPassthroughDisk(t.host, t.allowedDisks, n, disk);
        // Hyper-V does not stop two VMs from holding the same pass-through disk (an Off VM keeps it
        // configured while the host has it online): refuse a disk any VM holds
        await refuseIfHeld(n);
        // what proves it is the same disk at teardown: number AND serial/unique id as Get-Disk said
        const identity = { diskNumber: n, serialNumber: disk!.SerialNumber ?? null, uniqueId: disk!.UniqueId ?? null };
        await ctx.sent(identity);
        await runCalls(runner, [setDiskOfflineCall(n, true)]);
        return made(String(n), identity);
      }
      case 'Add-VMHardDiskDrive': {
        const vmName = checkHyperv('vmName', a.vmName, 'vmName');
        const controllerNumber = num(a.controllerNumber, 'controllerNumber');
        // the inventory's location, never another one: the guest-disk step looks for the disk at THAT
        // location. (Plans written while a free location was chosen at apply time carry it as firstLocation.)
        const controllerLocation = num(typeof a.controllerLocation === 'number' ? a.controllerLocation : a.firstLocation, 'controllerLocation');
        if (controllerLocation < 0 || controllerLocation > 63) throw new InvalidArgument(`controllerLocation: expected 0-63, got ${controllerLocation}`, { name: 'controllerLocation', value: String(controllerLocation) });
        if (a.controllerType !== 'SCSI') throw new InvalidArgument('controllerType must be SCSI', { name: 'controllerType', value: String(a.controllerType) });
        let disk: { path: string } | { diskNumber: number };
        // a pass-through drive's record also names the disk by serial/unique id: its number may change
        let identity: DiskIdentity | Record<string, never> = {};
        if (a.diskNumber !== undefined) {
          const n = num(a.diskNumber, 'diskNumber');
          const host = await getDisk(n);
          checkPassthroughDisk(t.host, t.allowedDisks, n, host, { alreadyOffline: true });
          await refuseIfHeld(n);
          disk = { diskNumber: n };
          identity = { serialNumber: host!.SerialNumber ?? null, uniqueId: host!.UniqueId ?? null };
        } else disk = { path: ownPath(a.path, 'Add-VMHardDiskDrive') };
        // listed first: a drive already there is the user's; refuse and leave it alone
        const occupant = (await drivesOf(vmName)).find((x) => x.ControllerType === 'SCSI' && x.ControllerNumber === controllerNumber && x.ControllerLocation === controllerLocation);
        if (occupant) {
          const what = typeof occupant.Path === 'string' && occupant.Path !== '' ? occupant.Path : `disk ${String(occupant.DiskNumber)}`;
          throw new UnsafeOperation(
            `${t.host}: SCSI ${controllerNumber}:${controllerLocation} of ${vmName} already holds ${what}, which this run did not attach; refusing to attach there. Free that location, or point the inventory's scsiLocation at a free one`,
            { operation: 'Add-VMHardDiskDrive', target: `${vmName} SCSI ${controllerNumber}:${controllerLocation}` },
          );
        }
        const slot: DriveSlot = { vmName, controllerNumber, controllerLocation };
        const call = addDriveCall(slot, disk);
        await ctx.sent({ ...slot, ...disk, ...identity });
        await runCalls(runner, [call]);
        ctx.log(`attached to ${vmName} at SCSI ${controllerNumber}:${controllerLocation}`, { controllerLocation });
        return made(`${slot.vmName}:SCSI:${slot.controllerNumber}:${slot.controllerLocation}`, { ...slot, ...disk, ...identity });
      }
      case 'Set-Disk (guest)': {
        const { slot, where, expected } = await expectedAtSlot(a, step.operation);
        const disks = (await inGuest(slot.vmName, [listGuestDisksCall()])) as unknown as GuestDisk[];
        const d = pickGuestDisk(t.host, disks, expected);
        const facts = { ...slot, ...guestDiskFacts(d), sizeBytes: expected.sizeBytes, wasOffline: d.IsOffline, wasReadOnly: d.IsReadOnly };
        await ctx.sent(facts);
        // Windows' SAN policy (default OfflineShared on Windows Server) leaves a new disk on a shared
        // bus offline, and an offline disk is read-only (Learn: diskpart "san"): both cleared, in two
        // calls (separate parameter sets of Set-Disk)
        const calls: GuestCall[] = [];
        if (d.IsOffline) calls.push(setGuestDiskOnlineCall(d.Number));
        calls.push(setGuestDiskWritableCall(d.Number), getGuestDiskCall(d.Number));
        const after = (await inGuest(slot.vmName, calls)).at(-1) as unknown as GuestDisk | undefined;
        if (!after || after.IsOffline || after.IsReadOnly) throw new UnsafeOperation(`${t.host}: guest disk ${d.Number} of ${slot.vmName} is still ${after?.IsOffline ? 'offline' : 'read-only'} after Set-Disk; nothing measured`, { operation: 'Set-Disk (guest)', target: `${slot.vmName} disk ${d.Number}` });
        ctx.log(`${where} is guest disk ${d.Number}${facts.serialNumber ? ` (serial ${facts.serialNumber})` : facts.uniqueId ? ` (unique id ${facts.uniqueId})` : ''}; online and writable`, { guestDiskNumber: d.Number });
        ctx.measure?.(guestDiskTarget(facts, where));
        return made(`${slot.vmName}:disk${d.Number}`, facts);
      }
      case 'Format-Volume (guest)': {
        const { slot, where, expected } = await expectedAtSlot(a, step.operation);
        volumeSpecOf(a); // refused before anything is asked of the guest
        // the same disk the guest-disk step found, looked up again (numbers are the guest's to change): still blank, now online
        const d = pickGuestDisk(t.host, (await inGuest(slot.vmName, [listGuestDisksCall()])) as unknown as GuestDisk[], expected);
        const io = { host: t.host, vmName: slot.vmName, calls: (calls: GuestCall[]) => inGuest(slot.vmName, calls) };
        const { id, data } = await formatGuestVolume(io, d, a, { ...slot, sizeBytes: expected.sizeBytes }, ctx, { operation: step.operation, where });
        const created = made(id, data);
        ctx.measure?.(guestVolumeTarget(created.data, where));
        return created;
      }
      default:
        throw new InvalidArgument(`hyperv provider cannot apply operation ${JSON.stringify(step.operation)}`, { name: 'operation', value: step.operation });
    }
  }

  async function destroy(obj: DestroyRef, ctx: ProviderContext): Promise<'removed' | 'absent'> {
    // Only what the ledger recorded: never the inventory's location, disk number or folders' files.
    const d = obj.data;
    switch (obj.kind) {
      case 'disk-attachment': {
        const slot: DriveSlot = { vmName: checkHyperv('vmName', d.vmName, 'recorded vmName'), controllerNumber: num(d.controllerNumber, 'recorded controllerNumber'), controllerLocation: num(d.controllerLocation, 'recorded controllerLocation') };
        if (d.path === undefined && d.diskNumber === undefined) throw new InvalidArgument(`${t.host}: the ledger records no disk for ${obj.name}; refusing to detach anything`, { name: 'data', value: obj.name });
        const here = (await drivesOf(slot.vmName)).find((x) => x.ControllerType === 'SCSI' && x.ControllerNumber === slot.controllerNumber && x.ControllerLocation === slot.controllerLocation);
        const where = `${slot.vmName} SCSI ${slot.controllerNumber}:${slot.controllerLocation}`;
        if (!here) return 'absent';
        // only our drive at the recorded location: our VHDX path, or our pass-through disk
        let ours: boolean;
        if (d.path !== undefined) ours = samePath(here.Path, ownPath(d.path, 'Remove-VMHardDiskDrive'));
        else if (!isDiskNumber(here.DiskNumber)) {
          // a virtual disk file there: not a pass-through disk at all, so not ours
          if (isVirtualDiskFile(here.Path)) ours = false;
          // a pass-through drive whose physical disk Hyper-V does not resolve (DiskNumber empty): it
          // may be ours; neither detach it nor call it gone (the disk would then come back online
          // while the VM still references it)
          else return keepOpen(where, `${where} holds a pass-through drive whose disk Hyper-V does not resolve (DiskNumber empty, Path ${JSON.stringify(here.Path ?? null)}); cannot tell whether it is the disk this run attached (disk ${String(d.diskNumber)}${recordedIdentity(d) ? `, ${describeIdentity(recordedIdentity(d)!)}` : ''}) — check the VM's settings, detach it by hand if it is ours, then run cleanup again`);
        } else {
          const recorded = num(d.diskNumber, 'recorded diskNumber');
          const id = recordedIdentity(d);
          if (id) {
            // the disk it holds now, by its current number, must carry the recorded serial/unique id
            // from the listing: Get-Disk -Number fails outright for a number no disk has
            const disk = (await listDisks()).find((x) => x.Number === here.DiskNumber);
            if (!disk) return keepOpen(where, `${where} holds disk ${here.DiskNumber}, which Get-Disk does not report; cannot tell whether it is the disk this run attached (${describeIdentity(id)})`);
            ours = sameDisk(disk, id);
            if (ours && here.DiskNumber !== recorded) ctx.log(`${where}: the disk this run attached as disk ${recorded} is disk ${here.DiskNumber} now (same ${describeIdentity(id)})`);
          } else if (here.DiskNumber === recorded) ours = true;
          else {
            // a run of an older storsweep recorded the number only: a renumbered disk cannot be told from another
            return keepOpen(where, `${where} holds disk ${here.DiskNumber}, and this run recorded disk ${recorded} without a serial number; disk numbers change on reboot, so it cannot be told whether this is the disk it attached — detach it by hand if it is`);
          }
        }
        if (!ours) {
          ctx.log(`${where} holds a drive this run did not attach; left alone`);
          return 'absent';
        }
        await runCalls(runner, [removeDriveCall(slot)]);
        return 'removed';
      }
      case 'vhdx': {
        const path = ownPath(d.path, 'Remove-Item');
        if (!path.toLowerCase().endsWith(`\\${obj.name.toLowerCase()}.vhdx`)) throw new UnsafeOperation(`${t.host}: refusing to remove ${path}: it does not carry the owned name ${obj.name}`, { operation: 'Remove-Item', target: path });
        if ((await runCalls(runner, [probeFileCall(path)])).length === 0) return 'absent';
        await runCalls(runner, [removeVhdCall(path)]);
        return 'removed';
      }
      case 'disk-offline': {
        if (typeof d.diskNumber !== 'number') throw new InvalidArgument(`${t.host}: the ledger records no disk number for ${obj.name}; refusing to bring any disk online`, { name: 'diskNumber', value: String(d.diskNumber) });
        const n = num(d.diskNumber, 'recorded diskNumber');
        const id = recordedIdentity(d);
        if (!id) {
          throw new UnsafeOperation(`${t.host}: the ledger records no serial or unique id for disk ${n} (a run of an older storsweep); refusing to bring it online unchecked — if it is the disk the run took offline: Set-Disk -Number ${n} -IsOffline $false`, { operation: 'Set-Disk -IsOffline', target: `disk ${n}` });
        }
        // Found by serial/unique id, not by number: disk numbers change on reboot or rescan.
        const disk = await diskWith(id, n, `disk ${n}`);
        const m = disk.Number;
        if (m !== n) ctx.log(`the disk this run took offline as disk ${n} is disk ${m} now (same ${describeIdentity(id)})`);
        if (!disk.IsOffline) {
          ctx.log(`disk ${m} (${describeIdentity(id)}) is online already; nothing to do`);
          return 'absent';
        }
        // A disk some VM holds as a pass-through disk stays offline: online on the host, the host and
        // the VM would both write to it. That VM may be another one, attached after this run.
        const holders = await holdersOf(m);
        if (holders.length) return keepOpen(`disk ${m}`, `disk ${m} (${describeIdentity(id)}) is held as a pass-through disk by ${holders.join(', ')}; not brought online (host and VM would both write to it) — detach it there first if it should come back to the host, then run cleanup again`);
        // the number acted on must still carry the serial, checked right before Set-Disk
        const again = (await listDisks()).find((x) => x.Number === m);
        if (!again || !sameDisk(again, id)) return keepOpen(`disk ${m}`, `disk ${m} changed while cleanup looked at it (now ${JSON.stringify(again?.SerialNumber ?? null)}); nothing brought online`);
        await runCalls(runner, [setDiskOfflineCall(m, false)]);
        return 'removed';
      }
      case 'guest-volume': {
        const vmName = checkHyperv('vmName', d.vmName, 'recorded vmName');
        const io = { host: t.host, vmName, calls: (calls: GuestCall[]) => inGuest(vmName, calls) };
        return clearGuestVolume(io, d, ctx, {
          keepOpen,
          whenGone: (what) => {
            // detached already: a VHDX takes what this run wrote on it along; a pass-through disk keeps it
            if (d.path !== undefined) {
              ctx.log(`${what} is no longer in the guest; the volume this run made goes with the VHDX`);
              return 'absent';
            }
            return keepOpen(what, `${what} is no longer in the guest, and the pass-through disk may still carry the partition this run made (${String(d.partitionGuid)}); clear it by hand where it is attached (Clear-Disk) if so`);
          },
        });
      }
      case 'guest-disk':
        // Brought online and writable in the guest; nothing of it outlives the drive, which the
        // attachment's teardown detaches next (what was formatted on it is a guest-volume row)
        ctx.log(`${String(d.vmName)} guest disk ${String(d.guestDiskNumber)}: nothing to undo in the guest (the disk leaves it when its drive is detached)`);
        return 'removed';
      default:
        throw new InvalidArgument(`hyperv provider does not own objects of kind ${obj.kind}`, { name: 'kind', value: obj.kind });
    }
  }

  async function find(ref: OwnedObjectRef, sent?: Record<string, unknown>): Promise<CreatedObject | null> {
    // By owned name (the VHDX file name). Offlined disks carry no name and are never found; a
    // pass-through drive carries none either: it is found at the slot apply recorded as sent,
    // holding the disk with the recorded serial/unique id (a retry after a lost connection).
    const ownedFile = (base: string) => `\\${checkHyperv('ownedName', base, 'owned name')}.vhdx`.toLowerCase();
    if (ref.kind === 'vhdx') {
      for (const folder of Object.values(t.volumes)) {
        const path = `${folder.endsWith('\\') ? folder : `${folder}\\`}${checkHyperv('ownedName', ref.name, 'owned name')}.vhdx`;
        if ((await runCalls(runner, [probeFileCall(path)])).length > 0) {
          const [vhd] = await runCalls(runner, [getVhdCall(path)]);
          return { ...ref, provider: 'hyperv', id: path, data: { path, vhd: vhd ?? null } };
        }
      }
      return null;
    }
    if (ref.kind === 'disk-attachment' && sent?.diskNumber !== undefined) return findPassthroughDrive(ref, sent);
    if (ref.kind === 'disk-attachment') {
      const file = ownedFile(ref.name.replace(/-attach$/, '-disk'));
      const x = (await drivesOf(t.vmName)).find((dr) => dr.ControllerType === 'SCSI' && typeof dr.Path === 'string' && dr.Path.toLowerCase().endsWith(file));
      if (!x) return null;
      const slot = { vmName: t.vmName, controllerNumber: num(x.ControllerNumber, 'ControllerNumber'), controllerLocation: num(x.ControllerLocation, 'ControllerLocation') };
      return { ...ref, provider: 'hyperv', id: `${slot.vmName}:SCSI:${slot.controllerNumber}:${slot.controllerLocation}`, data: { ...slot, path: x.Path } };
    }
    return null;
  }

  /** The pass-through drive apply sent: at the recorded slot, holding the disk that carries the recorded identity. */
  async function findPassthroughDrive(ref: OwnedObjectRef, d: Record<string, unknown>): Promise<CreatedObject | null> {
    const id = recordedIdentity(d);
    if (!id) return null;
    const slot: DriveSlot = { vmName: checkHyperv('vmName', d.vmName, 'recorded vmName'), controllerNumber: num(d.controllerNumber, 'recorded controllerNumber'), controllerLocation: num(d.controllerLocation, 'recorded controllerLocation') };
    const here = (await drivesOf(slot.vmName)).find((x) => x.ControllerType === 'SCSI' && x.ControllerNumber === slot.controllerNumber && x.ControllerLocation === slot.controllerLocation);
    if (!here || !isDiskNumber(here.DiskNumber)) return null;
    const disk = (await listDisks()).find((x) => x.Number === here.DiskNumber);
    if (!disk || !sameDisk(disk, id)) return null;
    return { ...ref, provider: 'hyperv', id: `${slot.vmName}:SCSI:${slot.controllerNumber}:${slot.controllerLocation}`, data: { ...slot, diskNumber: num(d.diskNumber, 'recorded diskNumber'), ...id } };
  }

  // a lost SSH connection is worth another attempt (the executor looks before reissuing a create)
  return { name: 'hyperv', apply, destroy, find, isTransient: connectionLost, close: () => runner.close(), describe: () => describeHypervHost(runner) };
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

/**
 * What the workload measures once the guest-volume step formatted that disk: the test file on
 * its volume, with the file system and allocation unit as read back.
 */
export function guestVolumeTarget(data: Record<string, unknown>, where: string): MeasuredTarget {
  return guestVolumeMeasure(guestDiskTarget(data, where), data, where);
}

/**
 * One diskspd pass inside the VM via PowerShell Direct; returns diskspd's -Rxml output. The guest
 * credential is passed on stdin and never appears in commands, logs or errors.
 */
export async function runGuestDiskspd(runner: CommandRunner, target: HypervTargetConfig, credential: GuestCredential, test: WorkloadTest, profile: WorkloadProfile, opts: { guestTarget: string; diskspdPath?: string; owner?: string }): Promise<string> {
  return runGuestDiskspdArgv(runner, target, credential, diskspdArgs(test, profile, { target: opts.guestTarget }), opts);
}

/**
 * One diskspd invocation with a built argument vector (a pass, or a pre-fill pass: workloads/prefill.ts).
 * With `owner` (process-group.ts toolOwner: the run and its target) it is started so that a later
 * process of the run can find and stop it (powershell.ts GUEST_RUN_BODY, stopOwnedInGuest).
 */
export async function runGuestDiskspdArgv(runner: CommandRunner, target: HypervTargetConfig, credential: GuestCredential, argv: string[], opts: { diskspdPath?: string; owner?: string }): Promise<string> {
  const t = checkHypervTarget(target);
  const exe = opts.diskspdPath ?? 'diskspd.exe';
  checkDiskspdPath(exe);
  const r = opts.owner !== undefined ? await runOwnedInGuest(runner, t.vmName, credential, exe, argv, opts.owner) : await runInGuest(runner, t.vmName, credential, exe, argv);
  if (r.exitCode !== 0) {
    throw new RemoteCommandFailed({ host: runner.target, what: `diskspd in ${t.vmName}`, command: `Invoke-Command -VMName ${t.vmName} ${exe} ${argv.join(' ')}`, exitCode: r.exitCode, stderr: r.output, reason: 'exit' });
  }
  return r.output;
}

/**
 * A Win32_Process CreationDate as ConvertTo-Json wrote it: Windows PowerShell 5.1 serializes a
 * DateTime as `\/Date(<ms since 1970 UTC>)\/` (JavaScriptSerializer's form), PowerShell 7 as ISO 8601;
 * milliseconds since the epoch, NaN for anything else.
 */
export function cimDateMs(v: unknown): number {
  if (typeof v !== 'string') return NaN;
  const m = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/.exec(v);
  return m ? Number(m[1]) : Date.parse(v);
}

/** Win32_Process of one pid (Get-CimInstance -Filter: a WQL where clause); what is matched against a pidfile. */
export function processCall(pid: number): GuestCall {
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid > 0xffffffff) throw new InvalidArgument(`process id ${pid}: expected a Win32_Process ProcessId (uint32)`, { name: 'pid', value: String(pid) });
  return { cmdlet: 'Get-CimInstance', params: { ClassName: 'Win32_Process', Filter: `ProcessId = ${pid}` }, select: ['ProcessId', 'Name', 'CreationDate'] };
}

/**
 * Stops the program `exe` that an earlier process of the run started in the VM for `owner`
 * (runGuestDiskspdArgv with owner) and that still runs there: that process died (kill -9, a lost
 * host) while the program ran, and `run --resume` or `cleanup` is about to tear its disk down. Found
 * by the owner's pidfile in the guest (`<pid> <start time>`, read with Import-Csv), and stopped
 * (Stop-Process -Id -Force) only while Get-CimInstance Win32_Process shows that pid with the
 * program's image name and a CreationDate within 2 s of the recorded start: Windows reuses pids
 * soon, and nothing is ever stopped by name alone. The pidfile goes once nothing of it runs.
 * Microsoft docs: Get-CimInstance -ClassName -Filter; Win32_Process (ProcessId uint32, Name,
 * CreationDate datetime); Stop-Process -Id -Force; Import-Csv -LiteralPath -Delimiter -Header;
 * Get-Item -LiteralPath -ErrorAction SilentlyContinue; Remove-Item -LiteralPath -Force.
 */
export async function stopOwnedInGuest(runner: CommandRunner, target: HypervTargetConfig, credential: GuestCredential, owner: string, exe: string, opts: { pollMs?: number } = {}): Promise<GroupStop> {
  const t = checkHypervTarget(target);
  checkDiskspdPath(exe);
  const name = exe.slice(exe.lastIndexOf('\\') + 1);
  const { pid: pidFile } = ownedGuestFiles(owner);
  const calls = (c: GuestCall[]) => runGuestCalls(runner, t.vmName, credential, c);
  // no pidfile: no program of this owner was started in this VM, or its result was read (then the file went)
  const found = await calls([{ cmdlet: 'Get-Item', params: { LiteralPath: pidFile, ErrorAction: 'SilentlyContinue' }, select: ['FullName'] }]);
  if (found.length === 0) return { pgid: null, outcome: 'not-started' };
  const [row] = await calls([{ cmdlet: 'Import-Csv', params: { LiteralPath: pidFile, Delimiter: ' ', Header: ['ProcessId', 'StartTime'] }, select: ['ProcessId', 'StartTime'] }]);
  const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  const text = row ? `${str(row.ProcessId)} ${str(row.StartTime)}` : '';
  const rec = parsePidFile(text);
  if (!rec) return { pgid: null, outcome: 'unknown', detail: `the pidfile ${pidFile} in ${t.vmName} holds ${JSON.stringify(text.slice(0, 80))}` };
  const running = async () =>
    (await calls([processCall(rec.pid)])).some((p) => isRecordedProcess({ pid: Number(p.ProcessId), name: typeof p.Name === 'string' ? p.Name : '', startMs: cimDateMs(p.CreationDate) }, rec, name));
  // the guest's own script block, if its session outlived the storsweep that started it, removes the
  // pidfile too once the program has ended: already gone is as good
  const removePidFile = () => calls([{ cmdlet: 'Remove-Item', params: { LiteralPath: pidFile, Force: true, ErrorAction: 'SilentlyContinue' } }]);
  if (!(await running())) {
    await removePidFile();
    return { pgid: rec.pid, outcome: 'not-running' };
  }
  // Windows has no TERM: Stop-Process ends the process (Process.Kill, TerminateProcess); the
  // PowerShell Direct session that waited for it, if it is still there, then returns
  await calls([{ cmdlet: 'Stop-Process', params: { Id: rec.pid, Force: true } }]).catch((err: unknown) => {
    // gone between the look and the stop: what was wanted
    if (!(err instanceof RemoteCommandFailed && /Cannot find a process with the process identifier/.test(err.details.stderr ?? ''))) throw err;
  });
  for (let i = 0; i < 20 && (await running()); i++) await new Promise((r) => setTimeout(r, opts.pollMs ?? 500));
  if (await running()) return { pgid: rec.pid, outcome: 'still-running', pids: [rec.pid], detail: `${name} ${rec.pid} still runs in ${t.vmName} after Stop-Process` };
  await removePidFile();
  return { pgid: rec.pid, outcome: 'stopped', signal: 'KILL', pids: [rec.pid] };
}

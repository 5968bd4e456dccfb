// The Hyper-V provider: planned steps → PowerShell cmdlet calls over a CommandRunner (Windows
// OpenSSH). Teardown removes only what this run created: the drive it added, the VHDX it created
// (by exact path), and a pass-through disk goes back online.
import { InvalidArgument, RemoteCommandFailed, UnsafeOperation } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import type { CreatedObject, OwnedObjectRef, PlannedStep, Provider, ProviderContext, ProviderName } from '../../contract/provider.ts';
import type { WorkloadProfile, WorkloadTest } from '../../workloads/spec.ts';
import { diskspdArgs } from '../../workloads/diskspd.ts';
import { checkDiskspdPath } from '../../workloads/tool-settings.ts';
import { checkHypervTarget, type HypervTargetConfig } from './config.ts';
import { checkPassthroughDisk, getDiskCall, setDiskOfflineCall, type HostDisk } from './passthrough.ts';
import { runCalls, runInGuest, type GuestCredential } from './powershell.ts';
import { checkHyperv } from './validate.ts';
import { addDriveCall, getVhdCall, listDrivesCall, newVhdCall, probeFileCall, removeDriveCall, removeVhdCall, type DriveSlot, type NewVhdSpec } from './vhd.ts';

type DestroyRef = OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> };

const num = (v: unknown, name: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new InvalidArgument(`step argument ${name}: expected an integer, got ${JSON.stringify(v)}`, { name, value: String(v) });
  return v;
};

export function createHypervProvider(targetIn: HypervTargetConfig, runner: CommandRunner): Provider {
  const t = checkHypervTarget(targetIn);
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
  const norm = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

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
        ctx.sent({ path: spec.path });
        const [vhd] = await runCalls(runner, [call]);
        return made(spec.path, { path: spec.path, vhd: vhd ?? null });
      }
      case 'Set-Disk -IsOffline': {
        const n = num(a.diskNumber, 'diskNumber');
        const disk = await getDisk(n);
        checkPassthroughDisk(t.host, t.allowedDisks, n, disk);
        // what proves it is the same disk at teardown: number AND serial/unique id as Get-Disk said
        const identity = { diskNumber: n, serialNumber: disk!.SerialNumber ?? null, uniqueId: disk!.UniqueId ?? null };
        ctx.sent(identity);
        await runCalls(runner, [setDiskOfflineCall(n, true)]);
        return made(String(n), identity);
      }
      case 'Add-VMHardDiskDrive': {
        const vmName = checkHyperv('vmName', a.vmName, 'vmName');
        const controllerNumber = num(a.controllerNumber, 'controllerNumber');
        // the inventory's location, never another one: the guest's test path (guestTestPath) names the
        // disk at THAT location, so ours anywhere else would leave the workload on the user's disk.
        // (Plans written while a free location was chosen at apply time carry it as firstLocation.)
        const controllerLocation = num(typeof a.controllerLocation === 'number' ? a.controllerLocation : a.firstLocation, 'controllerLocation');
        if (controllerLocation < 0 || controllerLocation > 63) throw new InvalidArgument(`controllerLocation: expected 0-63, got ${controllerLocation}`, { name: 'controllerLocation', value: String(controllerLocation) });
        if (a.controllerType !== 'SCSI') throw new InvalidArgument('controllerType must be SCSI', { name: 'controllerType', value: String(a.controllerType) });
        let disk: { path: string } | { diskNumber: number };
        if (a.diskNumber !== undefined) {
          const n = num(a.diskNumber, 'diskNumber');
          checkPassthroughDisk(t.host, t.allowedDisks, n, await getDisk(n), { alreadyOffline: true });
          disk = { diskNumber: n };
        } else disk = { path: ownPath(a.path, 'Add-VMHardDiskDrive') };
        // listed first: a drive already there is the user's; refuse and leave it alone
        const occupant = (await drivesOf(vmName)).find((x) => x.ControllerType === 'SCSI' && x.ControllerNumber === controllerNumber && x.ControllerLocation === controllerLocation);
        if (occupant) {
          const what = typeof occupant.Path === 'string' && occupant.Path !== '' ? occupant.Path : `disk ${String(occupant.DiskNumber)}`;
          throw new UnsafeOperation(
            `${t.host}: SCSI ${controllerNumber}:${controllerLocation} of ${vmName} already holds ${what}, which this run did not attach; refusing to attach there (guestTestPath names the disk at that location). Free that location, or point scsiLocation and guestTestPath at a free one`,
            { operation: 'Add-VMHardDiskDrive', target: `${vmName} SCSI ${controllerNumber}:${controllerLocation}` },
          );
        }
        const slot: DriveSlot = { vmName, controllerNumber, controllerLocation };
        const call = addDriveCall(slot, disk);
        ctx.sent({ ...slot, ...disk });
        await runCalls(runner, [call]);
        ctx.log(`attached to ${vmName} at SCSI ${controllerNumber}:${controllerLocation}`, { controllerLocation });
        return made(`${slot.vmName}:SCSI:${slot.controllerNumber}:${slot.controllerLocation}`, { ...slot, ...disk });
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
        // only our drive at the recorded location: our VHDX path, or our pass-through disk number
        const ours = here && (d.path !== undefined ? samePath(here.Path, ownPath(d.path, 'Remove-VMHardDiskDrive')) : here.DiskNumber === num(d.diskNumber, 'recorded diskNumber'));
        if (!ours) {
          if (here) ctx.log(`${slot.vmName} SCSI ${slot.controllerNumber}:${slot.controllerLocation} holds a drive this run did not attach; left alone`);
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
        if (norm(d.serialNumber) === '' && norm(d.uniqueId) === '') {
          throw new UnsafeOperation(`${t.host}: the ledger records no serial or unique id for disk ${n} (a run of an older storsweep); refusing to bring it online unchecked — if it is the disk the run took offline: Set-Disk -Number ${n} -IsOffline $false`, { operation: 'Set-Disk -IsOffline', target: `disk ${n}` });
        }
        const disk = await getDisk(n);
        if (!disk) return 'absent';
        // disk numbers can change (reboot, rescan): the same number with another serial is not ours
        if (norm(disk.SerialNumber) !== norm(d.serialNumber) || norm(disk.UniqueId) !== norm(d.uniqueId)) {
          ctx.log(`disk ${n} is now ${JSON.stringify(disk.SerialNumber)}, not the disk this run took offline; left alone`);
          return 'absent';
        }
        if (!disk.IsOffline) return 'absent';
        await runCalls(runner, [setDiskOfflineCall(n, false)]);
        return 'removed';
      }
      default:
        throw new InvalidArgument(`hyperv provider does not own objects of kind ${obj.kind}`, { name: 'kind', value: obj.kind });
    }
  }

  async function find(ref: OwnedObjectRef): Promise<CreatedObject | null> {
    // By owned name only (the VHDX file name); offlined disks carry no name and are never found.
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
    if (ref.kind === 'disk-attachment') {
      const file = ownedFile(ref.name.replace(/-attach$/, '-disk'));
      const x = (await drivesOf(t.vmName)).find((dr) => dr.ControllerType === 'SCSI' && typeof dr.Path === 'string' && dr.Path.toLowerCase().endsWith(file));
      if (!x) return null;
      const slot = { vmName: t.vmName, controllerNumber: num(x.ControllerNumber, 'ControllerNumber'), controllerLocation: num(x.ControllerLocation, 'ControllerLocation') };
      return { ...ref, provider: 'hyperv', id: `${slot.vmName}:SCSI:${slot.controllerNumber}:${slot.controllerLocation}`, data: { ...slot, path: x.Path } };
    }
    return null;
  }

  return { name: 'hyperv', apply, destroy, find, close: () => runner.close() };
}

/**
 * One diskspd pass inside the VM via PowerShell Direct; returns diskspd's -Rxml output. The guest
 * credential is passed on stdin and never appears in commands, logs or errors.
 */
export async function runGuestDiskspd(runner: CommandRunner, target: HypervTargetConfig, credential: GuestCredential, test: WorkloadTest, profile: WorkloadProfile, opts: { guestTarget: string; diskspdPath?: string }): Promise<string> {
  const t = checkHypervTarget(target);
  const exe = opts.diskspdPath ?? 'diskspd.exe';
  checkDiskspdPath(exe);
  const argv = diskspdArgs(test, profile, { target: opts.guestTarget });
  const r = await runInGuest(runner, t.vmName, credential, exe, argv);
  if (r.exitCode !== 0) {
    const tail = r.output.trim().split('\n').slice(-3).join(' | ');
    throw new RemoteCommandFailed(`${t.host}: diskspd in ${t.vmName} exited ${r.exitCode}: ${tail}`, { host: runner.target, command: `Invoke-Command -VMName ${t.vmName} ${exe} ${argv.join(' ')}`, exitCode: r.exitCode, stderr: r.output, reason: 'exit' });
  }
  return r.output;
}

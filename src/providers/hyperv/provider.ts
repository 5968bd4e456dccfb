// The Hyper-V provider: planned steps → PowerShell cmdlet calls over a CommandRunner (Windows
// OpenSSH). Teardown removes only what this run created: the drive it added, the VHDX it created
// (by exact path), and a pass-through disk goes back online.
import { InvalidArgument, RemoteCommandFailed, UnsafeOperation } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import type { CreatedObject, OwnedObjectRef, PlannedStep, Provider, ProviderContext, ProviderName } from '../../run/provider.ts';
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
  const slotOf = (d: Record<string, unknown>): DriveSlot => ({ vmName: checkHyperv('vmName', d.vmName ?? t.vmName, 'vmName'), controllerNumber: num(d.controllerNumber ?? t.scsiController, 'controllerNumber'), controllerLocation: num(d.controllerLocation ?? t.scsiLocation, 'controllerLocation') });

  async function apply(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
    const a = step.arguments;
    const made = (id: string, data: Record<string, unknown>): CreatedObject => {
      if (!step.creates) throw new InvalidArgument(`step ${step.step} creates nothing`, { name: 'step', value: step.step });
      return { ...step.creates, provider: 'hyperv', id, data };
    };
    switch (step.operation) {
      case 'New-VHD': {
        const spec = { ...(a as unknown as NewVhdSpec), path: ownPath(a.path, 'New-VHD') };
        ctx.log(`creating ${spec.type} VHDX ${spec.path}`, { path: spec.path });
        const [vhd] = await runCalls(runner, [newVhdCall(spec)]);
        return made(spec.path, { path: spec.path, vhd: vhd ?? null });
      }
      case 'Set-Disk -IsOffline': {
        const n = num(a.diskNumber, 'diskNumber');
        checkPassthroughDisk(t.host, t.allowedDisks, n, await getDisk(n));
        await runCalls(runner, [setDiskOfflineCall(n, true)]);
        return made(String(n), { diskNumber: n });
      }
      case 'Add-VMHardDiskDrive': {
        const slot = slotOf(a);
        if (a.controllerType !== 'SCSI') throw new InvalidArgument('controllerType must be SCSI', { name: 'controllerType', value: String(a.controllerType) });
        let disk: { path: string } | { diskNumber: number };
        if (a.diskNumber !== undefined) {
          const n = num(a.diskNumber, 'diskNumber');
          checkPassthroughDisk(t.host, t.allowedDisks, n, await getDisk(n), { alreadyOffline: true });
          disk = { diskNumber: n };
        } else disk = { path: ownPath(a.path, 'Add-VMHardDiskDrive') };
        await runCalls(runner, [addDriveCall(slot, disk)]);
        return made(`${slot.vmName}:SCSI:${slot.controllerNumber}:${slot.controllerLocation}`, { ...slot, ...disk });
      }
      default:
        throw new InvalidArgument(`hyperv provider cannot apply operation ${JSON.stringify(step.operation)}`, { name: 'operation', value: step.operation });
    }
  }

  async function destroy(obj: DestroyRef): Promise<'removed' | 'absent'> {
    const d = obj.data;
    switch (obj.kind) {
      case 'disk-attachment': {
        const slot = slotOf(d);
        const drives = await runCalls(runner, [listDrivesCall(slot.vmName)]);
        const here = drives.find((x) => x.ControllerType === 'SCSI' && x.ControllerNumber === slot.controllerNumber && x.ControllerLocation === slot.controllerLocation);
        // only our drive: same VHDX path or same pass-through disk number
        if (!here || (d.path !== undefined && here.Path !== d.path) || (d.diskNumber !== undefined && here.DiskNumber !== d.diskNumber)) return 'absent';
        await runCalls(runner, [removeDriveCall(slot)]);
        return 'removed';
      }
      case 'vhdx': {
        const path = ownPath(d.path ?? obj.id, 'Remove-Item');
        if ((await runCalls(runner, [probeFileCall(path)])).length === 0) return 'absent';
        await runCalls(runner, [removeVhdCall(path)]);
        return 'removed';
      }
      case 'disk-offline': {
        const n = num(d.diskNumber ?? Number(obj.id), 'diskNumber');
        const disk = await getDisk(n);
        if (!disk || !disk.IsOffline) return 'absent';
        await runCalls(runner, [setDiskOfflineCall(n, false)]);
        return 'removed';
      }
      default:
        throw new InvalidArgument(`hyperv provider does not own objects of kind ${obj.kind}`, { name: 'kind', value: obj.kind });
    }
  }

  async function find(ref: OwnedObjectRef): Promise<CreatedObject | null> {
    if (ref.kind !== 'vhdx') return null;
    for (const folder of Object.values(t.volumes)) {
      const path = `${folder.endsWith('\\') ? folder : `${folder}\\`}${checkHyperv('ownedName', ref.name, 'owned name')}.vhdx`;
      if ((await runCalls(runner, [probeFileCall(path)])).length > 0) {
        const [vhd] = await runCalls(runner, [getVhdCall(path)]);
        return { ...ref, provider: 'hyperv', id: path, data: { path, vhd: vhd ?? null } };
      }
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

// The Hyper-V host as the Hyper-V operations (operations/*.ts) reach it: the checked target, the
// SSH runner (PowerShell cmdlet calls), the guest through PowerShell Direct, and the reads every
// step makes before it changes anything — which VHDX paths are ours, which drive sits where,
// which VM holds a host disk.
import { InvalidArgument, UnsafeOperation } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import type { CreatedObject, PlannedStep } from '../../contract/provider.ts';
import { operationFactory } from '../operations.ts';
import type { checkHypervTarget } from './config.ts';
import { describeIdentity, getDiskCall, listDisksCall, listVmsCall, sameDisk, type DiskIdentity, type HostDisk } from './passthrough.ts';
import type { DiskCacheState } from '../windows-guest.ts';
import { runCalls, runGuestCache, runGuestCalls, type GuestCall, type GuestCredential } from './powershell.ts';
import { checkHyperv } from './validate.ts';
import { listDrivesCall, type DriveSlot } from './vhd.ts';

/** How the provider reaches into the VM (PowerShell Direct): the guest credential, revealed at the call. */
export interface GuestAccess {
  credential(): GuestCredential;
}

/** A VM drive as Get-VMHardDiskDrive lists it. */
export type Drive = { ControllerType?: unknown; ControllerNumber?: unknown; ControllerLocation?: unknown; Path?: unknown; DiskNumber?: unknown };

export interface HypervHost {
  t: ReturnType<typeof checkHypervTarget>;
  runner: CommandRunner;
  /** cmdlet calls in the VM; refused when the provider was made without the guest credential */
  inGuest: (vmName: string, calls: GuestCall[]) => Promise<Record<string, unknown>[]>;
  /** a guest disk's write cache policy, set first when `set` says (PowerShell Direct: ../windows-write-cache.ts) */
  cacheInGuest: (vmName: string, disk: number, set?: { writeCache?: 'enabled' | 'disabled'; flushing?: 'on' | 'off' }) => Promise<DiskCacheState>;
  /** a VHDX we may create or delete: directly in one of the inventory's volume folders */
  ownPath: (p: unknown, op: string) => string;
  /** the refusal that keeps a teardown row open: nothing was done */
  keepOpen: (target: string, why: string) => never;
}

/** One Hyper-V operation (operations/*.ts). */
export const hypervOperation = operationFactory<HypervHost>('hyperv');

export function hypervHost(t: HypervHost['t'], runner: CommandRunner, guest?: GuestAccess): HypervHost {
  const folders = Object.values(t.volumes).map((f) => (f.endsWith('\\') ? f : `${f}\\`).toLowerCase());
  return {
    t,
    runner,
    inGuest: (vmName, calls) => {
      if (!guest) throw new InvalidArgument(`${t.host}: the guest steps need the guest credential, and this provider was made without it`, { name: 'guestCredential', value: vmName });
      return runGuestCalls(runner, vmName, guest.credential(), calls);
    },
    cacheInGuest: (vmName, disk, set) => {
      if (!guest) throw new InvalidArgument(`${t.host}: the guest steps need the guest credential, and this provider was made without it`, { name: 'guestCredential', value: vmName });
      return runGuestCache(runner, vmName, guest.credential(), disk, set);
    },
    ownPath: (p, op) => {
      const path = checkHyperv('vhdxPath', p, 'vhdx path');
      const dir = path.slice(0, path.lastIndexOf('\\') + 1).toLowerCase();
      if (!folders.includes(dir)) throw new UnsafeOperation(`${t.host}: refusing ${op} of ${path}: not in one of the inventory's volume folders`, { operation: op, target: path });
      return path;
    },
    keepOpen: (target, why) => {
      throw new UnsafeOperation(`${t.host}: left alone: ${why}`, { operation: 'destroy', target });
    },
  };
}

export const getDisk = async (h: HypervHost, n: number) => (await runCalls(h.runner, [getDiskCall(n)]))[0] as HostDisk | undefined;
export const drivesOf = async (h: HypervHost, vmName: string) => (await runCalls(h.runner, [listDrivesCall(vmName)])) as Drive[];
export const listDisks = async (h: HypervHost) => (await runCalls(h.runner, [listDisksCall()])) as unknown as HostDisk[];
export const samePath = (a: unknown, b: unknown) => typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
export const isDiskNumber = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
/** A drive's Path that names a virtual disk file (a pass-through drive's Path is a description, e.g. `Disk 2 500 GB Bus 0 Lun 0 Target 2`). */
export const isVirtualDiskFile = (p: unknown): boolean => typeof p === 'string' && /^(?:[A-Za-z]:\\|\\\\).*\.(?:vhdx?|avhdx?)$/i.test(p.trim());

/** The drive at a SCSI slot of the VM, if any. */
export async function driveAt(h: HypervHost, slot: DriveSlot): Promise<Drive | undefined> {
  return (await drivesOf(h, slot.vmName)).find((x) => x.ControllerType === 'SCSI' && x.ControllerNumber === slot.controllerNumber && x.ControllerLocation === slot.controllerLocation);
}

/** An integer the ledger or the host gave: refused (nothing guessed) when it is not one. */
export function int(v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new InvalidArgument(`${name}: expected an integer, got ${JSON.stringify(v)}`, { name, value: String(v) });
  return v;
}

/** The slot a ledger row recorded. */
export function recordedSlot(d: Record<string, unknown>): DriveSlot {
  return { vmName: checkHyperv('vmName', d.vmName, 'recorded vmName'), controllerNumber: int(d.controllerNumber, 'recorded controllerNumber'), controllerLocation: int(d.controllerLocation, 'recorded controllerLocation') };
}

/** The object a step created, as the ledger records it. */
export function made(step: PlannedStep, id: string, data: Record<string, unknown>): CreatedObject {
  if (!step.creates) throw new InvalidArgument(`step ${step.step} creates nothing`, { name: 'step', value: step.step });
  return { ...step.creates, provider: 'hyperv', id, data };
}

/**
 * The one host disk carrying the recorded serial and unique id, wherever it is numbered now (disk
 * numbers change on reboot or rescan). Throws (the row stays open) when none or several do.
 */
export async function diskWith(h: HypervHost, id: DiskIdentity, recordedNumber: number, what: string): Promise<HostDisk> {
  const matches = (await listDisks(h)).filter((x) => sameDisk(x, id));
  if (matches.length === 0) return h.keepOpen(what, `no disk on the host carries ${describeIdentity(id)} (it was disk ${recordedNumber}); nothing done to any other disk — if the disk comes back, run cleanup again`);
  if (matches.length > 1) return h.keepOpen(what, `disks ${matches.map((m) => m.Number).join(', ')} all carry ${describeIdentity(id)}; cannot tell which one this run took offline`);
  return matches[0]!;
}

/**
 * Every VM drive on the host that holds, or may hold, host disk `n` as a pass-through disk: one
 * whose DiskNumber is `n`, and one whose DiskNumber is empty while its Path is no virtual disk
 * file (Hyper-V could not resolve the physical disk it references — it may well be `n`).
 */
export async function holdersOf(h: HypervHost, n: number): Promise<string[]> {
  const vms = (await runCalls(h.runner, [listVmsCall()])).map((v) => v.Name).filter((x): x is string => typeof x === 'string');
  if (vms.length === 0) return [];
  // a VM's name comes from the host and travels as JSON data, never as PowerShell source
  const drives = await runCalls(h.runner, vms.map((vm) => ({ cmdlet: 'Get-VMHardDiskDrive' as const, params: { VMName: vm }, select: ['VMName', 'ControllerType', 'ControllerNumber', 'ControllerLocation', 'Path', 'DiskNumber'] })));
  const at = (x: Record<string, unknown>) => `${String(x.VMName)} ${String(x.ControllerType)} ${String(x.ControllerNumber)}:${String(x.ControllerLocation)}`;
  return [
    ...drives.filter((x) => x.DiskNumber === n).map(at),
    ...drives.filter((x) => !isDiskNumber(x.DiskNumber) && !isVirtualDiskFile(x.Path)).map((x) => `${at(x)} (a pass-through drive whose disk Hyper-V does not resolve, Path ${JSON.stringify(x.Path ?? null)}: possibly disk ${n})`),
  ];
}

export async function refuseIfHeld(h: HypervHost, n: number): Promise<void> {
  const holders = await holdersOf(h, n);
  if (holders.length) throw new UnsafeOperation(`${h.t.host}: refusing to use disk ${n} for pass-through: ${holders.join(', ')} already holds it as a pass-through disk`, { operation: 'Set-Disk -IsOffline', target: `disk ${n}` });
}

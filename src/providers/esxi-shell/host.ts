// The ESXi host as the ESXi-shell operations (operations/*.ts) reach it: the checked target, the
// SSH runner to its shell, and the read-only guards every destructive command is preceded by —
// each asks the host itself whether the device is unused, and sends nothing on refusal.
import { InvalidArgument, UnsafeOperation } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { shJoin } from '../../ssh/quote.ts';
import { runChecked } from '../../ssh/run-checked.ts';
import type { CreatedObject, PlannedStep } from '../../contract/provider.ts';
import type { GuestAccess } from '../guest-disk.ts';
import type { checkEsxiShellTarget } from './config.ts';
import { deviceListArgv, parseDeviceList, parseVmfsExtentList, vmfsExtentListArgv } from './esxcli.ts';
import { getptblArgv, parseGetptbl, VMFS_GPT_GUID, VMFS_MBR_TYPE } from './partedutil.ts';
import { checkEsxi } from './validate.ts';
import { getDevicesArgv, parseDiskDevices } from './vimcmd.ts';
import type { VmfsHost } from './vmfs-ownership.ts';
import { operationFactory } from '../operations.ts';

export interface EsxiHost extends VmfsHost {
  target: ReturnType<typeof checkEsxiShellTarget>;
  runner: CommandRunner;
  /** the VM's Linux guest, where the guest-disk step finds the disk attached (absent: a provider that only provisions) */
  guest?: GuestAccess;
  exec(argv: string[]): ReturnType<typeof runChecked>;
}

/** One ESXi-shell operation (operations/*.ts). */
export const esxiOperation = operationFactory<EsxiHost>('esxi-shell');

export function esxiHost(target: EsxiHost['target'], runner: CommandRunner, guest?: GuestAccess): EsxiHost {
  return { target, runner, guest, host: target.host, allowedDevices: target.allowedDevices, exec: (argv) => runChecked(runner, shJoin(argv)) };
}

export async function extents(h: EsxiHost) {
  return parseVmfsExtentList((await h.exec(vmfsExtentListArgv())).stdout);
}

/**
 * The device must be allowed by the inventory, known to the host as a disk that is not the boot
 * device, carry no VMFS extent and have no partitions. Reads only.
 */
export async function guardUnused(h: EsxiHost, device: string, operation: string): Promise<void> {
  const refuse = (why: string) => {
    throw new UnsafeOperation(`${h.host}: refusing ${operation} on ${device}: ${why}`, { operation, target: device });
  };
  checkEsxi('device', device);
  if (!h.allowedDevices.includes(device)) refuse(`not in allowedDevices of the inventory (${h.allowedDevices.join(', ') || 'none'})`);
  const listed = await h.runner.run(shJoin(deviceListArgv(device)));
  // A listing that failed proves nothing about the device: refuse, and say why it failed.
  if (listed.exitCode !== 0) refuse(`esxcli storage core device list failed (exit ${listed.exitCode}): ${(listed.stderr || listed.stdout).trim().split('\n').slice(-2).join(' | ')}`);
  const dev = parseDeviceList(listed.stdout).find((d) => d.name === device);
  if (!dev) refuse('the host does not list this device (esxcli storage core device list)');
  if (dev!.deviceType !== 'Direct-Access') refuse(`device type is ${dev!.deviceType}, not Direct-Access`);
  if (dev!.isBootDevice) refuse('it is the boot device');
  if (dev!.isOffline) refuse('the device is offline');
  const ext = (await extents(h)).find((e) => e.deviceName === device);
  if (ext) refuse(`it holds VMFS volume ${ext.volumeName} (extent ${ext.extentNumber}, partition ${ext.partition})`);
  const table = parseGetptbl((await h.exec(getptblArgv(device))).stdout);
  if (table.partitions.length > 0) refuse(`it has ${table.partitions.length} partition(s) (${table.label} label)`);
}

/** Before formatting partition 1: still allowed, still not a VMFS extent, partition 1 is VMFS-typed. */
export async function guardOwnPartition(h: EsxiHost, device: string, operation: string): Promise<void> {
  const refuse = (why: string) => {
    throw new UnsafeOperation(`${h.host}: refusing ${operation} on ${device}:1: ${why}`, { operation, target: `${device}:1` });
  };
  if (!h.allowedDevices.includes(device)) refuse('device not in allowedDevices of the inventory');
  const ext = (await extents(h)).find((e) => e.deviceName === device);
  if (ext) refuse(`it holds VMFS volume ${ext.volumeName}`);
  const table = parseGetptbl((await h.exec(getptblArgv(device))).stdout);
  const p = table.partitions;
  if (p.length !== 1 || p[0]!.number !== 1 || (p[0]!.type !== VMFS_GPT_GUID && p[0]!.type !== VMFS_MBR_TYPE)) {
    refuse('expected exactly one VMFS partition (created by the partition step)');
  }
}

export const disksOf = async (h: EsxiHost, vmid: string) => parseDiskDevices((await h.exec(getDevicesArgv(vmid))).stdout);

/** The units of VM `vmid` that hold the disk file `path` (vim-cmd names it `[datastore] file`). */
export async function attachedUnits(h: EsxiHost, vmid: string, path: string) {
  const m = /^\/vmfs\/volumes\/([^/]+)\/(.+)$/.exec(path);
  const dsPath = m ? `[${m[1]}] ${m[2]}` : path;
  return (await disksOf(h, vmid)).filter((d) => d.fileName === dsPath || d.fileName === path);
}

/** A recorded path is ours only if its file carries the owned name (`<name>.vmdk`). */
export function ownedPath(h: EsxiHost, path: string, name: string, what: string): string {
  if (!path.endsWith(`/${name}.vmdk`)) throw new UnsafeOperation(`${h.host}: refusing to remove ${what} ${path}: it does not carry the owned name ${name}`, { operation: 'destroy', target: path });
  return path;
}

/** The object a step created, as the ledger records it. */
export function createdObject(step: PlannedStep, id: string, data: Record<string, unknown>): CreatedObject {
  if (!step.creates) throw new InvalidArgument(`step ${step.step} creates nothing`, { name: 'step', value: step.step });
  return { ...step.creates, provider: 'esxi-shell', id, data };
}

/** A value the ledger recorded, as a string: refused (nothing guessed) when it is not one. */
export function recorded(v: unknown, name: string): string {
  if (typeof v !== 'string') throw new InvalidArgument(`recorded ${name}: expected a string, got ${JSON.stringify(v)}`, { name, value: String(v) });
  return v;
}

// vim-cmd vmsvc: attach an existing disk to a VM, remove it again, list VMs and devices.
import { InvalidArgument, ParseError } from '../../errors.ts';
import { checkEsxi, checkInt } from './validate.ts';

export function diskAddExistingArgv(vmid: string | number, path: string, bus: number, unit: number): string[] {
  return ['vim-cmd', 'vmsvc/device.diskaddexisting', checkEsxi('vmid', vmid), checkEsxi('vmdkPath', path), String(checkInt(bus, 'controller bus', 0, 3)), String(checkUnit(unit))];
}

/** The trailing `false` keeps the disk file: the provider deletes it itself with vmkfstools -U. */
export function diskRemoveArgv(vmid: string | number, bus: number, unit: number): string[] {
  return ['vim-cmd', 'vmsvc/device.diskremove', checkEsxi('vmid', vmid), String(checkInt(bus, 'controller bus', 0, 3)), String(checkUnit(unit)), 'false'];
}

export const getDevicesArgv = (vmid: string | number): string[] => ['vim-cmd', 'vmsvc/device.getdevices', checkEsxi('vmid', vmid)];

function checkUnit(unit: number): number {
  checkInt(unit, 'SCSI unit', 0, 15);
  if (unit === 7) throw new InvalidArgument('SCSI unit: 7 is the controller itself; use 0-6 or 8-15', { name: 'SCSI unit', value: '7' });
  return unit;
}

export interface VmRow {
  vmid: string;
  name: string;
  datastore: string;
  vmxPath: string;
}

/** Anchors on the `[datastore] path.vmx` token: names may contain spaces. */
export function parseGetAllVms(text: string, source = 'vim-cmd vmsvc/getallvms'): VmRow[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (!/^Vmid\s+Name\s+File/.test(lines[0] ?? '')) {
    throw new ParseError(`${source}: line 1: expected the header "Vmid Name File Guest OS Version Annotation"`, { source, line: 1, expected: 'Vmid  Name  File …' });
  }
  const rows: VmRow[] = [];
  for (const line of lines.slice(1)) {
    const m = /^(\d+)\s+(.*?)\s+\[([^\]]+)\]\s+(.+?\.vmx)(?:\s|$)/.exec(line);
    if (m) rows.push({ vmid: m[1]!, name: m[2]!, datastore: m[3]!, vmxPath: m[4]! });
  }
  return rows;
}

/**
 * Disk backings in `vmsvc/device.getdevices` output: the fileName and unitNumber/controllerKey of
 * each VirtualDisk, enough to find which unit holds a given path.
 */
export function parseDiskDevices(text: string): { fileName: string; controllerKey: number; unitNumber: number }[] {
  const out: { fileName: string; controllerKey: number; unitNumber: number }[] = [];
  const blocks = text.split(/\(vim\.vm\.device\.VirtualDisk\)/).slice(1);
  for (const b of blocks) {
    const file = /fileName = "([^"]*)"/.exec(b);
    const ctrl = /controllerKey = (\d+)/.exec(b);
    const unit = /unitNumber = (\d+)/.exec(b);
    if (file && ctrl && unit) out.push({ fileName: file[1]!, controllerKey: Number(ctrl[1]), unitNumber: Number(unit[1]) });
  }
  return out;
}

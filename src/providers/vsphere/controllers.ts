// Virtual storage controllers: the disk.controller axis. A controller of the named type is added
// to the VM only when it has none with a free unit, and only what we added is removed again.
//
// Limits a real host enforces (VMware vSphere 6.5/6.7/8.0 Virtual Machine Administration: "SCSI,
// SATA, and NVMe Storage Controller Conditions, Limitations, and Compatibility"; community.vmware
// vmware_guest_disk `unit_number` docs; real-product-rules.md §3.1):
//   - up to 4 SCSI controllers (bus 0–3, shared by every SCSI type) and up to 4 NVMe (bus 0–3);
//   - SCSI units 0–15, the controller itself on unit 7; PVSCSI on hardware version ≥ 14: 64 targets
//     (0–63), 7 still reserved;
//   - NVMe units 0–14, from hardware version 13 (ESXi 6.5) on.
// BusLogic is accepted by the API at any hardware version; 64-bit guests have no driver for it.
import { InvalidArgument } from '../../errors.ts';
import type { Ctx } from './datastores.ts';
import { VsphereClientError } from './fault.ts';
import { reconfigVMTask } from './methods.ts';
import { readProps } from './property.ts';
import type { MoRef } from './soap.ts';
import { waitForTask } from './task.ts';
import { arr, type DataObject, type VirtualDevice } from './types.ts';

/** disk.controller axis value → vim25 device type */
export const CONTROLLER_TYPES = {
  pvscsi: 'ParaVirtualSCSIController',
  lsilogic: 'VirtualLsiLogicController',
  lsisas: 'VirtualLsiLogicSASController',
  buslogic: 'VirtualBusLogicController',
  nvme: 'VirtualNVMEController',
} as const;
export type ControllerKind = keyof typeof CONTROLLER_TYPES;
export const CONTROLLER_KINDS = Object.keys(CONTROLLER_TYPES) as ControllerKind[];

const SCSI_TYPES = new Set<string>(['ParaVirtualSCSIController', 'VirtualLsiLogicController', 'VirtualLsiLogicSASController', 'VirtualBusLogicController', 'VirtualSCSIController']);
export const MAX_CONTROLLERS_PER_CLASS = 4;
export const NVME_MIN_HW = 13;
export const PVSCSI_64_TARGETS_MIN_HW = 14;

/** `vmx-14` → 14; 0 when unknown. */
export function hardwareVersion(version: unknown): number {
  const m = typeof version === 'string' ? /^vmx-(\d+)$/.exec(version) : null;
  return m ? Number(m[1]) : 0;
}

export function isScsiType(type: string | undefined): boolean {
  return SCSI_TYPES.has(type ?? '');
}

/** Units a disk may take on `controller`: [0, end) minus `reserved`. */
export function unitRange(controller: VirtualDevice, hw: number): { end: number; reserved?: number } {
  const t = controller._type ?? '';
  if (isScsiType(t)) return { end: t === 'ParaVirtualSCSIController' && hw >= PVSCSI_64_TARGETS_MIN_HW ? 64 : 16, reserved: controller.scsiCtlrUnitNumber ?? 7 };
  if (t === 'VirtualNVMEController') return { end: 15 };
  if (t === 'VirtualAHCIController' || t === 'VirtualSATAController') return { end: 30 };
  if (t === 'VirtualIDEController') return { end: 2 };
  return { end: 16 };
}

export function freeUnit(devices: VirtualDevice[], controller: VirtualDevice, hw: number): number | undefined {
  const used = new Set(devices.filter((d) => d.controllerKey === controller.key && d.unitNumber !== undefined).map((d) => d.unitNumber!));
  const { end, reserved } = unitRange(controller, hw);
  for (let u = 0; u < end; u++) if (u !== reserved && !used.has(u)) return u;
  return undefined;
}

/** The controller of `kind` with the lowest bus number that still has a free unit. */
export function pickController(devices: VirtualDevice[], kind: ControllerKind, hw: number): VirtualDevice | undefined {
  return devices
    .filter((d) => d._type === CONTROLLER_TYPES[kind])
    .sort((a, b) => (a.busNumber ?? 0) - (b.busNumber ?? 0))
    .find((c) => freeUnit(devices, c, hw) !== undefined);
}

/** The lowest bus number free for a new controller of `kind` (SCSI types share one numbering). */
export function freeBus(devices: VirtualDevice[], kind: ControllerKind): number | undefined {
  const type = CONTROLLER_TYPES[kind];
  const sameClass = devices.filter((d) => (isScsiType(type) ? isScsiType(d._type) : d._type === type));
  const used = new Set(sameClass.map((d) => d.busNumber));
  for (let b = 0; b < MAX_CONTROLLERS_PER_CLASS; b++) if (!used.has(b)) return b;
  return undefined;
}

export async function vmHardware(ctx: Ctx, vm: MoRef): Promise<{ devices: VirtualDevice[]; hw: number }> {
  const p = await readProps(ctx.rt, ctx.sc, vm, ['config.hardware.device', 'config.version']);
  return { devices: arr(p['config.hardware.device'] as VirtualDevice[] | undefined), hw: hardwareVersion(p['config.version']) };
}

export interface AddedController {
  key: number;
  busNumber: number;
  type: string;
}

/**
 * Add a controller of `kind` on the lowest free bus. `beforeSend(busNumber)` runs after every
 * guard passed, right before ReconfigVM_Task goes out (the ledger's `sent`).
 */
export async function addController(ctx: Ctx, vm: MoRef, kind: ControllerKind, beforeSend?: (busNumber: number) => void | Promise<void>): Promise<AddedController> {
  const { devices, hw } = await vmHardware(ctx, vm);
  const type = CONTROLLER_TYPES[kind];
  if (kind === 'nvme' && hw < NVME_MIN_HW) {
    throw new InvalidArgument(`VM ${vm.value} has hardware version ${hw || 'unknown'}; an NVMe controller needs ${NVME_MIN_HW} or later (ESXi 6.5+)`, { name: 'disk.controller', value: kind });
  }
  const bus = freeBus(devices, kind);
  if (bus === undefined) {
    throw new InvalidArgument(`VM ${vm.value} already has ${MAX_CONTROLLERS_PER_CLASS} ${isScsiType(type) ? 'SCSI' : 'NVMe'} controllers (bus 0–3), the most a VM takes`, { name: 'disk.controller', value: kind });
  }
  const device: DataObject = isScsiType(type) ? { _type: type, key: -100, busNumber: bus, sharedBus: 'noSharing' } : { _type: type, key: -100, busNumber: bus };
  await beforeSend?.(bus);
  const task = await reconfigVMTask(ctx.rt, vm, { deviceChange: [{ operation: 'add', device }] });
  await waitForTask(ctx.rt, ctx.sc, task);
  const added = (await vmHardware(ctx, vm)).devices.find((d) => d._type === type && d.busNumber === bus);
  if (!added) {
    throw new VsphereClientError('not-found', `reconfigure of ${vm.value} succeeded but no ${type} appeared on bus ${bus}`, { method: 'ReconfigVM_Task', host: ctx.endpoint });
  }
  return { key: added.key, busNumber: bus, type };
}

/**
 * Remove the controller we added: the one with the recorded key (when one came back) that still has
 * the recorded type and bus number. One that holds any device is not removed (not ours to empty).
 */
export async function removeController(ctx: Ctx, vm: MoRef, rec: { key?: number; type: string; busNumber: number }): Promise<'removed' | 'absent'> {
  const { devices } = await vmHardware(ctx, vm);
  const c = devices.find((d) => d._type === rec.type && d.busNumber === rec.busNumber && (rec.key === undefined || d.key === rec.key));
  if (!c) return 'absent';
  const held = devices.filter((d) => d.controllerKey === c.key);
  if (held.length) {
    throw new InvalidArgument(`${rec.type} on bus ${rec.busNumber} of VM ${vm.value} holds devices ${held.map((d) => d.key).join(', ')}; it is removed only when empty`, { name: 'controller', value: String(c.key) });
  }
  const device: DataObject = { _type: rec.type, key: c.key, busNumber: rec.busNumber };
  if (isScsiType(rec.type)) device.sharedBus = (c as unknown as DataObject).sharedBus ?? 'noSharing';
  const task = await reconfigVMTask(ctx.rt, vm, { deviceChange: [{ operation: 'remove', device }] });
  await waitForTask(ctx.rt, ctx.sc, task);
  return 'removed';
}

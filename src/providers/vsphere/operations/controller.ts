// disk.controller: nothing is created when the VM already has a controller of that type with a
// free unit; otherwise one is added on the lowest free bus, recorded (vm, type, bus) before the
// call goes out and by key after it. Removed at teardown only when empty.
import { z } from 'zod';
import { InvalidArgument } from '../../../errors.ts';
import type { ObjectKind, OperationContext } from '../../../contract/operation.ts';
import type { CreatedObject } from '../../../contract/provider.ts';
import { CONTROLLER_KINDS, CONTROLLER_TYPES, pickController, type ControllerKind } from '../controllers.ts';
import type { VsphereHost } from '../host.ts';
import { where } from './fields.ts';

export const controllerKind = z.enum(CONTROLLER_KINDS as [ControllerKind, ...ControllerKind[]]);

export const addControllerArgs = z.strictObject({ ...where, deviceChange: z.literal('add'), device: z.literal('controller'), controller: controllerKind });

export async function addController(a: z.output<typeof addControllerArgs>, ctx: OperationContext<VsphereHost>): Promise<CreatedObject | null> {
  const h = ctx.host;
  const c = await h.client();
  const kind = a.controller;
  const v = await h.vm(a.vm);
  const { devices, hw } = await c.vmHardware(v);
  const existing = pickController(devices, kind, hw);
  if (existing) {
    ctx.log(`${a.vm} has a ${CONTROLLER_TYPES[kind]} on bus ${String(existing.busNumber)} with a free unit; adding none`);
    return null;
  }
  const type = CONTROLLER_TYPES[kind];
  const added = await c.addController(v, kind, (busNumber) => ctx.sent({ vm: a.vm, controller: kind, type, busNumber }));
  ctx.log(`added ${type} to ${a.vm} on bus ${added.busNumber} (key ${added.key})`);
  return { kind: 'controller', name: ctx.step.creates!.name, provider: 'vsphere', id: String(added.key), data: { vm: a.vm, controller: kind, type, busNumber: added.busNumber } };
}

export const controllerObject: ObjectKind<VsphereHost> = {
  async destroy(obj, ctx) {
    // A controller has no name: ours is the one with the recorded type and bus number (and key,
    // once one came back), and it is removed only when empty (controllers.ts removeController).
    const d = obj.data;
    if (typeof d.vm !== 'string' || typeof d.type !== 'string' || typeof d.busNumber !== 'number') {
      throw new InvalidArgument(`the ledger records no VM, type and bus number for controller ${obj.name}; refusing to guess one`, { name: 'controller', value: obj.name });
    }
    const c = await ctx.host.client();
    const key = obj.id !== null && /^-?\d+$/.test(obj.id) ? Number(obj.id) : undefined;
    ctx.log(`removing ${d.type} on bus ${d.busNumber} of ${d.vm}`);
    return c.removeController(await ctx.host.vm(d.vm), { type: d.type, busNumber: d.busNumber, ...(key !== undefined ? { key } : {}) });
  },
};

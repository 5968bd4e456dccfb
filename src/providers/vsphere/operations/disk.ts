// ReconfigVM_Task add+create: a flat VMDK of the permutation's format and size, or an RDM of an
// allowed LUN, on the VM (on a controller of the disk.controller type when the axis names one).
// Checked before anything is sent: the disk fits the datastore, a thick disk on NFS only with
// VAAI-NAS, the VM reports disk WWNs to the guest. Read back after: the format the host made.
import { z } from 'zod';
import { InvalidArgument, ProvisionedStateMismatch } from '../../../errors.ts';
import type { ObjectKind, OperationContext } from '../../../contract/operation.ts';
import type { CreatedObject } from '../../../contract/provider.ts';
import { CONTROLLER_TYPES, pickController } from '../controllers.ts';
import { DISK_FORMATS, provisionedFormat, RDM_COMPATIBILITY, splitDatastorePath, type RdmCompatibility } from '../disks.ts';
import { diskByOwnedName } from '../guest-identity.ts';
import { checkDiskUuid, recordedVm, type VsphereHost } from '../host.ts';
import type { MoRef } from '../client.ts';
import { controllerKind } from './controller.ts';
import { device, where } from './fields.ts';
import { checkNfsThick, checkRoom } from './disk-room.ts';
import { policyForDisk, rememberPolicyFacts, verifyDiskPolicy } from '../storage-policy.ts';

const placed = { ...where, deviceChange: z.literal('add+create'), datastore: z.string().min(1), fileName: z.string().min(1), controller: controllerKind.optional() };
export const flatDiskArgs = z.strictObject({ ...placed, backing: z.literal('flat'), format: z.enum(DISK_FORMATS), sizeGb: z.number().positive(), sizeBytes: z.number().int().positive(), policy: z.string().min(1).optional() });
export const rdmArgs = z.strictObject({ ...placed, backing: z.literal('rdm'), device, compatibilityMode: z.enum(Object.values(RDM_COMPATIBILITY) as [RdmCompatibility, ...RdmCompatibility[]]) });
type DiskArgs = z.output<typeof flatDiskArgs> | z.output<typeof rdmArgs>;

/** The key of a controller of the disk.controller type with a free unit (the controller step made sure there is one). */
async function controllerKeyFor(h: VsphereHost, v: MoRef, a: DiskArgs): Promise<number | undefined> {
  if (a.controller === undefined) return undefined;
  const { devices, hw } = await (await h.client()).vmHardware(v);
  const ctl = pickController(devices, a.controller, hw);
  if (!ctl) throw new InvalidArgument(`VM ${a.vm} has no ${CONTROLLER_TYPES[a.controller]} with a free unit for disk.controller ${a.controller}`, { name: 'disk.controller', value: a.controller });
  return ctl.key;
}

export async function addDisk(a: DiskArgs, ctx: OperationContext<VsphereHost>): Promise<CreatedObject> {
  const h = ctx.host;
  const c = await h.client();
  const v = await h.vm(a.vm);
  const { fileName, datastore } = a;
  const owned = ctx.step.creates?.name ?? fileName.replace(/\.vmdk$/, '');
  const controllerKey = await controllerKeyFor(h, v, a);
  const placement = { ...(controllerKey !== undefined ? { controllerKey } : {}), beforeSend: () => ctx.sent({ vm: a.vm, fileName: `[${datastore}] ${fileName}` }) };
  if (a.backing === 'flat') {
    await checkNfsThick(h, datastore, a.format);
    await checkRoom(h, datastore, a.sizeBytes);
  }
  // disk.policy: looked up by name and refused where the datastore does not satisfy it, before the create (storage-policy.ts)
  const policy = a.backing === 'flat' && a.policy !== undefined ? await policyForDisk(c, a.policy, datastore, await h.findDatastore(datastore)) : undefined;
  const physical = a.backing === 'rdm' && a.compatibilityMode === 'physicalMode';
  if ((h.opts.guest || h.opts.windowsGuest) && !physical) await checkDiskUuid(h, v, a.vm);
  const disk =
    a.backing === 'rdm'
      ? await c.attachRdm(v, { deviceCanonicalName: a.device, compatibilityMode: a.compatibilityMode, datastore, fileName, allowedDevices: h.target.allowedDevices, ...placement })
      : await c.createDisk(v, { datastore, fileName, sizeBytes: a.sizeBytes, format: a.format, ...placement, ...(policy ? { profileId: policy.id } : {}) });
  ctx.log(`attached ${disk.fileName} to ${a.vm} at ${disk.controllerKey}:${disk.unitNumber}`);
  return { kind: ctx.step.creates?.kind ?? (a.backing === 'rdm' ? 'rdm' : 'disk'), name: owned, provider: 'vsphere', id: String(disk.key), data: { vm: a.vm, fileName: disk.fileName, controllerKey: disk.controllerKey, unitNumber: disk.unitNumber } };
}

/**
 * Read back, never assumed: on NFS without VAAI-NAS a thick disk is created thin, and results
 * labelled with the asked-for format would be wrong. Run for the disk apply() made and for the
 * one find() found after a dropped connection alike (the executor calls it for both).
 */
export async function verifyFormat(a: z.output<typeof flatDiskArgs>, created: CreatedObject, ctx: OperationContext<VsphereHost>): Promise<void> {
  if (created.kind !== 'disk') return;
  const h = ctx.host;
  const c = await h.client();
  const asked = a.format;
  const vmName = typeof created.data.vm === 'string' ? created.data.vm : a.vm;
  const devices = await c.devices(await h.vm(vmName));
  const byKey = created.id !== null ? devices.find((d) => d.key === Number(created.id) && d._type === 'VirtualDisk' && typeof d.backing?.fileName === 'string' && d.backing.fileName.endsWith(`] ${created.name}.vmdk`)) : undefined;
  const disk = byKey ?? diskByOwnedName(devices, created.name);
  if (!disk?.backing) {
    throw new ProvisionedStateMismatch(`disk ${created.name} is not attached to ${vmName} on ${c.endpoint} after it was created; its format ${asked} cannot be read back`, { axis: 'disk.format', asked, got: 'missing', object: created.name });
  }
  const got = provisionedFormat(disk.backing);
  if (got !== asked) {
    throw new ProvisionedStateMismatch(
      `disk.format ${asked} was asked for, but ${c.endpoint} created ${String(disk.backing.fileName)} as ${got} (thinProvisioned=${JSON.stringify(disk.backing.thinProvisioned ?? false)}, eagerlyScrub=${JSON.stringify(disk.backing.eagerlyScrub ?? false)}); a permutation is measured only in the state its axes name`,
      { axis: 'disk.format', asked, got, object: String(disk.backing.fileName) },
    );
  }
  // the policy vCenter associates with the disk, and its compliance: read back, into the records
  if (a.policy !== undefined) rememberPolicyFacts(h, created.name, await verifyDiskPolicy(c, a.policy, await h.vm(vmName), disk.key, String(disk.backing.fileName)));
}

/** A disk or RDM of ours: detached and its file deleted; a file a crash left detached deleted alone. */
export const diskObject: ObjectKind<VsphereHost> = {
  async destroy(obj, ctx) {
    const h = ctx.host;
    const c = await h.client();
    const v = await h.vm(recordedVm(obj));
    const devices = await c.devices(v);
    const byKey = obj.id !== null ? devices.find((d) => d.key === Number(obj.id) && d._type === 'VirtualDisk') : undefined;
    // A key can be reused after a detach; only trust it if the file is still ours.
    const device = byKey && typeof byKey.backing?.fileName === 'string' && byKey.backing.fileName.endsWith(`] ${obj.name}.vmdk`) ? byKey : diskByOwnedName(devices, obj.name);
    if (device) {
      ctx.log(`detaching and deleting ${String(device.backing?.fileName)}`);
      await c.detachDisk(v, device.key, { deleteFile: true });
      return 'removed';
    }
    // Detached but the file survived (crash between the two): delete the file alone, if ours.
    const fileName = typeof obj.data.fileName === 'string' && obj.data.fileName.endsWith(`] ${obj.name}.vmdk`) ? obj.data.fileName : undefined;
    if (!fileName) return 'absent';
    // Looked up, never assumed: the datastore by the name in the recorded path (gone → so is
    // every file on it), then the file itself on that datastore (deleteVirtualDisk).
    const dsName = splitDatastorePath(fileName)?.datastore;
    const ds = dsName ? await h.findDatastore(dsName) : undefined;
    if (!ds) {
      ctx.log(`datastore ${String(dsName)} of ${fileName} is not in the inventory any more; the file went with it`);
      return 'absent';
    }
    ctx.log(`deleting detached ${fileName}`);
    return c.deleteVirtualDisk(fileName, ds);
  },
  async find(ref, sent, h) {
    // on the VM the send recorded (a vm.count clone's disk is on the clone), else the target's
    const vm = typeof sent?.vm === 'string' ? sent.vm : h.target.vm;
    const d = diskByOwnedName(await (await h.client()).devices(await h.vm(vm)), ref.name);
    if (!d) return null;
    return { ...ref, provider: 'vsphere', id: String(d.key), data: { vm, fileName: d.backing?.fileName, controllerKey: d.controllerKey, unitNumber: d.unitNumber } };
  },
};

// CloneVM_Task: one VM of a `vm.count` permutation, a full clone of the target's VM (clones.ts),
// powered on and waited for until VMware Tools run guest operations; its disk under test is attached
// by the next step. Ownership is proven by the host, as for a datastore: the clone carries the run's
// owned name (`ss-<runId>-<permutationId>-vm<k>`), found by the recorded MoRef only while it still
// has that name, else by the name alone. A clone is destroyed (powered off, Destroy_Task, its files
// with it) only while every disk it has lives in its own folder: a disk someone attached to it from
// elsewhere is never deleted with it (refused, left for a person to look at).
import { z } from 'zod';
import { UnsafeOperation } from '../../../errors.ts';
import type { HostContext, ObjectKind, RecordedObject } from '../../../contract/operation.ts';
import type { CreatedObject, DestroyPlan } from '../../../contract/provider.ts';
import { ProvisionedStateMismatch } from '../../../errors.ts';
import { isFault, isNotFoundHere } from '../fault.ts';
import type { MoRef } from '../client.ts';
import { splitDatastorePath } from '../disks.ts';
import { vsphereOperation, type VsphereHost } from '../host.ts';
import { where } from './fields.ts';

export const CLONE_VM_OPERATION = 'CloneVM_Task';
/** how long a clone may take to report guest operations ready after power-on */
export const CLONE_TOOLS_TIMEOUT_MS = 10 * 60_000;

/** `vm`: the VM cloned (the target's); `name`: the clone's owned name; `member`: which VM of the permutation (1-based); `count`: how many it clones; `diskDatastore`/`diskBytes`: where each clone's disk under test goes, and its size */
const cloneArgs = z.strictObject({ ...where, name: z.string().min(1), member: z.number().int().positive(), count: z.number().int().positive().optional(), diskDatastore: z.string().min(1).optional(), diskBytes: z.number().int().nonnegative().optional(), clone: z.literal('full') });

async function vmByName(h: VsphereHost, name: string): Promise<MoRef | undefined> {
  const c = await h.client();
  const dc = h.target.datacenter ? await c.findDatacenter(h.target.datacenter) : undefined;
  const all = (await c.list('VirtualMachine', dc)).filter((v) => v.name === name);
  if (all.length > 1) throw new UnsafeOperation(`${all.length} VMs are named ${name} on ${c.endpoint}; none is touched`, { operation: CLONE_VM_OPERATION, target: name });
  return all[0]?.ref;
}

/** The clone as the host shows it now: by the recorded id while it still carries the owned name, else by that name. */
async function ownedClone(h: VsphereHost, obj: { name: string; id: string | null }): Promise<MoRef | undefined> {
  if (obj.id) {
    const ref: MoRef = { type: 'VirtualMachine', value: obj.id };
    try {
      const p = await (await h.client()).readProps(ref, ['name']);
      if (p.name === obj.name) return ref;
    } catch (err) {
      if (!isFault(err, 'ManagedObjectNotFound') && !isNotFoundHere(err)) throw err;
    }
  }
  return vmByName(h, obj.name);
}

/** The clone's disks outside its own folder (`[ds] <name>/`): a disk it did not get from the clone task. */
async function foreignDisks(h: VsphereHost, vm: MoRef, name: string): Promise<string[]> {
  const devices = await (await h.client()).devices(vm);
  return devices
    .filter((d) => d._type === 'VirtualDisk')
    .map((d) => (typeof d.backing?.fileName === 'string' ? d.backing.fileName : ''))
    .filter((f) => {
      const dir = (splitDatastorePath(f)?.folder ?? '').replace(/^\[[^\]]+\]\s*/, '');
      return dir !== name && !dir.startsWith(`${name}/`);
    });
}

/**
 * A clone sent but never seen finished (no recorded id: the run died during CloneVM_Task) while a
 * clone of its template still runs on the server: that task goes on without its client and may
 * make the clone after anyone looked. Neither 'absent' nor destroyed under it: left for cleanup.
 */
async function refuseWhileCloning(h: VsphereHost, obj: RecordedObject): Promise<void> {
  if (obj.id) return;
  const source = typeof obj.data.source === 'string' ? obj.data.source : h.target.vm;
  const c = await h.client();
  let ref: MoRef;
  try {
    ref = await h.vm(source);
  } catch {
    return; // no template left to clone from: nothing can be under way
  }
  const tasks = await c.runningClones(ref);
  if (tasks.length === 0) return;
  throw new UnsafeOperation(`a CloneVM_Task of VM ${source} is still running on ${c.endpoint} (${tasks.map((t) => t.value).join(', ')}); the clone ${obj.name} may appear when it ends, so it is neither called absent nor removed now: run \`storsweep cleanup\` once the task has ended`, { operation: 'Destroy_Task', target: obj.name });
}

async function planDestroy(obj: RecordedObject, ctx: HostContext<VsphereHost>): Promise<DestroyPlan> {
  const h = ctx.host;
  await refuseWhileCloning(h, obj);
  const vm = await ownedClone(h, obj);
  if (!vm) return { outcome: 'absent' };
  const foreign = await foreignDisks(h, vm, obj.name);
  if (foreign.length) {
    throw new UnsafeOperation(`VM ${obj.name} has disks outside its own folder (${foreign.join(', ')}); destroying it would delete them, so it is left in place: detach them, then run \`storsweep cleanup\``, { operation: 'Destroy_Task', target: obj.name });
  }
  return {
    outcome: 'remove',
    acts: `VM ${obj.name} (${vm.value}) and its files`,
    run: async () => {
      ctx.log(`powering off and destroying VM ${obj.name}`);
      h.forgetVm(obj.name);
      return (await h.client()).destroyVm(vm);
    },
  };
}

export const cloneVmObject: ObjectKind<VsphereHost> = {
  planDestroy,
  async destroy(obj, ctx) {
    const plan = await planDestroy(obj, ctx);
    return plan.outcome === 'absent' ? 'absent' : plan.run();
  },
  async find(ref, _sent, h) {
    const vm = await vmByName(h, ref.name);
    return vm ? { ...ref, provider: 'vsphere', id: vm.value, data: { vm: ref.name, source: h.target.vm } } : null;
  },
};

export const cloneVm = vsphereOperation({
  name: CLONE_VM_OPERATION,
  schema: cloneArgs,
  async apply(a, ctx): Promise<CreatedObject> {
    const h = ctx.host;
    const c = await h.client();
    ctx.signal.throwIfAborted();
    const source = await h.vm(a.vm);
    // DuplicateName would fail the task; a VM of the owned name is an earlier attempt's (find() takes it)
    if (await vmByName(h, a.name)) throw new UnsafeOperation(`a VM named ${a.name} already exists on ${c.endpoint}; not cloning over it`, { operation: CLONE_VM_OPERATION, target: a.name });
    const data = { vm: a.name, source: a.vm, member: a.member };
    ctx.log(`cloning VM ${a.vm} as ${a.name}`);
    h.forgetVm(a.name);
    // this clone and those after it must all fit where they land (clones.ts checkCloneRoom)
    const copies = Math.max(1, (a.count ?? a.member) - a.member + 1);
    const disk = a.diskDatastore !== undefined && a.diskBytes !== undefined ? { disk: { datastore: a.diskDatastore, bytes: a.diskBytes } } : {};
    const ref = await c.cloneVm(source, { name: a.name, copies, ...disk, beforeSend: () => ctx.sent({ ...data }), signal: ctx.signal });
    await c.startClone(ref, { timeoutMs: CLONE_TOOLS_TIMEOUT_MS, signal: ctx.signal });
    ctx.log(`VM ${a.name} is on and its guest answers guest operations`);
    return { kind: ctx.step.creates?.kind ?? 'vm', name: a.name, provider: 'vsphere', id: ref.value, data };
  },
  objects: { vm: cloneVmObject },
  // read back: the clone is there by its name, powered on, its guest ready for guest operations
  async verify(a, created, ctx) {
    const c = await ctx.host.client();
    const ref: MoRef = { type: 'VirtualMachine', value: created.id };
    const p = await c.readProps(ref, ['name', 'runtime.powerState', 'guest.guestOperationsReady']);
    const ready = p['guest.guestOperationsReady'] === true || p['guest.guestOperationsReady'] === 'true';
    if (p.name !== a.name || p['runtime.powerState'] !== 'poweredOn' || !ready) {
      throw new ProvisionedStateMismatch(`clone ${a.name} of ${a.vm} is not a powered-on VM whose guest answers guest operations (name ${String(p.name)}, power ${String(p['runtime.powerState'])}, guest operations ready ${String(p['guest.guestOperationsReady'])})`, { axis: 'vm.count', asked: 'a running clone', got: String(p['runtime.powerState']), object: a.name });
    }
  },
  // a full clone copies the source's system disk: a minute is a fair guess on a real array
  estimateSec: () => 60,
});

// CloneVM_Task: one VM of a `vm.count` permutation, a full clone of the target's VM (clones.ts), or
// a linked one of the permutation's snapshot of it (`vm.clone: linked`, template-snapshot.ts),
// powered on and waited for until VMware Tools run guest operations; its disk under test is attached
// by the next step. Ownership is proven by the host, as for a datastore: the clone carries the run's
// owned name (`ss-<runId>-<permutationId>-vm<k>`), found by the recorded MoRef only while it still
// has that name, else by the name alone. A clone is destroyed (powered off, Destroy_Task, its files
// with it) only while every disk it has lives in its own folder: a disk someone attached to it from
// elsewhere is never deleted with it (refused, left for a person to look at). A linked clone's child
// disks may have a parent outside, but only the disk of the permutation's own snapshot (foreignDisks).
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
import { ownedSnapshot, parentChain, snapshotOfMember } from './template-snapshot.ts';

export const CLONE_VM_OPERATION = 'CloneVM_Task';
/** how long a clone may take to report guest operations ready after power-on */
export const CLONE_TOOLS_TIMEOUT_MS = 10 * 60_000;

/**
 * `vm`: the VM cloned (the target's); `name`: the clone's owned name; `member`: which VM of the
 * permutation (1-based); `clone`: full, or linked to `snapshot` (the permutation's, template-snapshot.ts);
 * `count`: how many it clones; `diskDatastore`/`diskBytes`: where each clone's disk under test goes, and its size
 */
const room = { count: z.number().int().positive().optional(), diskDatastore: z.string().min(1).optional(), diskBytes: z.number().int().nonnegative().optional() };
const cloneArgs = z.union([
  z.strictObject({ ...where, name: z.string().min(1), member: z.number().int().positive(), ...room, clone: z.literal('full') }),
  z.strictObject({ ...where, name: z.string().min(1), member: z.number().int().positive(), ...room, clone: z.literal('linked'), snapshot: z.string().min(1) }),
]);

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

/** Whether a disk file is in the clone's own folder (`[ds] <name>/`). */
function inFolder(file: string, name: string): boolean {
  const dir = (splitDatastorePath(file)?.folder ?? '').replace(/^\[[^\]]+\]\s*/, '');
  return dir === name || dir.startsWith(`${name}/`);
}

/**
 * The disks Destroy_Task would take from outside the clone's own folder: a disk file elsewhere (one
 * it did not get from the clone task), or a child disk whose parent chain leaves the folder other
 * than through the permutation's own snapshot of the template. A linked clone's delta disks are in
 * its folder and their parent is that snapshot's disk, a read-only point the template still holds:
 * Destroy_Task deletes the deltas only (docs/decisions/0093-linked-clones.md). The snapshot is read
 * from the host, by its owned name, only when a chain leaves the folder.
 */
async function foreignDisks(h: VsphereHost, vm: MoRef, name: string): Promise<string[]> {
  const devices = await (await h.client()).devices(vm);
  const foreign: string[] = [];
  let base: Set<string> | undefined;
  for (const d of devices.filter((x) => x._type === 'VirtualDisk')) {
    const file = typeof d.backing?.fileName === 'string' ? d.backing.fileName : '';
    if (!inFolder(file, name)) {
      foreign.push(file);
      continue;
    }
    const outside = parentChain(d.backing).find((f) => !inFolder(f, name));
    if (outside === undefined) continue;
    base ??= await snapshotBase(h, name);
    if (!base.has(outside)) foreign.push(`${file} (its parent ${outside})`);
  }
  return foreign;
}

/** The disk files of the permutation's own snapshot of the template, as the host shows it now (none: empty). */
async function snapshotBase(h: VsphereHost, clone: string): Promise<Set<string>> {
  const snap = snapshotOfMember(clone);
  const found = snap ? await ownedSnapshot(h, { name: snap, id: null }) : undefined;
  return new Set(found ? await (await h.client()).snapshotDiskFiles(found.snapshot.ref) : []);
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

/** The permutation's snapshot of the template a linked clone hangs on, as the host shows it now. */
async function baseSnapshot(h: VsphereHost, name: string): Promise<MoRef> {
  const found = await ownedSnapshot(h, { name, id: null });
  if (!found) throw new ProvisionedStateMismatch(`VM ${h.target.vm} has no snapshot named ${name} to make a linked clone of`, { axis: 'vm.clone', asked: 'linked', got: 'no snapshot', object: name });
  return found.snapshot.ref;
}

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
    const snapshot = a.clone === 'linked' ? await baseSnapshot(h, a.snapshot) : undefined;
    const data = { vm: a.name, source: a.vm, member: a.member, ...(a.clone === 'linked' ? { clone: a.clone, snapshot: a.snapshot } : {}) };
    ctx.log(a.clone === 'linked' ? `cloning VM ${a.vm} as ${a.name}, linked to its snapshot ${a.snapshot}` : `cloning VM ${a.vm} as ${a.name}`);
    h.forgetVm(a.name);
    // this clone and those after it must all fit where they land (clones.ts checkCloneRoom)
    const copies = Math.max(1, (a.count ?? a.member) - a.member + 1);
    const disk = a.diskDatastore !== undefined && a.diskBytes !== undefined ? { disk: { datastore: a.diskDatastore, bytes: a.diskBytes } } : {};
    const ref = await c.cloneVm(source, { name: a.name, copies, ...disk, beforeSend: () => ctx.sent({ ...data }), signal: ctx.signal, ...(snapshot ? { snapshot } : {}) });
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
  // a full clone copies the source's system disk: a minute is a fair guess on a real array; a linked one copies nothing
  estimateSec: (a) => (a.clone === 'linked' ? 10 : 60),
});

// CreateSnapshot_Task: the snapshot of the target's VM (the template) that the linked clones of a
// `vm.clone: linked` permutation hang on (../snapshots.ts; docs/decisions/0093-linked-clones.md).
// Without memory and not quiesced: a read-only point of the template's disks, nothing more. Named
// with the run's owned name (`ss-<runId>-<permutationId>-snap`), recorded ledger-first like every
// object, made before the clones and so removed after all of them (teardown runs in reverse).
// Ownership is proven by the host: RemoveSnapshot_Task (removeChildren false) goes out only for a
// snapshot of the target's VM that the host, read at that moment, shows under that name; a
// snapshot the user made, or another run's, never carries it and is never touched. While a clone
// of the permutation still has a disk whose parent is the snapshot's, the snapshot stays.
import { z } from 'zod';
import { UnsafeOperation } from '../../../errors.ts';
import type { HostContext, ObjectKind, RecordedObject } from '../../../contract/operation.ts';
import type { CreatedObject, DestroyPlan } from '../../../contract/provider.ts';
import { ProvisionedStateMismatch } from '../../../errors.ts';
import type { MoRef } from '../client.ts';
import { isFault, isNotFoundHere } from '../fault.ts';
import { vsphereOperation, type VsphereHost } from '../host.ts';
import type { SnapshotNode } from '../snapshots.ts';
import { where } from './fields.ts';

export const SNAPSHOT_OPERATION = 'CreateSnapshot_Task';

/** The owned name of a permutation's snapshot of the template (the host's mark that it is ours). */
export function snapshotName(prefix: string): string {
  return `${prefix}-snap`;
}

/** The permutation's snapshot name from one of its clones' owned names (`<prefix>-vm<k>`), or undefined. */
export function snapshotOfMember(member: string): string | undefined {
  const m = /^(.*)-vm\d+$/.exec(member);
  return m ? snapshotName(m[1]!) : undefined;
}

/** `vm`: the template (the target's VM); `name`: the snapshot's owned name */
const snapshotArgs = z.strictObject({ ...where, name: z.string().min(1) });

/** The template as the host shows it now; undefined when it is gone. */
async function templateVm(h: VsphereHost): Promise<MoRef | undefined> {
  try {
    return await h.vm(h.target.vm);
  } catch (err) {
    if (isFault(err, 'ManagedObjectNotFound') || isNotFoundHere(err)) return undefined;
    throw err;
  }
}

/**
 * The snapshot carrying `name` on the template, as the host shows it now: by the recorded id while
 * that snapshot still has the name, else the one of that name; two of that name and no id to tell
 * them apart is refused.
 */
export async function ownedSnapshot(h: VsphereHost, obj: { name: string; id: string | null }): Promise<{ vm: MoRef; snapshot: SnapshotNode } | undefined> {
  const vm = await templateVm(h);
  if (!vm) return undefined;
  const named = (await (await h.client()).snapshots(vm)).filter((s) => s.name === obj.name);
  const byId = obj.id ? named.find((s) => s.ref.value === obj.id) : undefined;
  if (byId) return { vm, snapshot: byId };
  if (named.length > 1) throw new UnsafeOperation(`${named.length} snapshots of VM ${h.target.vm} are named ${obj.name}; none is touched`, { operation: 'RemoveSnapshot_Task', target: obj.name });
  return named[0] ? { vm, snapshot: named[0] } : undefined;
}

/** The permutation's clones whose disks still have a parent among the snapshot's disk files. */
async function clonesOnIt(h: VsphereHost, snapshot: MoRef, name: string): Promise<string[]> {
  const c = await h.client();
  const files = new Set(await c.snapshotDiskFiles(snapshot));
  const prefix = name.replace(/-snap$/, '-vm');
  const dc = h.target.datacenter ? await c.findDatacenter(h.target.datacenter) : undefined;
  const members = (await c.list('VirtualMachine', dc)).filter((v) => v.name.startsWith(prefix) && /^\d+$/.test(v.name.slice(prefix.length)));
  const holding: string[] = [];
  for (const m of members) {
    // a clone gone meanwhile holds nothing; any other failure to read it stops the removal
    const devices = await c.devices(m.ref).catch((err: unknown) => {
      if (isFault(err, 'ManagedObjectNotFound')) return [];
      throw err;
    });
    const parents = devices.flatMap((d) => parentChain(d.backing));
    if (parents.some((f) => files.has(f))) holding.push(m.name);
  }
  return holding;
}

/** A disk backing's parent chain (`backing.parent`, nearest first): the files a child disk reads through. */
export function parentChain(backing: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  let p = backing?.parent as Record<string, unknown> | undefined;
  while (p && out.length < 64) {
    if (typeof p.fileName === 'string') out.push(p.fileName);
    p = p.parent as Record<string, unknown> | undefined;
  }
  return out;
}

async function planDestroy(obj: RecordedObject, ctx: HostContext<VsphereHost>): Promise<DestroyPlan> {
  const h = ctx.host;
  const found = await ownedSnapshot(h, obj);
  if (!found) return { outcome: 'absent' };
  const holding = await clonesOnIt(h, found.snapshot.ref, obj.name);
  if (holding.length) {
    throw new UnsafeOperation(`snapshot ${obj.name} of VM ${h.target.vm} is still the parent of linked clone ${holding.join(', ')}; it is left in place: remove the clones, then run \`storsweep cleanup\``, { operation: 'RemoveSnapshot_Task', target: obj.name });
  }
  return {
    outcome: 'remove',
    acts: `snapshot ${obj.name} (${found.snapshot.ref.value}) of VM ${h.target.vm}`,
    run: async () => {
      ctx.log(`removing snapshot ${obj.name} of VM ${h.target.vm}`);
      return (await h.client()).removeSnapshot(found.snapshot.ref);
    },
  };
}

export const snapshotObject: ObjectKind<VsphereHost> = {
  planDestroy,
  async destroy(obj, ctx) {
    const plan = await planDestroy(obj, ctx);
    return plan.outcome === 'absent' ? 'absent' : plan.run();
  },
  async find(ref, _sent, h) {
    const found = await ownedSnapshot(h, { name: ref.name, id: null });
    return found ? { ...ref, provider: 'vsphere', id: found.snapshot.ref.value, data: { vm: h.target.vm } } : null;
  },
};

export const templateSnapshot = vsphereOperation({
  name: SNAPSHOT_OPERATION,
  schema: snapshotArgs,
  async apply(a, ctx): Promise<CreatedObject> {
    const h = ctx.host;
    const c = await h.client();
    ctx.signal.throwIfAborted();
    const vm = await h.vm(a.vm);
    // a snapshot of the owned name is an earlier attempt's (find() takes it); never a second one
    if ((await c.snapshots(vm)).some((s) => s.name === a.name)) throw new UnsafeOperation(`VM ${a.vm} already has a snapshot named ${a.name}; not taking another`, { operation: SNAPSHOT_OPERATION, target: a.name });
    ctx.log(`taking snapshot ${a.name} of VM ${a.vm} (no memory, not quiesced) for linked clones`);
    const ref = await c.createSnapshot(vm, a.name, { description: 'storsweep: the base of this run\'s linked clones; removed at teardown', beforeSend: () => ctx.sent({ vm: a.vm }), signal: ctx.signal });
    return { kind: ctx.step.creates?.kind ?? 'snapshot', name: a.name, provider: 'vsphere', id: ref.value, data: { vm: a.vm } };
  },
  objects: { snapshot: snapshotObject },
  // read back: the template's snapshot tree has it, under its name
  async verify(a, created, ctx) {
    const found = await ownedSnapshot(ctx.host, { name: a.name, id: created.id });
    if (!found || found.snapshot.ref.value !== created.id) {
      throw new ProvisionedStateMismatch(`snapshot ${a.name} of VM ${a.vm} is not in the VM's snapshot tree`, { axis: 'vm.clone', asked: 'a snapshot of the template', got: found ? found.snapshot.ref.value : 'none', object: a.name });
    }
  },
  estimateSec: () => 5,
});

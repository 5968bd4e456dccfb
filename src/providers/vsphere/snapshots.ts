// The snapshot of the target's VM that the linked clones of a `vm.clone: linked` permutation hang on
// (operations/template-snapshot.ts). vSphere Web Services API reference:
// vim.VirtualMachine.createSnapshot (name, description, memory, quiesce; the task's result is the
// snapshot), vim.vm.Snapshot.remove (removeChildren false: this snapshot only, its children stay),
// vim.vm.SnapshotInfo.rootSnapshotList / vim.vm.SnapshotTree (name, snapshot, childSnapshotList),
// vim.vm.Snapshot.config ("The datastore paths for the virtual machine disks point to the head of
// the disk chain that represents the disk at this given snapshot").
import type { Ctx } from './datastores.ts';
import { isFault } from './fault.ts';
import { createSnapshotTask, removeSnapshotTask } from './methods.ts';
import { readProps } from './property.ts';
import type { MoRef } from './soap.ts';
import { waitForTask } from './task.ts';
import { arr, type VirtualDevice } from './types.ts';

export interface SnapshotNode {
  ref: MoRef;
  name: string;
}

interface TreeNode {
  snapshot?: MoRef;
  name?: string;
  childSnapshotList?: TreeNode[] | TreeNode;
}

/** Every snapshot of `vm` as the host shows it now, depth first (none: []). */
export async function snapshotsOf(ctx: Ctx, vm: MoRef): Promise<SnapshotNode[]> {
  const p = await readProps(ctx.rt, ctx.sc, vm, ['snapshot']);
  const info = p.snapshot as { rootSnapshotList?: TreeNode[] | TreeNode } | undefined;
  const out: SnapshotNode[] = [];
  const walk = (nodes: TreeNode[] | TreeNode | undefined): void => {
    for (const n of arr(nodes)) {
      if (n.snapshot && typeof n.name === 'string') out.push({ ref: n.snapshot, name: n.name });
      walk(n.childSnapshotList);
    }
  };
  walk(info?.rootSnapshotList);
  return out;
}

/** A snapshot without memory and without quiescing (a linked clone's read-only base); the snapshot made. */
export async function createSnapshot(ctx: Ctx, vm: MoRef, name: string, o: { description: string; beforeSend: () => void | Promise<void>; signal?: AbortSignal }): Promise<MoRef> {
  await o.beforeSend();
  const task = await createSnapshotTask(ctx.rt, vm, name, { description: o.description, memory: false, quiesce: false });
  return (await waitForTask(ctx.rt, ctx.sc, task, { host: ctx.endpoint, ...(o.signal ? { signal: o.signal } : {}) })) as MoRef;
}

/** This snapshot only (its children stay); 'absent' when the host no longer has it. */
export async function removeSnapshot(ctx: Ctx, snapshot: MoRef): Promise<'removed' | 'absent'> {
  try {
    await waitForTask(ctx.rt, ctx.sc, await removeSnapshotTask(ctx.rt, snapshot, false), { host: ctx.endpoint });
    return 'removed';
  } catch (err) {
    if (isFault(err, 'ManagedObjectNotFound')) return 'absent';
    throw err;
  }
}

/** The disk files the snapshot's config names: the heads of its disk chains, a linked clone's parents. */
export async function snapshotDiskFiles(ctx: Ctx, snapshot: MoRef): Promise<string[]> {
  const p = await readProps(ctx.rt, ctx.sc, snapshot, ['config.hardware.device']);
  return arr(p['config.hardware.device'] as VirtualDevice[] | undefined)
    .filter((d) => d._type === 'VirtualDisk')
    .map((d) => (typeof d.backing?.fileName === 'string' ? d.backing.fileName : ''))
    .filter((f) => f !== '');
}

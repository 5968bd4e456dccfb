// The VMs a `vm.count` permutation clones from the target's VM (operations/clone-vm.ts): made with
// CloneVM_Task, powered on, waited for until VMware Tools can run guest operations; removed with
// Destroy_Task once powered off. vSphere Web Services API reference: vim.VirtualMachine.clone
// ("Creates a clone of this virtual machine… If the virtual machine is used as a template, this
// method corresponds to the deploy command"; faults include DuplicateName, InvalidState,
// InvalidDatastore, FileFault), vim.VirtualMachine.CloneSpec (location, template, config,
// customization, powerOn, snapshot), vim.ManagedEntity.destroy (a powered-on VM fails with
// InvalidPowerState), vim.vm.GuestInfo.guestOperationsReady.
import type { Ctx } from './datastores.ts';
import { isFault } from './fault.ts';
import { cloneVMTask, destroyTask } from './methods.ts';
import { readProps } from './property.ts';
import type { MoRef } from './soap.ts';
import { waitForTask } from './task.ts';
import { powerOff, powerOn, waitForProperty } from './vms.ts';

export interface CloneOptions {
  /** the new VM's name (the run's owned name: the host's mark that it is ours) */
  name: string;
  /** called once the guards passed, right before CloneVM_Task goes out (the ledger's `sent`) */
  beforeSend: () => void | Promise<void>;
  signal?: AbortSignal;
  /**
   * A linked clone of this snapshot of the source (snapshots.ts): spec.snapshot, and
   * location.diskMoveType createNewChildDiskBacking — each disk a child of the snapshot's disk, in
   * the clone's folder (API reference, VirtualMachineRelocateDiskMoveOptions: "for a clone this
   * option is only valid when cloning from a snapshot"). Absent: a full clone.
   */
  snapshot?: MoRef;
}

/**
 * A full (or, given a snapshot, linked) clone of `source` in the source's folder and resource pool,
 * on the source's datastore (its system disk is not the disk under test: that goes on the
 * permutation's datastore later). Left powered off by the task (`powerOn: false`); powerOn() below starts it.
 */
export async function cloneVm(ctx: Ctx, source: MoRef, o: CloneOptions): Promise<MoRef> {
  const p = await readProps(ctx.rt, ctx.sc, source, ['parent', 'resourcePool']);
  const folder = p.parent as MoRef | undefined;
  const pool = p.resourcePool as MoRef | undefined;
  if (!folder) throw new Error(`VM ${source.value} on ${ctx.endpoint} reports no parent folder to clone into`);
  // VirtualMachineCloneSpec and RelocateSpec in WSDL order; RelocateSpec.pool: the source's (a template has none)
  const location = { ...(o.snapshot ? { diskMoveType: 'createNewChildDiskBacking' } : {}), ...(pool ? { pool } : {}) };
  const spec = { location, template: false, powerOn: false, ...(o.snapshot ? { snapshot: o.snapshot } : {}) };
  await o.beforeSend();
  const task = await cloneVMTask(ctx.rt, source, folder, o.name, spec);
  return (await waitForTask(ctx.rt, ctx.sc, task, { host: ctx.endpoint, ...(o.signal ? { signal: o.signal } : {}) })) as MoRef;
}

/** Powered on, then waited for until Tools report guest operations ready (GuestInfo.guestOperationsReady). */
export async function startClone(ctx: Ctx, vm: MoRef, o: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
  await powerOn(ctx, vm);
  const ready = (v: unknown): v is true => v === true || v === 'true';
  await waitForProperty(ctx, vm, 'guest.guestOperationsReady', ready, { timeoutMs: o.timeoutMs, ...(o.signal ? { signal: o.signal } : {}) });
}

/** Powered off, then destroyed with its files; 'absent' when the host no longer has it. */
export async function destroyVm(ctx: Ctx, vm: MoRef): Promise<'removed' | 'absent'> {
  try {
    await powerOff(ctx, vm);
    await waitForTask(ctx.rt, ctx.sc, await destroyTask(ctx.rt, vm), { host: ctx.endpoint });
    return 'removed';
  } catch (err) {
    if (isFault(err, 'ManagedObjectNotFound')) return 'absent';
    throw err;
  }
}

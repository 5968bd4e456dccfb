// New-VM: a `vm.count` member VM (vm-count.ts) on its differencing system disk, started, and waited
// for until PowerShell Direct answers in it (the guest's Storage cmdlets run: the member's disk can
// then be found there). Its owned name is its mark: teardown turns off and removes only a VM that
// the host, read at that moment, shows with exactly that name, and never one of two VMs sharing it
// (Hyper-V allows duplicate VM names). Remove-VM leaves the VM's virtual hard disks in place
// (Learn, "Delete a virtual machine": the VHDs are kept); the run's VHDX rows remove those next.
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { UnsafeOperation } from '../../../errors.ts';
import type { HostContext, RecordedObject } from '../../../contract/operation.ts';
import type { CreatedObject, OwnedObjectRef } from '../../../contract/provider.ts';
import { listGuestDisksCall } from '../guest-disk.ts';
import { runCalls } from '../powershell.ts';
import { checkHyperv, HYPERV_EXPECTED, isHypervValue } from '../validate.ts';
import { getDiffVhdCall, listVmStatesCall, newVmCall, removeVmCall, startVmCall, stopVmCall } from '../vm-calls.ts';
import { hypervOperation, made, type HypervHost } from '../host.ts';
import { HYPERV_VM_MEMORY } from '../vm-template.ts';

/** how long a member may take, once started, until PowerShell Direct answers in it (a sysprepped guest's first boot) */
export const MEMBER_READY_TIMEOUT_MS = 10 * 60_000;
const READY_POLL_MS = 500;

const owned = z.string().refine((v) => isHypervValue('ownedName', v), { error: `expected ${HYPERV_EXPECTED.ownedName}` });

/** The VMs on the host with exactly this name (Hyper-V compares VM names without case). */
async function vmsNamed(h: HypervHost, name: string): Promise<Record<string, unknown>[]> {
  return (await runCalls(h.runner, [listVmStatesCall()])).filter((v) => typeof v.Name === 'string' && v.Name.toLowerCase() === name.toLowerCase());
}

/** Until the guest's Storage cmdlets answer over PowerShell Direct (the VM is up and accepts the credential). */
async function waitForGuest(h: HypervHost, name: string, signal: AbortSignal | undefined): Promise<void> {
  const until = Date.now() + MEMBER_READY_TIMEOUT_MS;
  for (;;) {
    signal?.throwIfAborted();
    try {
      await h.inGuest(name, [listGuestDisksCall()]);
      return;
    } catch (err) {
      if (Date.now() > until) throw new UnsafeOperation(`${h.t.host}: PowerShell Direct did not answer in ${name} within ${MEMBER_READY_TIMEOUT_MS / 1000} s of Start-VM`, { operation: 'Invoke-Command', target: name }, { cause: err });
    }
    await delay(READY_POLL_MS, undefined, signal ? { signal } : {});
  }
}

export const newVm = hypervOperation({
  name: 'New-VM',
  schema: z.strictObject({ name: owned, vhdPath: z.string().min(1), generation: z.literal(2), memoryStartupBytes: z.number().int().min(HYPERV_VM_MEMORY.min).max(HYPERV_VM_MEMORY.max), switchName: z.string().refine((v) => isHypervValue('vmName', v)).optional() }),
  async apply(a, ctx) {
    const h = ctx.host;
    const vhdPath = h.ownPath(a.vhdPath, 'New-VM');
    if ((await vmsNamed(h, a.name)).length) throw new UnsafeOperation(`${h.t.host}: a VM named ${a.name} already exists; this run did not make it, and will not make a second of that name`, { operation: 'New-VM', target: a.name });
    const [vhd] = await runCalls(h.runner, [getDiffVhdCall(vhdPath)]);
    if (vhd?.VhdType !== 'Differencing') throw new UnsafeOperation(`${h.t.host}: ${vhdPath} is no differencing disk (${String(vhd?.VhdType)}); a member boots a child of the template only`, { operation: 'New-VM', target: vhdPath });
    ctx.log(`creating VM ${a.name} (generation ${a.generation}) on ${vhdPath}`);
    await ctx.sent({ name: a.name, vhdPath });
    // one PowerShell process: Start-VM runs only if New-VM succeeded ($ErrorActionPreference = 'Stop')
    await runCalls(h.runner, [newVmCall({ ...a, vhdPath }), startVmCall(a.name)]);
    await waitForGuest(h, a.name, ctx.signal);
    ctx.log(`${a.name} is running; PowerShell Direct answers`);
    return made(ctx.step, a.name, { name: a.name, vhdPath });
  },
  objects: { vm: { destroy: removeVm, find: findVm } },
  // made, started and booted: a sysprepped guest's first boot is the long part
  estimateSec: () => 60,
});

async function removeVm(obj: RecordedObject, ctx: HostContext<HypervHost>): Promise<'removed' | 'absent'> {
  const h = ctx.host;
  const name = checkHyperv('ownedName', obj.name, 'owned name');
  if (obj.data.name !== undefined && obj.data.name !== name) throw new UnsafeOperation(`${h.t.host}: the ledger row ${name} records the VM ${JSON.stringify(obj.data.name)}; refusing to remove either`, { operation: 'Remove-VM', target: name });
  const here = await vmsNamed(h, name);
  if (here.length === 0) return 'absent';
  if (here.length > 1) return h.keepOpen(name, `${here.length} VMs are named ${name}; cannot tell which one this run made — remove the right one by hand (Get-VM | Select-Object Name, Id)`);
  // one PowerShell process: Remove-VM runs only once Stop-VM turned it off
  await runCalls(h.runner, [...(here[0]!.State !== 'Off' ? [stopVmCall(name)] : []), removeVmCall(name)]);
  ctx.log(`turned off and removed VM ${name}`);
  return 'removed';
}

async function findVm(ref: OwnedObjectRef, _sent: Record<string, unknown> | undefined, h: HypervHost): Promise<CreatedObject | null> {
  const here = await vmsNamed(h, checkHyperv('ownedName', ref.name, 'owned name'));
  return here.length === 1 ? { ...ref, provider: 'hyperv', id: ref.name, data: { name: ref.name } } : null;
}

// New-VHD -Differencing: a `vm.count` member's system disk, a child of the inventory's template VHDX
// (vm-count.ts), directly in one of the inventory's volume folders with the member's owned name.
// Removed at teardown as any VHDX of the run (new-vhd.ts, kind `vhdx`: by its exact path, only when
// it carries the owned name); the template itself is never an object of the run and never removed.
//
// The template is refused when a running VM has it attached: a running VM writes its disk, and a
// parent that changes breaks every child made of it (the child records its parent's identity: Learn
// IVMHardDisk::Parent, VM_E_PARENT_CHILD_ID_MISMATCH "does not have the same ID as the child disk
// image"). Children of others do not stop us: a parent may have many children as long as nothing
// writes it, and this step only reads it. A child's format is its parent's: a .vhdx child needs a
// VHDX parent (New-VHD: "the extension of -Path selects the format"; Generation 2 VMs boot VHDX only).
import { z } from 'zod';
import { UnsafeOperation } from '../../../errors.ts';
import { runCalls } from '../powershell.ts';
import { checkHyperv } from '../validate.ts';
import { DRIVE_PROPS } from '../vhd.ts';
import { getDiffVhdCall, listVmStatesCall, newDiffVhdCall } from '../vm-calls.ts';
import { hypervOperation, made, samePath, type HypervHost } from '../host.ts';

const vhdxPath = z.string().min(1);

/** The template as Hyper-V shows it now, refused where a child of it could break or could not be made. */
export async function checkTemplate(h: HypervHost, parentPath: string, op: string): Promise<Record<string, unknown>> {
  const parent = checkHyperv('vhdxPath', parentPath, 'template vhdxPath');
  const [vhd] = await runCalls(h.runner, [getDiffVhdCall(parent)]);
  if (!vhd) throw new UnsafeOperation(`${h.t.host}: Get-VHD reports nothing for the template ${parent}`, { operation: op, target: parent });
  if (vhd.VhdFormat !== 'VHDX') throw new UnsafeOperation(`${h.t.host}: the template ${parent} is a ${String(vhd.VhdFormat)} disk; a .vhdx differencing child needs a VHDX parent (and a Generation 2 VM boots VHDX only)`, { operation: op, target: parent });
  const running = (await runCalls(h.runner, [listVmStatesCall()])).filter((v) => v.State === 'Running' && typeof v.Name === 'string').map((v) => v.Name as string);
  if (running.length) {
    // a VM's name comes from the host and travels as JSON data, never as PowerShell source
    const drives = await runCalls(h.runner, running.map((vm) => ({ cmdlet: 'Get-VMHardDiskDrive' as const, params: { VMName: vm }, select: DRIVE_PROPS })));
    const holders = drives.filter((d) => samePath(d.Path, parent)).map((d) => String(d.VMName));
    if (holders.length) throw new UnsafeOperation(`${h.t.host}: the template ${parent} is attached to the running VM ${holders.join(', ')}; a disk a running VM writes cannot be a parent (its children would no longer match it). Shut that VM down or detach the template`, { operation: op, target: parent });
  }
  return vhd;
}

export const newDiffVhd = hypervOperation({
  name: 'New-VHD -Differencing',
  schema: z.strictObject({ path: vhdxPath, parentPath: vhdxPath }),
  async apply(a, ctx) {
    const h = ctx.host;
    const path = h.ownPath(a.path, 'New-VHD -Differencing');
    const template = await checkTemplate(h, a.parentPath, 'New-VHD -Differencing');
    ctx.log(`creating differencing VHDX ${path} of the template ${a.parentPath}`, { path });
    await ctx.sent({ path, parentPath: a.parentPath });
    const [vhd] = await runCalls(h.runner, [newDiffVhdCall(path, a.parentPath)]);
    if (!vhd || !samePath(vhd.ParentPath, a.parentPath)) throw new UnsafeOperation(`${h.t.host}: New-VHD made ${path} with parent ${JSON.stringify(vhd?.ParentPath ?? null)}, not the template ${a.parentPath}`, { operation: 'New-VHD -Differencing', target: path });
    return made(ctx.step, path, { path, parentPath: a.parentPath, vhd, template: { Size: template.Size ?? null } });
  },
  estimateSec: () => 3,
});

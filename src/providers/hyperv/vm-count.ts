// `vm.count` on Hyper-V (issue 32, "on Hyper-V, differencing disks of a template VHDX"): a
// permutation with count N runs its workload on N VMs at once. Each member k is a VM made for the
// permutation: a differencing disk of the inventory's template VHDX (a sysprepped Windows guest
// disk) as its system disk, a Generation 2 VM on it, then the permutation's own VHDX attached as the
// member's measured disk, found in its own guest over PowerShell Direct (by VM name). The template
// is only ever a parent: read, never written (a differencing disk's parent must not change while it
// has children: the child records the parent's identity, and a changed parent no longer matches it,
// "VM_E_PARENT_CHILD_ID_MISMATCH", Learn IVMHardDisk::Parent; Msvm_ImageManagementService
// SetParentVirtualHardDisk warns of "data corruption" when a parent is not identical to the original).
import type { Axes, AxisValue } from '../../contract/axis.ts';
import type { AxisDiagnostic, PlannedStep } from '../../contract/provider.ts';
import { InvalidArgument } from '../../errors.ts';
import { memberName, VM_COUNT_AXIS, VM_COUNT_AXIS_SPEC, VM_COUNT_EXPECTED } from '../vm-count-axis.ts';
import type { HypervVmTemplate } from './config.ts';
import { newDiffVhd, newVm } from './operations/index.ts';
import { joinWin } from './validate.ts';

/** The axes a Hyper-V `vm.count` permutation cannot take yet, and why (refused by the planner, so at the value's line by `validate`). */
const NOT_WITH_VM_COUNT: Readonly<Record<string, string>> = {
  'guest.writeCache': 'no value: the guest-settings step runs in the target\'s VM only, not yet in each member\'s',
  'guest.writeCacheFlushing': 'no value: the guest-settings step runs in the target\'s VM only, not yet in each member\'s',
};

/** The permutation's VM count, or undefined when it has no `vm.count` axis; refused where a member cannot be made. */
export function hypervVmCountOf(axes: Axes, template: HypervVmTemplate | undefined, host: string): number | undefined {
  const v = axes[VM_COUNT_AXIS];
  if (v === undefined) return undefined;
  if (!VM_COUNT_AXIS_SPEC.accepts!(v)) throw new InvalidArgument(`axis ${VM_COUNT_AXIS} = ${JSON.stringify(v)}: expected ${VM_COUNT_EXPECTED}`, { name: VM_COUNT_AXIS, value: String(v) });
  if (!template) throw new InvalidArgument(`axis ${VM_COUNT_AXIS} = ${v}: ${noTemplate(host)}`, { name: VM_COUNT_AXIS, value: String(v) });
  for (const [axis, why] of Object.entries(NOT_WITH_VM_COUNT)) {
    if (axes[axis] !== undefined) throw new InvalidArgument(`axis ${axis} = ${JSON.stringify(axes[axis])}: expected ${why} with ${VM_COUNT_AXIS}`, { name: axis, value: String(axes[axis]) });
  }
  if (axes['disk.format'] === 'passthrough') throw new InvalidArgument(`axis disk.format = "passthrough": expected a VHDX format with ${VM_COUNT_AXIS} (one host disk cannot be N VMs' own disks)`, { name: 'disk.format', value: 'passthrough' });
  return v as number;
}

const noTemplate = (host: string) =>
  `target "${host}" names no vmTemplate; on Hyper-V each of the N VMs is made from a template VHDX (a sysprepped Windows guest disk) as a differencing disk: add vmTemplate: {vhdxPath, generation, memoryStartupBytes} to the target`;

/** What `validate` says at each `vm.count` value of a Hyper-V target without a template. */
export function hypervVmCountDiagnostics(template: HypervVmTemplate | undefined, values: readonly AxisValue[], name: string): AxisDiagnostic[] {
  return template ? [] : values.map((_, index) => ({ axis: VM_COUNT_AXIS, index, message: noTemplate(name) }));
}

/**
 * The N members' steps, each VM after the other: its system disk (a differencing child of the
 * template, in the permutation's volume folder), the VM on it (started, waited for until PowerShell
 * Direct answers), then `diskSteps` (the VHDX, attach, guest-disk steps a one-VM permutation has,
 * for this VM). Torn down in reverse: each measured disk, then its VM, then its system disk.
 */
export function hypervMemberSteps(count: number, template: HypervVmTemplate, folder: string, prefix: string, diskSteps: (vmName: string, base: string, member: number) => PlannedStep[]): PlannedStep[] {
  const steps: PlannedStep[] = [];
  for (let k = 1; k <= count; k++) {
    const name = memberName(prefix, k);
    const osPath = joinWin(folder, `${name}-os.vhdx`);
    steps.push(newDiffVhd.step({ step: `os-vhdx vm${k}`, arguments: { path: osPath, parentPath: template.vhdxPath }, destructive: false, creates: { kind: 'vhdx', name: `${name}-os` } }));
    const vm = { name, vhdPath: osPath, generation: template.generation, memoryStartupBytes: template.memoryStartupBytes, ...(template.switchName !== undefined ? { switchName: template.switchName } : {}) };
    steps.push(newVm.step({ step: `vm vm${k}`, arguments: vm, destructive: false, creates: { kind: 'vm', name } }));
    for (const s of diskSteps(name, name, k)) steps.push({ ...s, step: `${s.step} vm${k}` });
  }
  return steps;
}

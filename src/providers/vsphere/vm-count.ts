// The `vm.count` axis (issue 32): how far does a datastore scale with VMs? A permutation with
// count N runs its workload on N VMs at once. Every one of them is a full clone of the target's VM
// made for the permutation (the target's own VM is the template, never measured in such a
// permutation: docs/decisions/new-vm-count.md), each with its own disk of the permutation's format
// and size on the permutation's datastore, found in its own guest. Clones are reached through
// VMware Tools guest operations only (a clone's network address is in no inventory), in a Linux
// guest (the only guest whose clone the lab can stand in for today).
import type { AxisDiagnostic, PlannedStep } from '../../contract/provider.ts';
import type { Axes, AxisSpec, AxisValue } from '../../contract/axis.ts';
import { InvalidArgument } from '../../errors.ts';
import { MAX_VM_COUNT } from '../../limits.ts';
import { cloneVm } from './operations/clone-vm.ts';
import type { VsphereStepTarget } from './config.ts';

export const VM_COUNT_AXIS = 'vm.count';
export const VM_COUNT_EXPECTED = `a whole number of VMs from 1 to ${MAX_VM_COUNT}`;

export const VM_COUNT_AXIS_SPEC: AxisSpec = {
  name: VM_COUNT_AXIS,
  expected: VM_COUNT_EXPECTED,
  accepts: (v) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_VM_COUNT,
};

/** The axes a `vm.count` permutation cannot take yet, and why (refused by the planner, so at the value's line by `validate`). */
const NOT_WITH_VM_COUNT: Readonly<Record<string, string>> = {
  'disk.controller': 'no value: each clone\'s disk goes on its default controller (a controller step per clone is not planned yet)',
  'guest.scheduler': 'no value: guest settings are applied in the target\'s guest only, not yet in each clone\'s',
  'guest.queueDepth': 'no value: guest settings are applied in the target\'s guest only, not yet in each clone\'s',
};

/** The permutation's VM count, or undefined when it has no `vm.count` axis. */
export function vmCountOf(axes: Axes): number | undefined {
  const v = axes[VM_COUNT_AXIS];
  if (v === undefined) return undefined;
  if (!VM_COUNT_AXIS_SPEC.accepts!(v)) throw new InvalidArgument(`axis ${VM_COUNT_AXIS} = ${JSON.stringify(v)}: expected ${VM_COUNT_EXPECTED}`, { name: VM_COUNT_AXIS, value: String(v) });
  for (const [axis, why] of Object.entries(NOT_WITH_VM_COUNT)) {
    if (axes[axis] !== undefined) throw new InvalidArgument(`axis ${axis} = ${JSON.stringify(axes[axis])}: expected ${why} with ${VM_COUNT_AXIS}`, { name: axis, value: String(axes[axis]) });
  }
  const format = String(axes['disk.format'] ?? '');
  if (format.startsWith('rdm')) throw new InvalidArgument(`axis disk.format = ${JSON.stringify(format)}: expected a flat disk format with ${VM_COUNT_AXIS} (one LUN cannot be N VMs' own disks)`, { name: 'disk.format', value: format });
  return v as number;
}

/** A clone's owned name: the permutation's prefix and its member number. */
export function memberName(prefix: string, index: number): string {
  return `${prefix}-vm${index}`;
}

/**
 * The N members' steps, each VM after the other: its clone, then (`diskSteps`, the same disk and
 * guest-disk steps a one-VM permutation has, planned for the clone) its disk and the guest-disk step
 * that finds it, which says which member it measures. Torn down in reverse: each disk before its VM.
 */
export function memberSteps(count: number, target: VsphereStepTarget, prefix: string, diskSteps: (member: VsphereStepTarget, memberPrefix: string) => PlannedStep[]): PlannedStep[] {
  const steps: PlannedStep[] = [];
  for (let k = 1; k <= count; k++) {
    const name = memberName(prefix, k);
    const disks = diskSteps({ ...target, vm: name }, name);
    // each clone's disk under test, where it lands: the clone step counts it with the clone's own room
    const own = disks.find((s) => s.operation === 'ReconfigVM_Task' && typeof s.arguments.sizeBytes === 'number' && typeof s.arguments.datastore === 'string');
    const diskRoom = own ? { diskDatastore: String(own.arguments.datastore), diskBytes: Number(own.arguments.sizeBytes) } : {};
    steps.push(cloneVm.step({ step: `clone vm${k}`, arguments: { host: target.host, vm: target.vm, datacenter: target.datacenter, name, member: k, count, ...diskRoom, clone: 'full' }, destructive: false, creates: { kind: 'vm', name } }));
    for (const s of disks) {
      const member = s.step === 'guest-disk' ? { arguments: { ...s.arguments, member: k } } : {};
      steps.push({ ...s, step: `${s.step} vm${k}`, ...member });
    }
  }
  return steps;
}

/**
 * What the target's inventory entry rules out for `vm.count` (at each value's line): a guest over
 * SSH (a clone's address is in no inventory: clones are reached through guest operations) and a
 * Windows guest (not yet). Which providers take the axis at all is theirs to declare: only vSphere does.
 */
export function vmCountDiagnostics(guest: { via?: string; os?: string }, values: readonly AxisValue[], name: string): AxisDiagnostic[] {
  const why =
    guest.via !== 'tools'
      ? `target "${name}" reaches its guest over SSH; ${VM_COUNT_AXIS} clones the VM, and a clone's guest is reached through VMware Tools guest operations only (guest.via: tools), its address being in no inventory`
      : guest.os === 'windows'
        ? `target "${name}" has a Windows guest; ${VM_COUNT_AXIS} clones Linux guests only for now`
        : undefined;
  return why ? values.map((_, index) => ({ axis: VM_COUNT_AXIS, index, message: why })) : [];
}

// The `vm.count` axis (issue 32): how far does a datastore scale with VMs? A permutation with
// count N runs its workload on N VMs at once. Every one of them is a full clone of the target's VM
// made for the permutation (the target's own VM is the template, never measured in such a
// permutation: docs/decisions/0091-vm-count.md), each with its own disk of the permutation's format
// and size on the permutation's datastore, found in its own guest. Clones are reached through
// VMware Tools guest operations only (a clone's network address is in no inventory), in a Linux
// guest (the only guest whose clone the lab can stand in for today).
// Or, when the target names existing VMs (`scaleVms`), count N measures the first N of them instead
// (docs/decisions/0094-named-scale-vms.md): no clone is made; each named VM gets only its own disk,
// which teardown removes; the VM itself is never powered off, reconfigured otherwise or destroyed.
import type { AxisDiagnostic, PlannedStep, TargetDiagnostic } from '../../contract/provider.ts';
import type { Axes, AxisSpec, AxisValue } from '../../contract/axis.ts';
import { InvalidArgument } from '../../errors.ts';
import { memberName, VM_COUNT_AXIS, VM_COUNT_AXIS_SPEC, VM_COUNT_EXPECTED } from '../vm-count-axis.ts';
import { cloneVm } from './operations/clone-vm.ts';
import { snapshotName, templateSnapshot } from './operations/template-snapshot.ts';
import type { VsphereStepTarget } from './config.ts';

export { VM_COUNT_AXIS, VM_COUNT_AXIS_SPEC, VM_COUNT_EXPECTED, memberName };

/**
 * `vm.clone`: how the members are cloned. `full` copies the template's disks; `linked` takes a
 * snapshot of the template (the run's own, operations/template-snapshot.ts) and makes each member a
 * child of it (createNewChildDiskBacking): the two can be compared as an axis. Only with `vm.count`.
 */
export const VM_CLONE_AXIS = 'vm.clone';
export const VM_CLONE_KINDS = ['full', 'linked'] as const;
export type CloneKind = (typeof VM_CLONE_KINDS)[number];
export const VM_CLONE_AXIS_SPEC: AxisSpec = { name: VM_CLONE_AXIS, values: VM_CLONE_KINDS };

/** The permutation's clone kind (`full` when it has no `vm.clone` axis); refused without `vm.count`. */
export function cloneKindOf(axes: Axes, count: number | undefined): CloneKind {
  const v = axes[VM_CLONE_AXIS];
  if (v === undefined) return 'full';
  if (!VM_CLONE_KINDS.includes(v as CloneKind)) throw new InvalidArgument(`axis ${VM_CLONE_AXIS} = ${JSON.stringify(v)}: expected one of ${VM_CLONE_KINDS.join(', ')}`, { name: VM_CLONE_AXIS, value: String(v) });
  if (count === undefined) throw new InvalidArgument(`axis ${VM_CLONE_AXIS} = ${JSON.stringify(v)}: expected no value without ${VM_COUNT_AXIS} (it says how the measured VMs are cloned)`, { name: VM_CLONE_AXIS, value: String(v) });
  return v as CloneKind;
}

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

/**
 * The N members' steps, each VM after the other: its clone (none for a VM the inventory names),
 * then (`diskSteps`, the same disk and guest-disk steps a one-VM permutation has, planned for the
 * member) its disk and the guest-disk step that finds it, which says which member it measures.
 * Torn down in reverse: each disk before its VM. A named VM's owned names (its disk's) carry the
 * member's prefix as a clone's do. Linked clones come after the snapshot they hang on, so the
 * snapshot goes after all of them; VMs the inventory names are never cloned, so never linked.
 */
export function memberSteps(count: number, target: VsphereStepTarget, prefix: string, diskSteps: (member: VsphereStepTarget, memberPrefix: string) => PlannedStep[], clone: CloneKind = 'full'): PlannedStep[] {
  const named = target.scaleVms;
  if (named && count > named.length) throw new InvalidArgument(`axis ${VM_COUNT_AXIS} = ${count}: expected at most ${named.length}, the VMs the target names in scaleVms`, { name: VM_COUNT_AXIS, value: String(count) });
  if (named && clone === 'linked') throw new InvalidArgument(`axis ${VM_CLONE_AXIS} = "linked": expected no linked clones with scaleVms (the VMs the target names are measured, never cloned)`, { name: VM_CLONE_AXIS, value: clone });
  const steps: PlannedStep[] = [];
  const snapshot = clone === 'linked' ? snapshotName(prefix) : undefined;
  if (snapshot) steps.push(templateSnapshot.step({ step: 'snapshot', arguments: { host: target.host, vm: target.vm, datacenter: target.datacenter, name: snapshot }, destructive: false, creates: { kind: 'snapshot', name: snapshot } }));
  for (let k = 1; k <= count; k++) {
    const name = memberName(prefix, k);
    const vm = named ? named[k - 1]! : name;
    const how = snapshot ? { clone: 'linked' as const, snapshot } : { clone: 'full' as const };
    const disks = diskSteps({ ...target, vm }, name);
    // each clone's disk under test, where it lands: the clone step counts it with the clone's own room
    const own = disks.find((s) => s.operation === 'ReconfigVM_Task' && typeof s.arguments.sizeBytes === 'number' && typeof s.arguments.datastore === 'string');
    const diskRoom = own ? { diskDatastore: String(own.arguments.datastore), diskBytes: Number(own.arguments.sizeBytes) } : {};
    if (!named) steps.push(cloneVm.step({ step: `clone vm${k}`, arguments: { host: target.host, vm: target.vm, datacenter: target.datacenter, name, member: k, count, ...diskRoom, ...how }, destructive: false, creates: { kind: 'vm', name } }));
    for (const s of disks) {
      const member = s.step === 'guest-disk' ? { arguments: { ...s.arguments, member: k } } : {};
      steps.push({ ...s, step: `${s.step} vm${k}`, ...member });
    }
  }
  return steps;
}

/** The VMs a permutation's steps measure that it did not make: the named VMs (`scaleVms`) its members use. */
export function namedMemberVms(steps: readonly PlannedStep[]): string[] {
  const made = new Set(steps.filter((s) => s.creates?.kind === 'vm').map((s) => s.creates!.name));
  const vms = steps.filter((s) => s.arguments.member !== undefined && typeof s.arguments.vm === 'string' && !made.has(s.arguments.vm)).map((s) => s.arguments.vm as string);
  return [...new Set(vms)];
}

/** What an owned name looks like: a VM the inventory names must never look like one of ours. */
const OWNED_LOOKING = /^ss-/;

/**
 * The inventory's `scaleVms` (at its own lines): each VM once, none named like an object storsweep
 * makes, and a guest the named VMs can be reached in (guest operations, Linux: as for clones).
 */
export function scaleVmsDiagnostics(t: { scaleVms?: readonly string[] | undefined; guest: { via?: string; os?: string } }): TargetDiagnostic[] {
  const list = t.scaleVms;
  if (!list) return [];
  const out: TargetDiagnostic[] = [];
  const seen = new Map<string, number>();
  for (const [i, vm] of list.entries()) {
    const first = seen.get(vm);
    if (first !== undefined) out.push({ path: ['scaleVms', i], message: `"${vm}" is named twice (also scaleVms[${first}]); each VM of a vm.count permutation must be a VM of its own, measuring its own disk` });
    else seen.set(vm, i);
    if (OWNED_LOOKING.test(vm)) out.push({ path: ['scaleVms', i], message: `"${vm}" starts with "ss-", the prefix of the objects storsweep makes and removes; a VM the inventory names is never ours: rename it, or leave it out` });
  }
  if (t.guest.via !== 'tools') out.push({ path: ['scaleVms'], message: 'the VMs in scaleVms are reached through VMware Tools guest operations only (guest.via: tools): their addresses are in no inventory' });
  else if (t.guest.os === 'windows') out.push({ path: ['scaleVms'], message: `${VM_COUNT_AXIS} measures Linux guests only for now; this target's guest is Windows` });
  return out;
}

/**
 * What the target's inventory entry rules out for `vm.count` (at each value's line): a guest over
 * SSH (a clone's address is in no inventory: clones are reached through guest operations) and a
 * Windows guest (not yet). Which providers take the axis at all is theirs to declare: vSphere and Hyper-V (hyperv/vm-count.ts) do.
 */
export function vmCountDiagnostics(guest: { via?: string; os?: string }, values: readonly AxisValue[], name: string, scaleVms?: readonly string[]): AxisDiagnostic[] {
  // more VMs than the inventory names: at the value's line and at the list's
  const tooMany = scaleVms
    ? values.flatMap((v, index) => (typeof v === 'number' && v > scaleVms.length ? [{ axis: VM_COUNT_AXIS, index, inventory: ['scaleVms'], message: `target "${name}" names ${scaleVms.length} VM${scaleVms.length === 1 ? '' : 's'} in scaleVms (${scaleVms.join(', ')}); ${VM_COUNT_AXIS} ${v} needs as many: allowed values 1 to ${scaleVms.length}` }] : []))
    : [];
  const why =
    guest.via !== 'tools'
      ? `target "${name}" reaches its guest over SSH; ${VM_COUNT_AXIS} clones the VM, and a clone's guest is reached through VMware Tools guest operations only (guest.via: tools), its address being in no inventory`
      : guest.os === 'windows'
        ? `target "${name}" has a Windows guest; ${VM_COUNT_AXIS} clones Linux guests only for now`
        : undefined;
  return why ? values.map((_, index) => ({ axis: VM_COUNT_AXIS, index, message: why })) : tooMany;
}

// The `vm.count` axis as every provider that takes it declares it (issue 32): how many VMs run the
// permutation's workload at once. Each provider makes its members its own way (vSphere: full clones,
// vsphere/vm-count.ts; Hyper-V: VMs on differencing disks of a template VHDX, hyperv/vm-count.ts).
import type { AxisSpec } from '../contract/axis.ts';
import { MAX_VM_COUNT } from '../limits.ts';

export const VM_COUNT_AXIS = 'vm.count';
export const VM_COUNT_EXPECTED = `a whole number of VMs from 1 to ${MAX_VM_COUNT}`;

export const VM_COUNT_AXIS_SPEC: AxisSpec = {
  name: VM_COUNT_AXIS,
  expected: VM_COUNT_EXPECTED,
  accepts: (v) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_VM_COUNT,
};

/** A member VM's owned name: the permutation's prefix and its member number (the host's mark that it is ours). */
export function memberName(prefix: string, index: number): string {
  return `${prefix}-vm${index}`;
}

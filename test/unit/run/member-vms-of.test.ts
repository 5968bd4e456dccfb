// Which VMs' guests a killed vm.count permutation may have left a tool running in (run/vm-members.ts
// memberVmsOf), from its live ledger rows: its clones (vm rows created) and the VMs the inventory
// names (scaleVms) that hold a member disk of the run; never a VM with no disk of ours, never the
// same VM twice. Resume and cleanup stop the tool there before the disk goes
// (test/integration/vm-count-named-kill.test.ts).
import { describe, expect, it } from 'vitest';
import type { LedgerRow, LedgerState } from '../../../src/results/port.ts';
import { memberVmsOf } from '../../../src/run/vm-members.ts';

let seq = 0;
const row = (kind: string, name: string, state: LedgerState, data: Record<string, unknown> = {}): LedgerRow => ({ seq: ++seq, permutationId: 'p1', provider: 'vsphere', kind, name, objectId: null, data, state, error: null });

describe('memberVmsOf', () => {
  it('names the clones created and the named VMs holding a created member disk, each once', () => {
    expect(
      memberVmsOf([
        row('vm', 'ss-r1-p1-vm1', 'created'),
        row('disk', 'ss-r1-p1-vm1-disk', 'created', { vm: 'ss-r1-p1-vm1' }),
        row('disk', 'ss-r1-p2-vm1-disk', 'created', { vm: 'load-a' }),
        row('disk', 'ss-r1-p2-vm2-disk', 'created', { vm: 'load-b' }),
      ]),
    ).toEqual(['ss-r1-p1-vm1', 'load-a', 'load-b']);
  });

  it('leaves out a named VM whose disk was never created, a clone not yet made, and a disk of the target\'s own VM', () => {
    expect(
      memberVmsOf([
        row('vm', 'ss-r1-p1-vm2', 'sent'),
        row('disk', 'ss-r1-p2-vm3-disk', 'intent', { vm: 'load-c' }),
        row('disk', 'ss-r1-p3-disk', 'created', { vm: 'bench-vm' }),
      ]),
    ).toEqual([]);
  });
});

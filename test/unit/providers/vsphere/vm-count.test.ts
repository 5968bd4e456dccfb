// vm.count offline (issue 32): validate refuses what the planner would, at the value's
// file:line:col with the allowed values — a count that is not a whole number from 1 to 64, a target
// whose guest is reached over SSH (a clone's address is in no inventory), a provider that does not
// clone (the ESXi shell), an RDM (one LUN cannot be N VMs' own disks). A count of N plans N clones
// of the target's VM, each followed by its own disk on the permutation's datastore and the
// guest-disk step that finds it in that clone's guest; teardown (reverse order) removes each disk
// before its VM. The run side is test/integration/vm-scaling.test.ts.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../../src/config/index.ts';
import { checkPlaybookAgainst } from '../../../../src/plan/check.ts';
import { buildPlan } from '../../../../src/plan/plan.ts';
import { moduleOf } from '../../../../src/providers/index.ts';
import { diagnosticsOf } from '../../../helpers/config-errors.ts';

const f = (name: string) => path.join('test/fixtures/config', name);
const inventory = () => loadInventory(f('inv-vm-count.yaml'), { VM_COUNT_GUEST_PASSWORD: 'x4x-secret' });

/** validate's diagnostics (file:line:col lines) for a playbook it must refuse */
const refused = (pbName: string): string[] => diagnosticsOf(() => checkPlaybookAgainst(loadPlaybook(f(pbName)), inventory()));

function plan(pbName: string) {
  const pb = loadPlaybook(f(pbName)).playbook;
  const target = inventory().inventory.targets[pb.target as string]!;
  return buildPlan(pb, pb.target, { runId: 'r1', provider: target.provider, planSteps: moduleOf(target).planner(target) });
}

describe('vm.count: validate', () => {
  it('takes a whole number of VMs from 1 to 64 on a vSphere target whose guest is reached through guest operations', () => {
    expect(() => checkPlaybookAgainst(loadPlaybook(f('pb-vm-count.yaml')), inventory())).not.toThrow();
  });

  it('refuses 0, 2.5 and 65 at their line:col, with the rule', () => {
    const F = f('pb-vm-count-values.yaml');
    const rule = 'a whole number of VMs from 1 to 64';
    expect(refused('pb-vm-count-values.yaml')).toEqual([
      `${F}:10:13: matrix.vm.count[0]: expected ${rule}`,
      `${F}:10:16: matrix.vm.count[1]: expected ${rule}`,
      `${F}:10:21: matrix.vm.count[2]: expected ${rule}`,
    ]);
  });

  it('refuses a target whose guest is reached over SSH, at each value: a clone is reached through guest operations only', () => {
    const lines = refused('pb-vm-count-ssh.yaml');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/pb-vm-count-ssh\.yaml:10:13: matrix\.vm\.count\[0\]: .*over SSH.*guest\.via: tools/);
    expect(lines[1]).toMatch(/pb-vm-count-ssh\.yaml:10:16: matrix\.vm\.count\[1\]: /);
  });

  it('refuses it on a provider that does not clone (the ESXi shell): only vSphere declares the axis', () => {
    const [line, ...rest] = refused('pb-vm-count-esxi.yaml');
    expect(rest).toEqual([]);
    expect(line).toMatch(/pb-vm-count-esxi\.yaml:\d+:\d+: matrix\.vm\.count: target "esx" \(esxi-shell\) does not use vm\.count/);
  });

  it('refuses an RDM with it (one LUN cannot be each VM\'s own disk), at the RDM value', () => {
    const lines = refused('pb-vm-count-rdm.yaml');
    expect(lines.some((l) => /pb-vm-count-rdm\.yaml:7:20: matrix\.disk\.format\[1\]: .*flat disk format with vm\.count/.test(l))).toBe(true);
    expect(lines.every((l) => !l.includes('disk.format[0]'))).toBe(true);
  });
});

describe('vm.count: the plan', () => {
  const p = plan('pb-vm-count.yaml');
  const byCount = (n: number) => p.permutations.find((x) => x.axes['vm.count'] === n)!;

  it('N clones of the target\'s VM, each with its own disk on the datastore and a guest-disk step in its own guest', () => {
    const perm = byCount(4);
    const prefix = `ss-r1-${perm.permutationId}`;
    const provisioning = perm.steps.filter((s) => s.step !== 'workload');
    expect(provisioning.map((s) => s.step)).toEqual(['clone vm1', 'disk vm1', 'guest-disk vm1', 'clone vm2', 'disk vm2', 'guest-disk vm2', 'clone vm3', 'disk vm3', 'guest-disk vm3', 'clone vm4', 'disk vm4', 'guest-disk vm4']);
    for (let k = 1; k <= 4; k++) {
      const [clone, disk, guest] = provisioning.slice(3 * (k - 1), 3 * k);
      expect(clone).toMatchObject({ operation: 'CloneVM_Task', destructive: false, creates: { kind: 'vm', name: `${prefix}-vm${k}` }, arguments: { vm: 'bench-vm', name: `${prefix}-vm${k}`, member: k, clone: 'full' } });
      expect(disk).toMatchObject({ operation: 'ReconfigVM_Task', creates: { kind: 'disk', name: `${prefix}-vm${k}-disk` }, arguments: { vm: `${prefix}-vm${k}`, datastore: 'datastore1', format: 'thin', sizeGb: 1 } });
      expect(guest).toMatchObject({ arguments: { vm: `${prefix}-vm${k}`, disk: `${prefix}-vm${k}-disk`, member: k } });
    }
  });

  it('a count of 1 is a clone too: the target\'s own VM is never measured in a vm.count permutation', () => {
    const steps = byCount(1).steps.filter((s) => s.step !== 'workload');
    expect(steps.map((s) => s.operation)).toEqual(['CloneVM_Task', 'ReconfigVM_Task', 'guest: find disk by WWN']);
    expect(steps.every((s) => s.step.endsWith(' vm1'))).toBe(true);
    expect(steps.slice(1).every((s) => s.arguments.vm !== 'bench-vm')).toBe(true);
  });
});

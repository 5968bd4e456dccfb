// vm.clone offline (issue 32 item 1, docs/decisions/0093-linked-clones.md): validate refuses it at
// the value's file:line:col where it cannot apply — without vm.count (nothing is cloned), a value
// other than full or linked, a provider that does not clone (the ESXi shell). The plan shows it: a
// linked permutation takes its own snapshot of the template first (so teardown, in reverse, removes
// it after every clone), and each clone step names that snapshot. The run side is
// test/integration/vm-linked-clones.test.ts.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../../src/config/index.ts';
import { ConfigError, formatDiagnostic } from '../../../../src/errors.ts';
import { checkPlaybookAgainst } from '../../../../src/plan/check.ts';
import { buildPlan } from '../../../../src/plan/plan.ts';
import { moduleOf } from '../../../../src/providers/index.ts';

const f = (name: string) => path.join('test/fixtures/config', name);
const inventory = () => loadInventory(f('inv-vm-count.yaml'), { VM_COUNT_GUEST_PASSWORD: 'x4x-secret' });

function refused(pbName: string): string[] {
  try {
    checkPlaybookAgainst(loadPlaybook(f(pbName)), inventory());
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostics.map(formatDiagnostic);
    throw err;
  }
  throw new Error(`expected ${pbName} to be refused`);
}

describe('vm.clone: validate', () => {
  it('takes full and linked beside vm.count on a vSphere target', () => {
    expect(() => checkPlaybookAgainst(loadPlaybook(f('pb-vm-clone.yaml')), inventory())).not.toThrow();
  });

  it('refuses it without vm.count at its line:col: nothing is cloned', () => {
    const [line, ...rest] = refused('pb-vm-clone-no-count.yaml');
    expect(rest).toEqual([]);
    expect(line).toMatch(/pb-vm-clone-no-count\.yaml:10:13: matrix\.vm\.clone\[0\]: .*without vm\.count/);
  });

  it('refuses a value other than full or linked at its line:col, with the allowed values', () => {
    expect(refused('pb-vm-clone-values.yaml')).toEqual([`${f('pb-vm-clone-values.yaml')}:11:19: matrix.vm.clone[1]: expected one of full, linked; got "copy"`]);
  });

  it('refuses linked with VMs the inventory names (scaleVms): those are measured, never cloned', () => {
    try {
      checkPlaybookAgainst(loadPlaybook(f('pb-vm-clone-named.yaml')), loadInventory(f('inv-vm-count-named.yaml'), { VM_COUNT_GUEST_PASSWORD: 'x4x-secret' }));
      throw new Error('expected a refusal');
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const [line, ...rest] = err.diagnostics.map(formatDiagnostic);
      expect(rest).toEqual([]);
      expect(line).toMatch(/pb-vm-clone-named\.yaml:11:13: matrix\.vm\.clone\[0\]: .*scaleVms/);
    }
  });

  it('refuses it on a provider that does not clone (the ESXi shell)', () => {
    const [line, ...rest] = refused('pb-vm-clone-esxi.yaml');
    expect(rest).toEqual([]);
    expect(line).toMatch(/pb-vm-clone-esxi\.yaml:\d+:\d+: matrix\.vm\.clone: target "esx" \(esxi-shell\) does not use vm\.clone/);
  });
});

describe('vm.clone: the plan', () => {
  const pb = loadPlaybook(f('pb-vm-clone.yaml')).playbook;
  const target = inventory().inventory.targets[pb.target as string]!;
  const p = buildPlan(pb, pb.target, { runId: 'r1', provider: target.provider, planSteps: moduleOf(target).planner(target) });
  const of = (clone: string) => p.permutations.find((x) => x.axes['vm.clone'] === clone)!;

  it('linked: the run\'s own snapshot of the template first, then each clone of it; teardown (reverse) removes the snapshot last', () => {
    const perm = of('linked');
    const prefix = `ss-r1-${perm.permutationId}`;
    const steps = perm.steps.filter((s) => s.step !== 'workload');
    expect(steps[0]).toMatchObject({ step: 'snapshot', operation: 'CreateSnapshot_Task', destructive: false, creates: { kind: 'snapshot', name: `${prefix}-snap` }, arguments: { vm: 'bench-vm', name: `${prefix}-snap` } });
    const clones = steps.filter((s) => s.operation === 'CloneVM_Task');
    expect(clones).toHaveLength(2);
    for (const c of clones) expect(c.arguments).toMatchObject({ vm: 'bench-vm', clone: 'linked', snapshot: `${prefix}-snap` });
  });

  it('full: no snapshot, full clones', () => {
    const steps = of('full').steps;
    expect(steps.some((s) => s.operation === 'CreateSnapshot_Task')).toBe(false);
    for (const c of steps.filter((s) => s.operation === 'CloneVM_Task')) expect(c.arguments).toMatchObject({ clone: 'full' });
    expect(steps.filter((s) => s.operation === 'CloneVM_Task').every((c) => !('snapshot' in c.arguments))).toBe(true);
  });
});

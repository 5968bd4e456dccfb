// vm.count on VMs the inventory names (`scaleVms`, issue 32 item 1): validate refuses, at
// file:line:col, a count larger than the list (at the playbook's value and at the inventory's list),
// a VM named twice, a VM named like an object storsweep makes (`ss-…`), and a list on a target whose
// guest is not reached through guest operations. A count of N plans the first N named VMs: no
// clone step, each VM its own disk (an owned name of the member's) and the guest-disk step that
// finds it there; `plan` lists the VMs of each permutation. The lab side is test/integration/vm-count-named.test.ts.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../../src/config/index.ts';
import { ConfigError, formatDiagnostic } from '../../../../src/errors.ts';
import { checkPlaybookAgainst } from '../../../../src/plan/check.ts';
import { buildPlan } from '../../../../src/plan/plan.ts';
import { renderPlanText } from '../../../../src/app/plan-text.ts';
import { moduleOf } from '../../../../src/providers/index.ts';
import { namedMemberVms } from '../../../../src/providers/vsphere/vm-count.ts';

const f = (name: string) => path.join('test/fixtures/config', name);
const ENV = { VM_COUNT_GUEST_PASSWORD: 'x4x-secret' };
const inventory = () => loadInventory(f('inv-vm-count-named.yaml'), ENV);

function diagnostics(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostics.map(formatDiagnostic);
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('scaleVms: validate', () => {
  it('takes counts up to the number of VMs named', () => {
    expect(() => checkPlaybookAgainst(loadPlaybook(f('pb-vm-count-named.yaml')), inventory())).not.toThrow();
  });

  it('refuses a count larger than the list, at the value in the playbook and at the list in the inventory, with the allowed values', () => {
    const lines = diagnostics(() => checkPlaybookAgainst(loadPlaybook(f('pb-vm-count-named-over.yaml')), inventory()));
    const P = f('pb-vm-count-named-over.yaml');
    const I = f('inv-vm-count-named.yaml');
    expect(lines).toHaveLength(2);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${P.replace(/[.]/g, '\\.')}:10:16: matrix\\.vm\\.count\\[1\\]: target "named" names 3 VMs in scaleVms \\(bench-vm, load-a, load-b\\); vm\\.count 4 needs as many: allowed values 1 to 3$`)));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${I.replace(/[.]/g, '\\.')}:12:15: targets\\.named\\.scaleVms: .*allowed values 1 to 3$`)));
    expect(lines.join('\n')).not.toContain('count[0]');
  });

  it('refuses a VM named twice and a VM named like an owned object, each at its own line:col', () => {
    const I = f('inv-vm-count-named-bad.yaml');
    const lines = diagnostics(() => loadInventory(I, ENV));
    expect(lines).toContainEqual(`${I}:12:38: targets.twice.scaleVms[2]: "load-a" is named twice (also scaleVms[0]); each VM of a vm.count permutation must be a VM of its own, measuring its own disk`);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${I.replace(/[.]/g, '\\.')}:12:24: targets\\.twice\\.scaleVms\\[1\\]: "ss-r1-p0-vm1" starts with "ss-"`)));
  });

  it('refuses a list on a target whose guest is reached over SSH: the named VMs are reached through guest operations', () => {
    const I = f('inv-vm-count-named-bad.yaml');
    const lines = diagnostics(() => loadInventory(I, ENV));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${I.replace(/[.]/g, '\\.')}:23:15: targets\\.over-ssh\\.scaleVms: .*guest\\.via: tools`)));
  });
});

describe('scaleVms: the plan', () => {
  const pb = loadPlaybook(f('pb-vm-count-named.yaml')).playbook;
  const target = inventory().inventory.targets.named!;
  const p = buildPlan(pb, pb.target, { runId: 'r1', provider: target.provider, planSteps: moduleOf(target).planner(target) });
  const byCount = (n: number) => p.permutations.find((x) => x.axes['vm.count'] === n)!;

  it('count N uses the first N named VMs: no clone, each VM its own disk and the guest-disk step in its own guest', () => {
    const perm = byCount(3);
    const prefix = `ss-r1-${perm.permutationId}`;
    const provisioning = perm.steps.filter((s) => s.step !== 'workload');
    expect(provisioning.map((s) => s.step)).toEqual(['disk vm1', 'guest-disk vm1', 'disk vm2', 'guest-disk vm2', 'disk vm3', 'guest-disk vm3']);
    expect(provisioning.some((s) => s.operation === 'CloneVM_Task' || s.creates?.kind === 'vm')).toBe(false);
    ['bench-vm', 'load-a', 'load-b'].forEach((vm, i) => {
      const [disk, guest] = provisioning.slice(2 * i, 2 * i + 2);
      expect(disk!.arguments).toMatchObject({ vm, deviceChange: 'add+create', datastore: 'datastore1' });
      expect(disk!.creates).toEqual({ kind: 'disk', name: `${prefix}-vm${i + 1}-disk` });
      expect(disk!.destructive).toBe(false);
      expect(guest!.arguments).toMatchObject({ vm, member: i + 1, disk: `${prefix}-vm${i + 1}-disk` });
    });
    expect(namedMemberVms(perm.steps)).toEqual(['bench-vm', 'load-a', 'load-b']);
    expect(namedMemberVms(byCount(1).steps)).toEqual(['bench-vm']);
  });

  it('`plan` says which VMs each permutation uses', () => {
    expect(byCount(1).steps.filter((s) => s.step !== 'workload').map((s) => s.arguments.vm)).toEqual(['bench-vm', 'bench-vm']);
    const text = renderPlanText(p);
    expect(text).toContain(`${byCount(1).permutationId}  `);
    expect(text.split('\n').filter((l) => l.trim().startsWith('VMs:')).map((l) => l.trim())).toEqual(['VMs: vm1 bench-vm', 'VMs: vm1 bench-vm, vm2 load-a, vm3 load-b']);
  });
});

// vm.count on a Hyper-V target (issue 32 item 1): refused at `validate`, at each value's line, where
// no member could be made (no vmTemplate; a pass-through disk; the write cache step); planned as N
// members each made of a differencing child of the template, with its own VHDX found in its own guest.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../../src/config/index.ts';
import { ConfigError, formatDiagnostic } from '../../../../src/errors.ts';
import { checkPlaybookAgainst } from '../../../../src/plan/check.ts';
import { buildPlan } from '../../../../src/plan/plan.ts';
import { moduleOf } from '../../../../src/providers/index.ts';

const DIR = 'test/fixtures/config';
const f = (name: string) => path.join(DIR, name);
const ENV = { HV_GUEST_PASSWORD: 'x4x-secret' };
const inventory = () => loadInventory(f('inv-hyperv-vm-count.yaml'), ENV);

function refused(load: () => unknown): string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostics.map(formatDiagnostic);
    throw err;
  }
  throw new Error('expected a refusal');
}

function planOf(pbName: string, target: string) {
  const pb = { ...loadPlaybook(f(pbName)).playbook, target };
  const t = inventory().inventory.targets[target]!;
  return buildPlan(pb, target, { runId: 'r1', provider: t.provider, planSteps: moduleOf(t).planner(t) });
}

describe('vm.count on Hyper-V', () => {
  it('a target without vmTemplate: refused at each vm.count value, saying what to add', () => {
    const F = f('pb-vm-count-hyperv.yaml');
    const lines = refused(() => checkPlaybookAgainst(loadPlaybook(F), inventory()));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${F.replaceAll('.', '\\.')}:10:13: matrix\\.vm\\.count\\[0\\]: target "hv" names no vmTemplate; .*add vmTemplate: \\{vhdxPath, generation, memoryStartupBytes\\}`));
    expect(lines[1]).toMatch(/:10:16: matrix\.vm\.count\[1\]: target "hv" names no vmTemplate/);
  });

  it('with a template: each member a differencing child of it, a Generation 2 VM on that child, then its own VHDX, attached and found in its own guest', () => {
    const plan = planOf('pb-vm-count-hyperv.yaml', 'hv-template');
    const two = plan.permutations.find((p) => p.axes['vm.count'] === 2)!;
    const prefix = `ss-r1-${two.permutationId}`;
    expect(two.steps.map((s) => s.step)).toEqual(['os-vhdx vm1', 'vm vm1', 'vhdx vm1', 'attach vm1', 'guest-disk vm1', 'os-vhdx vm2', 'vm vm2', 'vhdx vm2', 'attach vm2', 'guest-disk vm2', 'workload']);
    const step = (name: string) => two.steps.find((s) => s.step === name)!;
    expect(step('os-vhdx vm2')).toMatchObject({ operation: 'New-VHD -Differencing', destructive: false, arguments: { path: `D:\\bench\\${prefix}-vm2-os.vhdx`, parentPath: 'C:\\Templates\\ws2022.vhdx' }, creates: { kind: 'vhdx', name: `${prefix}-vm2-os` } });
    expect(step('vm vm2')).toMatchObject({ operation: 'New-VM', arguments: { name: `${prefix}-vm2`, vhdPath: `D:\\bench\\${prefix}-vm2-os.vhdx`, generation: 2, memoryStartupBytes: 4294967296, switchName: 'bench-switch' }, creates: { kind: 'vm', name: `${prefix}-vm2` } });
    expect(step('vhdx vm2')).toMatchObject({ operation: 'New-VHD', arguments: { path: `D:\\bench\\${prefix}-vm2-disk.vhdx`, type: 'Dynamic' }, creates: { kind: 'vhdx', name: `${prefix}-vm2-disk` } });
    expect(step('attach vm2').arguments).toMatchObject({ vmName: `${prefix}-vm2`, controllerNumber: 0, controllerLocation: 1, path: `D:\\bench\\${prefix}-vm2-disk.vhdx` });
    expect(step('guest-disk vm2').arguments).toMatchObject({ vmName: `${prefix}-vm2`, member: 2 });
    // the target's own VM is never touched by a member step
    expect(two.steps.filter((s) => JSON.stringify(s.arguments).includes('"bench-vm"'))).toEqual([]);
  });

  it('with a template, what a member cannot take is refused at its value: the guest write cache, a pass-through disk', () => {
    const cache = refused(() => checkPlaybookAgainst(loadPlaybook(f('pb-vm-count-hyperv-axes.yaml')), inventory()));
    expect(cache).toEqual([expect.stringMatching(/pb-vm-count-hyperv-axes\.yaml:10:18: matrix\.guest\.writeCache\[0\]: .*the guest-settings step runs in the target's VM only, not yet in each member's with vm\.count$/)]);
    const passthrough = refused(() => checkPlaybookAgainst(loadPlaybook(f('pb-vm-count-hyperv-passthrough.yaml')), inventory()));
    expect(passthrough).toEqual([expect.stringMatching(/pb-vm-count-hyperv-passthrough\.yaml:7:14: matrix\.disk\.format\[0\]: .*expected a VHDX format with vm\.count \(one host disk cannot be N VMs' own disks\)$/)]);
  });

  it('the inventory refuses a template a member could not boot: generation 1, memory not in 2 MiB steps, a .vhd path', () => {
    const F = f('inv-hyperv-vm-template-bad.yaml');
    const lines = refused(() => loadInventory(F, ENV));
    expect(lines.some((l) => /:15:17: targets\.hv\.vmTemplate\.vhdxPath: expected a drive-rooted path to a \.vhdx file/.test(l)), lines.join('\n')).toBe(true);
    expect(lines.some((l) => /:16:19: targets\.hv\.vmTemplate\.generation: expected one of 2; got number 1/.test(l)), lines.join('\n')).toBe(true);
    expect(lines.some((l) => /:17:27: targets\.hv\.vmTemplate\.memoryStartupBytes: expected a multiple of 2 MiB/.test(l)), lines.join('\n')).toBe(true);
  });
});

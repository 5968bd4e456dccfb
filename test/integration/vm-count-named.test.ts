// vm.count on existing VMs the inventory names (issue 32 item 1: `scaleVms`), on the lab's target
// lab-vcenter-named-vms (three scale VMs, each a guest of its own): vm.count [1, 2], 1-second passes.
// Asserted from outside our code: the harness's call log (no CloneVM_Task; no power operation, no
// Destroy_Task; every ReconfigVM_Task adds or removes one disk of ours and nothing else), pyvmomi's
// read-back of each named VM (devices, power state, Tools and configuration exactly as before, no
// disk of ours), the harness's guest accounts (one of its own per scale VM) and programs (run in
// each VM's own guest), and the records (member and aggregate records naming the VM). The kill -9
// cases are test/integration/vm-count-named-kill.test.ts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAB_SCALE_VMS, labPaths } from '../../src/lab/lab.ts';
import { runLabPlaybook } from '../helpers/embedded-lab.ts';
import { runCli } from '../helpers/cli.ts';
import { isScaleVm, namedVmsPlaybook, useNamedVmsLab } from '../helpers/named-vms-lab.ts';

interface Rec {
  axes: Record<string, unknown>;
  iops: number | null;
  vm?: { role: string; count: number; index?: number; name?: string };
}

const { lab, expectOnlyOwnDisksTouched, expectNamedVmsIntact } = useNamedVmsLab('ss-vmnamed-');
const [VM_A, VM_B, VM_C] = LAB_SCALE_VMS;

describe('vm.count [1, 2] on the VMs the inventory names', () => {
  let recs: Rec[];
  let out: string;
  let code: number | null;
  let ranIn: Set<string>;
  beforeAll(async () => {
    await lab.control.reset();
    await fs.writeFile(path.join(lab.root, 'named.yaml'), namedVmsPlaybook(1));
    const r = await runLabPlaybook<Rec>(lab.root, path.join(lab.root, 'named.yaml'), { extra: ['--no-report'] });
    ({ records: recs } = r);
    code = r.cli.code;
    out = r.cli.stdout + r.cli.stderr;
    ranIn = new Set((await lab.control.guestOps()).calls.filter((c) => c.method === 'StartProgramInGuest').map((c) => c.vm));
  }, 180_000);

  it('succeeds', () => {
    expect(code, out).toBe(0);
  });

  it('the lab offers three existing VMs, each with a guest account of its own', async () => {
    const accounts = (await lab.control.guestOps()).accounts.filter((a) => isScaleVm(a.vm));
    expect(accounts.map((a) => a.vm).sort()).toEqual([...LAB_SCALE_VMS].sort());
    expect(new Set(accounts.map((a) => a.uid)).size).toBe(3);
  });

  it('measures the first N named VMs, each in its own guest; the member and aggregate records name them', () => {
    expect(ranIn.has(VM_A) && ranIn.has(VM_B), [...ranIn].join(', ')).toBe(true);
    expect(ranIn.has(VM_C)).toBe(false);
    for (const [n, vms] of [[1, [VM_A]], [2, [VM_A, VM_B]]] as const) {
      const rs = recs.filter((r) => r.axes['vm.count'] === n);
      const members = rs.filter((r) => r.vm?.role === 'member');
      expect(members.map((m) => [m.vm!.index, m.vm!.name]).sort()).toEqual(vms.map((vm, i) => [i + 1, vm]));
      const [agg, ...more] = rs.filter((r) => r.vm?.role === 'aggregate');
      expect(more).toEqual([]);
      expect(agg!.vm).toMatchObject({ count: n });
      expect(agg!.iops).toBeCloseTo(members.reduce((s, m) => s + (m.iops ?? 0), 0), 6);
    }
  });

  it('clones nothing, powers nothing, destroys nothing: only disks of ours added and removed (call log)', async () => {
    await expectOnlyOwnDisksTouched();
    expect((await lab.control.log()).filter((c) => c.method === 'ReconfigVM_Task')).toHaveLength(2 * (1 + 2));
  });

  it('leaves every named VM with exactly its original devices and settings (pyvmomi)', async () => {
    await expectNamedVmsIntact();
  });
});

describe('preflight of the named VMs a plan uses', () => {
  interface Check { check: string; status: string; detail: string }
  const preflight = async (count: number) => {
    const r = await runCli(['preflight', path.join(lab.root, 'named.yaml'), '-i', labPaths(lab.root).inventory, '--json', '--no-canary', '--set', `matrix.vm.count=[${count}]`, '-o', path.join(lab.root, `pf-${count}`)], { cwd: lab.root });
    return { code: r.code, checks: (JSON.parse(r.stdout) as { targets: Array<{ checks: Check[] }> }).targets[0]!.checks };
  };

  it('checks each: power, Tools, disk.EnableUUID, guest login, its privileges', async () => {
    const { code, checks } = await preflight(3);
    expect(code).toBe(0);
    for (const vm of LAB_SCALE_VMS) {
      for (const what of ['power', 'VMware Tools', 'disk.EnableUUID', 'guest login']) expect(checks.find((c) => c.check === `VM ${vm}: ${what}`)?.status, `${vm} ${what}`).toBe('ok');
      expect(checks.filter((c) => c.check.startsWith('privilege ') && c.detail.includes(`VM ${vm}`)).length, vm).toBeGreaterThanOrEqual(5);
    }
  });

  it('a named VM whose Tools are not running: ✗ naming that VM (the lab refuses its guest operations, as vSphere does)', async () => {
    await lab.control.guestTools(VM_C, false);
    try {
      const { code, checks } = await preflight(3);
      expect(code).not.toBe(0);
      expect(checks.filter((c) => c.status === 'fail').map((c) => c.check).sort()).toEqual([`VM ${VM_C}: VMware Tools`, `VM ${VM_C}: guest login`]);
      expect(checks.find((c) => c.check === `VM ${VM_C}: guest login`)!.detail).toContain('GuestOperationsUnavailable');
    } finally {
      await lab.control.guestTools(VM_C, true);
    }
  });
});

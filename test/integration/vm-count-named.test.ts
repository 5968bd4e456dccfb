// vm.count on existing VMs the inventory names (issue 32 item 1: `scaleVms`), on the lab's target
// lab-vcenter-named-vms (three scale VMs, each a guest of its own). Asserted from outside our code:
// the harness's call log (no CloneVM_Task; no power operation, no Destroy_Task; every
// ReconfigVM_Task adds or removes one disk of ours and nothing else), pyvmomi's read-back of each
// named VM (its devices, power state, Tools and configuration exactly as before, no disk of ours),
// the harness's guest accounts (one of its own per scale VM) and programs (run in each VM's own
// guest), and the records (member and aggregate records naming the VM). A run killed with -9 while
// both VMs measure, then `run --resume` or `cleanup`, leaves each named VM as it was too.
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAB_SCALE_VMS, labPaths } from '../../src/lab/lab.ts';
import { runCli } from '../helpers/cli.ts';
import { useEmbeddedLab, runLabPlaybook } from '../helpers/embedded-lab.ts';
import { probe } from '../helpers/pyvmomi-probe.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { runCliWhen } from '../helpers/vsphere-lab.ts';

interface Rec {
  axes: Record<string, unknown>;
  iops: number | null;
  vm?: { role: string; count: number; index?: number; name?: string };
}

const lab = useEmbeddedLab('ss-vmnamed-', { vcsim: true });
// a measured fio pass as the guest lists it (not the pre-fill's job, not `fio --version`)
const FIO_PASS = /(^|[\s/'"])fio\s+--name=(?!storsweep-prefill)/;
const [VM_A, VM_B, VM_C] = LAB_SCALE_VMS;

const playbook = (runtimeSec: number) =>
  [
    'name: vm-count-named',
    'target: lab-vcenter-named-vms',
    'matrix:',
    '  datastore: { kind: [existing] }',
    '  disk: { format: [thin], sizeGb: [1] }',
    '  vm: { count: [1, 2] }',
    '  workload: { profile: [lab-4k-read] }',
    'workloads:',
    '  lab-4k-read: { iometer: "4k 100% read 100% random" }',
    ...quickSettings({ fileSize: '16m', runtimeSec }),
  ].join('\n') + '\n';

const endpoint = async () => {
  const vc = lab.state.vcsim!;
  return { url: vc.url, username: vc.username, password: (await fs.readFile(labPaths(lab.root).vcsimPassword, 'utf8')).trim(), certFile: vc.certFile };
};
/** Each scale VM as pyvmomi reads it: devices, power, Tools, configuration. */
const vmStates = async () => {
  const r = await probe(await endpoint(), LAB_SCALE_VMS.map((vm) => ({ op: 'vm-state', vm })));
  return Object.fromEntries(LAB_SCALE_VMS.map((vm, i) => [vm, r[i]]));
};
let before: Awaited<ReturnType<typeof vmStates>>;

/** What the call log shows done to VMs since the last reset: nothing but disks of ours added and removed. */
async function expectOnlyOwnDisksTouched(): Promise<void> {
  const log = await lab.control.log();
  expect(log.filter((c) => /^(CloneVM_Task|Destroy_Task|PowerOffVM_Task|PowerOnVM_Task|ResetVM_Task|SuspendVM_Task)$/.test(c.method))).toEqual([]);
  for (const c of log.filter((x) => x.method === 'ReconfigVM_Task')) {
    expect(c.devices ?? [], `${c.this}: a reconfiguration beyond one disk of ours`).toHaveLength(1);
    expect(c.devices![0]).toMatch(/^(add|remove) \[LocalDS_0\] ss-r[0-9a-z]+-p[0-9a-f]{12}-vm[12]-disk\.vmdk$/);
  }
}

/** Every named VM exactly as it was before the run (pyvmomi), no disk of ours left on it. */
async function expectNamedVmsIntact(): Promise<void> {
  const now = await vmStates();
  expect(now).toEqual(before);
  for (const vm of LAB_SCALE_VMS) expect(JSON.stringify(now[vm]!.devices)).not.toContain('ss-');
}

beforeAll(async () => {
  before = await vmStates();
  for (const vm of LAB_SCALE_VMS) expect(before[vm], vm).toMatchObject({ ok: true, powerState: 'poweredOn', toolsRunningStatus: 'guestToolsRunning' });
  await fs.writeFile(path.join(lab.root, 'named.yaml'), playbook(1));
  await fs.writeFile(path.join(lab.root, 'named-long.yaml'), playbook(6));
}, 120_000);

describe('vm.count [1, 2] on the VMs the inventory names', () => {
  let recs: Rec[];
  let out: string;
  let code: number | null;
  let ranIn: Set<string>;
  beforeAll(async () => {
    await lab.control.reset();
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
    const accounts = (await lab.control.guestOps()).accounts.filter((a) => (LAB_SCALE_VMS as readonly string[]).includes(a.vm));
    expect(accounts.map((a) => a.vm).sort()).toEqual([...LAB_SCALE_VMS].sort());
    expect(new Set(accounts.map((a) => a.uid)).size).toBe(3);
  });

  it('measures the first N named VMs, each in its own guest; the member and aggregate records name them', () => {
    expect(ranIn.has(VM_A!) && ranIn.has(VM_B!), [...ranIn].join(', ')).toBe(true);
    expect(ranIn.has(VM_C!)).toBe(false);
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

/** Runs the long playbook and SIGKILLs it while fio measures in both named VMs of the 2-VM permutation. */
async function killedWhileBothMeasure(runsDir: string): Promise<{ runDir: string; killedAt: number }> {
  await lab.control.reset();
  const args = ['run', path.join(lab.root, 'named-long.yaml'), '-i', labPaths(lab.root).inventory, '--out', runsDir, '--json', '--no-report', '--set', 'matrix.vm.count=[2]'];
  let measuring = 0;
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const running = await lab.control.guestProcesses().catch(() => []);
      measuring = new Set(running.filter((p) => (LAB_SCALE_VMS as readonly string[]).includes(p.vm) && FIO_PASS.test(p.cmdLine)).map((p) => p.vm)).size;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  let killedAt = 0;
  const killed = await runCliWhen(args, { runsDir }, () => measuring >= 2, (pid) => {
    process.kill(pid, 'SIGKILL');
    killedAt = Date.now();
  });
  polling = false;
  await poll;
  expect(killed.fired, `fio never ran in both VMs at once: ${killed.stdout}${killed.stderr}`).toBe(true);
  expect(killed.code).toBeNull();
  // the killed run's disks are still on the named VMs
  const on = await vmStates();
  expect([VM_A, VM_B].map((vm) => JSON.stringify(on[vm!]!.devices).includes('-disk.vmdk'))).toEqual([true, true]);
  return { runDir: killed.runDir!, killedAt };
}

/** Each named VM's fio, left by the killed run, stopped through its own guest before its disk was removed. */
async function expectStoppedBeforeDetach(killedAt: number): Promise<void> {
  const log = await lab.control.log();
  const { processes, calls } = await lab.control.guestOps();
  for (const [k, vm] of [VM_A!, VM_B!].entries()) {
    const removed = log.find((c) => c.method === 'ReconfigVM_Task' && c.start > killedAt && (c.devices ?? []).some((d) => d.startsWith('remove ') && d.endsWith(`-vm${k + 1}-disk.vmdk`)));
    expect(removed, `${vm}'s disk was never removed`).toBeDefined();
    expect(calls.some((c) => c.vm === vm && c.method === 'StartProgramInGuest' && Date.parse(c.time) > killedAt && Date.parse(c.time) < removed!.start), `nothing ran in ${vm}'s guest before its disk was removed`).toBe(true);
    const fio = processes.filter((p) => p.vm === vm && !p.child && FIO_PASS.test(p.cmdLine) && Date.parse(p.startTime) < killedAt);
    expect(fio.length, `no fio pass ran in ${vm}`).toBeGreaterThan(0);
    for (const p of fio) expect(p.endTime && Date.parse(p.endTime), `${vm}: fio (pid ${p.pid}) still ran when its disk was removed`).toBeLessThan(removed!.start);
  }
}

describe('kill -9 while both named VMs measure', () => {
  it('then run --resume: each named VM as it was, no disk of ours left, no fio left in its guest', async () => {
    const { runDir, killedAt } = await killedWhileBothMeasure(path.join(lab.root, 'killed-resume'));
    const resumed = await runCli(['run', '--resume', runDir, '--json', '--no-report'], { cwd: lab.root, timeoutMs: 180_000 });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    await expectStoppedBeforeDetach(killedAt);
    await expectOnlyOwnDisksTouched();
    await expectNamedVmsIntact();
    expect((await lab.control.guestProcesses()).filter((p) => (LAB_SCALE_VMS as readonly string[]).includes(p.vm) && FIO_PASS.test(p.cmdLine))).toEqual([]);
  }, 240_000);

  it('then cleanup: the same, and nothing measured again', async () => {
    const { runDir, killedAt } = await killedWhileBothMeasure(path.join(lab.root, 'killed-cleanup'));
    const cleaned = await runCli(['cleanup', runDir], { cwd: lab.root, timeoutMs: 180_000 });
    expect(cleaned.code, cleaned.stdout + cleaned.stderr).toBe(0);
    await expectStoppedBeforeDetach(killedAt);
    await expectOnlyOwnDisksTouched();
    await expectNamedVmsIntact();
    expect((await lab.control.log()).filter((c) => c.method === 'ReconfigVM_Task' && c.start > killedAt && (c.devices ?? []).some((d) => d.startsWith('add ')))).toEqual([]);
    expect((await lab.control.guestProcesses()).filter((p) => (LAB_SCALE_VMS as readonly string[]).includes(p.vm) && FIO_PASS.test(p.cmdLine))).toEqual([]);
  }, 240_000);
});

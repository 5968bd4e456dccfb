// vm.count on the VMs an inventory names (`scaleVms`), killed with -9 while both named VMs of the
// 2-VM permutation measure (6-second passes: the killed run's fio outlives the next command's
// start), then `run --resume` or `cleanup`: the fio left in each named VM's own guest is stopped
// before its disk goes (harness guest-ops and call log), and each named VM is left exactly as it was
// (pyvmomi: devices, power, Tools, configuration; no disk of ours). The run itself is
// test/integration/vm-count-named.test.ts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAB_SCALE_VMS, labPaths } from '../../src/lab/lab.ts';
import { runCli } from '../helpers/cli.ts';
import { FIO_PASS, isScaleVm, namedVmsPlaybook, useNamedVmsLab } from '../helpers/named-vms-lab.ts';
import { runCliWhen } from '../helpers/vsphere-lab.ts';

const { lab, vmStates, expectOnlyOwnDisksTouched, expectNamedVmsIntact } = useNamedVmsLab('ss-vmnamedk-');
const [VM_A, VM_B] = LAB_SCALE_VMS;

beforeAll(async () => {
  await fs.writeFile(path.join(lab.root, 'named-long.yaml'), namedVmsPlaybook(6));
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
      measuring = new Set(running.filter((p) => isScaleVm(p.vm) && FIO_PASS.test(p.cmdLine)).map((p) => p.vm)).size;
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
  expect([VM_A, VM_B].map((vm) => JSON.stringify(on[vm]!.devices).includes('-disk.vmdk'))).toEqual([true, true]);
  return { runDir: killed.runDir!, killedAt };
}

/** Each named VM's fio, left by the killed run, stopped through its own guest before its disk was removed. */
async function expectStoppedBeforeDetach(killedAt: number): Promise<void> {
  const log = await lab.control.log();
  const { processes, calls } = await lab.control.guestOps();
  for (const [k, vm] of [VM_A, VM_B].entries()) {
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
    expect((await lab.control.guestProcesses()).filter((p) => isScaleVm(p.vm) && FIO_PASS.test(p.cmdLine))).toEqual([]);
  }, 240_000);

  it('then cleanup: the same, and nothing measured again', async () => {
    const { runDir, killedAt } = await killedWhileBothMeasure(path.join(lab.root, 'killed-cleanup'));
    const cleaned = await runCli(['cleanup', runDir], { cwd: lab.root, timeoutMs: 180_000 });
    expect(cleaned.code, cleaned.stdout + cleaned.stderr).toBe(0);
    await expectStoppedBeforeDetach(killedAt);
    await expectOnlyOwnDisksTouched();
    await expectNamedVmsIntact();
    expect((await lab.control.log()).filter((c) => c.method === 'ReconfigVM_Task' && c.start > killedAt && (c.devices ?? []).some((d) => d.startsWith('add ')))).toEqual([]);
    expect((await lab.control.guestProcesses()).filter((p) => isScaleVm(p.vm) && FIO_PASS.test(p.cmdLine))).toEqual([]);
  }, 240_000);
});

// Permutations on different targets run in parallel: a playbook that lists two vSphere targets on
// one vcsim (two hosts, two VMs, a LUN each) runs both targets' permutations at the same time, over
// one vCenter session that logs out once, and leaves nothing behind — also after a kill -9 and
// `storsweep cleanup`, which routes each leftover to the provider of its permutation's target.
import fs from 'node:fs/promises';
import path from 'node:path';
import { listVcsimLuns } from '../../src/lab/vsphere-inventory.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { NOTHING_LEFT, permutationStatuses, readRun, runCliWhen, runDirOf, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

let lab: VsphereLab;
let playbook: string;
let args: (runsDir: string) => string[];
let lun: string;

beforeAll(async () => {
  lab = await startVsphereLab();
  // A second target on another host of the same vCenter, with its own VM, LUN and fio file.
  lun = (await listVcsimLuns({ url: lab.sim.url, username: lab.sim.username, password: lab.password, thumbprint: lab.sim.thumbprint }, 'DC0_C0_H0'))[0]!;
  const workdir = path.join(lab.dir, 'scratch-2');
  await fs.mkdir(workdir, { recursive: true });
  await fs.appendFile(
    lab.inventory,
    [
      '  lab-vcenter-2:',
      '    provider: vsphere',
      '    vcenter: lab-vc',
      '    datacenter: DC0',
      '    host: DC0_C0_H0',
      '    vm: DC0_C0_RP0_VM1', // the VM that runs on DC0_C0_H0
      // the release stated like the lab's own target: a target without one has its host's release
      // read first (its own short read-only session), which is not what this test counts
      '    version: "5.5"',
      `    vmfsDevice: ${lun}`,
      `    allowedDevices: [${lun}]`,
      '    guest:',
      `      workdir: ${workdir}`,
      // the same guest (this machine): the disks the simulator attaches are listed here
      `      byIdDir: ${lab.byIdDir}`,
      '',
    ].join('\n'),
  );
  // one permutation per target: two permutations, one on each, that can only overlap by running in parallel
  const book = sweepPlaybook({ name: 'parallel', blockSizesMb: [1], formats: ['thin'], repeat: 1 }).replace('target: lab-vcenter\n', 'target: [lab-vcenter, lab-vcenter-2]\n');
  playbook = await lab.writePlaybook('parallel.yaml', book);
  args = (runsDir) => ['-i', lab.inventory, '--out', runsDir, '--confirm-destroy', `${lab.vmfsDevice},${lun}`, '--no-report', '--json'];
});

afterAll(async () => {
  await lab?.stop();
});

beforeEach(async () => {
  await lab.sim.control.reset();
});

/** Each permutation's target and its start/end positions in the journal. */
function intervals(runDir: string): Array<{ target: string; start: number; end: number }> {
  return readRun(runDir, (db) =>
    (
      db
        .prepare(
          `SELECT p.axes AS axes,
                  (SELECT min(seq) FROM journal j WHERE j.permutation_id = p.permutation_id AND j.step = 'permutation' AND j.event = 'start') AS start,
                  (SELECT max(seq) FROM journal j WHERE j.permutation_id = p.permutation_id AND j.step = 'permutation' AND j.event = 'done') AS end
           FROM permutations p ORDER BY p.idx`,
        )
        .all() as Array<{ axes: string; start: number; end: number }>
    ).map((r) => ({ target: String((JSON.parse(r.axes) as Record<string, unknown>).target), start: r.start, end: r.end })),
  );
}

/** Live disks (created, not removed) per target. */
function liveDiskTargets(runDir: string): Set<string> {
  return readRun(runDir, (db) => {
    const rows = db
      .prepare(`SELECT p.axes AS axes FROM ledger l JOIN permutations p ON p.permutation_id = l.permutation_id WHERE l.kind = 'disk' AND l.state = 'created'`)
      .all() as Array<{ axes: string }>;
    return new Set(rows.map((r) => String((JSON.parse(r.axes) as Record<string, unknown>).target)));
  });
}

describe('two targets on one vCenter', { timeout: 180_000 }, () => {
  it('run in parallel over one session and leave nothing behind', async () => {
    const r = await runCli(['run', playbook, ...args(await lab.newRunsDir('parallel'))]);
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done']);
    const iv = intervals(runDir);
    expect(iv.map((i) => i.target)).toEqual(['lab-vcenter', 'lab-vcenter-2']);
    // some permutation of one target started before one of the other target ended, and vice versa
    const a = iv.filter((i) => i.target === 'lab-vcenter');
    const b = iv.filter((i) => i.target === 'lab-vcenter-2');
    expect(a.some((x) => b.some((y) => x.start < y.end && y.start < x.end))).toBe(true);
    // one session for both targets, logged out once (read before pyvmomi logs in itself)
    const calls = await lab.sim.control.calls();
    expect(calls.Login).toBe(1);
    expect(calls.Logout).toBe(1);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });

  it('after a kill -9 with objects of both targets live, cleanup removes each through its own target', async () => {
    const runsDir = await lab.newRunsDir('killed');
    const r = await runCliWhen(['run', playbook, ...args(runsDir)], { runsDir }, (d) => liveDiskTargets(d).size === 2, (pid) => void process.kill(pid, 'SIGKILL'));
    expect(r.fired).toBe(true);
    expect(r.code).toBeNull();
    expect((await lab.leftovers()).datastores).toHaveLength(2);
    const cleaned = await runCli(['cleanup', r.runDir!]);
    expect(cleaned.code, cleaned.stdout + cleaned.stderr).toBe(0);
    expect(cleaned.stdout).not.toContain('could not remove');
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    const resumed = await runCli(['run', '--resume', r.runDir!, '--confirm-destroy', `${lab.vmfsDevice},${lun}`, '--no-report', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(permutationStatuses(r.runDir!).map((p) => p.status)).toEqual(['done', 'done']);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

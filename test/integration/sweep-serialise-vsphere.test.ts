// Two vSphere targets on one VM take turns even when one names its datacenter and the other leaves
// it to the default: `lab-vcenter` (datacenter: DC0) and `lab-vm0-nodc` (no datacenter), both on
// DC0_H0_VM0, each with its own LUN and work directory. `plan` says they are serialised and why;
// the run's journal shows their permutations (each holds its fio passes) never overlap in time.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { NOTHING_LEFT, permutationStatuses, readRun, runDirOf, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

let lab: VsphereLab;
let playbook: string;
let lun2: string;

beforeAll(async () => {
  lab = await startVsphereLab();
  lun2 = lab.luns[1]!;
  const workdir = path.join(lab.dir, 'scratch-2');
  await fs.mkdir(workdir, { recursive: true });
  await fs.appendFile(
    lab.inventory,
    ['  lab-vm0-nodc:', '    provider: vsphere', '    vcenter: lab-vc', '    host: DC0_H0', '    vm: DC0_H0_VM0', '    version: "5.5"', `    vmfsDevice: ${lun2}`, `    allowedDevices: [${lun2}]`, '    guest:', `      workdir: ${workdir}`, `      byIdDir: ${lab.byIdDir}`, ''].join('\n'),
  );
  // one permutation per target: run in parallel (what the sharing check prevents) the two would overlap
  const book = sweepPlaybook({ name: 'one-vm', blockSizesMb: [1], formats: ['thin'], repeat: 1 }).replace('target: lab-vcenter\n', 'target: [lab-vcenter, lab-vm0-nodc]\n');
  playbook = await lab.writePlaybook('one-vm.yaml', book);
});

afterAll(async () => {
  await lab?.stop();
});

/** Each permutation's target and the wall-clock span from its start to its end in the journal. */
function spans(runDir: string): Array<{ target: string; start: number; end: number }> {
  return readRun(runDir, (db) =>
    (
      db
        .prepare(
          `SELECT p.axes AS axes,
                  (SELECT min(at) FROM journal j WHERE j.permutation_id = p.permutation_id) AS start,
                  (SELECT max(at) FROM journal j WHERE j.permutation_id = p.permutation_id) AS end
           FROM permutations p ORDER BY p.idx`,
        )
        .all() as Array<{ axes: string; start: string; end: string }>
    ).map((r) => ({ target: String((JSON.parse(r.axes) as Record<string, unknown>).target), start: Date.parse(r.start), end: Date.parse(r.end) })),
  );
}

describe('two vSphere targets on one VM, one naming its datacenter', { timeout: 240_000 }, () => {
  it('plan says they take turns (the VM), and their permutations never overlap', async () => {
    const plan = await runCli(['plan', playbook, '-i', lab.inventory]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('targets run in parallel, except these, which run one after the other (one permutation at a time):');
    expect(plan.stdout).toMatch(/ {2}lab-vcenter, lab-vm0-nodc: they share VM DC0_H0_VM0 on 127\.0\.0\.1:\d+/);
    expect(plan.stdout).toContain('is not recognised as one');

    const r = await runCli(['run', playbook, '-i', lab.inventory, '--out', await lab.newRunsDir('one-vm'), '--confirm-destroy', `${lab.vmfsDevice},${lun2}`, '--no-report', '--json'], { timeoutMs: 200_000 });
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done']);
    const s = spans(runDir);
    const a = s.filter((x) => x.target === 'lab-vcenter');
    const b = s.filter((x) => x.target === 'lab-vm0-nodc');
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    for (const x of a) for (const y of b) expect(x.end <= y.start || y.end <= x.start, JSON.stringify({ x, y })).toBe(true);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

// Replicates that are real, on the vSphere lab (issue 27, item 1): `repeat: {count: 3,
// reprovision: true}` formats the LUN, creates the disk, measures once and tears everything down
// for every repetition — the harness call log, an independent record of what reached the
// simulator, shows three creates and three removes of each permutation's datastore and disk — in
// rounds whose seeded order the run records. A kill -9 in the middle of a round and `run --resume`
// complete exactly the missing (permutation, repetition) pairs and leave nothing in the lab
// (pyvmomi); the report names the replication unit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunPlan } from '../../src/contract/plan.ts';
import type { HarnessCall } from '../../src/lab/vcsim.ts';
import { roundOrder } from '../../src/plan/rounds.ts';
import { runCli } from '../helpers/cli.ts';
import { ledgerRows, NOTHING_LEFT, permutationStatuses, readRun, resultKeys, runCliWhen, runDirOf, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

let lab: VsphereLab;
let playbook: string;

beforeAll(async () => {
  lab = await startVsphereLab();
  // VMFS3 1 MB and 8 MB blocks, thin: two permutations, three repetitions each on their own provisioning
  const text = sweepPlaybook({ name: 'replicates', blockSizesMb: [1, 8], formats: ['thin'] }).replace(/^repeat: .*$/m, 'repeat: {count: 3, reprovision: true}');
  playbook = await lab.writePlaybook('replicates.yaml', text);
}, 120_000);

afterAll(async () => {
  await lab?.stop();
});

/** the plan's header as the run stored it (its permutations are rows of their own), and the permutation ids in plan order */
const planOf = (runDir: string): RunPlan & { ids: string[] } => ({
  ...readRun(runDir, (db) => JSON.parse((db.prepare("SELECT value FROM meta WHERE key = 'plan'").get() as { value: string }).value) as RunPlan),
  ids: permutationStatuses(runDir).map((p) => p.permutationId),
});
/** (permutation/repetition) in the order the run recorded them */
const recorded = (runDir: string): string[] =>
  readRun(runDir, (db) => (db.prepare("SELECT permutation_id AS p, step FROM journal WHERE step LIKE 'repetition-%' AND event = 'recorded' ORDER BY seq").all() as Array<{ p: string; step: string }>).map((r) => `${r.p}/${r.step.slice('repetition-'.length)}`));
const datastoreOf = (runDir: string, permutationId: string): string => ledgerRows(runDir).find((r) => r.kind === 'datastore' && r.permutationId === permutationId)!.name;
const dsCalls = (log: HarnessCall[], method: string, name: string) => log.filter((c) => c.method === method && c.datastore === name).length;
const diskChanges = (log: HarnessCall[], op: 'add' | 'remove', ds: string) => log.filter((c) => c.method === 'ReconfigVM_Task').flatMap((c) => c.devices ?? []).filter((d) => d.startsWith(`${op} [${ds}]`)).length;

describe('repeat: {count: 3, reprovision: true} on the vSphere lab', () => {
  it('plan names the unit, the rounds and the extra provisioning', async () => {
    const r = await runCli(['plan', playbook, '-i', lab.inventory]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/repetitions: 3 repetitions each, each on freshly provisioned objects \(between provisionings\), in rounds \(repetition k of every permutation before any k\+1\), each round in a fresh random order, seed \d+; reprovisioning adds ~\d+m \d+s/);
  });

  it('provisions and removes each permutation three times, in the recorded rounds, and the report names the unit', async () => {
    await lab.sim.control.reset();
    const r = await runCli(['run', playbook, ...lab.runArgs(await lab.newRunsDir('whole'))], { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    const plan = planOf(runDir);
    const log = await lab.sim.control.log();
    expect(plan.ids).toHaveLength(2);
    for (const id of plan.ids) {
      const ds = datastoreOf(runDir, id);
      expect(dsCalls(log, 'CreateVmfsDatastore', ds), `${ds} created`).toBe(3);
      expect(dsCalls(log, 'RemoveDatastore', ds), `${ds} removed`).toBe(3);
      expect(diskChanges(log, 'add', ds), `disks added on ${ds}`).toBe(3);
      expect(diskChanges(log, 'remove', ds), `disks removed from ${ds}`).toBe(3);
    }
    // rounds, in the order the recorded seed gives each round
    expect(plan.replication).toMatchObject({ unit: 'between-provisionings', order: 'rounds', min: 3, max: 3 });
    expect(typeof plan.replication!.seed).toBe('number');
    expect(recorded(runDir)).toEqual([1, 2, 3].flatMap((round) => roundOrder(plan.ids, plan.replication!.seed, round).map((id) => `${id}/${round}`)));
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    const report = await runCli(['report', runDir]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain('Replication unit: the provisioning (each repetition on freshly provisioned objects): intervals include between-provisioning variance; in rounds');
    expect(report.stdout).toContain(`random order from seed ${plan.replication!.seed}`);
  }, 400_000);

  it('survives a kill -9 in the middle of a round: the resume runs exactly the missing pairs and leaves nothing behind', async () => {
    const runsDir = await lab.newRunsDir('killed');
    // killed once three repetitions are recorded and the fourth unit's datastore exists: mid round 2
    const killed = await runCliWhen(
      ['run', playbook, ...lab.runArgs(runsDir)],
      { runsDir },
      (d) => recorded(d).length >= 3 && ledgerRows(d).some((l) => l.kind === 'datastore' && l.state === 'created'),
      (pid) => void process.kill(pid, 'SIGKILL'),
    );
    expect(killed.fired && killed.code === null, killed.stderr).toBe(true);
    const runDir = killed.runDir!;
    const before = recorded(runDir);
    expect(before.length).toBeGreaterThanOrEqual(3);
    // the kill left the unit's objects in the lab
    expect((await lab.leftovers()).datastores.length).toBeGreaterThan(0);
    const plan = planOf(runDir);
    const all = plan.ids.flatMap((id) => [1, 2, 3].map((rep) => `${id}/${rep}`));
    const missing = all.filter((k) => !before.includes(k));

    await lab.sim.control.reset();
    const resumed = await runCli(['run', '--resume', runDir, '--confirm-destroy', lab.vmfsDevice, '--no-report', '--json'], { timeoutMs: 300_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    // exactly the missing pairs were measured, each once, each on a provisioning of its own
    expect(recorded(runDir).slice(before.length).sort()).toEqual([...missing].sort());
    const creates = (await lab.sim.control.log()).filter((c) => c.method === 'CreateVmfsDatastore').length;
    expect(creates).toBe(missing.length);
    expect(resultKeys(runDir)).toEqual(all.map((k) => `${k}/rnd-4k-q1t1-read`).sort());
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done']);
    expect(ledgerRows(runDir).filter((r) => ['intent', 'sent', 'created', 'remove-failed'].includes(r.state))).toEqual([]);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  }, 600_000);
});

// Every path checks the confirmation (issue 26, item 2): a plan edited in the PostgreSQL store after
// `submit` — to name another allowed LUN, or anything else — is refused by the worker before it
// sends anything, naming the run, the permutation and the device. Checked from outside storsweep:
// the vcsim harness's call log (no datastore created, nothing reconfigured) and pyvmomi (nothing of
// ours in the lab), besides the permutation's recorded status and reason.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessCall } from '../../src/lab/vcsim.ts';
import { startTestPostgres, type TestDatabase, type TestPostgres } from '../helpers/postgres.ts';
import Database from 'better-sqlite3';
import { lastJsonLine, runCli, stackTraceLines, submitRun } from '../helpers/cli.ts';
import { NOTHING_LEFT, permutationStatuses, runDirIn, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

let pgsrv: TestPostgres;
let lab: VsphereLab;
let playbook: string;
/** the LUN the run is confirmed for, and another one the inventory also allows */
let confirmed: string;
let other: string;

beforeAll(async () => {
  pgsrv = await startTestPostgres();
  lab = await startVsphereLab();
  confirmed = lab.vmfsDevice;
  other = lab.luns[1]!;
  // the second harness LUN allowed too (as a user's inventory allows several): the edited plan's
  // LUN passes every guard of the provider, so only the confirmation stands in the way
  const text = await fs.readFile(lab.inventory, 'utf8');
  const allowed = `allowedDevices: [${confirmed}]`;
  expect(text).toContain(allowed);
  await fs.writeFile(lab.inventory, text.replace(allowed, `allowedDevices: [${confirmed}, ${other}]`));
  // one permutation: a VMFS3 datastore on `confirmed`, a thin disk, one short test
  playbook = await lab.writePlaybook('confirmed.yaml', sweepPlaybook({ name: 'confirmed', blockSizesMb: [1], formats: ['thin'], repeat: 1 }));
}, 180_000);

afterAll(async () => {
  await lab?.stop();
  await pgsrv?.stop();
});

/** A run submitted to a new database, confirmed for `confirmed`; its one permutation's id. */
async function submitted(name: string): Promise<{ db: TestDatabase; runId: string; permutationId: string }> {
  const db = await pgsrv.database(name);
  const { runId } = await submitRun([playbook, '-i', lab.inventory, '--store', db.url, '--confirm-destroy', confirmed]);
  const rows = await db.query<{ permutation_id: string }>('SELECT permutation_id FROM storsweep.permutations WHERE run_id = $1', [runId]);
  expect(rows).toHaveLength(1);
  return { db, runId, permutationId: rows[0]!.permutation_id };
}

/** A worker that works until nothing is left: its exit, stderr and JSON summary. */
async function work(db: TestDatabase, name: string) {
  const r = await runCli(['worker', '-i', lab.inventory, '--store', db.url, '--until-idle', '--poll-ms', '200', '--out', path.join(lab.dir, name), '--json'], { timeoutMs: 300_000 });
  expect(stackTraceLines(r.stderr)).toEqual([]);
  return { ...r, summary: lastJsonLine<Record<string, number>>(r.stdout) };
}

/** What the lab was asked to change: every call that is not a read, a view or the session's own. */
const READ_ONLY = /^(Retrieve\w*|Query\w*|CurrentTime|CreateContainerView|CreateListView|ModifyListView|DestroyView|CreateFilter|DestroyPropertyFilter|WaitForUpdatesEx|CancelWaitForUpdates|CreatePropertyCollector|DestroyPropertyCollector|Login|Logout|SessionIsActive)$/;
async function changesSent(): Promise<string[]> {
  const calls: HarnessCall[] = await lab.sim.control.log();
  return calls.filter((c) => !READ_ONLY.test(c.method)).map((c) => `${c.method} ${(c.devices ?? []).join(';')}`.trim());
}

async function permutationRow(db: TestDatabase, runId: string) {
  const [row] = await db.query<{ status: string; reason: string | null }>('SELECT status, reason FROM storsweep.permutations WHERE run_id = $1', [runId]);
  return row!;
}

describe('a plan edited in the PostgreSQL store after submit', { timeout: 600_000 }, () => {
  it('to name another allowed LUN: the worker refuses the permutation, names the LUN, and sends nothing', async () => {
    const { db, runId, permutationId } = await submitted('lun');
    // the edit of the issue: every mention of the confirmed LUN in the stored plan becomes the other one
    await db.query('UPDATE storsweep.permutations SET plan = replace(plan, $2, $3) WHERE run_id = $1', [runId, confirmed, other]);
    const [edited] = await db.query<{ plan: string }>('SELECT plan FROM storsweep.permutations WHERE run_id = $1', [runId]);
    expect(edited!.plan).toContain(other);
    expect(edited!.plan).not.toContain(confirmed);
    await lab.sim.control.reset();

    const w = await work(db, 'w-lun');
    // the lab first: neither LUN formatted, nothing created or reconfigured; nothing of ours there
    expect(await changesSent()).toEqual([]);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    expect(w.summary).toMatchObject({ done: 0, failed: 1 });
    expect(w.code, w.stderr).toBe(1);
    const row = await permutationRow(db, runId);
    expect(row.status).toBe('failed');
    expect(row.reason).toContain(`run ${runId}, permutation ${permutationId}`);
    expect(row.reason).toContain(`destroys data on ${other}, which this run was not confirmed for (it was confirmed for ${confirmed})`);
    expect(row.reason).toContain('nothing of it was sent');
    expect(w.stderr).toContain(other);
    const journal = await db.query<{ step: string; event: string }>('SELECT step, event FROM storsweep.journal WHERE run_id = $1 AND permutation_id = $2 ORDER BY seq', [runId, permutationId]);
    expect(journal.map((j) => `${j.step} ${j.event}`)).toContain('permutation refused');
    // no step of it started: no intent, nothing in the ledger
    expect(journal.map((j) => j.event)).not.toContain('intent');
    expect(await db.query('SELECT 1 FROM storsweep.ledger WHERE run_id = $1', [runId])).toEqual([]);
  });

  it('in anything but what it destroys: the digest catches it, naming the run, the permutation and its LUN', async () => {
    const { db, runId, permutationId } = await submitted('digest');
    // the same LUN, a bigger disk: `destroys` unchanged, the plan not the one confirmed
    const [before] = await db.query<{ plan: string }>('SELECT plan FROM storsweep.permutations WHERE run_id = $1', [runId]);
    expect(before!.plan).toContain('"sizeGb":1');
    await db.query(`UPDATE storsweep.permutations SET plan = replace(plan, '"sizeGb":1', '"sizeGb":2') WHERE run_id = $1`, [runId]);
    await lab.sim.control.reset();

    const w = await work(db, 'w-digest');
    expect(await changesSent()).toEqual([]);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    expect(w.summary).toMatchObject({ done: 0, failed: 1 });
    const row = await permutationRow(db, runId);
    expect(row.status).toBe('failed');
    expect(row.reason).toContain(`run ${runId}, permutation ${permutationId}: its stored plan differs from the plan the run was confirmed with (SHA-256 `);
    expect(row.reason).toContain(`its steps destroy ${confirmed}`);
    expect(await db.query('SELECT 1 FROM storsweep.ledger WHERE run_id = $1', [runId])).toEqual([]);
  });

  it('unedited, the same run is worked as before (the check refuses only what changed)', async () => {
    const { db, runId } = await submitted('intact');
    const w = await work(db, 'w-intact');
    expect(w.code, w.stderr).toBe(0);
    expect(w.summary).toMatchObject({ done: 1, failed: 0 });
    expect((await permutationRow(db, runId)).status).toBe('done');
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

describe('the same edit in run.sqlite', { timeout: 600_000 }, () => {
  it('run --resume refuses it before anything is sent, even when --confirm-destroy names the edited LUN', async () => {
    const runsDir = await lab.newRunsDir('sqlite');
    // a run whose one permutation failed (the datastore could not be made): resume redoes it
    await lab.sim.control.reset();
    await lab.sim.control.fault({ method: 'CreateVmfsDatastore', fault: 'HostConfigFault', message: 'injected: LUN busy', count: 5 });
    const first = await runCli(['run', playbook, ...lab.runArgs(runsDir), '--retries', '0'], { timeoutMs: 180_000 });
    expect(first.code, first.stderr).toBe(1);
    const runDir = runDirIn(runsDir)!;
    const [perm] = permutationStatuses(runDir);
    expect(perm!.status).toBe('failed');
    const db = new Database(path.join(runDir, 'run.sqlite'));
    let runId: string;
    try {
      runId = (JSON.parse((db.prepare("SELECT value FROM meta WHERE key = 'meta'").get() as { value: string }).value) as { runId: string }).runId;
      db.prepare('UPDATE permutations SET plan = replace(plan, ?, ?)').run(confirmed, other);
    } finally {
      db.close();
    }
    await lab.sim.control.reset();

    for (const confirm of [other, confirmed]) {
      const r = await runCli(['run', '--resume', runDir, '--confirm-destroy', confirm, '--no-report', '--json'], { timeoutMs: 180_000 });
      expect(r.code, r.stderr).toBe(1);
      expect(stackTraceLines(r.stderr)).toEqual([]);
      expect(r.stderr).toContain(`refused: run ${runId}, permutation ${perm!.permutationId}: its stored plan destroys data on ${other}, which this run was not confirmed for (it was confirmed for ${confirmed})`);
    }
    // refused before anything: no call that changes the lab, nothing of ours there, the permutation as it was
    expect(await changesSent()).toEqual([]);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['failed']);
  });
});

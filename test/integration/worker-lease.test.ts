// A worker that loses its lease touches nothing more (issue 17, review finding 1): its lease
// session is ended by the server (pg_terminate_backend, as a DBA or a failover would) just after it
// attached its permutation's disk; the other worker takes the permutation over at once. Checked from
// outside storsweep: the harness's call log (what each vCenter session sent, and when each
// reconfigure task ran: slowTask makes them last) and the shared store (journal, ledger, results).
// A's fio waits at a gate (test/helpers/fio-gate.ts) that never opens: A is measuring when its
// lease is ended, however slowly the machine got it there.
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessCall } from '../../src/lab/vcsim.ts';
import { PgRunStoreBackend } from '../../src/results/pg-store.ts';
import { startTestPostgres, type TestDatabase, type TestPostgres } from '../helpers/postgres.ts';
import { lastJsonLine, stackTraceLines, startCli, submitRun, type CliResult } from '../helpers/cli.ts';
import { fioGate } from '../helpers/fio-gate.ts';
import { waitFor } from '../helpers/wait.ts';
import { NOTHING_LEFT, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

let pgsrv: TestPostgres;
let lab: VsphereLab;

beforeAll(async () => {
  pgsrv = await startTestPostgres();
  lab = await startVsphereLab();
}, 180_000);

afterAll(async () => {
  await lab?.stop();
  await pgsrv?.stop();
});

function worker(db: TestDatabase, out: string, extra: string[], env: Record<string, string> = {}): { pid: number; done: Promise<CliResult> } {
  return startCli(['worker', '-i', lab.inventory, '--store', db.url, '--poll-ms', '200', '--lease', '10', '--out', out, '--json', ...extra], { timeoutMs: 300_000, env });
}

/**
 * What a session may still send once its lease is gone: nothing that changes the lab. Reads may
 * still go out in the round trip before the worker hears of the loss (a host-counter query chain
 * already under way), and it closes its own vCenter session; a reconfigure, a datastore created or
 * removed, a file deleted — anything else — fails the test.
 */
const READ_ONLY = /^(Retrieve\w*|Query\w*|CurrentTime|CreateContainerView|CreateListView|ModifyListView|DestroyView|CreateFilter|DestroyPropertyFilter|WaitForUpdatesEx|CancelWaitForUpdates|CreatePropertyCollector|DestroyPropertyCollector|Logout)$/;

describe('a worker that loses its lease', { timeout: 600_000 }, () => {
  it('sends nothing more to the lab and writes nothing to the run; the other worker takes over, cleans up and redoes it', async () => {
    await lab.sim.control.reset();
    // each reconfigure task runs 3 s: a teardown by the worker that lost its lease would overlap the taker's
    await lab.sim.control.slowTask('ReconfigVM_Task', 3000);
    const db = await pgsrv.database('lease');
    const pb = await lab.writePlaybook('lease.yaml', sweepPlaybook({ name: 'lease', blockSizesMb: [1, 2, 4], formats: ['thin'], repeat: 1 }));
    const gateA = fioGate(path.join(lab.dir, 'fio-gate-a'));
    const { runId } = await submitRun([pb, '-i', lab.inventory, '--store', db.url, '--confirm-destroy', lab.vmfsDevice]);
    const out = path.join(lab.dir, 'w-lease');
    const sql = new pg.Client(db.connection);
    await sql.connect();
    const backend = await PgRunStoreBackend.connect(db.storeConnection, `postgresql://${db.name}`);
    try {
      const store = await backend.openRun(runId);
      // A alone first: it takes the first permutation and measures on its disk (its fio at the
      // gate); B starts then and polls (its lease session open: the group is A's); B's fio is fio
      const A = worker(db, out, ['--once'], gateA.env);
      const victim = await waitFor(async () => (await store.ledger()).find((l) => l.kind === 'disk' && l.state === 'created')?.permutationId, { what: 'worker A to attach a disk', timeoutMs: 180_000 });
      await waitFor(() => gateA.held().length === 1, { what: "A's fio at the gate", timeoutMs: 120_000 });
      const B = worker(db, out, ['--until-idle']);
      const leaseOf = async (w: { pid: number }) => (await sql.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name LIKE $1`, [`storsweep worker %:${w.pid}`])).rows;
      await waitFor(async () => (await leaseOf(B)).length === 1, { what: "B's lease session", timeoutMs: 120_000 });
      const rows = await leaseOf(A);
      expect(rows).toHaveLength(1);
      const killedAt = Date.now();
      await sql.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      // A stops its measurement on losing its lease (the gate never opens for it)
      await waitFor(() => gateA.held().length === 0, { what: 'A to stop its fio' });
      const [a, b] = await Promise.all([A.done, B.done]);
      expect(stackTraceLines(a.stderr)).toEqual([]);
      expect(b.code, b.stderr).toBe(0);
      expect(a.stderr).toContain('lease');
      const calls: HarnessCall[] = await lab.sim.control.log();
      // A's vCenter session: the one that attached the victim's disk
      const attach = calls.find((x) => x.method === 'ReconfigVM_Task' && (x.devices ?? []).some((d) => d.startsWith('add ') && d.includes(victim)));
      expect(attach?.session).toBeTruthy();
      const sessionA = attach!.session;
      const afterKill = calls.filter((x) => x.session === sessionA && x.start >= killedAt && !READ_ONLY.test(x.method));
      expect(afterKill.map((x) => `${x.method} ${(x.devices ?? []).join(';')}`), 'worker A sent these after its lease was lost').toEqual([]);
      // the victim's disk was detached by B's session, and no two sessions' reconfigure tasks on the VM overlapped
      const detach = calls.filter((x) => x.method === 'ReconfigVM_Task' && (x.devices ?? []).some((d) => d.startsWith('remove ') && d.includes(victim)));
      expect(detach.length).toBeGreaterThan(0);
      for (const d of detach) expect(d.session).not.toBe(sessionA);
      const tasks = calls.filter((x) => x.method === 'ReconfigVM_Task').map((x) => ({ session: x.session, vm: x.this, from: x.start, to: x.taskEnd ?? x.end }));
      const clash = tasks.flatMap((t, i) => tasks.slice(i + 1).filter((u) => u.vm === t.vm && u.session !== t.session && u.from < t.to && t.from < u.to).map((u) => `${t.session} [${t.from}, ${t.to}] and ${u.session} [${u.from}, ${u.to}]`));
      expect(clash, 'two workers reconfigured one VM at once').toEqual([]);

      const sa = lastJsonLine<Record<string, number>>(a.stdout);
      const sb = lastJsonLine<Record<string, number>>(b.stdout);
      // A gave nothing back (its job stayed active): B found it active and took it over
      expect(sa).toMatchObject({ done: 0, givenBack: 0, abandoned: 1 });
      expect(sb).toMatchObject({ done: 3, alreadyDone: 0, takenOver: 1, givenBack: 0, abandoned: 0 });

      // the run: A wrote nothing after the kill (no 'interrupted', no teardown of its own); B redid it
      const journal = await store.journal();
      const victimEvents = journal.filter((j) => j.permutationId === victim).map((j) => `${j.step} ${j.event}`);
      expect(victimEvents).not.toContain('permutation interrupted');
      expect(victimEvents).toContain('permutation redo');
      expect((await store.permutations()).map((p) => p.status)).toEqual(['done', 'done', 'done']);
      const keys = (await store.records()).map((r) => `${r.permutationId}/${r.repetition}/${r.test.id}`);
      expect(new Set(keys).size).toBe(3);
      expect(keys).toHaveLength(3);
      expect(await store.leftovers()).toEqual([]);
      const { rows: jobs } = await sql.query<{ state: string }>(`SELECT state FROM storsweep_queue.job WHERE data->>'runId' = $1`, [runId]);
      // every job completed (the last one's worker deletes the run's queues with them)
      expect(jobs.filter((j) => j.state !== 'completed')).toEqual([]);
    } finally {
      await backend.close();
      await sql.end();
    }
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

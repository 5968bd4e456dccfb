// The queue of a submitted run over its life (issue 17 review: findings 5, 12, 16, 18), on a real
// PostgreSQL (test/helpers/postgres.ts) with real `storsweep submit` / `worker` / `status` /
// `cleanup` processes and local fio targets:
// - a job pg-boss archived while it waited (its keep_until passed: 14 days by default) is queued
//   again by the next worker, and the permutation runs; `status` says so before;
// - a finished run's queues are deleted (by the worker completing the last job, or by `cleanup`);
//   two deleters at once take turns, each in one transaction (no queue by queue fallback);
// - a worker records the environment fingerprint of the targets it connects to;
// - a local target is worked only on the machine that submitted the run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QUEUE_SCHEMA, WorkQueue, type QueueGroup } from '../../src/run/work-queue.ts';
import { localStoreLab, type LocalStoreLab } from '../helpers/local-store-lab.ts';
import { queueBossOf, type TestDatabase, type TestPostgres } from '../helpers/postgres.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { lastJsonLine, runCli, stackTraceLines, submitRun } from '../helpers/cli.ts';

let lab: LocalStoreLab;
let pgsrv: TestPostgres;
let dir: string;

const PLAYBOOK = ['name: queue-ops', 'target: [a, b]', 'matrix:', '  workload:', '    profile: [rd]', 'workloads:', '  rd: { iometer: "4k 100% read 100% random" }', ...quickSettings({ fileSize: '8m' }), ''].join('\n');

beforeAll(async () => {
  lab = await localStoreLab('queue-ops', { playbook: PLAYBOOK, targets: ['a', 'b'] });
  ({ dir, pgsrv } = lab);
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});

const submit = (db: TestDatabase) => submitRun([lab.playbook, '-i', lab.inventory, '--store', db.url]);

const worker = (db: TestDatabase, out: string) => runCli(['worker', '-i', lab.inventory, '--store', db.url, '--until-idle', '--poll-ms', '200', '--out', out, '--json'], { timeoutMs: 180_000 });

const sql = <T extends pg.QueryResultRow = Record<string, unknown>>(db: TestDatabase, text: string, params: unknown[] = []): Promise<T[]> => db.query<T>(text, params);

async function statusJson(db: TestDatabase, runId: string): Promise<{ pending: number; done: number; unqueued?: number }> {
  const r = await runCli(['status', '--run', runId, '--store', db.url, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { pending: number; done: number; unqueued?: number };
}

const queuesOf = async (db: TestDatabase, runId: string) => (await sql<{ name: string }>(db, `SELECT name FROM ${QUEUE_SCHEMA}.queue WHERE name LIKE $1 ORDER BY name`, [`storsweep_${runId}_%`])).map((r) => r.name);

// Each test has a database, a submitted run and output directory of its own: they run at once.
describe.concurrent('the queue of a submitted run', { timeout: 300_000 }, () => {
  it('jobs pg-boss archived while waiting are queued again and run; the last job deletes the queues; the worker records the fingerprint', async () => {
    const db = await pgsrv.database('restore');
    const { runId } = await submit(db);
    // a job waits for ever: pg-boss never archives it for its age
    const waiting = await sql<{ keep: string }>(db, `SELECT keep_until::text AS keep FROM ${QUEUE_SCHEMA}.job`);
    expect(waiting.map((r) => r.keep)).toEqual(['infinity', 'infinity']);
    // what happens to a job queued before that (or once pg-boss's 14 days passed): its keep_until
    // is in the past and pg-boss's maintenance (every submit's and worker's, every 2 minutes)
    // moves it to the archive, where no worker fetches it
    await sql(db, `UPDATE ${QUEUE_SCHEMA}.job SET keep_until = now() - interval '1 second'`);
    const boss = queueBossOf(db);
    await boss.start();
    await (boss as unknown as { maintain(): Promise<unknown> }).maintain();
    await boss.stop({ graceful: false, wait: true });
    expect(await sql(db, `SELECT id FROM ${QUEUE_SCHEMA}.job`)).toEqual([]);
    expect((await sql(db, `SELECT id FROM ${QUEUE_SCHEMA}.archive`)).length).toBe(2);

    // status says so (--json and text at once)
    const [json, text] = await Promise.all([statusJson(db, runId), runCli(['status', '--run', runId, '--store', db.url])]);
    expect(json).toMatchObject({ pending: 2, unqueued: 2 });
    expect(text.stdout).toContain('warning: 2 of 2 unfinished permutation(s) have no job on the run\'s queues');

    // the next worker queues them again and runs them
    const w = await worker(db, path.join(dir, 'out-restore'));
    expect(w.code, w.stderr).toBe(0);
    expect(stackTraceLines(w.stderr)).toEqual([]);
    expect(w.stderr).toContain(`run ${runId}: 2 unfinished permutation(s) had no job on the queue (archived by pg-boss or removed); queued again`);
    expect(lastJsonLine(w.stdout)).toMatchObject({ done: 2, failed: 0 });
    expect(await statusJson(db, runId)).toMatchObject({ pending: 0, done: 2 });

    // every permutation final: the worker that completed the last job deleted the run's queues
    expect(await queuesOf(db, runId)).toEqual([]);
    const journal = await sql<{ event: string }>(db, `SELECT event FROM storsweep.journal WHERE run_id = $1 AND permutation_id IS NULL ORDER BY seq`, [runId]);
    expect(journal.map((j) => j.event)).toEqual(expect.arrayContaining(['submitted', 'jobs restored', 'queues deleted']));

    // the environment fingerprint: what the worker read of each target it connected to, as `run` records it
    const [meta] = await sql<{ value: string }>(db, `SELECT value FROM storsweep.run_meta WHERE run_id = $1 AND key = 'meta'`, [runId]);
    const fp = (JSON.parse(meta!.value) as { fingerprint: Record<string, string> }).fingerprint;
    for (const t of ['a', 'b']) {
      expect(fp[`${t}/workload.tool`]).toBe('fio');
      expect(Object.keys(fp).filter((k) => k.startsWith(`${t}/`)).length).toBeGreaterThan(1);
    }
  });

  it('cleanup deletes the queues of a finished run, and keeps those of a run with work left', async () => {
    const db = await pgsrv.database('cleanup');
    const { runId } = await submit(db);
    const queues = await queuesOf(db, runId);
    expect(queues.length).toBe(2);
    const cleanup = () => runCli(['cleanup', '--run', runId, '--store', db.url]);
    let r = await cleanup();
    expect(r.code, r.stderr).toBe(0);
    expect(await queuesOf(db, runId)).toEqual(queues);
    // every permutation final (as a worker that died before deleting would leave it)
    await sql(db, `UPDATE storsweep.permutations SET status = 'failed', reason = 'test' WHERE run_id = $1`, [runId]);
    const dry = await runCli(['cleanup', '--run', runId, '--store', db.url, '--dry-run']);
    expect(dry.stdout).toContain(`would delete the run's queues ${queues.join(', ')}`);
    expect(await queuesOf(db, runId)).toEqual(queues);
    r = await cleanup();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`deleted the run's queues ${queues.join(', ')}`);
    expect(await queuesOf(db, runId)).toEqual([]);
    r = await cleanup();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('queue');
  });

  it('two deleters at once delete every queue between them, each in one transaction, none twice', async () => {
    const db = await pgsrv.database('delete');
    const [a, b] = await Promise.all([WorkQueue.open(db.storeConnection), WorkQueue.open(db.storeConnection)]);
    try {
      const groups: QueueGroup[] = Array.from({ length: 12 }, (_, i) => ({ queue: `storsweep_del_g${i}`, targets: [`t${i}`] }));
      for (const g of groups) await a.boss.createQueue(g.queue, { name: g.queue, policy: 'standard' });
      // jobs in every state the run can leave: completed and waiting (a run made final by hand)
      for (const g of groups.slice(0, 6)) await a.boss.send(g.queue, { n: 1 });
      const oneByOne = vi.spyOn(WorkQueue.prototype as unknown as { deleteQueuesOneByOne: () => Promise<string[]> }, 'deleteQueuesOneByOne');
      const [da, dbb] = await Promise.all([a.deleteQueues(groups), b.deleteQueues(groups)]);
      expect(oneByOne).not.toHaveBeenCalled();
      oneByOne.mockRestore();
      expect([...da, ...dbb].sort()).toEqual(groups.map((g) => g.queue).sort());
      expect(await sql(db, `SELECT name FROM ${QUEUE_SCHEMA}.queue`)).toEqual([]);
      expect(await sql(db, `SELECT 1 FROM ${QUEUE_SCHEMA}.job`)).toEqual([]);
      // the partitions are gone with them
      expect(await sql(db, `SELECT i.inhrelid FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'job'`, [QUEUE_SCHEMA])).toEqual([]);
      expect(await a.deleteQueues(groups)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('local targets are worked only on the machine that submitted the run', async () => {
    const db = await pgsrv.database('local');
    const { runId, stderr } = await submit(db);
    expect(stderr).toContain(`note: a, b are this machine (a local target, or reached at a loopback address): only workers on this machine (${os.hostname()}) take their permutations`);
    // as if submitted on another machine
    await sql(db, `UPDATE storsweep.run_meta SET value = jsonb_set(value::jsonb, '{submittedFrom}', '{"host": "elsewhere", "id": "another-machine"}')::text WHERE run_id = $1 AND key = 'queue'`, [runId]);
    const w = await worker(db, path.join(dir, 'out-local'));
    expect(w.code, w.stderr).toBe(0);
    expect(w.stderr.match(/are the submitting machine itself/g)?.length).toBe(1);
    expect(w.stderr).toContain(`note: run ${runId}: a, b are the submitting machine itself (elsewhere: a local target, or reached at a loopback address); only a worker there takes their permutations, not this one (${os.hostname()})`);
    expect(lastJsonLine(w.stdout)).toMatchObject({ done: 0, failed: 0 });
    expect(await statusJson(db, runId)).toMatchObject({ pending: 2, done: 0, unqueued: 0 });
    expect(fs.existsSync(path.join(dir, 'out-local', runId, 'raw'))).toBe(false);
  });
});

// The run store port (src/results/port.ts): one contract, run against both adapters — SQLite on a
// real run.sqlite in a temp dir, PostgreSQL on a real server from Debian's package
// (test/helpers/postgres.ts). Then what only the PostgreSQL store has: versioned migrations, many
// runs in one database, the dashboard views.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunPlan } from '../../src/contract/plan.ts';
import { RunNotFound, StoreLost, StoreSchemaTooNew } from '../../src/errors.ts';
import { LATEST_VERSION, MIGRATIONS } from '../../src/results/pg-migrations.ts';
import { PgRunStoreBackend, type PgConnection } from '../../src/results/pg-store.ts';
import { isStoreLost, type RunMeta, type RunStore } from '../../src/results/port.ts';
import { NULL_LATENCY, testIdentity, type ResultRecord } from '../../src/results/record.ts';
import { SqliteRunStore } from '../../src/results/sqlite-store.ts';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.ts';

const metaOf = (runId: string): RunMeta => ({ runId, playbook: 'pb', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 't', startedAt: '2024-01-01T00:00:00.000Z', fingerprint: { storsweep: '0.1.0' }, insecureEndpoints: [] });
const planOf = (runId: string, ids: string[]): RunPlan => ({
  version: 1,
  runId,
  playbook: 'pb',
  target: 't',
  provider: 'local',
  axes: [{ name: 'workload.profile', values: ids }],
  baseline: { 'workload.profile': ids[0]! },
  profiles: {},
  permutations: ids.map((id, index) => ({ index, permutationId: id, axes: { 'workload.profile': id }, workload: id, steps: [], repetitions: 2, estimateSec: 1 })),
  totalEstimateSec: ids.length,
});
const rec = (runId: string, permutationId: string, repetition: number, pattern: 'read' | 'write', iops: number): ResultRecord => ({
  runId,
  permutationId,
  axes: { 'workload.profile': permutationId },
  repetition,
  test: testIdentity({ pattern, blockSizeBytes: 1 << 20, queueDepth: 8, threads: 1, readPercent: pattern === 'read' ? 100 : 0 }),
  iops,
  bytesPerSecond: iops * (1 << 20),
  latencyUs: { ...NULL_LATENCY, mean: 1000 / iops, p99: 2000 / iops },
  cpuPercent: null,
  tool: { name: 'fio', version: 'fio-3.33' },
  rawPath: `raw/${permutationId}/rep${repetition}/${pattern}.json`,
  metadata: { z: 1, a: 'key order kept' },
});
const disk = { kind: 'vmdk', name: 'ss-r-pA-disk' };

interface Adapter {
  create(runId: string, ids: string[]): Promise<RunStore>;
  /** the same run through a new connection (another process would see this) */
  reopen(runId: string): Promise<RunStore>;
}

let tmp: string;
let pgsrv: TestPostgres;
let pgConn: PgConnection;
const backends: PgRunStoreBackend[] = [];
const opened: RunStore[] = [];

async function pgBackend(conn = pgConn): Promise<PgRunStoreBackend> {
  const b = await PgRunStoreBackend.connect(conn, `postgresql://storsweep@127.0.0.1:${conn.port}/${conn.database}`);
  backends.push(b);
  return b;
}
const connOf = (c: pg.ClientConfig): PgConnection => ({ host: c.host!, port: c.port!, user: c.user!, database: c.database!, password: c.password as string });

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-store-contract-'));
  pgsrv = await startTestPostgres();
  pgConn = connOf((await pgsrv.database('contract')).connection);
}, 120_000);
afterAll(async () => {
  await pgsrv?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const b of backends.splice(0)) await b.close();
});

const adapters: Record<string, () => Adapter> = {
  sqlite: () => ({
    create: async (runId, ids) => keep(await SqliteRunStore.create(path.join(tmp, runId), metaOf(runId), planOf(runId, ids))),
    reopen: async (runId) => keep(await SqliteRunStore.open(path.join(tmp, runId))),
  }),
  postgresql: () => ({
    create: async (runId, ids) => keep(await (await pgBackend()).createRun(metaOf(runId), planOf(runId, ids), { runDir: tmp })),
    reopen: async (runId) => keep(await (await pgBackend()).openRun(runId)),
  }),
};
function keep(s: RunStore): RunStore {
  opened.push(s);
  return s;
}

let n = 0;
const freshId = () => `r${Date.now().toString(36)}${++n}`;

describe.each(Object.keys(adapters))('run store contract: %s', (name) => {
  const a = () => adapters[name]!();

  it('keeps meta, the plan (baseline too) and one pending row per permutation, in plan order; another connection reads the same', async () => {
    const id = freshId();
    const s = await a().create(id, ['pB', 'pA']);
    expect(s.runId).toBe(id);
    expect(s.kind).toBe(name);
    const again = await a().reopen(id);
    expect(await again.meta()).toEqual(metaOf(id));
    expect((await again.plan()).permutations.map((p) => p.permutationId)).toEqual(['pB', 'pA']);
    expect(await again.planBaseline()).toEqual({ 'workload.profile': 'pB' });
    expect((await again.permutations()).map((p) => [p.permutationId, p.index, p.status, p.completedRepetitions, p.attempts])).toEqual([
      ['pB', 0, 'pending', 0, 0],
      ['pA', 1, 'pending', 0, 0],
    ]);
    expect(await again.counts()).toEqual({ pending: 2, running: 0, done: 0, failed: 0 });
    await again.setMeta('fingerprint', { host: 'x' });
    expect(await s.getMeta('fingerprint')).toEqual({ host: 'x' });
    expect(await s.getMeta('nothing')).toBeNull();
  });

  it('status changes with their journal entries; counts follow', async () => {
    const s = await a().create(freshId(), ['pA', 'pB', 'pC']);
    await s.markRunning('pA');
    await s.markFinished('pA', 'done', null);
    await s.markRunning('pB');
    await s.markFinished('pB', 'failed', 'boom');
    const perms = await s.permutations();
    expect(perms.map((p) => [p.status, p.reason, p.attempts])).toEqual([
      ['done', null, 1],
      ['failed', 'boom', 1],
      ['pending', null, 0],
    ]);
    expect(await s.counts()).toEqual({ pending: 1, running: 0, done: 1, failed: 1 });
    const j = await s.journal();
    expect(j.map((e) => [e.permutationId, e.step, e.event, e.detail])).toEqual([
      ['pA', 'permutation', 'start', null],
      ['pA', 'permutation', 'done', null],
      ['pB', 'permutation', 'start', null],
      ['pB', 'permutation', 'failed', { reason: 'boom' }],
    ]);
    expect(j.map((e) => e.seq)).toEqual([...j.map((e) => e.seq)].sort((x, y) => x - y));
    expect(typeof j[0]!.seq).toBe('number');
    expect(j[0]!.at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('a target that never connected: every permutation not done gets the reason in the journal; pending ones show it', async () => {
    const s = await a().create(freshId(), ['pA', 'pB', 'pC']);
    await s.markRunning('pA');
    await s.markFinished('pA', 'done', null);
    await s.markRunning('pB');
    expect(await s.noteNotStarted('connect', 'connect failed: refused', { target: 't' })).toBe(2);
    const perms = await s.permutations();
    expect(perms.map((p) => [p.permutationId, p.status, p.reason])).toEqual([
      ['pA', 'done', null],
      ['pB', 'running', null],
      ['pC', 'pending', 'connect failed: refused'],
    ]);
    expect((await s.journal()).filter((e) => e.step === 'connect').map((e) => [e.permutationId, e.event, e.detail])).toEqual([
      ['pB', 'failed', { reason: 'connect failed: refused', target: 't' }],
      ['pC', 'failed', { reason: 'connect failed: refused', target: 't' }],
    ]);
  });

  it('records: a repetition at once, read back in plan order byte for byte; a redo drops later repetitions', async () => {
    const id = freshId();
    const s = await a().create(id, ['pB', 'pA']);
    await s.addRepetition('pA', 1, [rec(id, 'pA', 1, 'write', 10), rec(id, 'pA', 1, 'read', 20)]);
    await s.addRepetition('pB', 1, [rec(id, 'pB', 1, 'read', 30)]);
    await s.addRepetitions([
      { permutationId: 'pB', repetition: 2, records: [rec(id, 'pB', 2, 'read', 31)] },
      { permutationId: 'pA', repetition: 2, records: [rec(id, 'pA', 2, 'write', 11)] },
    ]);
    const got = await (await a().reopen(id)).records();
    expect(got.map((r) => [r.permutationId, r.repetition, r.test.id])).toEqual([
      ['pB', 1, 'seq-1m-q8t1-read'],
      ['pB', 2, 'seq-1m-q8t1-read'],
      ['pA', 1, 'seq-1m-q8t1-write'],
      ['pA', 1, 'seq-1m-q8t1-read'],
      ['pA', 2, 'seq-1m-q8t1-write'],
    ]);
    expect(JSON.stringify(got[2])).toBe(JSON.stringify(rec(id, 'pA', 1, 'write', 10)));
    // eachRecord (what a report reads): the same records in the same order, one at a time
    const each: unknown[] = [];
    await (await a().reopen(id)).eachRecord((r) => each.push(r));
    expect(each).toEqual(got);
    expect((await s.permutations()).map((p) => p.completedRepetitions)).toEqual([2, 2]);
    expect(await s.discardRepetitionsAfter('pA', 1)).toBe(1);
    expect((await s.records()).filter((r) => r.permutationId === 'pA').map((r) => r.repetition)).toEqual([1, 1]);
    expect((await s.journal()).filter((e) => e.event === 'recorded').map((e) => [e.permutationId, e.step, e.detail])).toEqual([
      ['pA', 'repetition-1', { records: 2 }],
      ['pB', 'repetition-1', { records: 1 }],
      ['pB', 'repetition-2', { records: 1 }],
      ['pA', 'repetition-2', { records: 1 }],
    ]);
  });

  it('a repetition whose records cannot all be written leaves none of them and no counter change', async () => {
    const id = freshId();
    const s = await a().create(id, ['pA']);
    await s.addRepetition('pA', 1, [rec(id, 'pA', 1, 'read', 20)]);
    // the same test twice in one repetition breaks the key: the whole repetition is refused
    await expect(s.addRepetition('pA', 2, [rec(id, 'pA', 2, 'read', 21), rec(id, 'pA', 2, 'read', 22)])).rejects.toThrow();
    expect((await s.records()).map((r) => r.repetition)).toEqual([1]);
    expect((await s.permutations())[0]!.completedRepetitions).toBe(1);
  });

  it('ledger: an intent is visible to another connection as soon as the call resolves (before apply is called)', async () => {
    const id = freshId();
    const s = await a().create(id, ['pA']);
    await s.ledgerIntent('pA', 'vsphere', disk, { operation: 'attach' });
    const other = await a().reopen(id);
    expect(await other.ledgerRow(disk.kind, disk.name)).toMatchObject({ permutationId: 'pA', provider: 'vsphere', state: 'intent', objectId: null, data: { operation: 'attach' } });
  });

  it('ledger: intent → sent → created → removed, with journal entries; sent only from intent/sent/not-sent', async () => {
    const s = await a().create(freshId(), ['pA', 'pB']);
    await s.ledgerIntent('pA', 'vsphere', disk, { operation: 'attach' });
    await s.ledgerSent('pA', disk, { vm: 'vm-1', controllerKey: 1000 });
    expect(await s.ledgerRow(disk.kind, disk.name)).toMatchObject({ state: 'sent', data: { vm: 'vm-1', controllerKey: 1000 } });
    await s.ledgerCreated('pA', { ...disk, provider: 'vsphere', id: 'disk-42', data: { vm: 'vm-1', key: 2000 } });
    expect(await s.ledgerRow(disk.kind, disk.name)).toMatchObject({ state: 'created', objectId: 'disk-42', data: { vm: 'vm-1', key: 2000 } });
    // a late ctx.sent after created changes nothing
    await s.ledgerSent('pA', disk, { other: true });
    expect(await s.ledgerRow(disk.kind, disk.name)).toMatchObject({ state: 'created', data: { vm: 'vm-1', key: 2000 } });
    const other = { kind: 'datastore', name: 'ss-r-pB-ds' };
    await s.ledgerIntent('pB', 'esxi-shell', other, {});
    expect((await s.leftovers()).map((o) => o.name)).toEqual([disk.name, other.name]);
    expect((await s.ledger({ permutationId: 'pB' })).map((o) => o.name)).toEqual([other.name]);
    await s.ledgerState(disk, 'removed');
    await s.ledgerState(other, 'remove-failed', 'still mounted');
    expect((await s.ledger({ live: true })).map((o) => [o.name, o.state, o.error])).toEqual([[other.name, 'remove-failed', 'still mounted']]);
    expect((await s.leftovers()).map((o) => o.name)).toEqual([other.name]);
    expect(await s.ledgerRow('vmdk', 'nothing')).toBeUndefined();
    expect((await s.journal()).filter((e) => e.step === `vmdk:${disk.name}`).map((e) => [e.event, e.detail])).toEqual([
      ['intent', null],
      ['sent', null],
      ['created', { id: 'disk-42' }],
    ]);
    const rows = await s.ledger();
    expect(rows[0]!.seq).toBeLessThan(rows[1]!.seq);
  });

  it('ledger: a new intent on a final row starts from scratch; on a live row it keeps what proves the object ours', async () => {
    const s = await a().create(freshId(), ['pA']);
    await s.ledgerIntent('pA', 'vsphere', disk, { operation: 'attach' });
    await s.ledgerSent('pA', disk, { vm: 'vm-1' });
    await s.ledgerIntent('pA', 'vsphere', disk, { operation: 'again' });
    expect(await s.ledgerRow(disk.kind, disk.name)).toMatchObject({ state: 'sent', data: { vm: 'vm-1' } });
    await s.ledgerCreated('pA', { ...disk, provider: 'vsphere', id: 'disk-1', data: { vm: 'vm-1' } });
    await s.ledgerState(disk, 'removed');
    await s.ledgerIntent('pA', 'vsphere', disk, { operation: 'redo' });
    expect(await s.ledgerRow(disk.kind, disk.name)).toMatchObject({ state: 'intent', objectId: null, error: null, data: { operation: 'redo' } });
    await s.ledgerState(disk, 'not-sent', 'failed before sending');
    expect(await s.ledgerRow(disk.kind, disk.name)).toMatchObject({ state: 'not-sent', error: 'failed before sending' });
  });

  it('says where the run is without any password', async () => {
    const s = await a().create(freshId(), ['pA']);
    expect(s.where).not.toContain(pgsrv.server.password);
    expect(s.where).toContain(name === 'sqlite' ? tmp : `in postgresql://storsweep@127.0.0.1:${pgConn.port}/`);
  });
});

describe('PostgreSQL store', () => {
  it('migrations: applied once, numbered, recorded; several controllers starting at once migrate once', async () => {
    const db = await pgsrv.database('mig');
    const conn = connOf(db.connection);
    await Promise.all([pgBackend(conn), pgBackend(conn), pgBackend(conn)]);
    const c = new pg.Client(db.connection);
    await c.connect();
    try {
      const { rows } = await c.query<{ version: number; name: string }>('SELECT version, name FROM storsweep.schema_migrations ORDER BY version');
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
      expect(rows.at(-1)!.version).toBe(LATEST_VERSION);
    } finally {
      await c.end();
    }
  });

  it('every session commits with synchronous_commit=on, even where the database defaults to off (the ledger rule needs flushed commits)', async () => {
    const db = await pgsrv.database('sync');
    const admin = new pg.Client(db.connection);
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${db.name} SET synchronous_commit = off`);
    } finally {
      await admin.end();
    }
    const probe = new pg.Client(db.connection);
    await probe.connect();
    try {
      // the setting bites for an ordinary session: the test would prove nothing otherwise
      expect((await probe.query('SHOW synchronous_commit')).rows[0]).toEqual({ synchronous_commit: 'off' });
    } finally {
      await probe.end();
    }
    const b = await pgBackend(connOf(db.connection));
    const seen = await Promise.all([1, 2, 3].map(async () => (await b.pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit));
    expect(seen).toEqual(['on', 'on', 'on']);
  });

  it('a least-privilege role (CONNECT, schema USAGE, DML) uses a store its DBA migrated: no CREATE is needed once up to date', async () => {
    const db = await pgsrv.database('lp');
    await pgBackend(connOf(db.connection)); // the DBA's first start migrates
    const role = `ss_worker_${process.pid}`;
    const admin = new pg.Client(db.connection);
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'w0rker-pw'`);
      await admin.query(`REVOKE ALL ON DATABASE ${db.name} FROM PUBLIC`);
      await admin.query(`GRANT CONNECT ON DATABASE ${db.name} TO ${role}`);
      await admin.query(`GRANT USAGE ON SCHEMA storsweep TO ${role}`);
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA storsweep TO ${role}`);
      await admin.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA storsweep TO ${role}`);
    } finally {
      await admin.end();
    }
    const b = await pgBackend({ ...connOf(db.connection), user: role, password: 'w0rker-pw' });
    const s = await b.createRun(metaOf('lp'), planOf('lp', ['pA']));
    opened.push(s);
    await s.ledgerIntent('pA', 'vsphere', disk, {});
    expect((await s.counts()).pending).toBe(1);
  });

  it('a stalled server does not hang the sweep: the query gives up after query_timeout, as a lost store, and a call queued behind it does not hang either', async () => {
    const db = await pgsrv.database('stall');
    const b = await pgBackend({ ...connOf(db.connection), queryTimeoutMs: 1500 });
    const s = await b.createRun(metaOf('st'), planOf('st', ['pA']));
    opened.push(s);
    const admin = new pg.Client(db.connection);
    await admin.connect();
    const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'storsweep'", [db.name]);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) process.kill(r.pid, 'SIGSTOP');
    try {
      // no clock here: the calls end (the test's own timeout is only a hang guard) and the first
      // ended by the client's query_timeout (its message), not by the server or the connection
      const [a, c] = await Promise.allSettled([s.ledgerIntent('pA', 'vsphere', disk, {}), s.counts()]);
      expect(a.status).toBe('rejected');
      // The call queued behind it does not hang either: it runs once the first gave up, on another
      // connection (node-postgres destroys a client whose query timed out; only the old backends are
      // stopped here, so it may be served), or gives up the same way.
      expect(['rejected', 'fulfilled']).toContain(c.status);
      const err = (a as PromiseRejectedResult).reason as Error;
      expect(err.message).toMatch(/Query read timeout/);
      // the adapter says so by the error's class (the executor stops the sweep on it), naming the store
      expect(err).toBeInstanceOf(StoreLost);
      expect((err as StoreLost).details.store).toBe(s.where);
      expect(isStoreLost(err)).toBe(true);
      if (c.status === 'rejected') expect(c.reason).toBeInstanceOf(StoreLost);
    } finally {
      for (const r of rows) process.kill(r.pid, 'SIGCONT');
      await admin.end();
    }
  });

  it('refuses a database migrated by a newer storsweep, changing nothing', async () => {
    const db = await pgsrv.database('newer');
    const conn = connOf(db.connection);
    await pgBackend(conn);
    const c = new pg.Client(db.connection);
    await c.connect();
    try {
      await c.query("INSERT INTO storsweep.schema_migrations (version, name) VALUES ($1, 'from the future')", [LATEST_VERSION + 1]);
      const before = (await c.query('SELECT count(*) AS n FROM storsweep.schema_migrations')).rows;
      const err = await PgRunStoreBackend.connect(conn, 'postgresql://storsweep@h/newer').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreSchemaTooNew);
      expect((err as Error).message).toBe(`postgresql://storsweep@h/newer: its storsweep schema is version ${LATEST_VERSION + 1}, newer than this storsweep knows (${LATEST_VERSION}); nothing was changed. Use the storsweep version that migrated it, or a newer one`);
      expect((await c.query('SELECT count(*) AS n FROM storsweep.schema_migrations')).rows).toEqual(before);
    } finally {
      await c.end();
    }
  });

  it('many runs in one database, apart; a run id it does not hold is RunNotFound; runs() lists them with counts', async () => {
    const b = await pgBackend(connOf((await pgsrv.database('many')).connection));
    const one = await b.createRun(metaOf('one'), planOf('one', ['pA', 'pB']));
    const two = await b.createRun({ ...metaOf('two'), startedAt: '2024-01-02T00:00:00.000Z' }, planOf('two', ['pA']));
    await one.ledgerIntent('pA', 'vsphere', disk, {});
    await two.ledgerIntent('pA', 'vsphere', disk, {});
    await one.markRunning('pA');
    await one.markFinished('pA', 'done', null);
    expect((await two.ledger()).length).toBe(1);
    expect(await two.counts()).toEqual({ pending: 1, running: 0, done: 0, failed: 0 });
    expect(await b.runs()).toEqual([
      { runId: 'one', playbook: 'pb', target: 't', startedAt: '2024-01-01T00:00:00.000Z', counts: { pending: 1, running: 0, done: 1, failed: 0 } },
      { runId: 'two', playbook: 'pb', target: 't', startedAt: '2024-01-02T00:00:00.000Z', counts: { pending: 1, running: 0, done: 0, failed: 0 } },
    ]);
    await expect(b.openRun('three')).rejects.toThrow(RunNotFound);
  });

  it('views: one row per permutation × test with axes as JSON and the main metrics; run progress', async () => {
    const db = await pgsrv.database('views');
    const b = await pgBackend(connOf(db.connection));
    const s = await b.createRun(metaOf('v'), planOf('v', ['pA', 'pB']));
    await s.addRepetition('pA', 1, [rec('v', 'pA', 1, 'read', 100), rec('v', 'pA', 1, 'write', 50)]);
    await s.addRepetition('pA', 2, [rec('v', 'pA', 2, 'read', 300), rec('v', 'pA', 2, 'write', 50)]);
    await s.markRunning('pA');
    await s.markFinished('pA', 'done', null);
    const c = new pg.Client(db.connection);
    await c.connect();
    try {
      const { rows } = await c.query('SELECT run_id, playbook, permutation_id, test_id, axes, repetitions::int, iops_mean, mb_per_s_mean, latency_mean_us FROM storsweep.permutation_tests ORDER BY permutation_index, test_id');
      expect(rows).toEqual([
        { run_id: 'v', playbook: 'pb', permutation_id: 'pA', test_id: 'seq-1m-q8t1-read', axes: { 'workload.profile': 'pA' }, repetitions: 2, iops_mean: 200, mb_per_s_mean: expect.closeTo((200 * (1 << 20)) / 1e6, 9), latency_mean_us: (10 + 1000 / 300) / 2 },
        { run_id: 'v', playbook: 'pb', permutation_id: 'pA', test_id: 'seq-1m-q8t1-write', axes: { 'workload.profile': 'pA' }, repetitions: 2, iops_mean: 50, mb_per_s_mean: expect.closeTo((50 * (1 << 20)) / 1e6, 9), latency_mean_us: 20 },
      ]);
      const progress = await c.query('SELECT run_id, pending::int, running::int, done::int, failed::int, total::int FROM storsweep.run_progress');
      expect(progress.rows).toEqual([{ run_id: 'v', pending: 1, running: 0, done: 1, failed: 0, total: 2 }]);
    } finally {
      await c.end();
    }
  });
});

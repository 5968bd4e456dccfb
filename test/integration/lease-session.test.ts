// The worker's lease session against a real PostgreSQL (results/pg-coordination.ts): once lost it
// refuses everything it guards, and a lease whose heartbeat goes unanswered (the server process
// stopped with SIGSTOP: a silent network, as far as the client can tell) counts as lost within ¾ of
// the lease — before the server could release its locks — not after a 15-minute TCP timeout.
// The run store's writes under a lease go through the lease session (LeaseSession.writer): a write
// sent after the server ended that session — before the worker heard of it — is refused by the
// server, and nothing of it is written.
// Time runs through the lease's own settings (a 4 s lease: heartbeat every second, valid 3 s; a
// write budget of a few seconds) and the tests wait on what the lease does — its lost flag and
// reason, the session's state in pg_stat_activity — never on a clock of their own.
import net from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { RunPlan } from '../../src/contract/plan.ts';
import { LeaseLost } from '../../src/errors.ts';
import { LeaseSession } from '../../src/results/pg-coordination.ts';
import { PgRunStoreBackend } from '../../src/results/pg-store.ts';
import type { RunMeta } from '../../src/results/port.ts';
import { NULL_LATENCY, testIdentity, type ResultRecord } from '../../src/results/record.ts';
import { useTestDatabase } from '../helpers/postgres.ts';
import { waitFor } from '../helpers/wait.ts';

const pgdb = useTestDatabase('lease');

async function backendOf(app: string): Promise<number> {
  const admin = new pg.Client(pgdb.db.connection);
  await admin.connect();
  try {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app]);
    expect(rows).toHaveLength(1);
    return rows[0]!.pid;
  } finally {
    await admin.end();
  }
}

/** The session of lease `app` as the server sees it now: its last statement and whether it runs. */
async function sessionOf(app: string): Promise<{ pid: number; query: string; state: string } | undefined> {
  return (await pgdb.db.query<{ pid: number; query: string; state: string }>('SELECT pid, query, state FROM pg_stat_activity WHERE application_name = $1', [app]))[0];
}

/**
 * More than ¾ of a 4 s lease of statements, each answered in time, have run since `started` (a
 * lower bound pg_sleep guarantees however loaded the machine); the heartbeat that was queued behind
 * them has run and been answered since (its `SELECT 1` is the session's last statement, done), and
 * the lease is still held and its session still answers.
 */
async function expectLeaseHeld(lease: LeaseSession, app: string, started: number): Promise<void> {
  expect(performance.now() - started).toBeGreaterThan(3500);
  await waitFor(async () => {
    const s = await sessionOf(app);
    return s?.query === 'SELECT 1' && s.state === 'idle';
  }, { what: `a heartbeat answered on ${app} after the writes` });
  expect(lease.lostReason).toBeNull();
  await expect(lease.db.executeSql('SELECT 1')).resolves.toBeDefined();
}

/** Waits until the session of `app` runs a statement starting with `prefix` (it reached the server). */
async function running(app: string, prefix: string): Promise<void> {
  await waitFor(async () => {
    const s = await sessionOf(app);
    return s?.state === 'active' && s.query.startsWith(prefix);
  }, { what: `${app} running ${prefix}` });
}

describe('LeaseSession', { timeout: 60_000 }, () => {
  it('ended by the server: lost at once, its signal aborted, and it refuses to hold keys or run job statements', async () => {
    const lost: Error[] = [];
    const lease = await LeaseSession.open(pgdb.conn, { leaseSec: 10, applicationName: 'lease-test-1', onLost: (e) => lost.push(e) });
    try {
      expect(await lease.tryHold(['k1'])).not.toBeNull();
      await lease.db.executeSql('SELECT 1');
      const admin = new pg.Client(pgdb.db.connection);
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend($1)', [await backendOf('lease-test-1')]);
      await admin.end();
      await waitFor(() => lease.lostReason, { what: 'the lease lost' });
      expect(lease.lostReason).toBeInstanceOf(LeaseLost);
      expect(lease.lostReason!.message).toMatch(/the lease session (failed|ended)|a statement on the lease session failed/);
      expect(lease.signal.aborted).toBe(true);
      expect(lost).toHaveLength(1);
      expect(() => lease.check()).toThrow(LeaseLost);
      await expect(lease.db.executeSql('SELECT 1')).rejects.toBeInstanceOf(LeaseLost);
      await expect(lease.tryHold(['k2'])).rejects.toBeInstanceOf(LeaseLost);
    } finally {
      await lease.close();
    }
  });

  it('a heartbeat the server does not answer (its process stopped): lost after ¾ of the lease, before the server could release it', async () => {
    const lease = await LeaseSession.open(pgdb.conn, { leaseSec: 4, applicationName: 'lease-test-2' });
    const pid = await backendOf('lease-test-2');
    expect(lease.lostReason).toBeNull();
    process.kill(pid, 'SIGSTOP');
    try {
      await waitFor(() => lease.lostReason, { what: 'the lease lost' });
      expect(lease.lostReason).toBeInstanceOf(LeaseLost);
      // by its own deadline: ¾ of 4 s after the last confirmed statement, before the server could
      // drop the silent session and release its locks (keepalive idle 2 s + 3 probes of 1 s) — not
      // by the connection's failing (a TCP timeout, minutes later on a silent network)
      expect(lease.lostReason!.message).toMatch(/^lease lost: (heartbeat: )?(the heartbeat was not answered within 3 s|no statement confirmed the session for 3 s)/);
      expect(lease.signal.aborted).toBe(true);
    } finally {
      process.kill(pid, 'SIGCONT');
      await lease.close();
    }
  });

  it('writes queued ahead of the heartbeat, each answered in time, do not lose the lease (the heartbeat deadline follows their confirmations)', async () => {
    // review s23: with --concurrency > 1 every permutation's store writes share the lease session;
    // the heartbeat queued behind them must count their answers, not only its own
    const lease = await LeaseSession.open(pgdb.conn, { leaseSec: 4, applicationName: 'lease-test-queued' });
    try {
      expect(await lease.tryHold(['kq'])).not.toBeNull();
      const w = lease.writer(['kq']);
      // 4 s of statements, each answered within 0.2 s of the previous answer (plus what a loaded
      // machine adds): the lease (¾ of 4 s = 3 s) is confirmed throughout, by their answers alone
      const started = performance.now();
      const writes = Array.from({ length: 20 }, () => w.query('SELECT pg_sleep(0.2)'));
      await Promise.all(writes);
      await expectLeaseHeld(lease, 'lease-test-queued', started);
    } finally {
      await lease.close();
    }
  });

  it('a store transaction longer than the lease, each of its statements answered in time, does not lose the lease', async () => {
    // a transaction holds the session's queue for its whole span (nothing else runs inside it): its
    // own statements are what confirm the session meanwhile
    const lease = await LeaseSession.open(pgdb.conn, { leaseSec: 4, applicationName: 'lease-test-tx' });
    try {
      expect(await lease.tryHold(['kt'])).not.toBeNull();
      const started = performance.now();
      const n = await lease.writer(['kt']).transaction(async (q) => {
        for (let i = 0; i < 20; i++) await q.query('SELECT pg_sleep(0.2)');
        return 20;
      });
      expect(n).toBe(20);
      await expectLeaseHeld(lease, 'lease-test-tx', started);
    } finally {
      await lease.close();
    }
  });

  it('a store write sent after the server ended the lease session, before the worker heard of it, is refused by the server: nothing of it is written', async () => {
    // The one round trip in which the server has ended the session (pg_terminate_backend, as a DBA,
    // a failover or a restart would) and the worker does not know yet: what the server sends the
    // lease session (the termination notice, the connection's end) is held in flight by a TCP relay
    // while the worker writes; what the worker sends still goes through to the server.
    const relay = await holdingRelay(pgdb.conn.port);
    const backend = await PgRunStoreBackend.connect(pgdb.conn, `postgresql://storsweep@127.0.0.1:${pgdb.conn.port}/${pgdb.conn.database}`);
    const lease = await LeaseSession.open({ ...pgdb.conn, port: relay.port }, { leaseSec: 60, applicationName: 'lease-test-3' });
    const runId = 'fenced';
    try {
      await backend.createRun(metaOf(runId), planOf(runId));
      const release = await lease.tryHold(['queue q']);
      expect(release).not.toBeNull();
      const store = backend.runWritingThrough(runId, {}, lease.writer(['queue q']));
      // while the lease holds: written
      await store.appendJournal('p1', 'worker', 'claimed', { worker: 'test' });
      expect((await store.journal()).map((j) => j.event)).toContain('claimed');

      relay.hold();
      const admin = new pg.Client(pgdb.db.connection);
      await admin.connect();
      try {
        const pid = await backendOf('lease-test-3');
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        // the lease's backend is gone, and with it its advisory locks
        await waitFor(async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rows.length === 0, { what: `backend ${pid} gone` });
        expect((await admin.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = $1`, [pid])).rows).toEqual([]);
      } finally {
        await admin.end();
      }
      // the worker has not heard: its own check passes, the writes go out
      expect(lease.lostReason).toBeNull();
      const sentBefore = relay.sentWhileHeld();
      const intent = store.ledgerIntent('p1', 'vsphere', { kind: 'vmdk', name: 'ss-fenced-p1-disk' }, { path: '[ds] ss-fenced-p1-disk.vmdk' }).then(
        () => 'written',
        (e: unknown) => e,
      );
      const records = store.addRepetitions([{ permutationId: 'p1', repetition: 1, records: [rec(runId, 'p1')] }]).then(
        () => 'written',
        (e: unknown) => e,
      );
      const finished = store.markFinished('p1', 'done', null).then(
        () => 'written',
        (e: unknown) => e,
      );
      // they go out to the server (through the relay), which has no session to run them on
      let settled = false;
      void Promise.allSettled([intent, records, finished]).then(() => (settled = true));
      await waitFor(() => settled || relay.sentWhileHeld() > sentBefore, { what: 'the writes sent' });
      // nothing of them in the store (read on another connection), now and once each has failed
      const other = await backend.openRun(runId);
      const nothingWritten = async () => {
        expect(await other.ledger()).toEqual([]);
        expect(await other.records()).toEqual([]);
        expect((await other.permutations()).map((p) => p.status)).toEqual(['pending']);
        expect((await other.journal()).map((j) => `${j.step} ${j.event}`)).toEqual(['worker claimed']);
      };
      await nothingWritten();
      relay.release();
      for (const w of [await intent, await records, await finished]) expect(w).toBeInstanceOf(Error);
      await nothingWritten();
      expect(relay.sentWhileHeld()).toBeGreaterThan(sentBefore);
      expect(lease.lostReason).toBeInstanceOf(LeaseLost);
      // and a write called now is refused before it is sent
      await expect(store.appendJournal('p1', 'worker', 'late', {})).rejects.toThrow(/lease lost/);
    } finally {
      await lease.close();
      await backend.close();
      await relay.close();
    }
  });

  it('a store write called after the permutation\'s keys were given back is refused before it is sent', async () => {
    const backend = await PgRunStoreBackend.connect(pgdb.conn, `postgresql://storsweep@127.0.0.1:${pgdb.conn.port}/${pgdb.conn.database}`);
    const lease = await LeaseSession.open(pgdb.conn, { leaseSec: 10, applicationName: 'lease-test-4' });
    const runId = 'released';
    try {
      await backend.createRun(metaOf(runId), planOf(runId));
      const release = (await lease.tryHold(['queue r']))!;
      const store = backend.runWritingThrough(runId, {}, lease.writer(['queue r']));
      await store.markRunning('p1');
      await release();
      await expect(store.markFinished('p1', 'done', null)).rejects.toThrow(/released \(queue r\)/);
      expect((await (await backend.openRun(runId)).permutations()).map((p) => p.status)).toEqual(['running']);
      expect(lease.lostReason).toBeNull();
    } finally {
      await lease.close();
      await backend.close();
    }
  });

  it('a store write slower than a quarter of the lease runs under the store\'s budget, not the session\'s short statement_timeout; job statements keep theirs', async () => {
    // review s23 L2: the session's statement_timeout (¼ lease: 1 s here) cancelled a slow but healthy
    // write (a lock wait, a big batch) with 57014 and the permutation failed. 1.2 s: over the short
    // bound by a margin the server's own timer keeps, however loaded the machine
    const lease = await LeaseSession.open(pgdb.conn, { leaseSec: 4, applicationName: 'lease-test-budget' });
    try {
      expect(await lease.tryHold(['kb'])).not.toBeNull();
      const w = lease.writer(['kb']);
      await expect(w.query('SELECT pg_sleep(1.2)')).resolves.toBeDefined();
      await expect(w.transaction(async (q) => (await q.query('SELECT pg_sleep(1.2)')).rowCount)).resolves.toBe(1);
      // a job statement (pg-boss's, on the same session) after the writes: still ¼ of the lease
      await expect(lease.db.executeSql('SELECT pg_sleep(1.2)')).rejects.toMatchObject({ code: '57014' });
      // and a write after it has its budget again
      await expect(w.query('SELECT pg_sleep(1.2)')).resolves.toBeDefined();
      expect(lease.lostReason).toBeNull();
    } finally {
      await lease.close();
    }
  });

  it('a store write longer than the lease keeps the lease while its backend holds the locks (the probe), and is bounded by the store\'s budget', async () => {
    // the heartbeat cannot run on the session while the write holds it: another connection asks
    // whether the lease backend still holds its locks; the write itself ends at its budget (57014,
    // an answer: the lease stays)
    const lease = await LeaseSession.open(pgdb.conn, { leaseSec: 4, writeTimeoutMs: 5500, applicationName: 'lease-test-long' });
    try {
      expect(await lease.tryHold(['kl'])).not.toBeNull();
      const w = lease.writer(['kl']);
      // longer than the lease (4 s) and its validity (3 s): only the probe can have confirmed it
      const started = performance.now();
      await expect(w.query('SELECT pg_sleep(4.5)')).resolves.toBeDefined();
      expect(performance.now() - started).toBeGreaterThan(4400);
      expect(lease.lostReason).toBeNull();
      // and a write past its budget (5.5 s) is cancelled by the server there
      await expect(w.query('SELECT pg_sleep(30)')).rejects.toMatchObject({ code: '57014' });
      expect(lease.lostReason).toBeNull();
      await expect(lease.db.executeSql('SELECT 1')).resolves.toBeDefined();
      // the probe looked from a connection of its own (named after the lease)
      expect(await pgdb.db.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'lease-test-long (lease probe)'`)).toHaveLength(1);
    } finally {
      await lease.close();
    }
  });

  it('a long write whose session the server ended before the worker heard: the probe finds the backend gone, the lease is lost then (not ¾ of the lease later), nothing is written', async () => {
    await pgdb.db.query('CREATE TABLE IF NOT EXISTS lease_probe_w (n int)');
    const relay = await holdingRelay(pgdb.conn.port);
    const lease = await LeaseSession.open({ ...pgdb.conn, port: relay.port }, { leaseSec: 10, applicationName: 'lease-test-gone' });
    try {
      expect(await lease.tryHold(['kg'])).not.toBeNull();
      const w = lease.writer(['kg']);
      await w.query('SELECT 1'); // the write budget set: what follows is the write alone
      relay.hold();
      const pid = await backendOf('lease-test-gone');
      // terminated while it runs (a lock wait, a big batch; longer than the test takes to get there,
      // however loaded the machine): aborted with its backend
      const write = w.query('INSERT INTO lease_probe_w SELECT 1 FROM pg_sleep(30)').then(
        () => 'written',
        (e: unknown) => e,
      );
      await running('lease-test-gone', 'INSERT INTO lease_probe_w');
      await pgdb.db.query('SELECT pg_terminate_backend($1)', [pid]);
      await waitFor(() => lease.lostReason, { what: 'the lease lost' });
      // found by the probe, as soon as it looked; the deadline alone (¾ of 10 s after the last
      // confirmation) would say 'not answered within 8 s' or 'no statement confirmed … for 8 s'
      expect(lease.lostReason?.message).toMatch(/backend \(pid \d+\) is gone|holds none of its locks/);
      relay.release();
      expect(await write).toBeInstanceOf(Error);
      expect(await pgdb.db.query('SELECT n FROM lease_probe_w')).toEqual([]);
    } finally {
      await lease.close();
      await relay.close();
    }
  });

  it('a write still running when the worker gives the session up is stopped by the server, not run to its end and committed', async () => {
    await pgdb.db.query('CREATE TABLE IF NOT EXISTS lease_stop_w (n int)');
    const lease = await LeaseSession.open(pgdb.conn, { leaseSec: 10, applicationName: 'lease-test-stop' });
    const pid = await backendOf('lease-test-stop');
    expect(await lease.tryHold(['ks'])).not.toBeNull();
    // a write of 30 s: run to its end, it would keep its backend that long and then commit
    const write = lease
      .writer(['ks'])
      .query('INSERT INTO lease_stop_w SELECT 1 FROM pg_sleep(30)')
      .then(
        () => 'written',
        (e: unknown) => e,
      );
    await running('lease-test-stop', 'INSERT INTO lease_stop_w');
    await lease.close();
    expect(await write).toBeInstanceOf(Error);
    // the backend saw its client gone (client_connection_check_interval, 1 s) and stopped the write:
    // gone long before the write's end; a backend gone cannot commit anything later
    await waitFor(async () => (await pgdb.db.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).length === 0, { what: `backend ${pid} gone`, timeoutMs: 20_000 });
    expect(await pgdb.db.query('SELECT n FROM lease_stop_w')).toEqual([]);
  });
});

const metaOf = (runId: string): RunMeta => ({ runId, playbook: 'pb', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 't', startedAt: '2024-01-01T00:00:00.000Z', fingerprint: {}, insecureEndpoints: [] });
const planOf = (runId: string): RunPlan => ({
  version: 1,
  runId,
  playbook: 'pb',
  target: 't',
  provider: 'local',
  axes: [{ name: 'workload.profile', values: ['p1'] }],
  baseline: null,
  profiles: {},
  permutations: [{ index: 0, permutationId: 'p1', axes: { 'workload.profile': 'p1' }, workload: 'p1', steps: [], repetitions: 1, estimateSec: 1 }],
  totalEstimateSec: 1,
});
const rec = (runId: string, permutationId: string): ResultRecord => ({
  runId,
  permutationId,
  axes: { 'workload.profile': permutationId },
  repetition: 1,
  test: testIdentity({ pattern: 'read', blockSizeBytes: 4096, queueDepth: 1, threads: 1, readPercent: 100 }),
  iops: 1000,
  bytesPerSecond: 4096000,
  latencyUs: NULL_LATENCY,
  cpuPercent: null,
  tool: { name: 'fio', version: 'fio-3.33' },
  rawPath: `raw/${permutationId}/rep1/read.json`,
});

/**
 * A TCP relay in front of the server whose server-to-client direction can be held: while held, what
 * the server sends on the connections open at hold() (data, its end of the connection, a reset) waits
 * in the relay, as if still on the wire; the client-to-server direction always flows, and so does a
 * connection opened meanwhile (the lease's probe). Counts the bytes sent to the server on the held ones.
 */
async function holdingRelay(serverPort: number): Promise<{ port: number; hold(): void; release(): void; sentWhileHeld(): number; close(): Promise<void> }> {
  let holding = new Set<net.Socket>();
  let sent = 0;
  const held: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const downs = new Set<net.Socket>();
  const server = net.createServer((down) => {
    const up = net.connect(serverPort, '127.0.0.1');
    sockets.add(down).add(up);
    downs.add(down);
    const later = (fn: () => void) => (holding.has(down) ? held.push(fn) : fn());
    down.on('data', (d: Buffer) => {
      if (holding.has(down)) sent += d.length;
      if (!up.destroyed) up.write(d);
    });
    down.on('end', () => up.end());
    down.on('error', () => up.destroy());
    up.on('data', (d: Buffer) => later(() => !down.destroyed && down.write(d)));
    up.on('end', () => later(() => down.end()));
    up.on('error', () => later(() => down.destroy()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    hold: () => void (holding = new Set(downs)),
    release: () => {
      holding = new Set();
      for (const fn of held.splice(0)) fn();
    },
    sentWhileHeld: () => sent,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

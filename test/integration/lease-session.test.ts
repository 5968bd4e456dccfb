// The worker's lease session against a real PostgreSQL (results/pg-coordination.ts): once lost it
// refuses everything it guards, and a lease whose heartbeat goes unanswered (the server process
// stopped with SIGSTOP: a silent network, as far as the client can tell) counts as lost within ¾ of
// the lease — before the server could release its locks — not after a 15-minute TCP timeout.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseLost } from '../../src/errors.ts';
import { LeaseSession } from '../../src/results/pg-coordination.ts';
import type { PgConnection } from '../../src/results/pg-store.ts';
import { startTestPostgres, type TestDatabase, type TestPostgres } from '../helpers/postgres.ts';

let pgsrv: TestPostgres;
let db: TestDatabase;
let conn: PgConnection;

beforeAll(async () => {
  pgsrv = await startTestPostgres();
  db = await pgsrv.database('lease');
  const c = db.connection;
  conn = { host: String(c.host), port: Number(c.port), user: String(c.user), database: String(c.database), password: String(c.password) };
}, 120_000);

afterAll(async () => {
  await pgsrv?.stop();
});

async function backendOf(app: string): Promise<number> {
  const admin = new pg.Client(db.connection);
  await admin.connect();
  try {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app]);
    expect(rows).toHaveLength(1);
    return rows[0]!.pid;
  } finally {
    await admin.end();
  }
}

describe('LeaseSession', { timeout: 60_000 }, () => {
  it('ended by the server: lost at once, its signal aborted, and it refuses to hold keys or run job statements', async () => {
    const lost: Error[] = [];
    const lease = await LeaseSession.open(conn, { leaseSec: 10, applicationName: 'lease-test-1', onLost: (e) => lost.push(e) });
    try {
      expect(await lease.tryHold(['k1'])).not.toBeNull();
      await lease.db.executeSql('SELECT 1');
      const admin = new pg.Client(db.connection);
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend($1)', [await backendOf('lease-test-1')]);
      await admin.end();
      for (let i = 0; i < 100 && !lease.lostReason; i++) await new Promise((r) => setTimeout(r, 20));
      expect(lease.lostReason).toBeInstanceOf(LeaseLost);
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
    const lease = await LeaseSession.open(conn, { leaseSec: 4, applicationName: 'lease-test-2' });
    const pid = await backendOf('lease-test-2');
    const stoppedAt = performance.now();
    process.kill(pid, 'SIGSTOP');
    try {
      while (!lease.lostReason && performance.now() - stoppedAt < 10_000) await new Promise((r) => setTimeout(r, 50));
      const after = performance.now() - stoppedAt;
      expect(lease.lostReason).toBeInstanceOf(LeaseLost);
      // ¾ of 4 s after the last confirmed statement (about 3 s), and in any case before the server
      // could drop the silent session and release its locks (keepalive idle 2 s + 3 probes of 1 s)
      expect(after).toBeLessThan(5000);
      expect(lease.signal.aborted).toBe(true);
    } finally {
      process.kill(pid, 'SIGCONT');
      await lease.close();
    }
  });
});

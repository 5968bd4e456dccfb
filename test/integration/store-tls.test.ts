// TLS to the PostgreSQL store, on two real servers (test/helpers/postgres.ts): one without ssl, one
// with ssl on and a self-signed certificate made here with openssl. The default sslmode is libpq's
// prefer: TLS when the server offers it (read back from pg_stat_ssl for our own sessions), plain text
// only when the server answers that it has no SSL; require and verify-full never fall back.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgConnectionOf } from '../../src/app/store.ts';
import { resolveStore } from '../../src/config/store.ts';
import { StoreUnavailable } from '../../src/errors.ts';
import { LeaseSession } from '../../src/results/pg-coordination.ts';
import { PgRunStoreBackend, type PgConnection } from '../../src/results/pg-store.ts';
import { PG_SYSTEM_USER } from '../../src/lab/postgres.ts';
import { startTestPostgres, type TestDatabase, type TestPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/cli.ts';
import { waitFor } from '../helpers/wait.ts';

let plain: TestPostgres;
let tls: TestPostgres;
let plainDb: TestDatabase;
let tlsDb: TestDatabase;

/** ssl = on with a self-signed certificate in the data directory (PostgreSQL ≥ 10 reloads ssl without a restart). */
async function turnOnSsl(srv: TestPostgres, db: TestDatabase): Promise<void> {
  const data = path.join(srv.server.dir, 'data');
  const key = path.join(data, 'server.key');
  const crt = path.join(data, 'server.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', crt, '-days', '2', '-subj', '/CN=storsweep-test-db'], { stdio: 'ignore' });
  // the server refuses a key others can read, or owned by another user than itself or root
  fs.chmodSync(key, 0o600);
  if (process.getuid?.() === 0) execFileSync('chown', [`${PG_SYSTEM_USER}:`, key, crt]);
  await db.query('ALTER SYSTEM SET ssl = on');
  await db.query('SELECT pg_reload_conf()');
  // the reload is asynchronous: wait until a new session sees it
  await waitFor(async () => (await db.query<{ ssl: string }>('SHOW ssl'))[0]?.ssl === 'on', { what: 'ssl = on after pg_reload_conf()' });
}

beforeAll(async () => {
  [plain, tls] = await Promise.all([startTestPostgres(), startTestPostgres()]);
  [plainDb, tlsDb] = await Promise.all([plain.database('plain'), tls.database('tls')]);
  await turnOnSsl(tls, tlsDb);
}, 180_000);
afterAll(async () => {
  await Promise.all([plain?.stop(), tls?.stop()]);
});

/** The store URL of a test database with `?sslmode=` (none: the default). */
function storeOf(db: TestDatabase, sslmode?: string) {
  const r = resolveStore(`${db.url}${sslmode ? `?sslmode=${sslmode}` : ''}`, process.cwd(), process.env);
  if (!r.ok) throw new Error(r.error);
  return r.store;
}

/** Our own session's row of pg_stat_ssl, through the store's pool. */
async function sslOfPool(conn: PgConnection): Promise<{ ssl: boolean; version: string | null }> {
  const backend = await PgRunStoreBackend.connect(conn, 'test');
  try {
    const { rows } = await backend.pool.query<{ ssl: boolean; version: string | null }>('SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
    return rows[0]!;
  } finally {
    await backend.close();
  }
}

describe('sslmode=prefer, the default', { timeout: 120_000 }, () => {
  it('a server with ssl on: every session is encrypted (the pool and the lease session, read from pg_stat_ssl)', async () => {
    const conn = await pgConnectionOf(storeOf(tlsDb));
    expect(conn.ssl).toEqual({ rejectUnauthorized: false });
    const pool = await sslOfPool(conn);
    expect(pool.ssl).toBe(true);
    expect(pool.version).toMatch(/^TLSv1\.[23]$/);
    const lease = await LeaseSession.open(conn, { applicationName: 'tls-lease-check' });
    try {
      const rows = await tlsDb.query<{ ssl: boolean }>(`SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'tls-lease-check'`);
      expect(rows).toEqual([{ ssl: true }]);
    } finally {
      await lease.close();
    }
  });

  it('a server without ssl: falls back to plain text (it answered that it has no SSL); loopback, so no warning', async () => {
    const conn = await pgConnectionOf(storeOf(plainDb));
    expect(conn.ssl).toBe(false);
    expect(await sslOfPool(conn)).toEqual({ ssl: false, version: null });
    // the CLI connects the same way: its one line is the answer about the run, no warning before it
    const r = await runCli(['status', '--run', 'no-such-run', '--store', plainDb.url]);
    expect(r.stderr).toBe(`run no-such-run not found in postgresql://storsweep@127.0.0.1:${plain.server.port}/${plainDb.name}; \`storsweep status --store URL\` lists the runs it holds\n`);
    expect(r.code).toBe(2);
  });
});

describe('the other sslmodes never fall back', { timeout: 120_000 }, () => {
  it('require on a server without ssl: refused with the server\'s answer, no plain-text session', async () => {
    const conn = await pgConnectionOf(storeOf(plainDb, 'require'));
    const err = await PgRunStoreBackend.connect(conn, 'plain').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailable);
    expect((err as Error).message).toBe('plain: cannot use the store: The server does not support SSL connections');
  });

  it('verify-full on the self-signed certificate: a certificate error, not a fallback to plain text or to no verification', async () => {
    const conn = await pgConnectionOf(storeOf(tlsDb, 'verify-full'));
    expect(conn.ssl).toBe(true);
    const err = await PgRunStoreBackend.connect(conn, 'tls').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailable);
    expect((err as Error).message).toMatch(/^tls: cannot use the store: self[- ]signed certificate/);
    // nothing of ours got in: no session of storsweep's on the server
    const ours = await tlsDb.query(`SELECT pid FROM pg_stat_activity WHERE application_name = 'storsweep'`);
    expect(ours).toEqual([]);
  });

  it('disable on a server with ssl on: plain text, as asked', async () => {
    const conn = await pgConnectionOf(storeOf(tlsDb, 'disable'));
    expect(conn.ssl).toBe(false);
    expect(await sslOfPool(conn)).toEqual({ ssl: false, version: null });
  });

  it('node-postgres itself: a TLS request to the server without ssl fails with the answer prefer falls back on', async () => {
    const c = new pg.Client({ ...plainDb.connection, ssl: { rejectUnauthorized: false } });
    await expect(c.connect()).rejects.toThrow(/^The server does not support SSL connections$/);
  });
});

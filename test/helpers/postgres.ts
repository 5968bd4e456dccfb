// A real PostgreSQL for tests (Debian's `postgresql` package, as .ci/run installs it through
// scripts/system-packages.sh test): one cluster per test file in a temp directory, a fresh database
// per test that asks for one, stopped and removed on teardown.
//
//   const pgsrv = await startTestPostgres();      // beforeAll
//   const db = await pgsrv.database();            // { url, connection, storeConnection, query, name }
//   await pgsrv.stop();                           // afterAll
// or, for a file that needs one database only: `const pgdb = useTestDatabase('x')` (pgdb.db, pgdb.conn, pgdb.pgsrv).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { afterAll, beforeAll } from 'vitest';
import { startPostgres, type PostgresHandle } from '../../src/lab/postgres.ts';
import type { PgConnection } from '../../src/results/pg-store.ts';
import { QUEUE_SCHEMA } from '../../src/run/work-queue.ts';

export interface TestDatabase {
  name: string;
  /** postgresql://storsweep:${file:…}@127.0.0.1:PORT/NAME — the password by reference */
  url: string;
  connection: pg.ClientConfig;
  /** the same as the store takes it (PgRunStoreBackend.connect, the lease session, endpoint slots) */
  storeConnection: PgConnection;
  /** `text` with `params` on a connection of its own (opened and closed around it): the rows */
  query<T extends pg.QueryResultRow = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

export interface TestPostgres {
  server: PostgresHandle;
  /** a new, empty database */
  database(prefix?: string): Promise<TestDatabase>;
  stop(): Promise<void>;
}

let counter = 0;

export async function startTestPostgres(): Promise<TestPostgres> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'storsweep-pg-'));
  let server: PostgresHandle;
  try {
    server = await startPostgres({ dir });
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    server,
    async database(prefix = 't') {
      const name = `${prefix}_${process.pid}_${++counter}`;
      await server.createDatabase(name);
      const connection = server.connection(name);
      return {
        name,
        url: server.urlFor(name),
        connection,
        storeConnection: { host: String(connection.host), port: Number(connection.port), user: String(connection.user), database: String(connection.database), password: String(connection.password) },
        async query<T extends pg.QueryResultRow>(text: string, params: unknown[] = []) {
          const c = new pg.Client(connection);
          await c.connect();
          try {
            return (await c.query<T>(text, params)).rows;
          } finally {
            await c.end();
          }
        },
      };
    },
    stop: () => server.stop(),
  };
}

/** One PostgreSQL with one database for the whole test file: started before its tests, stopped after. */
export function useTestDatabase(prefix: string): { readonly pgsrv: TestPostgres; readonly db: TestDatabase; readonly conn: PgConnection } {
  let pgsrv: TestPostgres | undefined;
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    pgsrv = await startTestPostgres();
    db = await pgsrv.database(prefix);
  }, 120_000);
  afterAll(async () => {
    await pgsrv?.stop();
  });
  const ready = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('useTestDatabase: used before its beforeAll ran');
    return v;
  };
  return {
    get pgsrv() {
      return ready(pgsrv);
    },
    get db() {
      return ready(db);
    },
    /** the database's storeConnection */
    get conn() {
      return ready(db).storeConnection;
    },
  };
}

/** A pg-boss on the database's run queues (as workers use them), not started, for tests that act on the queue directly; no maintenance of its own. */
export function queueBossOf(db: TestDatabase): PgBoss {
  const c = db.storeConnection;
  const boss = new PgBoss({ host: c.host, port: c.port, user: c.user, password: String(c.password), database: c.database, schema: QUEUE_SCHEMA, schedule: false, supervise: false });
  boss.on('error', () => undefined);
  return boss;
}

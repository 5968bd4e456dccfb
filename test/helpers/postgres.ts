// A real PostgreSQL for tests (Debian's `postgresql` package, as .ci/run installs it through
// scripts/system-packages.sh test): one cluster per test file in a temp directory, a fresh database
// per test that asks for one, stopped and removed on teardown.
//
//   const pgsrv = await startTestPostgres();      // beforeAll
//   const db = await pgsrv.database();            // { url, connection, name }
//   await pgsrv.stop();                           // afterAll
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { startPostgres, type PostgresHandle } from '../../src/lab/postgres.ts';

export interface TestDatabase {
  name: string;
  /** postgresql://storsweep:${file:…}@127.0.0.1:PORT/NAME — the password by reference */
  url: string;
  connection: pg.ClientConfig;
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
      return { name, url: server.urlFor(name), connection: server.connection(name) };
    },
    stop: () => server.stop(),
  };
}

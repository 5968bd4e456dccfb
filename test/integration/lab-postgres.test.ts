// The lab's PostgreSQL store keeps the runs stored in it (issue 17 review, finding 10): a cluster
// that is there but not running (`pg_ctl stop`, `lab down`, a reboot) is started again on its
// recorded port with its data by the next `lab up`; `lab down` stops it and keeps the data unless
// `--purge`. A real cluster (Debian's postgresql) in a temp directory, as the lab makes it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, labPostgres, labPostgresDown, type LabState } from '../../src/lab/lab.ts';
import { attachPostgres, stopPostgres } from '../../src/lab/postgres.ts';

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-lab-pg-'));
  // as a checkout is: the server's user (postgres, when we are root) goes through it to .lab/postgres
  fs.chmodSync(root, 0o755);
  fs.mkdirSync(labPaths(root).dir, { recursive: true });
});
afterAll(async () => {
  const dir = path.join(labPaths(root).dir, 'postgres');
  if (fs.existsSync(dir)) await stopPostgres(dir).catch(() => undefined);
  fs.rmSync(root, { recursive: true, force: true });
});

async function query(s: NonNullable<LabState['postgres']>, text: string): Promise<unknown[]> {
  const h = (await attachPostgres(s.dir))!;
  expect(h, 'the store is running').not.toBeNull();
  const c = new pg.Client(h.connection(s.database));
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

describe('the lab store', { timeout: 180_000 }, () => {
  it('is started again with its data on its port after a stop, also when the lab state is gone; down keeps it unless purged', async () => {
    const p = labPaths(root);
    const first = await labPostgres(p, undefined);
    await query(first, `CREATE TABLE kept (v text); INSERT INTO kept VALUES ('a stored run')`);

    // stopped behind the lab's back (pg_ctl stop, a reboot): the next `up` starts it again
    await stopPostgres(first.dir, { remove: false });
    expect(await attachPostgres(first.dir)).toBeNull();
    const again = await labPostgres(p, first);
    expect(again).toEqual(first);
    expect(await query(again, 'SELECT v FROM kept')).toEqual([{ v: 'a stored run' }]);

    // `lab down` without --purge: stopped, data kept; `up` (state file gone) finds and starts it
    await labPostgresDown(first.dir);
    expect(await attachPostgres(first.dir)).toBeNull();
    expect(fs.existsSync(path.join(first.dir, 'data', 'PG_VERSION'))).toBe(true);
    const afterDown = await labPostgres(p, undefined);
    expect(afterDown).toEqual(first);
    expect(await query(afterDown, 'SELECT v FROM kept')).toEqual([{ v: 'a stored run' }]);

    // `lab down --purge`: the data goes, the next `up --postgres` makes a new, empty store
    await labPostgresDown(first.dir, { purge: true });
    expect(fs.existsSync(first.dir)).toBe(false);
    const fresh = await labPostgres(p, undefined);
    expect(await query(fresh, `SELECT to_regclass('kept') IS NULL AS gone`)).toEqual([{ gone: true }]);
  });
});

// Endpoint slots (the per-vCenter limit across workers) in a real PostgreSQL. Review 17, finding 7:
// the slots held connections of the store's pool (max 4) for the span of the provisioning call, and
// the call's own ledger write needed one more: with four calls in flight it timed out and the sweep
// stopped as a lost store. Slots now live on a connection of their own.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { endpointSlots } from '../../src/results/pg-coordination.ts';
import { PgRunStoreBackend } from '../../src/results/pg-store.ts';
import { useTestDatabase } from '../helpers/postgres.ts';
import { waitFor } from '../helpers/wait.ts';

const pgdb = useTestDatabase('slots');

describe('endpoint slots', () => {
  it('four calls in flight holding slots (maxConcurrent 8), each writes the ledger: nothing waits for the store pool', async () => {
    const backend = await PgRunStoreBackend.connect(pgdb.conn, 'pg');
    const slots = endpointSlots(pgdb.conn);
    try {
      const meta = { runId: 'rslots0001', playbook: 'p', playbookFile: 'p', inventoryFile: 'i', target: 't', startedAt: new Date().toISOString(), fingerprint: {}, insecureEndpoints: [] };
      const store = await backend.createRun(meta, { runId: 'rslots0001', permutations: [] } as never);
      // a barrier: all four hold their slots (and have written under them) before any goes on
      let arrived = 0;
      let allIn!: () => void;
      const allHeld = new Promise<void>((r) => (allIn = r));
      let goOn!: () => void;
      const released = new Promise<void>((r) => (goOn = r));
      // as worker --concurrency 4 does: each call takes its slot, then writes its ledger row under it
      const calls = Promise.all(
        Array.from({ length: 4 }, async (_, i) => {
          const release = await slots.gate('vcenter https://vc.lab/sdk', 8);
          try {
            await store.appendJournal(null, `disk:${i}`, 'sent', null);
            if (++arrived === 4) allIn();
            await released;
            await store.appendJournal(null, `disk:${i}`, 'created', null);
          } finally {
            await release();
          }
        }),
      );
      // (with slots on the store's pool, the four held all its connections and the first write
      // waited for a fifth: this barrier would never be reached)
      await Promise.race([allHeld, calls]);
      expect(arrived).toBe(4);
      // the four slots are advisory locks of the slots' own session, none of the store's pool, and
      // nothing waits for a pool connection
      expect(await advisoryLockHolders()).toEqual([{ application_name: 'storsweep endpoint slots', locks: 4 }]);
      expect(backend.pool.waitingCount).toBe(0);
      goOn();
      await calls;
      expect((await store.journal()).filter((j) => j.step.startsWith('disk:'))).toHaveLength(8);
    } finally {
      await slots.close();
      await backend.close();
    }
  }, 60_000);

  it('the limit holds across workers (two sessions): a third call waits until one of the two slots is given back', async () => {
    const w1 = endpointSlots(pgdb.conn, { pollMs: 20, applicationName: 'slots w1' });
    const w2 = endpointSlots(pgdb.conn, { pollMs: 20 });
    try {
      const r1 = await w1.gate('vcenter https://vc.lab/sdk', 2);
      const r2 = await w2.gate('vcenter https://vc.lab/sdk', 2);
      let third = false;
      const p = w1.gate('vcenter https://vc.lab/sdk', 2).then((r) => ((third = true), r));
      // the third call tried both slots and was refused, again and again (each try a query of w1's
      // session: a new state_change in pg_stat_activity), and still has none
      await triesOf('slots w1', 3);
      expect(third).toBe(false);
      // another endpoint is not held up
      await (await w2.gate('vcenter https://vc2.lab/sdk', 2))();
      await r2();
      const r3 = await p;
      expect(third).toBe(true);
      await r3();
      await r1();
    } finally {
      await w1.close();
      await w2.close();
    }
  }, 60_000);
});

/** Who holds advisory locks in the test database: application_name and how many. */
async function advisoryLockHolders(): Promise<Array<{ application_name: string; locks: number }>> {
  return pgdb.db.query<{ application_name: string; locks: number }>(
    `SELECT a.application_name, count(*)::int AS locks FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     GROUP BY a.application_name ORDER BY 1`,
  );
}

/** Resolves once the session named `app` has run `n` more try-lock queries than when called. */
async function triesOf(app: string, n: number): Promise<void> {
  const c = new pg.Client(pgdb.db.connection);
  await c.connect();
  try {
    const seen = new Set<string>();
    // every statement of this client is a transaction of its own: each sees pg_stat_activity afresh
    const sample = async () => {
      const { rows } = await c.query<{ at: string; query: string }>('SELECT state_change::text AS at, query FROM pg_stat_activity WHERE application_name = $1', [app]);
      for (const r of rows) if (r.query.includes('pg_try_advisory_lock')) seen.add(r.at);
      return seen.size;
    };
    const from = await sample();
    await waitFor(async () => (await sample()) >= from + n, { what: `${n} more slot tries of ${app}`, intervalMs: 5 });
  } finally {
    await c.end();
  }
}

// Endpoint slots (the per-vCenter limit across workers) in a real PostgreSQL. Review 17, finding 7:
// the slots held connections of the store's pool (max 4) for the span of the provisioning call, and
// the call's own ledger write needed one more: with four calls in flight it timed out and the sweep
// stopped as a lost store. Slots now live on a connection of their own.
import { describe, expect, it } from 'vitest';
import { endpointSlots } from '../../src/results/pg-coordination.ts';
import { PgRunStoreBackend } from '../../src/results/pg-store.ts';
import { useTestDatabase } from '../helpers/postgres.ts';

const pgdb = useTestDatabase('slots');

describe('endpoint slots', () => {
  it('four calls in flight holding slots (maxConcurrent 8), each writes the ledger: nothing waits for the store pool', async () => {
    const backend = await PgRunStoreBackend.connect(pgdb.conn, 'pg');
    const slots = endpointSlots(pgdb.conn);
    try {
      const meta = { runId: 'rslots0001', playbook: 'p', playbookFile: 'p', inventoryFile: 'i', target: 't', startedAt: new Date().toISOString(), fingerprint: {}, insecureEndpoints: [] };
      const store = await backend.createRun(meta, { runId: 'rslots0001', permutations: [] } as never);
      const t0 = Date.now();
      // as worker --concurrency 4 does: each call takes its slot, then writes its ledger row under it
      await Promise.all(
        Array.from({ length: 4 }, async (_, i) => {
          const release = await slots.gate('vcenter https://vc.lab/sdk', 8);
          try {
            await store.appendJournal(null, `disk:${i}`, 'sent', null);
            await store.appendJournal(null, `disk:${i}`, 'created', null);
          } finally {
            await release();
          }
        }),
      );
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect((await store.journal()).filter((j) => j.step.startsWith('disk:'))).toHaveLength(8);
    } finally {
      await slots.close();
      await backend.close();
    }
  }, 60_000);

  it('the limit holds across workers (two sessions): a third call waits until one of the two slots is given back', async () => {
    const w1 = endpointSlots(pgdb.conn, { pollMs: 20 });
    const w2 = endpointSlots(pgdb.conn, { pollMs: 20 });
    try {
      const r1 = await w1.gate('vcenter https://vc.lab/sdk', 2);
      const r2 = await w2.gate('vcenter https://vc.lab/sdk', 2);
      let third = false;
      const p = w1.gate('vcenter https://vc.lab/sdk', 2).then((r) => ((third = true), r));
      await new Promise((r) => setTimeout(r, 500));
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

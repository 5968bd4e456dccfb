// A ledger row says where to look, never what may be destroyed (issue 26, item 1): a row whose name
// is not one its run gives is refused before the provider is asked, and `cleanup --dry-run`
// (previewLedger) prints the provider's plan — exactly what the action acts on — or the refusal the
// cleanup gives, word for word, sending nothing.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunPlan } from '../../../src/contract/plan.ts';
import type { DestroyPlan, OwnedObjectRef, Provider } from '../../../src/contract/provider.ts';
import { ResultStore } from '../../../src/results/store.ts';
import { cleanupLedger, previewLedger } from '../../../src/run/teardown.ts';
import { runMeta, useTempDir } from './fake-run.ts';

const meta = runMeta();
const plan: RunPlan = {
  version: 1,
  runId: 'r1',
  playbook: 'pb',
  target: 't',
  provider: 'esxi-shell',
  axes: [],
  baseline: null,
  profiles: {},
  permutations: [{ index: 0, permutationId: 'p1', axes: {}, workload: 'none', steps: [], repetitions: 1, estimateSec: 1 }],
  totalEstimateSec: 1,
};

/** A provider whose plan for a datastore names the device recorded in it; counts what it does. */
function planning() {
  const calls = { destroy: 0, find: 0, run: [] as string[], planned: 0 };
  const planOf = (obj: OwnedObjectRef & { data: Record<string, unknown> }): Extract<DestroyPlan, { outcome: 'remove' }> => {
    const acts = `${String(obj.data.device)}:1`;
    return { outcome: 'remove', acts, run: async () => (calls.run.push(acts), 'removed') };
  };
  const provider: Provider = {
    name: 'esxi-shell',
    apply: async () => null,
    destroy: async (obj) => {
      calls.destroy++;
      return planOf(obj).run();
    },
    planDestroy: async (obj) => (calls.planned++, planOf(obj)),
    find: async () => (calls.find++, null),
    close: async () => undefined,
  };
  return { provider, calls };
}

const tmp = useTempDir('ss-owned-');
let store: ResultStore;
beforeEach(() => {
  store = ResultStore.create(path.join(tmp(), 'run'), meta, plan);
});
afterEach(() => store.close());

const created = (name: string, device: string) => {
  store.ledgerIntent('p1', 'esxi-shell', { kind: 'datastore', name }, { operation: 'vmkfstools -C', arguments: {} });
  store.ledgerCreated('p1', { kind: 'datastore', name, provider: 'esxi-shell', id: name, data: { label: name, device } });
};

describe('a ledger row names only what its run creates', () => {
  it("a row edited to another name (the user's datastore, another run's or permutation's object) is refused: nothing is asked of the host", async () => {
    for (const [name, dev] of [['users-ds', 'naa.b2'], ['ss-r2-p1-ds', 'naa.c3'], ['ss-r1-p2-ds', 'naa.d4']] as const) created(name, dev);
    const { provider, calls } = planning();
    const said: string[] = [];
    const preview: string[] = [];
    expect(await previewLedger(store, async () => provider, (l) => preview.push(l))).toBe(3);
    expect(await cleanupLedger(store, async () => provider, (l) => said.push(l))).toBe(3);
    expect(calls).toEqual({ destroy: 0, find: 0, run: [], planned: 0 });
    expect(said).toEqual([
      'could not remove datastore ss-r1-p2-ds: left alone: datastore ss-r1-p2-ds is not a name run r1 gives (ss-r1-p1-…): the ledger row names something this run did not create',
      'could not remove datastore ss-r2-p1-ds: left alone: datastore ss-r2-p1-ds is not a name run r1 gives (ss-r1-p1-…): the ledger row names something this run did not create',
      'could not remove datastore users-ds: left alone: datastore users-ds is not a name run r1 gives (ss-r1-p1-…): the ledger row names something this run did not create',
    ]);
    // the preview: the same refusals, word for word
    expect(preview).toEqual(said.map((l) => l.replace(/^could not remove/, 'would not remove')));
  });

  it("the dry run prints the provider's plan and runs nothing; the cleanup acts on exactly what it printed", async () => {
    created('ss-r1-p1-ds', 'naa.a1');
    const { provider, calls } = planning();
    const preview: string[] = [];
    expect(await previewLedger(store, async () => provider, (l) => preview.push(l))).toBe(0);
    expect(preview).toEqual(['would remove datastore ss-r1-p1-ds: naa.a1:1']);
    expect(calls.run).toEqual([]);
    expect(store.leftovers()).toHaveLength(1);
    const said: string[] = [];
    expect(await cleanupLedger(store, async () => provider, (l) => said.push(l))).toBe(0);
    expect(said).toEqual(['removed: datastore ss-r1-p1-ds']);
    expect(calls.run).toEqual(['naa.a1:1']);
  });

  it('a host that cannot be reached: the dry run shows the ledger and says why it was not checked', async () => {
    created('ss-r1-p1-ds', 'naa.a1');
    const preview: string[] = [];
    await previewLedger(store, () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:22')), (l) => preview.push(l));
    expect(preview).toEqual(['would remove datastore ss-r1-p1-ds (ss-r1-p1-ds); not checked on the host: connect ECONNREFUSED 127.0.0.1:22']);
  });
});

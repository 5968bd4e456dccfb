// The ledger rule, on a real run database and a scripted provider: an intent authorises nothing.
// Teardown (and cleanup) destroy an object only when apply() reported it sent, or when it is found
// by its owned name; a refused or never-sent step is marked so and never torn down.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UnsafeOperation } from '../../../src/errors.ts';
import { ResultStore } from '../../../src/results/store.ts';
import { executeRun } from '../../../src/run/executor.ts';
import type { CreatedObject, OwnedObjectRef, PlannedStep, Provider, ProviderContext } from '../../../src/contract/provider.ts';
import { cleanupLedger, wasSent } from '../../../src/run/teardown.ts';
import { noWorkload, onePermutationPlan, runMeta, useTempDir } from './fake-run.ts';

const meta = runMeta();
const partStep: PlannedStep = { step: 'partition', provider: 'esxi-shell', operation: 'partedUtil setptbl', arguments: { device: 'naa.1' }, destructive: true, destroys: ['naa.1'], creates: { kind: 'vmfs-partition', name: 'ss-r1-p1-part' } };
const diskStep: PlannedStep = { step: 'disk', provider: 'esxi-shell', operation: 'vmkfstools -c', arguments: { path: '/p/ss-r1-p1-disk.vmdk' }, destructive: false, creates: { kind: 'disk', name: 'ss-r1-p1-disk' } };
const planOf = (steps: PlannedStep[]) => onePermutationPlan('r1', steps);

type Apply = (step: PlannedStep, ctx: ProviderContext) => Promise<CreatedObject | null>;

function scripted(apply: Apply, found: (ref: OwnedObjectRef) => CreatedObject | null = () => null) {
  const destroyed: Array<{ kind: string; id: string | null; data: Record<string, unknown> }> = [];
  const lookedUp: string[] = [];
  const provider: Provider = {
    name: 'esxi-shell',
    apply,
    destroy: async (obj) => {
      destroyed.push({ kind: obj.kind, id: obj.id, data: obj.data });
      return 'removed';
    },
    find: async (ref) => {
      lookedUp.push(ref.name);
      return found(ref);
    },
    close: async () => undefined,
  };
  return { provider, destroyed, lookedUp };
}

const tmp = useTempDir('ss-ledger-');

async function run(steps: PlannedStep[], provider: Provider): Promise<ResultStore> {
  const plan = planOf(steps);
  const store = ResultStore.create(path.join(tmp(), 'run'), meta, plan);
  await executeRun({ store, plan, provider, workload: noWorkload, signal: new AbortController().signal, retry: { retries: 0 } });
  return store;
}

describe('executor: the ledger decides what teardown may touch', () => {
  it('a step its guard refused is recorded "refused" and never torn down (no destroy, no lookup)', async () => {
    const p = scripted(async () => {
      throw new UnsafeOperation('refusing partitioning on naa.1: it has 1 partition(s)', { operation: 'partedUtil', target: 'naa.1' });
    });
    const store = await run([partStep], p.provider);
    expect(store.ledger().map((r) => [r.name, r.state, r.error])).toEqual([['ss-r1-p1-part', 'refused', expect.stringContaining('1 partition(s)')]]);
    expect(p.destroyed).toEqual([]);
    expect(p.lookedUp).toEqual([]);
    expect(store.leftovers()).toEqual([]);
    expect(store.permutations()[0]!.status).toBe('failed');
    store.close();
  });

  it('a step that failed before sending anything is "not-sent", never torn down', async () => {
    const p = scripted(async () => {
      throw new Error('getptbl output unreadable');
    });
    const store = await run([partStep], p.provider);
    expect(store.ledger().map((r) => r.state)).toEqual(['not-sent']);
    expect(p.destroyed).toEqual([]);
    store.close();
  });

  it('a step that failed after ctx.sent() is torn down with exactly the data it recorded (id unknown)', async () => {
    const layout = { device: 'naa.1', label: 'gpt', startSector: 2048, endSector: 999 };
    const p = scripted(async (_s, ctx) => {
      await ctx.sent(layout);
      throw new Error('connection lost after setptbl');
    });
    const store = await run([partStep], p.provider);
    expect(p.destroyed).toEqual([{ kind: 'vmfs-partition', id: null, data: layout }]);
    expect(store.ledger().map((r) => r.state)).toEqual(['removed']);
    store.close();
  });

  it('created objects are torn down in reverse with their recorded ids; a later refused step is not', async () => {
    const p = scripted(async (step, ctx) => {
      if (step.step === 'disk') throw new UnsafeOperation('refused', { operation: 'x', target: 'y' });
      await ctx.sent({ device: 'naa.1', startSector: 1, endSector: 2, label: 'gpt' });
      return { ...step.creates!, provider: 'esxi-shell', id: 'naa.1:1', data: { device: 'naa.1', startSector: 1, endSector: 2, label: 'gpt' } };
    });
    const store = await run([partStep, diskStep], p.provider);
    expect(p.destroyed.map((d) => [d.kind, d.id])).toEqual([['vmfs-partition', 'naa.1:1']]);
    expect(store.ledger().map((r) => [r.kind, r.state])).toEqual([
      ['vmfs-partition', 'removed'],
      ['disk', 'refused'],
    ]);
    store.close();
  });

  it('a legacy intent row (old run dir, or a crash before sending) is removed only if found by its owned name', async () => {
    const plan = planOf([partStep, diskStep]);
    const store = ResultStore.create(path.join(tmp(), 'run'), meta, plan);
    // what an older storsweep left: intents only, with the step's arguments as data
    store.ledgerIntent('p1', 'esxi-shell', partStep.creates!, { operation: partStep.operation, arguments: partStep.arguments });
    store.ledgerIntent('p1', 'esxi-shell', diskStep.creates!, { operation: diskStep.operation, arguments: diskStep.arguments });
    const p = scripted(
      async () => null,
      (ref) => (ref.kind === 'disk' ? { ...ref, provider: 'esxi-shell', id: '/p/ss-r1-p1-disk.vmdk', data: { path: '/p/ss-r1-p1-disk.vmdk' } } : null),
    );
    const lines: string[] = [];
    const failed = await cleanupLedger(store, async () => p.provider, (l) => lines.push(l));
    expect(failed).toBe(0);
    expect(p.lookedUp).toEqual(['ss-r1-p1-disk', 'ss-r1-p1-part']);
    // the found disk goes, with the data the lookup returned; the partition was never proven sent
    expect(p.destroyed).toEqual([{ kind: 'disk', id: '/p/ss-r1-p1-disk.vmdk', data: { path: '/p/ss-r1-p1-disk.vmdk' } }]);
    expect(store.ledger().map((r) => [r.kind, r.state])).toEqual([
      ['vmfs-partition', 'not-sent'],
      ['disk', 'removed'],
    ]);
    expect(lines).toEqual(['removed: disk ss-r1-p1-disk', 'never created: vmfs-partition ss-r1-p1-part']);
    // a second cleanup has nothing to do
    expect(store.leftovers()).toEqual([]);
    store.close();
  });

  it('a partition is deleted only after this run removed the datastore it held; found gone instead, it is left alone', async () => {
    const dsRef = { kind: 'datastore', name: 'ss-r1-p1-ds' };
    const holds = { kind: 'datastore', name: 'ss-r1-p1-ds' };
    for (const [dsOutcome, expected] of [
      ['removed', { destroyed: ['datastore', 'vmfs-partition'], failed: 0, partition: 'removed' }],
      // our datastore was gone when cleanup looked: a user's VMFS (unmounted, so in no extent list)
      // may sit on the partition now
      ['absent', { destroyed: ['datastore'], failed: 1, partition: 'remove-failed' }],
    ] as const) {
      const plan = planOf([partStep]);
      const store = ResultStore.create(path.join(tmp(), `run-${dsOutcome}`), meta, plan);
      store.ledgerIntent('p1', 'esxi-shell', partStep.creates!, { operation: 'o', arguments: {} });
      store.ledgerSent('p1', partStep.creates!, { device: 'naa.1', label: 'msdos', startSector: 128, endSector: 999, holds });
      store.ledgerIntent('p1', 'esxi-shell', dsRef, { operation: 'o', arguments: {} });
      store.ledgerCreated('p1', { ...dsRef, provider: 'esxi-shell', id: 'uuid-1', data: { label: 'ss-r1-p1-ds' } });
      const destroyed: string[] = [];
      const provider: Provider = {
        name: 'esxi-shell',
        apply: async () => null,
        destroy: async (obj) => {
          destroyed.push(obj.kind);
          return obj.kind === 'datastore' ? dsOutcome : 'removed';
        },
        find: async () => null,
        close: async () => undefined,
      };
      const lines: string[] = [];
      expect(await cleanupLedger(store, async () => provider, (l) => lines.push(l))).toBe(expected.failed);
      expect(destroyed).toEqual(expected.destroyed);
      expect(store.ledger().find((r) => r.kind === 'vmfs-partition')!.state).toBe(expected.partition);
      if (dsOutcome === 'absent') expect(lines[1]).toMatch(/^could not remove vmfs-partition ss-r1-p1-part: left alone: .* held datastore ss-r1-p1-ds, which this run did not remove \(it was found gone/);
      store.close();
    }
  });

  it('cleanup of a refused run touches nothing', async () => {
    const p = scripted(async () => {
      throw new UnsafeOperation('refused', { operation: 'x', target: 'y' });
    });
    const store = await run([partStep], p.provider);
    const other = scripted(async () => null, () => ({ kind: 'vmfs-partition', name: 'x', provider: 'esxi-shell', id: 'naa.2:1', data: { device: 'naa.2' } }));
    expect(await cleanupLedger(store, async () => other.provider, () => undefined)).toBe(0);
    expect(other.destroyed).toEqual([]);
    expect(other.lookedUp).toEqual([]);
    store.close();
  });

  it('--keep keeps only what was sent; a resumed intent row is reset, never inherits old data', async () => {
    const plan = planOf([partStep]);
    const store = ResultStore.create(path.join(tmp(), 'run'), meta, plan);
    store.ledgerIntent('p1', 'esxi-shell', partStep.creates!, { operation: 'o', arguments: {} });
    store.ledgerSent('p1', partStep.creates!, { device: 'naa.1', startSector: 1, endSector: 2 });
    store.ledgerState(partStep.creates!, 'removed');
    store.ledgerIntent('p1', 'esxi-shell', partStep.creates!, { operation: 'o', arguments: {} });
    const [row] = store.ledger();
    expect(row).toMatchObject({ state: 'intent', objectId: null, data: { operation: 'o', arguments: {} } });
    expect(wasSent(row!)).toBe(false);
    // legacy kept/remove-failed rows that only ever had intent data are not proof of a send either
    expect(wasSent({ state: 'kept', objectId: null, data: { operation: 'o', arguments: {} } })).toBe(false);
    expect(wasSent({ state: 'remove-failed', objectId: null, data: { device: 'naa.1', startSector: 1, endSector: 2 } })).toBe(true);
    expect(wasSent({ state: 'created', objectId: 'naa.1:1', data: {} })).toBe(true);
    store.close();
  });
});

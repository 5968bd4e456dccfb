// Replicates that are real (repeat: {count, reprovision: true}) and repeat-until-stable, through the
// executor and a fake provider (fake-host.ts) whose host model is checked afterwards: each
// repetition provisions and tears down its own objects, units run in seeded rounds, a resume runs
// exactly the missing (permutation, repetition) pairs, and until-stable stops steady permutations
// at min while a noisy one runs to max.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PermutationPlan, Replication, RunPlan } from '../../../src/contract/plan.ts';
import type { PlannedStep, WorkloadEndpoint } from '../../../src/contract/provider.ts';
import { roundOrder } from '../../../src/plan/rounds.ts';
import { ResultStore } from '../../../src/results/store.ts';
import { executeRun, type RunSummary } from '../../../src/run/executor.ts';
import { FakeHost, fakeProvider, fakeWorkload, PROFILE } from './fake-host.ts';
import { runMeta, useTempDir } from './fake-run.ts';

const RUN = 'r1';
const meta = runMeta({ runId: RUN });
const owned = (perm: string, suffix: string) => `ss-${RUN}-${perm}-${suffix}`;

function steps(perm: string): PlannedStep[] {
  return [
    { step: 'datastore', provider: 'esxi-shell', operation: 'vmkfstools -C', arguments: { device: 'naa.1' }, destructive: true, destroys: ['naa.1'], creates: { kind: 'datastore', name: owned(perm, 'ds') } },
    { step: 'disk', provider: 'esxi-shell', operation: 'vmkfstools -c', arguments: {}, destructive: false, creates: { kind: 'disk', name: owned(perm, 'disk') } },
    { step: 'workload', provider: 'local', operation: 'fio', arguments: {}, destructive: false },
  ];
}

function planOf(n: number, r: Partial<Replication>): RunPlan {
  const replication: Replication = { unit: 'between-provisionings', order: 'rounds', seed: 12345, min: 3, max: 3, until: null, extraProvisionSec: 0, ...r };
  const permutations: PermutationPlan[] = Array.from({ length: n }, (_, i) => ({ index: i, permutationId: `p${i + 1}`, axes: { 'disk.format': `f${i + 1}` }, workload: 'quick', steps: steps(`p${i + 1}`), repetitions: replication.max, estimateSec: 1 }));
  return { version: 1, runId: RUN, playbook: 'pb', target: 't', provider: 'esxi-shell', axes: [], baseline: null, profiles: { quick: PROFILE }, permutations, replication, totalEstimateSec: n };
}

/** fakeWorkload whose IOPS per permutation come from `iops(perm, run)` (the permutation read from the raw path). */
function measuring(iops: (perm: string, n: number) => number, onTest?: (perm: string) => void): WorkloadEndpoint {
  const base = fakeWorkload();
  const seen = new Map<string, number>();
  return {
    ...base,
    runTest: async (runner, test, profile, o) => {
      const out = await base.runTest(runner, test, profile, o);
      const perm = /raw\/(p\d+)\//.exec(out.rawPath ?? '')![1]!;
      seen.set(perm, (seen.get(perm) ?? 0) + 1);
      onTest?.(perm);
      return { ...out, iops: iops(perm, seen.get(perm)!) };
    },
  };
}

const tmp = useTempDir('ss-reps-');

async function run(store: ResultStore, host: FakeHost, workload: WorkloadEndpoint = fakeWorkload(), signal = new AbortController().signal): Promise<RunSummary> {
  return executeRun({ store, plan: store.plan(), provider: fakeProvider(host), workload, signal, retry: { retries: 0, minTimeoutMs: 1, maxTimeoutMs: 2 } });
}

/** (permutation, repetition) in the order the journal recorded them. */
const recordedOrder = (store: ResultStore) => store.journal().filter((j) => /^repetition-\d+$/.test(j.step) && j.event === 'recorded').map((j) => `${j.permutationId}/${j.step.slice('repetition-'.length)}`);
const creates = (host: FakeHost, perm: string) => host.calls.filter((c) => c === `create datastore ${owned(perm, 'ds')}`).length;
const destroys = (host: FakeHost, perm: string) => host.calls.filter((c) => c === `destroy datastore ${owned(perm, 'ds')}`).length;

describe('repeat: {count: 3, reprovision: true}', () => {
  it('provisions and tears down each permutation once per repetition, in rounds in the seeded order of each round', async () => {
    const host = new FakeHost();
    const plan = planOf(3, {});
    const store = ResultStore.create(path.join(tmp(), 'run'), meta, plan);
    const summary = await run(store, host);
    expect(summary).toMatchObject({ done: 3, failed: 0, leftovers: 0 });
    for (const p of ['p1', 'p2', 'p3']) {
      expect(creates(host, p)).toBe(3);
      expect(destroys(host, p)).toBe(3);
    }
    // every repetition on its own objects: created, measured, destroyed before the next unit starts
    const firstUnit = host.calls.slice(0, 4);
    expect(firstUnit.slice(2)).toEqual([`destroy disk ${firstUnit[1]!.split(' ')[2]}`, `destroy datastore ${firstUnit[0]!.split(' ')[2]}`]);
    const rounds = [1, 2, 3].flatMap((round) => roundOrder(plan.permutations, 12345, round).map((p) => `${p.permutationId}/${round}`));
    expect(recordedOrder(store)).toEqual(rounds);
    // the seed gives different orders to different rounds (else rounds would not spread drift)
    expect(new Set([1, 2, 3].map((round) => roundOrder(plan.permutations, 12345, round).map((p) => p.permutationId).join())).size).toBeGreaterThan(1);
    expect(store.permutations().map((p) => p.status)).toEqual(['done', 'done', 'done']);
    expect(host.state()).toEqual([]);
    store.close();
  });

  it('order: permutation runs each permutation\'s provisionings back to back', async () => {
    const host = new FakeHost();
    const store = ResultStore.create(path.join(tmp(), 'run'), meta, planOf(2, { order: 'permutation' }));
    await run(store, host);
    expect(recordedOrder(store)).toEqual(['p1/1', 'p1/2', 'p1/3', 'p2/1', 'p2/2', 'p2/3']);
    expect(creates(host, 'p1') + creates(host, 'p2')).toBe(6);
    store.close();
  });

  it('a resume keeps the repetitions recorded on their own provisionings and runs exactly the missing pairs; a permutation killed after its last one is only settled', async () => {
    const host = new FakeHost();
    const plan = planOf(3, {});
    const first = ResultStore.create(path.join(tmp(), 'run'), meta, plan);
    // interrupted during round 2, in the 5th unit's test
    const ac = new AbortController();
    let n = 0;
    await run(first, host, measuring(() => 1000, () => void (++n === 5 && ac.abort())), ac.signal);
    const before = recordedOrder(first);
    // the unit under way when the run was interrupted records nothing (its objects are torn down)
    expect(before.length).toBe(4);
    expect(host.state()).toEqual([]);
    first.close();
    // what a kill -9 would add: p3 has all three recorded but is still `running` with a datastore live
    const killed = ResultStore.open(path.join(tmp(), 'run'));
    for (const rep of [1, 2, 3]) if (!before.includes(`p3/${rep}`)) killed.addRepetition('p3', rep, []);
    killed.markRunning('p3');
    const ds = steps('p3')[0]!.creates!;
    killed.ledgerIntent('p3', 'esxi-shell', ds, {});
    killed.ledgerSent('p3', ds, { owned: ds.name });
    const o = host.add('datastore', ds.name);
    killed.ledgerCreated('p3', { ...ds, provider: 'esxi-shell', id: o.id, data: { owned: ds.name } });
    // …and p1's unit of round 2 was under way: its disk exists (on a shared LUN, it would keep the next unit from formatting)
    killed.markRunning('p1');
    const disk = steps('p1')[1]!.creates!;
    killed.ledgerIntent('p1', 'esxi-shell', disk, {});
    killed.ledgerSent('p1', disk, { owned: disk.name });
    const d = host.add('disk', disk.name);
    killed.ledgerCreated('p1', { ...disk, provider: 'esxi-shell', id: d.id, data: { owned: disk.name } });
    const missing = ['p1', 'p2'].flatMap((p) => [1, 2, 3].map((r) => `${p}/${r}`)).filter((k) => !before.includes(k));
    const recordedBefore = recordedOrder(killed).length;
    killed.close();

    host.calls.length = 0;
    const store = ResultStore.open(path.join(tmp(), 'run'));
    const summary = await run(store, host);
    expect(summary).toMatchObject({ failed: 0, leftovers: 0 });
    expect(store.permutations().map((p) => p.status)).toEqual(['done', 'done', 'done']);
    // exactly the missing pairs, each once; nothing recorded before is redone
    expect(recordedOrder(store).slice(recordedBefore).sort()).toEqual(missing.sort());
    expect(creates(host, 'p1') + creates(host, 'p2')).toBe(missing.length);
    // what the interrupted run left is removed before anything is provisioned again
    const firstCreate = host.calls.findIndex((c) => c.startsWith('create '));
    expect(host.calls.slice(0, firstCreate).sort()).toEqual([`destroy datastore ${owned('p3', 'ds')}`, `destroy disk ${owned('p1', 'disk')}`]);
    // p3: its leftover removed, nothing provisioned again
    expect(creates(host, 'p3')).toBe(0);
    expect(destroys(host, 'p3')).toBe(1);
    expect(host.state()).toEqual([]);
    // every repetition once: those recorded before the interruption are still there, not measured again
    const keys = store.records().map((r) => `${r.permutationId}/${r.repetition}`);
    expect(keys.filter((k) => !k.startsWith('p3/')).sort()).toEqual(['p1/1', 'p1/2', 'p1/3', 'p2/1', 'p2/2', 'p2/3']);
    store.close();
  });
});

describe('repeat: {min: 3, max: 8, until: {ciPct: 5}}', () => {
  // p1 steady (1000 IOPS every time); p2 noisy (alternating 500 and 1500)
  const iops = (perm: string, k: number) => (perm === 'p1' ? 1000 : k % 2 ? 500 : 1500);

  for (const [unit, order] of [['between-provisionings', 'rounds'], ['within-provisioning', 'permutation']] as const) {
    it(`${unit}: stops a steady permutation at min and runs a noisy one to max`, async () => {
      const host = new FakeHost();
      const store = ResultStore.create(path.join(tmp(), 'run'), meta, planOf(2, { unit, order, min: 3, max: 8, until: { ciPct: 5 } }));
      const summary = await run(store, host, measuring(iops));
      expect(summary).toMatchObject({ done: 2, failed: 0, leftovers: 0 });
      const reps = (p: string) => store.records().filter((r) => r.permutationId === p).map((r) => r.repetition);
      expect(reps('p1')).toEqual([1, 2, 3]);
      expect(reps('p2')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(creates(host, 'p1')).toBe(unit === 'within-provisioning' ? 1 : 3);
      expect(creates(host, 'p2')).toBe(unit === 'within-provisioning' ? 1 : 8);
      expect(host.state()).toEqual([]);
      store.close();
    });
  }
});

// The confirmation record (results/confirmation.ts) and the executor's check against it, on a real
// run.sqlite and a scripted provider whose calls are counted: a permutation whose stored plan is not
// the one the run was confirmed for is refused before anything of it is sent — a worker taking a
// dead one's permutation over included: its teardown is not run either.
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { RunPlan } from '../../../src/contract/plan.ts';
import type { PlannedStep, Provider } from '../../../src/contract/provider.ts';
import { UnsafeOperation } from '../../../src/errors.ts';
import { checkPermutationConfirmed, checkRunConfirmed, CONFIRMATION_KEY, confirmationOf, type Confirmed, type RunConfirmation } from '../../../src/results/confirmation.ts';
import { ResultStore } from '../../../src/results/store.ts';
import { executeRun } from '../../../src/run/executor.ts';
import { NO_TESTS, noWorkload, runMeta, useTempDir } from '../run/fake-run.ts';

const LUN = 'naa.600000000000000000000000000000a1';
const OTHER = 'naa.600000000000000000000000000000b2';
const meta = runMeta({ confirmedDestroy: [LUN] });
const partStep: PlannedStep = { step: 'partition', provider: 'esxi-shell', operation: 'partedUtil setptbl', arguments: { device: LUN }, destructive: true, destroys: [LUN], creates: { kind: 'vmfs-partition', name: 'ss-r1-p1-part' } };
const workloadStep: PlannedStep = { step: 'workload', provider: 'local', operation: 'fio', arguments: {}, destructive: false };

function planOf(): RunPlan {
  return {
    version: 1,
    runId: 'r1',
    playbook: 'pb',
    target: 't',
    provider: 'esxi-shell',
    axes: [],
    baseline: null,
    profiles: { none: NO_TESTS },
    permutations: [
      { index: 0, permutationId: 'p1', axes: { n: 1 }, workload: 'none', steps: [partStep, workloadStep], repetitions: 1, estimateSec: 1 },
      { index: 1, permutationId: 'p2', axes: { n: 2 }, workload: 'none', steps: [workloadStep], repetitions: 1, estimateSec: 1 },
    ],
    totalEstimateSec: 2,
  };
}

/** A deep copy with every object's keys in reverse order: the same plan as another store may return it. */
function reordered<T>(v: T): T {
  if (Array.isArray(v)) return v.map(reordered) as T;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reordered(x)])) as T;
  return v;
}

const confirmedFor = (plan: RunPlan, over: Partial<RunConfirmation> = {}): Confirmed => ({ record: { ...confirmationOf('r1', [LUN], plan), ...over }, confirmedDestroy: [LUN] });
const refusal = (fn: () => void): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UnsafeOperation);
    return (err as Error).message;
  }
  throw new Error('not refused');
};

describe('the confirmation record', () => {
  it('accepts the plan it was made from, whatever the key order it is read back in', () => {
    const plan = planOf();
    const c = confirmedFor(plan);
    expect(() => checkRunConfirmed(reordered(plan), c)).not.toThrow();
    expect(c.record!.destroys).toEqual([LUN]);
    expect(Object.keys(c.record!.permutations)).toEqual(['p1', 'p2']);
  });

  it('refuses a permutation that destroys a name the run was not confirmed for, naming the row and both names', () => {
    const plan = planOf();
    const c = confirmedFor(plan);
    const edited = JSON.parse(JSON.stringify(plan).replaceAll(LUN, OTHER)) as RunPlan;
    expect(refusal(() => checkPermutationConfirmed(edited, edited.permutations[0]!, c))).toBe(`run r1, permutation p1: its stored plan destroys data on ${OTHER}, which this run was not confirmed for (it was confirmed for ${LUN}); nothing of it was sent (check who changed the store; the run can be started again)`);
    // the permutation that destroys nothing is untouched by the edit
    expect(() => checkPermutationConfirmed(edited, edited.permutations[1]!, c)).not.toThrow();
  });

  it('refuses an edit that keeps what is destroyed (the digest), in a permutation or in the plan header', () => {
    const plan = planOf();
    const c = confirmedFor(plan);
    const perm = { ...plan.permutations[1]!, repetitions: 5 };
    expect(refusal(() => checkPermutationConfirmed(plan, perm, c))).toMatch(/^run r1, permutation p2: its stored plan differs from the plan the run was confirmed with \(SHA-256 [0-9a-f]{12}… ≠ [0-9a-f]{12}…\);/);
    const header = { ...plan, profiles: { none: { ...plan.profiles.none!, fileSizeBytes: 2 } } };
    expect(refusal(() => checkPermutationConfirmed(header, header.permutations[0]!, c))).toContain(`run r1, permutation p1: the run's stored plan (its profiles, targets or axes) differs from the plan the run was confirmed with`);
    expect(refusal(() => checkPermutationConfirmed(header, header.permutations[0]!, c))).toContain(`its steps destroy ${LUN}`);
    const added = { ...plan.permutations[1]!, permutationId: 'p3' };
    expect(refusal(() => checkPermutationConfirmed(plan, added, c))).toContain('run r1, permutation p3: it is not in the plan the run was confirmed with');
  });

  it('refuses a record that was changed, belongs to another run, or disagrees with the run metadata', () => {
    const plan = planOf();
    const good = confirmedFor(plan).record!;
    const p1 = plan.permutations[0]!;
    // a digest made to match an edited plan, without the seal
    const edited = { ...p1, repetitions: 9 };
    const forged = confirmedFor(plan, { permutations: { ...good.permutations, p1: confirmationOf('r1', [LUN], { ...plan, permutations: [edited] }).permutations.p1! } });
    expect(refusal(() => checkPermutationConfirmed(plan, edited, forged))).toContain('its confirmation record was changed after the run started (its seal does not match)');
    // the confirmed set widened in the record alone (sealed again), or in the metadata alone
    const widened = confirmationOf('r1', [LUN, OTHER], plan);
    expect(refusal(() => checkPermutationConfirmed(plan, p1, { record: widened, confirmedDestroy: [LUN] }))).toContain(`its confirmation record (${LUN}, ${OTHER}) and its metadata (${LUN}) name different devices`);
    expect(refusal(() => checkPermutationConfirmed(plan, p1, { record: good, confirmedDestroy: [LUN, OTHER] }))).toContain('name different devices');
    expect(refusal(() => checkPermutationConfirmed(plan, p1, { record: confirmationOf('r2', [LUN], plan), confirmedDestroy: [LUN] }))).toContain('its confirmation record belongs to run "r2"');
  });

  it('a run from before the record: its destroys are checked against the metadata; with neither, nothing destructive runs', () => {
    const plan = planOf();
    expect(() => checkRunConfirmed(plan, { record: null, confirmedDestroy: [LUN] })).not.toThrow();
    expect(refusal(() => checkRunConfirmed(plan, { record: null, confirmedDestroy: [OTHER] }))).toContain(`destroys data on ${LUN}, which this run was not confirmed for (it was confirmed for ${OTHER})`);
    expect(refusal(() => checkRunConfirmed(plan, { record: null }))).toContain('(it was confirmed for nothing)');
  });
});

describe('the executor, on a run.sqlite edited after the run started', () => {
  const tmp = useTempDir('ss-confirm-');

  it('taking over a half-done permutation whose plan now names another LUN: nothing applied, looked up or torn down; recorded failed; its ledger row left for cleanup', async () => {
    const calls: string[] = [];
    const provider: Provider = {
      name: 'esxi-shell',
      apply: async (s) => (calls.push(`apply ${s.step}`), null),
      destroy: async (o) => (calls.push(`destroy ${o.kind}`), 'removed'),
      find: async (r) => (calls.push(`find ${r.kind}`), null),
      close: async () => undefined,
    };
    const runDir = path.join(tmp(), 'run');
    const store = ResultStore.create(runDir, meta, planOf());
    // as a worker that died left it: running, its partition sent
    store.markRunning('p1');
    store.ledgerIntent('p1', 'esxi-shell', partStep.creates!, { operation: partStep.operation, arguments: partStep.arguments });
    store.ledgerSent('p1', partStep.creates!, { device: LUN, partition: 1 });
    expect(store.getMeta<RunConfirmation>(CONFIRMATION_KEY)?.destroys).toEqual([LUN]);
    const db = new Database(path.join(runDir, 'run.sqlite'));
    db.prepare('UPDATE permutations SET plan = replace(plan, ?, ?)').run(LUN, OTHER);
    db.close();

    const plan = store.plan();
    expect(JSON.stringify(plan.permutations[0])).toContain(OTHER);
    const summary = await executeRun({ store, plan, provider, workload: noWorkload, signal: new AbortController().signal, retry: { retries: 0 } });
    expect(calls).toEqual([]);
    expect(summary).toMatchObject({ done: 1, failed: 1 });
    const [p1, p2] = store.permutations();
    expect(p1).toMatchObject({ status: 'failed', reason: expect.stringContaining(`run r1, permutation p1: its stored plan destroys data on ${OTHER}, which this run was not confirmed for`) });
    expect(p2!.status).toBe('done');
    expect(store.journal().filter((j) => j.permutationId === 'p1').map((j) => `${j.step} ${j.event}`)).toContain('permutation refused');
    expect(store.leftovers().map((r) => [r.name, r.state])).toEqual([['ss-r1-p1-part', 'sent']]);
    store.close();
  });
});

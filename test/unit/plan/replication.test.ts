// `repeat:` as planned: the unit, the order and its seed recorded in the plan, the estimate with a
// provisioning (and pre-fill) per repetition, the worst case of repeat-until-stable, what `plan`
// prints, and `--set repeat=N` over the object form.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderPlanText } from '../../../src/app/plan-text.ts';
import { loadPlaybook } from '../../../src/config/index.ts';
import { parseSetArguments } from '../../../src/config/overrides.ts';
import { playbookSchema } from '../../../src/config/playbook.ts';
import { buildPlan } from '../../../src/plan/plan.ts';
import { roundOrder } from '../../../src/plan/rounds.ts';

// one 1 GiB pre-fill per provisioning (~11 s at the assumed 100 MB/s), one 4k test of 5 × 5 s per repetition
const FILL = 2 ** 30 / 100e6;
const plan = (repeat: unknown, seed?: number) =>
  buildPlan(playbookSchema.parse({ name: 't', target: 'x', matrix: { workload: { profile: ['4k 100% read 100% random', '4k 0% read 100% random'] } }, repeat }), 'x', { runId: 'r1', provider: 'local', ...(seed !== undefined ? { seed } : {}) });

describe('repeat as planned', () => {
  it('a bare number: back to back on one provisioning, one pre-fill per permutation', () => {
    const p = plan(3);
    expect(p.replication).toMatchObject({ unit: 'within-provisioning', order: 'permutation', min: 3, max: 3, until: null, extraProvisionSec: 0 });
    expect(p.permutations[0]!.estimateSec).toBe(Math.round(3 * 25 + FILL));
    expect(renderPlanText(p)).toContain('repetitions: 3 repetitions each, back to back on one provisioning (they sample run-to-run noise only)');
  });

  it('reprovision: a provisioning and pre-fill per repetition, in rounds with the seed given to the planner, all in plan', () => {
    const p = plan({ count: 3, reprovision: true }, 42);
    expect(p.replication).toMatchObject({ unit: 'between-provisionings', order: 'rounds', seed: 42, min: 3, max: 3 });
    expect(p.permutations[0]!.estimateSec).toBe(Math.round(3 * (25 + FILL)));
    // two permutations × two more provisionings × the 11 s pre-fill
    expect(p.replication!.extraProvisionSec).toBe(Math.round(2 * 2 * FILL));
    expect(renderPlanText(p)).toContain('repetitions: 3 repetitions each, each on freshly provisioned objects (between provisionings), in rounds (repetition k of every permutation before any k+1), each round in a fresh random order, seed 42; reprovisioning adds ~0m 43s');
    // the playbook's own seed wins over the planner's
    expect(plan({ count: 3, reprovision: true, seed: 5 }, 42).replication!.seed).toBe(5);
    expect(plan({ count: 3, reprovision: true, order: 'permutation' }).replication!.order).toBe('permutation');
  });

  it('until: estimated at max (the worst case), with the best case beside it', () => {
    const p = plan({ min: 3, max: 10, until: { ciPct: 5 }, reprovision: true }, 1);
    expect(p.permutations[0]!.repetitions).toBe(10);
    expect(p.permutations[0]!.estimateSec).toBe(Math.round(10 * (25 + FILL)));
    expect(p.totalEstimateSec).toBe(2 * Math.round(10 * (25 + FILL)));
    expect(p.replication!.bestCaseSec).toBe(2 * Math.round(3 * (25 + FILL)));
    const text = renderPlanText(p);
    expect(text).toContain("repetitions: 3–10 repetitions each, until the main metric's 95 % interval is within ±5 % of its mean (estimated at 10, the worst case; ~3m 34s if all stop at 3)");
    expect(text).toMatch(/ ×3–10 {2}~5m 57s/);
  });

  it('round orders: a permutation of the same items, reproducible from the seed, not the same every round', () => {
    const items = ['a', 'b', 'c', 'd', 'e', 'f'];
    const orders = [1, 2, 3, 4].map((r) => roundOrder(items, 99, r));
    for (const o of orders) expect([...o].sort()).toEqual(items);
    expect(roundOrder(items, 99, 2)).toEqual(orders[1]);
    expect(new Set(orders.map((o) => o.join())).size).toBeGreaterThan(1);
  });
});

describe('--set repeat=N over repeat: {…}', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-repeat-set-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, repeat: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, `name: t\ntarget: x\nmatrix:\n  workload:\n    profile: [quick]\nrepeat:\n${repeat}\n`);
    return f;
  };

  it('changes the number and keeps the unit and order; a repeat-until-stable becomes that many fixed', () => {
    const reprov = file('a.yaml', '  count: 3\n  reprovision: true\n  seed: 9');
    expect(loadPlaybook(reprov, parseSetArguments(['repeat=1'])).playbook.repeat).toEqual({ min: 1, max: 1, until: null, reprovision: true, order: 'rounds', seed: 9 });
    const until = file('b.yaml', '  min: 3\n  max: 8\n  until: {ciPct: 5}\n  reprovision: true');
    expect(loadPlaybook(until, parseSetArguments(['repeat=2'])).playbook.repeat).toMatchObject({ min: 2, max: 2, until: null, reprovision: true });
    // a bad number is refused at the argument, as any --set value
    expect(() => loadPlaybook(reprov, parseSetArguments(['repeat=0']))).toThrow(/--set repeat=0: repeat\.count: expected a number of repetitions from 1 to 1000; got 0/);
  });
});

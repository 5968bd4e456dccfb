// Listed targets run in parallel, except those that share something (plan.serialised): their
// permutations never overlap, they take turns, and the progress says who waits for whom. Driven
// through the real executor and run database with a workload that records when each test runs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PermutationPlan, RunPlan } from '../../../src/contract/plan.ts';
import type { WorkloadEndpoint } from '../../../src/contract/provider.ts';
import { ResultStore, type RunMeta } from '../../../src/results/store.ts';
import { executeRun } from '../../../src/run/executor.ts';
import type { ProgressEvent } from '../../../src/run/progress.ts';
import { ResourceLocks } from '../../../src/run/resource-locks.ts';
import type { WorkloadTest } from '../../../src/workloads/spec.ts';
import { PROFILE } from './fake-host.ts';
import { hold } from '../../helpers/wait.ts';

const RUN = 'r1';
const TARGETS = ['a', 'b', 'c'];
const meta: RunMeta = { runId: RUN, playbook: 'pb', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: TARGETS.join(', '), targets: TARGETS, startedAt: '2024-01-01T00:00:00.000Z', fingerprint: {}, insecureEndpoints: [] };

function planOf(serialised: RunPlan['serialised']): RunPlan {
  const permutations: PermutationPlan[] = TARGETS.flatMap((t, ti) =>
    [1, 2].map((n) => ({ index: ti * 2 + n - 1, permutationId: `${t}${n}`, axes: { target: t, 'workload.profile': 'quick' }, workload: 'quick', steps: [{ step: 'workload', provider: 'local' as const, operation: 'fio', arguments: {}, destructive: false }], repetitions: 1, estimateSec: 10 })),
  );
  return { version: 1, runId: RUN, playbook: 'pb', target: TARGETS.join(', '), provider: 'local', targets: TARGETS.map((name) => ({ name, provider: 'local' })), serialised, axes: [], baseline: null, profiles: { quick: PROFILE }, permutations, totalEstimateSec: 60 };
}

/** A workload whose every test takes `ms` and records [start, end] under its target. */
function timedWorkload(target: string, spans: Array<{ target: string; start: number; end: number }>, ms: number): WorkloadEndpoint {
  return {
    tool: 'fio',
    connect: async () => ({ target, run: async () => ({ command: '', exitCode: 0, stdout: '', stderr: '' }), close: async () => undefined }) as never,
    runTest: async (_r: unknown, test: WorkloadTest, _p: unknown, o: { onRaw: (t: WorkloadTest, pass: number, raw: string) => Promise<string | null> }) => {
      const start = performance.now();
      await hold(ms); // the fake test's own duration: the spans it leaves are what the serialisation is judged by
      spans.push({ target, start, end: performance.now() });
      const rawPath = await o.onRaw(test, 1, '{}');
      return { test, toolVersion: 'fio-3.33', rawPath, passes: 1, iops: 1, bytesPerSecond: 1, latencyUs: { mean: 1, p50: 1, p95: 1, p99: 1, p999: 1 }, cpuPercent: null, representativePass: 0 };
    },
  } as unknown as WorkloadEndpoint;
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-serial-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function runPlan(plan: RunPlan, before?: (store: ResultStore) => void) {
  const spans: Array<{ target: string; start: number; end: number }> = [];
  const events: ProgressEvent[] = [];
  const store = ResultStore.create(path.join(dir, 'run'), meta, plan);
  before?.(store);
  const summary = await executeRun({
    store,
    plan,
    provider: null,
    workload: timedWorkload('a', spans, 1),
    targets: Object.fromEntries(TARGETS.map((t) => [t, { provider: null, workload: timedWorkload(t, spans, 40) }])),
    signal: new AbortController().signal,
    onEvent: (e) => events.push(e),
  });
  store.close();
  const overlap = (x: string, y: string) => spans.some((s) => s.target === x && spans.some((o) => o.target === y && s.start < o.end && o.start < s.end));
  return { summary, spans, events, overlap };
}

describe('targets that share a resource take turns; the others run beside them', () => {
  it('nothing shared: all three targets overlap', async () => {
    const r = await runPlan(planOf([]));
    expect(r.summary.done).toBe(6);
    expect(r.overlap('a', 'b') && r.overlap('b', 'c') && r.overlap('a', 'c')).toBe(true);
  });

  it('a and b share a guest test file: never at once, in turns (a1 b1 a2 b2); c runs beside both', async () => {
    const r = await runPlan(planOf([{ key: 'guest-file this machine /x', what: 'guest test file /x on this machine', targets: ['a', 'b'] }]));
    expect(r.summary.done).toBe(6);
    expect(r.overlap('a', 'b')).toBe(false);
    expect(r.overlap('a', 'c') || r.overlap('b', 'c')).toBe(true);
    const starts = r.events.filter((e) => e.type === 'permutation-start').map((e) => (e as { permutationId: string }).permutationId).filter((id) => !id.startsWith('c'));
    expect(starts).toEqual(['a1', 'b1', 'a2', 'b2']);
    // said once per turn, naming the other target and what they share
    const waits = r.events.filter((e) => e.type === 'message' && e.text.startsWith('waits for'));
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0]).toMatchObject({ text: 'waits for a to finish its permutation (both use guest test file /x on this machine)', permutationId: 'b1' });
  });

  it('a–b share one thing and b–c another: a and c may overlap, b never overlaps either', async () => {
    const r = await runPlan(
      planOf([
        { key: 'vm 1', what: 'VM 1', targets: ['a', 'b'] },
        { key: 'lun naa.1', what: 'LUN naa.1', targets: ['b', 'c'] },
      ]),
    );
    expect(r.summary.done).toBe(6);
    expect(r.overlap('a', 'b')).toBe(false);
    expect(r.overlap('b', 'c')).toBe(false);
  });
});

describe('the estimate at the start of a run', () => {
  it('targets in parallel: the longest target, with the sum beside it; a resume counts only what is left', async () => {
    const fresh = await runPlan(planOf([]));
    expect(fresh.events[0]).toEqual({ type: 'run-start', runId: RUN, total: 6, estimateSec: 20, workSec: 60 });
    fs.rmSync(path.join(dir, 'run'), { recursive: true });
    // a and b take turns (one lane of 40 s); a1 and b1 already done: 20 s left in that lane
    const resumed = await runPlan(planOf([{ key: 'k', what: 'VM 1', targets: ['a', 'b'] }]), (store) => {
      for (const id of ['a1', 'b1']) {
        store.markRunning(id);
        store.markFinished(id, 'done', null);
      }
    });
    expect(resumed.events[0]).toEqual({ type: 'run-start', runId: RUN, total: 6, estimateSec: 20, done: 2, workSec: 40 });
    expect(resumed.summary).toMatchObject({ done: 4, skipped: 2 });
  });
});

describe('ResourceLocks', () => {
  it('first come, first served per key; keys taken in one order, so crossing requests never deadlock', async () => {
    const locks = new ResourceLocks();
    const order: string[] = [];
    // x holds its keys until z (which shares none) has its own: y, asking for x's keys meanwhile, must wait
    let zIn!: () => void;
    const zHasIt = new Promise<void>((r) => (zIn = r));
    const job = async (who: string, keys: string[]) => {
      const release = await locks.acquire(keys, who);
      order.push(`${who}+`);
      if (who === 'z') zIn();
      if (who === 'x') await zHasIt;
      order.push(`${who}-`);
      release();
      release(); // idempotent
    };
    await Promise.all([job('x', ['k1', 'k2']), job('y', ['k2', 'k1']), job('z', ['k3'])]);
    expect(order.indexOf('x-')).toBeLessThan(order.indexOf('y+'));
    expect(order.indexOf('z+')).toBeLessThan(order.indexOf('x-'));
  });
});

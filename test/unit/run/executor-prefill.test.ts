// The pre-fill through the real executor and run database: once per permutation, before its first
// pass, journaled, and named in every record of the permutation.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ResultStore } from '../../../src/results/store.ts';
import { executeRun, type WorkloadEndpoint } from '../../../src/run/executor.ts';
import { makeTest } from '../../../src/workloads/profiles.ts';
import type { WorkloadProfile } from '../../../src/workloads/spec.ts';
import { measureOnlyPlan, runMeta, useTempDir } from './fake-run.ts';

const meta = runMeta();

const planOf = (profile: WorkloadProfile) => measureOnlyPlan(profile, { repetitions: 2 });

const profile = (prefill: boolean): WorkloadProfile => ({
  name: 'w',
  description: '',
  tests: [makeTest('randread', 4096, 1, 1), makeTest('randwrite', 4096, 1, 1)],
  fileSizeBytes: 1024,
  runtimeSec: 1,
  rampSec: 0,
  passes: 1,
  warmupPass: false,
  prefill,
  intervalSec: 0,
  direct: true,
  aggregate: 'max',
});

function endpoint(events: string[]): WorkloadEndpoint {
  return {
    tool: 'fio',
    connect: async () => ({ target: 'x', run: async () => ({ command: '', exitCode: 0, stdout: '', stderr: '' }), close: async () => undefined }) as never,
    prepare: async (_runner, p) => {
      events.push('prepare');
      return p.prefill === false ? null : { filled: true, bytes: p.fileSizeBytes, seconds: 1.25, passes: 1, method: 'test fill' };
    },
    runTest: async (_runner, test) => {
      events.push(test.id);
      return { test, iops: 1, bytesPerSecond: 4096, latencyUs: { mean: 1, p50: null, p95: null, p99: null, p999: null }, cpuPercent: null, representativePass: 0, toolVersion: 'fio-3', rawPath: null, passes: 1 };
    },
  };
}

const tmp = useTempDir('ss-prefill-');

describe('executor: pre-fill', () => {
  it('runs once per permutation, before its first pass, not per repetition; journaled; every record says it was filled and how long it took', async () => {
    const plan = planOf(profile(true));
    const store = ResultStore.create(path.join(tmp(), 'run'), meta, plan);
    const events: string[] = [];
    const summary = await executeRun({ store, plan, provider: null, workload: endpoint(events), signal: new AbortController().signal, retry: { retries: 0 } });
    expect(summary.done).toBe(2);
    const perPerm = ['prepare', 'rnd-4k-q1t1-read', 'rnd-4k-q1t1-write', 'rnd-4k-q1t1-read', 'rnd-4k-q1t1-write'];
    expect(events).toEqual([...perPerm, ...perPerm]);
    const fills = store.journal().filter((e) => e.step === 'prefill');
    expect(fills.map((e) => [e.permutationId, e.event])).toEqual([['p1', 'filled'], ['p2', 'filled']]);
    expect(fills[0]!.detail).toMatchObject({ filled: true, bytes: 1024, seconds: 1.25, method: 'test fill' });
    const records = store.records();
    expect(records).toHaveLength(8);
    for (const r of records) expect(r.metadata).toMatchObject({ prefill: true, prefillBytes: 1024, prefillSeconds: 1.25 });
    store.close();
  });

  it('settings.prefill: false — nothing written, the records say so', async () => {
    const plan = planOf(profile(false));
    const store = ResultStore.create(path.join(tmp(), 'run'), meta, plan);
    const events: string[] = [];
    await executeRun({ store, plan, provider: null, workload: endpoint(events), signal: new AbortController().signal, retry: { retries: 0 } });
    expect(store.journal().filter((e) => e.step === 'prefill').map((e) => e.event)).toEqual(['skipped', 'skipped']);
    for (const r of store.records()) {
      expect(r.metadata).toMatchObject({ prefill: false });
      expect(r.metadata).not.toHaveProperty('prefillBytes');
    }
    store.close();
  });
});

// With `repeat: {reprovision: true}` each repetition runs on a disk provisioned anew, so with
// `settings.prefill: false` the first test of EVERY repetition starts on never-written space (the
// disk-format study's second way to see the first-write cost, playbooks/disk-format.yaml); within
// one provisioning only repetition 1 does (run/executor.ts startsUnwritten).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Replication, RunPlan } from '../../../src/contract/plan.ts';
import { ResultStore, type RunMeta } from '../../../src/results/store.ts';
import { executeRun, type WorkloadEndpoint } from '../../../src/run/executor.ts';
import { makeTest } from '../../../src/workloads/profiles.ts';
import type { WorkloadProfile } from '../../../src/workloads/spec.ts';

const meta: RunMeta = { runId: 'r1', playbook: 'pb', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 't', startedAt: '2024-01-01T00:00:00.000Z', fingerprint: {}, insecureEndpoints: [] };

const profile: WorkloadProfile = {
  name: 'w',
  description: '',
  tests: [makeTest('write', 1024 * 1024, 8, 1), makeTest('randread', 4096, 1, 1)],
  fileSizeBytes: 16 * 1024 * 1024,
  runtimeSec: 1,
  rampSec: 0,
  passes: 1,
  warmupPass: false,
  prefill: false,
  intervalSec: 0,
  direct: true,
  aggregate: 'max',
};

function planOf(unit: Replication['unit']): RunPlan {
  const perm = (index: number, id: string) => ({ index, permutationId: id, axes: { n: index }, workload: 'w', steps: [{ step: 'workload', provider: 'local' as const, operation: 'fio', arguments: {}, destructive: false }], repetitions: 3, estimateSec: 1 });
  const replication: Replication = { unit, order: unit === 'between-provisionings' ? 'rounds' : 'permutation', seed: 7, min: 3, max: 3, until: null, extraProvisionSec: 0 };
  return { version: 1, runId: 'r1', playbook: 'pb', target: 't', provider: 'local', axes: [], baseline: null, profiles: { w: profile }, permutations: [perm(0, 'p1'), perm(1, 'p2')], replication, totalEstimateSec: 2 };
}

const endpoint: WorkloadEndpoint = {
  tool: 'fio',
  connect: async () => ({ target: 'x', run: async () => ({ command: '', exitCode: 0, stdout: '', stderr: '' }), close: async () => undefined }) as never,
  prepare: async () => null,
  runTest: async (_runner, test) => ({ test, iops: 1, bytesPerSecond: 4096, latencyUs: { mean: 1, p50: null, p95: null, p99: null, p999: null }, cpuPercent: null, representativePass: 0, toolVersion: 'fio-3', rawPath: null, passes: 1 }),
};

let dir: string;
beforeEach(() => void (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-unwritten-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function unwrittenOf(unit: Replication['unit']): Promise<string[]> {
  const store = ResultStore.create(path.join(dir, unit), meta, planOf(unit));
  await executeRun({ store, plan: planOf(unit), provider: null, workload: endpoint, signal: new AbortController().signal, retry: { retries: 0 } });
  const marked = store.records().filter((r) => r.metadata!['unwrittenAtStart'] === true).map((r) => `${r.permutationId} rep${r.repetition} ${r.test.id}`);
  store.close();
  return marked.sort();
}

describe('unwrittenAtStart by replication unit', () => {
  it('between provisionings: the first test of every repetition (each on a new disk)', async () => {
    expect(await unwrittenOf('between-provisionings')).toEqual(['p1 rep1 seq-1m-q8t1-write', 'p1 rep2 seq-1m-q8t1-write', 'p1 rep3 seq-1m-q8t1-write', 'p2 rep1 seq-1m-q8t1-write', 'p2 rep2 seq-1m-q8t1-write', 'p2 rep3 seq-1m-q8t1-write']);
  });
  it('within one provisioning: only repetition 1 (the later ones rewrite what it wrote)', async () => {
    expect(await unwrittenOf('within-provisioning')).toEqual(['p1 rep1 seq-1m-q8t1-write', 'p2 rep1 seq-1m-q8t1-write']);
  });
});

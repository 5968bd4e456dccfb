// With `repeat: {reprovision: true}` each repetition runs on a disk provisioned anew, so with
// `settings.prefill: false` the first test of EVERY repetition starts on never-written space (the
// disk-format study's second way to see the first-write cost, playbooks/disk-format.yaml); within
// one provisioning only repetition 1 does (run/executor.ts startsUnwritten).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Replication } from '../../../src/contract/plan.ts';
import { ResultStore } from '../../../src/results/store.ts';
import { executeRun } from '../../../src/run/executor.ts';
import { makeTest } from '../../../src/workloads/profiles.ts';
import type { WorkloadProfile } from '../../../src/workloads/spec.ts';
import { instantWorkload, measureOnlyPlan, runMeta, useTempDir } from './fake-run.ts';

const meta = runMeta();

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

function planOf(unit: Replication['unit']) {
  const replication: Replication = { unit, order: unit === 'between-provisionings' ? 'rounds' : 'permutation', seed: 7, min: 3, max: 3, until: null, extraProvisionSec: 0 };
  return measureOnlyPlan(profile, { repetitions: 3, replication });
}

const endpoint = instantWorkload({ passes: 1 });
const tmp = useTempDir('ss-unwritten-');

async function unwrittenOf(unit: Replication['unit']): Promise<string[]> {
  const store = ResultStore.create(path.join(tmp(), unit), meta, planOf(unit));
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

// What every record says about how it was measured (run/executor.ts conditionFacts, prefillFacts):
// the report prints it per source and warns when compared sources differ (report/conditions.ts),
// and turns each fill into one first-write sample (report/first-write.ts).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ResultStore } from '../../../src/results/store.ts';
import { executeRun } from '../../../src/run/executor.ts';
import { makeTest } from '../../../src/workloads/profiles.ts';
import type { WorkloadProfile } from '../../../src/workloads/spec.ts';
import { instantWorkload, measureOnlyPlan, runMeta, useTempDir } from './fake-run.ts';

const meta = runMeta();

const profile = (prefill: boolean): WorkloadProfile => ({
  name: 'w',
  description: '',
  // the write first: with no fill, its first pass of repetition 1 is on never-written space
  tests: [makeTest('write', 1024 * 1024, 8, 1), makeTest('randread', 4096, 1, 1)],
  fileSizeBytes: 16 * 1024 * 1024,
  runtimeSec: 2,
  rampSec: 1,
  passes: 3,
  warmupPass: false,
  prefill,
  intervalSec: 0,
  direct: true,
  aggregate: 'mean',
});

const planOf = (p: WorkloadProfile) => measureOnlyPlan(p, { repetitions: 2, overrides: ['settings.fileSize=16m', 'repeat=2'] });

let fills = 0;
const endpoint = instantWorkload({
  passes: 3,
  prepare: async (_runner, p) => (p.prefill === false ? null : { filled: true, bytes: p.fileSizeBytes, seconds: 0.5, bytesPerSecond: 250e6 + ++fills, passes: 1, method: 'test fill' }),
});

const tmp = useTempDir('ss-conditions-');

async function recordsOf(p: WorkloadProfile) {
  const plan = planOf(p);
  const store = ResultStore.create(path.join(tmp(), 'run'), meta, plan);
  await executeRun({ store, plan, provider: null, workload: endpoint, signal: new AbortController().signal, retry: { retries: 0 } });
  const records = store.records();
  store.close();
  return records;
}

describe('executor: the conditions every record carries', () => {
  it('file size, pass length, ramp, warm-up, pause, cache flag, score rule and each --set', async () => {
    for (const r of await recordsOf(profile(true))) {
      expect(r.metadata).toMatchObject({ fileSizeBytes: 16 * 1024 * 1024, passes: 3, passSec: 2, rampSec: 1, warmupPass: false, intervalSec: 0, direct: true, aggregate: 'mean', 'set:settings.fileSize': '16m', 'set:repeat': '2' });
    }
  });

  it('the fill: the tool\'s throughput and its start, shared by every record of the permutation (one fill), another for the next permutation', async () => {
    const records = await recordsOf(profile(true));
    const byPerm = (id: string) => records.filter((r) => r.permutationId === id).map((r) => [r.metadata!['prefillAt'], r.metadata!['prefillBytesPerSecond']]);
    const p1 = new Set(byPerm('p1').map((x) => JSON.stringify(x)));
    const p2 = new Set(byPerm('p2').map((x) => JSON.stringify(x)));
    expect(p1.size).toBe(1);
    expect(p2.size).toBe(1);
    expect([...p1][0]).not.toBe([...p2][0]);
    expect(byPerm('p1')[0]![0]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(records.every((r) => r.metadata!['unwrittenAtStart'] === undefined)).toBe(true);
  });

  it('settings.prefill: false — only the first test of the first repetition, a write, is said to start on never-written space', async () => {
    const records = await recordsOf(profile(false));
    const marked = records.filter((r) => r.metadata!['unwrittenAtStart'] === true).map((r) => [r.permutationId, r.repetition, r.test.id]);
    expect(marked).toEqual([['p1', 1, 'seq-1m-q8t1-write'], ['p2', 1, 'seq-1m-q8t1-write']]);
    expect(records.every((r) => r.metadata!['prefill'] === false && r.metadata!['prefillAt'] === undefined)).toBe(true);
  });

  it('an unscored pass before it writes the region first: nothing is said to start unwritten; the pass and its length are recorded', async () => {
    const records = await recordsOf({ ...profile(false), warmupPass: true, warmupPassSec: 5 });
    expect(records.filter((r) => r.metadata!['unwrittenAtStart'] === true)).toEqual([]);
    for (const r of records) expect(r.metadata).toMatchObject({ warmupPass: true, warmupPassSec: 5 });
  });
});

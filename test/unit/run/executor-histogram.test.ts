// Which stored records keep the test's latency histogram (record.ts latencyHistogram): those of a
// vm.count permutation, whose VMs are merged from it (results/vm-aggregate.ts), and no other — it
// would grow every record by kilobytes. Through the executor and the fake host (fake-host.ts); the
// records are read back from the run store.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PermutationPlan, RunPlan } from '../../../src/contract/plan.ts';
import type { WorkloadEndpoint } from '../../../src/contract/provider.ts';
import { HISTOGRAM_SPAN } from '../../../src/results/latency-histogram.ts';
import { ResultStore, type RunMeta } from '../../../src/results/store.ts';
import { executeRun } from '../../../src/run/executor.ts';
import { FakeHost, fakeProvider, fakeWorkload, PROFILE } from './fake-host.ts';

const RUN = 'r1';
const meta: RunMeta = { runId: RUN, playbook: 'pb', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 't', startedAt: '2024-01-01T00:00:00.000Z', fingerprint: {}, insecureEndpoints: [] };
const HISTOGRAM = { span: HISTOGRAM_SPAN, unit: 'ns' as const, bins: [[90_000, 700], [120_000, 300]] as Array<[number, number]> };

function planOf(axes: ReadonlyArray<PermutationPlan['axes']>): RunPlan {
  const permutations: PermutationPlan[] = axes.map((a, i) => ({
    index: i,
    permutationId: `p${i + 1}`,
    axes: a,
    workload: 'quick',
    steps: [{ step: 'workload', provider: 'local', operation: 'fio', arguments: {}, destructive: false }],
    repetitions: 1,
    estimateSec: 1,
  }));
  return { version: 1, runId: RUN, playbook: 'pb', target: 't', provider: 'esxi-shell', axes: [], baseline: null, profiles: { quick: PROFILE }, permutations, totalEstimateSec: axes.length };
}

/** fio's outcome with the json+ histogram, as runFioTest hands it back. */
function withHistogram(): WorkloadEndpoint {
  const base = fakeWorkload();
  return { ...base, runTest: async (runner, test, profile, o) => ({ ...(await base.runTest(runner, test, profile, o)), latencyHistogram: HISTOGRAM }) };
}

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-histogram-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the latency histogram on a stored record', () => {
  it('is kept in a vm.count permutation only', async () => {
    const store = ResultStore.create(path.join(dir, 'run'), meta, planOf([{ 'vm.count': 2 }, { 'disk.format': 'thin' }]));
    const summary = await executeRun({ store, plan: store.plan(), provider: fakeProvider(new FakeHost()), workload: withHistogram(), signal: new AbortController().signal, retry: { retries: 0, minTimeoutMs: 1, maxTimeoutMs: 2 } });
    expect(summary).toMatchObject({ done: 2, failed: 0 });
    const records = store.records();
    expect(records.find((r) => r.permutationId === 'p1')!.latencyHistogram).toEqual(HISTOGRAM);
    expect(records.find((r) => r.permutationId === 'p2')).not.toHaveProperty('latencyHistogram');
    store.close();
  });
});

// Runs one permutation's planned steps through the real executor (ledger, teardown) with a real
// provider, and a workload endpoint that measures nothing: for tests about what provisioning and
// teardown did to a (stand-in) host.
import path from 'node:path';
import type { RunPlan } from '../../src/contract/plan.ts';
import { ResultStore, type RunMeta } from '../../src/results/store.ts';
import { executeRun, type RunSummary, type WorkloadEndpoint } from '../../src/run/executor.ts';
import type { PlannedStep, Provider } from '../../src/contract/provider.ts';
import type { WorkloadProfile } from '../../src/workloads/spec.ts';

/** A workload endpoint for a profile with no tests: it is never asked to measure. */
export const noWorkload: WorkloadEndpoint = {
  tool: 'fio',
  connect: async () => ({ target: 'none', run: async () => ({ command: '', exitCode: 0, stdout: '', stderr: '' }), close: async () => undefined }) as never,
  runTest: async () => {
    throw new Error('this profile has no tests');
  },
};

/** A profile with no tests: the permutation provisions and tears down, and measures nothing. */
export const NO_TESTS: WorkloadProfile = { name: 'none', description: '', tests: [], fileSizeBytes: 1, runtimeSec: 1, rampSec: 0, passes: 1, warmupPass: false, intervalSec: 0, direct: true, aggregate: 'max' };

/** Run `runId`: one permutation p1 of `steps` then a workload step, with the NO_TESTS profile. */
export function onePermutationPlan(runId: string, steps: PlannedStep[]): RunPlan {
  return {
    version: 1,
    runId,
    playbook: 'pb',
    target: 't',
    provider: steps[0]?.provider ?? 'local',
    axes: [],
    baseline: null,
    profiles: { none: NO_TESTS },
    permutations: [{ index: 0, permutationId: 'p1', axes: {}, workload: 'none', steps: [...steps, { step: 'workload', provider: 'local', operation: 'fio', arguments: {}, destructive: false }], repetitions: 1, estimateSec: 1 }],
    totalEstimateSec: 1,
  };
}

/** Executes the steps (then teardown, unless `keep`) into a new run directory under `dir`; the store stays open. */
export async function executeSteps(dir: string, runId: string, steps: PlannedStep[], provider: Provider, opts: { keep?: boolean; retries?: number; confirmedDestroy?: string[] } = {}): Promise<{ store: ResultStore; summary: RunSummary }> {
  const plan = onePermutationPlan(runId, steps);
  const meta: RunMeta = { runId, playbook: 'pb', playbookFile: '/pb.yaml', inventoryFile: '/inv.yaml', target: 't', startedAt: new Date().toISOString(), fingerprint: {}, insecureEndpoints: [] };
  const store = ResultStore.create(path.join(dir, `run-${runId}`), meta, plan);
  const summary = await executeRun({ store, plan, provider, workload: noWorkload, signal: new AbortController().signal, retry: { retries: opts.retries ?? 0, minTimeoutMs: 10, maxTimeoutMs: 50 }, keep: opts.keep, ...(opts.confirmedDestroy ? { confirmedDestroy: opts.confirmedDestroy } : {}) });
  return { store, summary };
}

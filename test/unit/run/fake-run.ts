// The run database around an executor or ledger test (beside fake-host.ts, the fake provider): the
// run's metadata, a temp directory per test (test/helpers/temp-dir.ts), a profile with no tests and the workload endpoints that
// measure nothing or measure instantly. The store is the real ResultStore (run.sqlite).
//
//   const tmp = useTempDir('ss-ledger-');                      // at the top of the file
//   const store = ResultStore.create(path.join(tmp(), 'run'), runMeta(), onePermutationPlan('r1', steps));
import type { Replication, RunPlan } from '../../../src/contract/plan.ts';
import type { RunMeta } from '../../../src/results/store.ts';
import type { WorkloadEndpoint } from '../../../src/run/executor.ts';
import type { WorkloadProfile } from '../../../src/workloads/spec.ts';

export { NO_TESTS, noWorkload, onePermutationPlan } from '../../helpers/executor-run.ts';
export { useTempDir } from '../../helpers/temp-dir.ts';

/** The metadata of run r1 of playbook pb on target t; `over` replaces any of it. */
export function runMeta(over: Partial<RunMeta> = {}): RunMeta {
  return { runId: 'r1', playbook: 'pb', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 't', startedAt: '2024-01-01T00:00:00.000Z', fingerprint: {}, insecureEndpoints: [], ...over };
}

/**
 * A workload endpoint whose every test "measures" at once the same figures (1 IOPS, 4 KiB/s, 1 µs)
 * over `passes` passes, keeping no raw output; `prepare` is the pre-fill (none by default).
 */
export function instantWorkload(o: { passes: number; prepare?: WorkloadEndpoint['prepare'] }): WorkloadEndpoint {
  return {
    tool: 'fio',
    connect: async () => ({ target: 'x', run: async () => ({ command: '', exitCode: 0, stdout: '', stderr: '' }), close: async () => undefined }) as never,
    prepare: o.prepare ?? (async () => null),
    runTest: async (_runner, test) => ({ test, iops: 1, bytesPerSecond: 4096, latencyUs: { mean: 1, p50: null, p95: null, p99: null, p999: null }, cpuPercent: null, representativePass: 0, toolVersion: 'fio-3', rawPath: null, passes: o.passes }),
  };
}

/**
 * Run r1 of two permutations, p1 and p2, that only measure (one local workload step) with profile
 * `w`: for tests of what the executor records, with no provider.
 */
export function measureOnlyPlan(profile: WorkloadProfile, o: { repetitions: number; overrides?: string[]; replication?: Replication }): RunPlan {
  const perm = (index: number, id: string) => ({ index, permutationId: id, axes: { n: index }, workload: 'w', steps: [{ step: 'workload', provider: 'local' as const, operation: 'fio', arguments: {}, destructive: false }], repetitions: o.repetitions, estimateSec: 1 });
  return {
    version: 1,
    runId: 'r1',
    playbook: 'pb',
    target: 't',
    provider: 'local',
    ...(o.overrides ? { overrides: o.overrides } : {}),
    axes: [],
    baseline: null,
    profiles: { w: profile },
    permutations: [perm(0, 'p1'), perm(1, 'p2')],
    ...(o.replication ? { replication: o.replication } : {}),
    totalEstimateSec: 2,
  };
}

// The host's view of a test (contract/host-metrics.ts HostObserver) aligned with the test's scored
// passes: shared by the one-VM workload (executor.ts WorkloadRun) and each VM of a `vm.count` pass
// (vm-members.ts), so both watch the same span.
import { errorMessage } from '../errors.ts';
import type { HostMetrics, HostObservation, HostObserver } from '../contract/host-metrics.ts';
import type { ScoredSpan } from '../workloads/passes.ts';

/**
 * The host's observation of one test, aligned with its scored passes (workloads/passes.ts
 * ScoredSpan): started right before the first measured pass, stopped right after the last. stop()
 * reads the host's clock at once; what comes after (waiting for the sample that covers the end)
 * overlaps the next test and is awaited before the repetition is stored. `seen` is what the host
 * saw, or why not (a workload that never marked its scored passes is said so).
 */
export function scoredWatch(observer: HostObserver, signal: AbortSignal): { span: ScoredSpan; abandon(): Promise<void>; seen(): Promise<HostMetrics | string> } {
  let watching: Promise<HostObservation | string> | null = null;
  let seen: Promise<HostMetrics | string> | null = null;
  const stop = (w: HostObservation | string) => (typeof w === 'string' ? Promise.resolve(w) : w.stop(signal).then((m) => ({ ...m, window: 'scored-passes' as const })).catch((err: unknown) => errorMessage(err)));
  return {
    span: {
      // awaited: the host's clock is read (esxtop started) before the first scored pass begins
      start: async () => void (await (watching = observer.start(signal).catch((err: unknown) => errorMessage(err)))),
      end: async () => {
        if (watching !== null && seen === null) seen = stop(await watching);
      },
    },
    abandon: async () => {
      if (watching !== null && seen === null) {
        const w = await watching;
        if (typeof w !== 'string') await w.stop(signal).catch(() => undefined);
      }
    },
    seen: () => seen ?? Promise.resolve('the workload did not mark its scored passes; the host was not watched'),
  };
}

// The vSphere retry policy, in one place. A decorator around the round-tripper replays one call
// when replaying it cannot do anything twice: the server refused it as busy (the fault says it did
// nothing), or the connection failed before the request left, or the call only reads. Everything
// else surfaces; at the step level (Provider.isTransient) only what this layer cannot replay and a
// retry of the whole step may cure is transient: a mutating call whose connection dropped after
// the request left (the executor looks the object up before reissuing), and a task that ended with
// a busy fault (the call was accepted; the task failed later).
import pRetry, { AbortError } from 'p-retry';
import { TaskFailed } from './fault.ts';
import type { RoundTripper } from './methods.ts';
import { SoapFault, SoapTransportError } from './soap.ts';

/**
 * vim25 faults by which the server says "busy now, nothing done; try again": TaskInProgress (the
 * object is busy with another task), FileLocked (a file is locked by another operation),
 * InvalidState (the object's current state does not allow it — e.g. a reconfiguration under way).
 * vSphere Web Services API reference, "Faults" — each names the fault as thrown before the
 * operation starts. Subtypes are distinct names (InvalidPowerState is not retried).
 */
export const BUSY_FAULTS: ReadonlySet<string> = new Set(['TaskInProgress', 'FileLocked', 'InvalidState']);

/** Calls that only read (or wait): safe to send again after any transport failure. */
const READ_ONLY = new Set([
  'RetrieveServiceContent',
  'RetrievePropertiesEx',
  'ContinueRetrievePropertiesEx',
  'RetrieveProperties',
  'WaitForUpdatesEx',
  'CurrentTime',
  'FindByInventoryPath',
  'QueryAvailableDisksForVmfs',
  'QueryVmfsDatastoreCreateOptions',
  'QueryPerfProviderSummary',
  'QueryAvailablePerfMetric',
  'QueryPerf',
  // guest operations that only read: a process listing, a download URL for a file
  'ListProcessesInGuest',
  'InitiateFileTransferFromGuest',
  'DestroyPropertyCollector',
  'DestroyPropertyFilter',
  'CancelWaitForUpdates',
  'DestroyView',
  // the task view's adds and removes (wait.ts): sent twice, the view holds the same objects
  'ModifyListView',
  'Logout',
]);

/** Socket failures that may clear by themselves (a keep-alive socket the server closed, a blip). */
const TRANSIENT_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'ECONNABORTED']);

/** Whether the round-tripper may send this call again after `err`. */
export function replayable(method: string, err: unknown): boolean {
  if (err instanceof SoapFault) return BUSY_FAULTS.has(err.faultName);
  if (err instanceof SoapTransportError) return TRANSIENT_CODES.has(err.details.code ?? '') && (READ_ONLY.has(method) || !err.details.ambiguous);
  return false;
}

/**
 * Step level: an error worth retrying the whole step (or teardown) for — only what the
 * round-tripper could not replay itself, so no failure is retried at two levels.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof SoapTransportError) return TRANSIENT_CODES.has(err.details.code ?? '') && !replayable(err.details.method, err);
  if (err instanceof TaskFailed) return BUSY_FAULTS.has(err.faultName);
  return false;
}

export interface RoundTripRetry {
  retries: number;
  minTimeoutMs: number;
  maxTimeoutMs: number;
  /** told before each replay (for the run log) */
  onRetry?(info: { method: string; attempt: number; reason: string }): void;
}

export const ROUND_TRIP_RETRY: RoundTripRetry = { retries: 3, minTimeoutMs: 250, maxTimeoutMs: 4000 };

/** `rt`, replaying a call (with backoff and jitter) while `replayable` says so. */
export function retryingRoundTrips(rt: RoundTripper, policy: RoundTripRetry = ROUND_TRIP_RETRY): RoundTripper {
  return {
    roundTrip: (method, thisRef, params) =>
      pRetry(
        async () => {
          try {
            return await rt.roundTrip(method, thisRef, params);
          } catch (err) {
            if (!replayable(method, err)) throw new AbortError(err as Error);
            throw err;
          }
        },
        {
          retries: policy.retries,
          minTimeout: policy.minTimeoutMs,
          maxTimeout: policy.maxTimeoutMs,
          factor: 2,
          randomize: true,
          onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
            if (retriesLeft > 0) policy.onRetry?.({ method, attempt: attemptNumber + 1, reason: error.message });
          },
        },
      ),
  };
}

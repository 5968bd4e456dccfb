// Retries for transient faults only, with exponential backoff and jitter (p-retry), and a timeout
// for every step. What counts as transient is a list of names, configurable per run.
import pRetry, { AbortError } from 'p-retry';
import { RemoteCommandFailed } from '../errors.ts';
import { checkTimerMs } from '../limits.ts';

export interface RetryPolicy {
  retries: number;
  minTimeoutMs: number;
  maxTimeoutMs: number;
  /** vim fault names (or error names) treated as transient */
  transientFaults: string[];
  signal?: AbortSignal;
  onRetry?: (err: unknown, attempt: number) => void;
}

// ManagedObjectNotFound: a session expiring while a task is awaited takes its property collector
// with it; the step is retried, and a create looks its object up before reissuing.
export const DEFAULT_TRANSIENT_FAULTS = ['TaskInProgress', 'InvalidState', 'FileLocked', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNREFUSED', 'ManagedObjectNotFound'];

export class StepTimedOut extends Error {
  override readonly name = 'StepTimedOut';
  /** the call that did not finish in time: it may still complete (and create its object) later */
  pending?: Promise<unknown>;
}

/** The fault or error code an error carries: vim fault name, errno code, or class name. */
export function faultNameOf(err: unknown): string | null {
  if (!err || typeof err !== 'object') return null;
  const e = err as { faultName?: unknown; fault?: unknown; code?: unknown; name?: unknown; cause?: unknown };
  if (typeof e.faultName === 'string') return e.faultName;
  if (typeof e.fault === 'string') return e.fault;
  if (typeof e.code === 'string') return e.code;
  if (e.cause) return faultNameOf(e.cause);
  return typeof e.name === 'string' ? e.name : null;
}

export function isTransient(err: unknown, transient: readonly string[]): boolean {
  if (err instanceof StepTimedOut) return false;
  if (err instanceof RemoteCommandFailed) return err.details.reason === 'connection';
  const name = faultNameOf(err);
  return name !== null && transient.includes(name);
}

export async function withRetry<T>(fn: (attempt: number) => Promise<T>, policy: Partial<RetryPolicy> = {}): Promise<T> {
  const transient = policy.transientFaults ?? DEFAULT_TRANSIENT_FAULTS;
  return pRetry(
    async (attempt) => {
      try {
        return await fn(attempt);
      } catch (err) {
        if (!isTransient(err, transient)) throw new AbortError(err instanceof Error ? err : new Error(String(err)));
        throw err;
      }
    },
    {
      retries: policy.retries ?? 3,
      minTimeout: policy.minTimeoutMs ?? 500,
      maxTimeout: policy.maxTimeoutMs ?? 15_000,
      factor: 2,
      randomize: true,
      signal: policy.signal,
      onFailedAttempt: ({ error, attemptNumber }) => policy.onRetry?.(error, attemptNumber),
    },
  );
}

/**
 * Runs fn with a deadline; the signal it gets aborts at the deadline or when `outer` aborts. A
 * deadline Node's timers cannot hold (above 2^31-1 ms, below 1 ms, NaN) would fire at once: it is
 * refused (InvalidArgument) before fn starts, so nothing is sent.
 */
export async function withTimeout<T>(fn: (signal: AbortSignal) => Promise<T>, ms: number, what: string, outer?: AbortSignal): Promise<T> {
  checkTimerMs(ms, what);
  const ac = new AbortController();
  const onOuter = () => ac.abort(outer?.reason);
  outer?.addEventListener('abort', onOuter, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const work = fn(ac.signal);
  work.catch(() => undefined);
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const err = new StepTimedOut(`${what} timed out after ${ms} ms`);
          err.pending = work;
          ac.abort(err);
          reject(err);
        }, ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
    outer?.removeEventListener('abort', onOuter);
  }
}

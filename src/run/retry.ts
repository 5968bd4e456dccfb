// Retries with exponential backoff and jitter (p-retry), and a timeout for every step. What counts
// as transient is not decided here: the provider says (Provider.isTransient — a vSphere fault, a
// dropped SSH connection), and the workload's own rule is a lost connection (ssh/connection-lost.ts).
import pRetry, { AbortError } from 'p-retry';
import { checkTimerMs } from '../limits.ts';
import { isStoreLost } from '../results/port.ts';

export interface RetryPolicy {
  retries: number;
  minTimeoutMs: number;
  maxTimeoutMs: number;
  signal?: AbortSignal;
  onRetry?: (err: unknown, attempt: number) => void;
}

/** A step's (and a teardown's) deadline when the playbook sets none. */
export const DEFAULT_STEP_TIMEOUT_MS = 30 * 60_000;

export class StepTimedOut extends Error {
  override readonly name = 'StepTimedOut';
  /** the call that did not finish in time: it may still complete (and create its object) later */
  pending?: Promise<unknown>;
}

/**
 * fn again while `isTransient` says its error is worth another try; a timed-out step never is, nor
 * one that lost the run's store (StoreLost: its ECONNRESET is the database's, not the target's).
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, isTransient: (err: unknown) => boolean, policy: Partial<RetryPolicy> = {}): Promise<T> {
  return pRetry(
    async (attempt) => {
      try {
        return await fn(attempt);
      } catch (err) {
        if (err instanceof StepTimedOut || isStoreLost(err) || !isTransient(err)) throw new AbortError(err instanceof Error ? err : new Error(String(err)));
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
      // told only when another attempt follows
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        if (retriesLeft > 0) policy.onRetry?.(error, attemptNumber);
      },
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

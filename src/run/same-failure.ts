// A sweep that fails the same way stops (issue 29): when the same step fails with the same cause on
// N permutations in a row (settings.stopAfterSameFailure, default 3; 0 never), more permutations
// would only repeat it — a LUN too small, a privilege missing, a guest without fio — and each may
// format a LUN first. The run stops as an interrupted one does: its journal is kept for --resume,
// what the failing permutation made is torn down, and the message says what repeated.

export const DEFAULT_STOP_AFTER_SAME_FAILURE = 3;

/**
 * A failure's cause with what differs between permutations taken out: owned names
 * (`ss-<runId>-<permutationId>-…`), permutation ids, hex ids and numbers.
 */
export function failureCause(reason: string): string {
  return reason
    .replace(/ss-[a-z0-9]+-p[0-9a-f]+(?:-[a-z0-9-]+)?/gi, 'ss-…')
    .replace(/\bp[0-9a-f]{12}\b/g, 'p…')
    .replace(/\b[0-9a-f]{16,}\b/gi, '…')
    .replace(/\d+(\.\d+)?/g, '#');
}

/** Counts consecutive failures of one step with one cause; a success or another failure starts again. */
export class SameFailureTracker {
  private key: string | null = null;
  private count = 0;
  constructor(private readonly limit: number) {}

  /** A permutation that succeeded. */
  ok(): void {
    this.key = null;
    this.count = 0;
  }

  /** A permutation that failed at `step` with `reason`: the words to stop with once the limit is reached, else null. */
  failed(step: string, reason: string): string | null {
    const key = `${step}\0${failureCause(reason)}`;
    this.count = key === this.key ? this.count + 1 : 1;
    this.key = key;
    if (this.limit <= 0 || this.count < this.limit) return null;
    return `stopping: step "${step}" failed the same way on ${this.count} permutations in a row (${reason}); the rest would repeat it. Fix the cause, then \`storsweep run --resume\` goes on (settings.stopAfterSameFailure: 0 never stops)`;
  }
}

// Number options of the command line, parsed by commander's argParser so a bad value stops the
// command before it loads, plans or sends anything. A refusal is a UsageError (exit 2) naming the
// flag, the allowed range and the value as given (control characters made visible).
import { UsageError } from '../errors.ts';
import { MAX_TIMER_SEC } from '../limits.ts';
import { visible } from '../text/visible.ts';

/** The value as the user typed it, quoted, cut at 40 characters, every control character visible. */
function shown(raw: string): string {
  return `"${visible(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw)}"`;
}

/** An argParser for a whole number from `min` to `max`; `what` and `why` word the message. */
export function intOption(flag: string, min: number, max: number, what = 'a whole number', why?: string): (raw: string) => number {
  return (raw) => {
    const v = /^\s*[+-]?\d+\s*$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(v) || v < min || v > max) {
      throw new UsageError(`${flag}: expected ${what} from ${min} to ${max}${why ? ` (${why})` : ''}, got ${shown(raw)}`);
    }
    return v;
  };
}

/** `--step-timeout <sec>`: a step's deadline goes into a Node timer. */
export const stepTimeoutOption = intOption('--step-timeout', 1, MAX_TIMER_SEC, 'whole seconds', "Node's timer limit");

/**
 * `--retries <n>`: retries of a transient failure per step. 20 is a sanity cap: with the backoff
 * capped at 15 s (src/run/retry.ts) that is already over four minutes of retrying one step.
 */
export const MAX_RETRIES = 20;
export const retriesOption = intOption('--retries', 0, MAX_RETRIES, 'a number of retries');

// Field types the playbook and inventory schemas share (config/ and each provider's inventory
// section, so they live below both): numbers with a range (and the range in the message), and text
// that carries no control character. Each refusal is one zod issue whose message names what was
// expected, so a diagnostic reads "expected … from 1 to 86400 (…); got 3000000".
import { z } from 'zod';
import { excerpt } from '../text/excerpt.ts';

function rangeText(what: string, min: number, max: number, why?: string): string {
  return `expected ${what} from ${min} to ${max}${why ? ` (${why})` : ''}`;
}

/** A YAML value in the words of YAML; strings cut to a readable length (a 1 MB scalar is not echoed). */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return `"${excerpt(v)}"`;
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? '.nan (not a number)' : `${v > 0 ? '' : '-'}.inf (infinity)`;
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return `${typeof v} ${excerpt(String(v))}`;
  return typeof v;
}

/** What was given instead: a number as written, anything else as describeValue says (cut short). */
function given(v: unknown): string {
  return (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean' ? String(v) : describeValue(v);
}

/**
 * A whole number from `min` to `max`. One check instead of z.number().int().min().max(), so a bad
 * value — out of range, a fraction, or not a number at all ("abc") — gets one message with the range,
 * never three and never "expected int"; `meta` keeps the range in the JSON Schema editors read.
 */
export function intIn(min: number, max: number, what = 'a whole number', why?: string) {
  const expected = rangeText(what, min, max, why);
  return z
    .custom<number>((v) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max, { error: (issue) => `${expected}; got ${given(issue.input)}` })
    .meta({ type: 'integer', minimum: min, maximum: max });
}

/** A number (fractions allowed) above `min` (or at it when `minInclusive`) and at most `max`. */
export function numberIn(min: number, max: number, what: string, why?: string, minInclusive = true) {
  const expected = minInclusive ? rangeText(what, min, max, why) : `expected ${what} above ${min} and at most ${max}${why ? ` (${why})` : ''}`;
  return z
    .custom<number>((v) => typeof v === 'number' && (minInclusive ? v >= min : v > min) && v <= max, { error: (issue) => `${expected}; got ${given(issue.input)}` })
    .meta(minInclusive ? { type: 'number', minimum: min, maximum: max } : { type: 'number', exclusiveMinimum: min, maximum: max });
}

/** C0 controls (newline, tab, ESC, NUL…), DEL and C1 controls: never part of a name, path or host. */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTER = /[\x00-\x1f\x7f-\x9f]/;

/** Text that may reach a command line or a terminal: any character but a control character. */
export function plainText() {
  // eslint-disable-next-line no-control-regex
  return z.string().regex(/^[^\x00-\x1f\x7f-\x9f]*$/, { error: 'must not contain a control character (newline, tab, escape, …)' });
}

/** A string that must satisfy a provider's own predicate (the one its runtime check uses). */
export function matching(test: (v: string) => boolean, expected: string) {
  return z.string().refine(test, { error: `expected ${expected}` });
}

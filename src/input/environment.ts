// Facts about the setup no host reports (array model, RAID level, protocol, QoS, VM spec), as a
// playbook states them for the run (`environment:`) or per axis value (`environmentOf:`), and as an
// inventory states them per target (`targets.<name>.environment`). Stored with the run and shown in
// its reports beside the fingerprint measured on the hosts.
import { z } from 'zod';
import { MAX_ENVIRONMENT_ENTRIES, MAX_ENVIRONMENT_KEY, MAX_ENVIRONMENT_VALUE } from '../limits.ts';
import { visible } from '../text/visible.ts';

/**
 * Facts about the setup that no host reports (array model, RAID level, protocol, QoS, VM spec):
 * stored with the run and shown in its reports beside the measured fingerprint. Plain one-line text
 * only — no control, bidi or line-separator character (they would reach a terminal or a report raw),
 * bounded sizes (src/limits.ts); numbers and booleans are kept as written.
 */
const ENVIRONMENT_KEY = /^[A-Za-z][A-Za-z0-9_./-]*$/;
const environmentValue = z.union(
  [
    z
      .string()
      .max(MAX_ENVIRONMENT_VALUE, { error: `expected at most ${MAX_ENVIRONMENT_VALUE} characters of plain text` })
      .refine((v) => visible(v) === v, { error: 'expected plain one-line text: no control, bidi or line-separator character (newline, tab, escape, U+202E, …)' }),
    z.number().refine(Number.isFinite, { error: 'expected a finite number' }),
    z.boolean(),
  ],
  { error: 'expected one line of text, a number or true/false' },
);
export const environmentSchema = z
  .record(z.string(), environmentValue)
  .superRefine((env, ctx) => {
    const keys = Object.keys(env);
    if (keys.length > MAX_ENVIRONMENT_ENTRIES) ctx.addIssue({ code: 'custom', message: `expected at most ${MAX_ENVIRONMENT_ENTRIES} entries; got ${keys.length}` });
    for (const k of keys) {
      if (!ENVIRONMENT_KEY.test(k) || k.length > MAX_ENVIRONMENT_KEY) {
        ctx.addIssue({ code: 'custom', path: [k], message: `expected a key of at most ${MAX_ENVIRONMENT_KEY} letters, digits, \`_\`, \`.\`, \`/\` and \`-\`, starting with a letter (e.g. array, raid, vm.cpu)` });
      }
    }
    // keys are checked even when a value is wrong, so every problem is reported at once
  }, { when: (p) => typeof p.value === 'object' && p.value !== null && !Array.isArray(p.value) })
  .describe('Facts about the setup the reports show beside the measured fingerprint, e.g. {array: PowerStore 500T, raid: RAID 5, protocol: iSCSI 25GbE, qos: none, vm: 4 vCPU 16 GiB}');

/** The environment as the run stores it: every value as text. */
export function environmentText(env: z.output<typeof environmentSchema> | undefined): Record<string, string> | undefined {
  if (!env || Object.keys(env).length === 0) return undefined;
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}


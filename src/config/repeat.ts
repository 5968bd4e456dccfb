// The playbook's `repeat:` — how many repetitions, and what a repetition is a sample of.
//
//   repeat: 3                                  3 back to back on one provisioning (cheap; run-to-run noise only)
//   repeat: {count: 3, reprovision: true}      each repetition on objects provisioned anew, in rounds
//   repeat: {min: 3, max: 10, until: {ciPct: 5}, reprovision: true}
//                                              more rounds for the permutations whose main metric's
//                                              95 % interval is still wider than ±5 % of its mean
//
// Every bad shape is refused at its key (config/load.ts diagnostics), before anything is planned.
import { z } from 'zod';
import { intIn, numberIn } from '../input/fields.ts';

/** Most repetitions of one permutation. */
export const MAX_REPETITIONS = 1000;

/** The repetitions of each permutation, as plan/ and run/ use them (the playbook's shapes normalised). */
export interface RepeatSpec {
  /** repetitions every permutation gets: `count`, or `min` */
  min: number;
  /** repetitions at most: `count`, or `max` */
  max: number;
  /** repeat until the main metric's 95 % interval is within ±ciPct % of its mean (min ≤ n ≤ max) */
  until: { ciPct: number } | null;
  /** each repetition on freshly provisioned objects (datastore, disk, filesystem, pre-fill) */
  reprovision: boolean;
  /** rounds: repetition k of every permutation before any k+1, each round in a seeded random order; permutation: back to back */
  order: 'rounds' | 'permutation';
  /** the round order's seed; null: chosen when the run is planned (and recorded in its plan) */
  seed: number | null;
}

const count = () => intIn(1, MAX_REPETITIONS, 'a number of repetitions');

const repeatObject = z
  .strictObject({
    count: count().optional().describe('Repetitions of each permutation (not with min/max/until)'),
    min: count().optional().describe('With until: repetitions every permutation gets (default 3)'),
    max: count().optional().describe('With until: repetitions at most'),
    until: z
      .strictObject({
        ciPct: numberIn(0, 50, 'a percentage of the mean', 'the 95 % interval\'s half-width', false).describe('Stop once the main metric\'s 95 % interval is within ±ciPct % of its mean'),
      })
      .optional()
      .describe('Repeat until stable: add repetitions (in rounds) while the interval is wider, up to max'),
    reprovision: z.boolean().default(false).describe('true: each repetition tears down and provisions the permutation\'s objects anew (an independent sample of the configuration); false: back to back on one provisioning (run-to-run noise only)'),
    order: z.enum(['rounds', 'permutation']).optional().describe('rounds (default with reprovision): repetition k of every permutation before any k+1, each round in a fresh seeded random order; permutation: each permutation\'s repetitions back to back'),
    seed: intIn(0, 2 ** 32 - 1, 'a seed').optional().describe('Seed of the round orders (default: chosen when the run is planned, and recorded)'),
  })
  .superRefine((r, ctx) => {
    const at = (key: string, message: string) => ctx.addIssue({ code: 'custom', path: [key], message });
    if (r.count !== undefined) {
      for (const k of ['min', 'max', 'until'] as const) if (r[k] !== undefined) at(k, `${k} is for repeating until stable; count fixes the number: give count, or min, max and until`);
    } else if (r.until === undefined) {
      if (r.min !== undefined || r.max !== undefined) at(r.min !== undefined ? 'min' : 'max', 'min and max need until: {ciPct: N} (repeat until stable); for a fixed number give count');
      else ctx.addIssue({ code: 'custom', path: [], message: 'expected count (e.g. {count: 3, reprovision: true}) or min, max and until (e.g. {min: 3, max: 10, until: {ciPct: 5}})' });
    } else {
      if (r.max === undefined) at('until', 'until needs max: the most repetitions a permutation may get');
      const min = r.min ?? DEFAULT_MIN;
      if (min < 2) at('min', `a 95 % interval needs at least 2 repetitions; got ${min}`);
      if (r.max !== undefined && min > r.max) at(r.min !== undefined ? 'min' : 'max', `min (${min}${r.min === undefined ? ', the default' : ''}) is more than max (${r.max})`);
    }
    if (r.order === 'rounds' && !r.reprovision) at('order', 'rounds need reprovision: true (without it every permutation\'s objects would stay provisioned across the rounds); use order: permutation, or reprovision: true');
    if (r.seed !== undefined && !r.reprovision) at('seed', 'seed orders the rounds, which need reprovision: true');
  });

const DEFAULT_MIN = 3;

/** `repeat:` in the playbook: a number, or the object form; the output is always a RepeatSpec. */
export const repeatSchema = z
  .union([z.number().pipe(count()), repeatObject], { error: `expected a number of repetitions from 1 to ${MAX_REPETITIONS}, or {count: N, reprovision: true|false}, or {min: N, max: N, until: {ciPct: N}}` })
  .default(1)
  .transform((v): RepeatSpec => {
    if (typeof v === 'number') return { min: v, max: v, until: null, reprovision: false, order: 'permutation', seed: null };
    const fixed = v.count !== undefined;
    return {
      min: fixed ? v.count! : (v.min ?? DEFAULT_MIN),
      max: fixed ? v.count! : v.max!,
      until: fixed || !v.until ? null : { ciPct: v.until.ciPct },
      reprovision: v.reprovision,
      order: v.order ?? (v.reprovision ? 'rounds' : 'permutation'),
      seed: v.seed ?? null,
    };
  })
  .describe('Repetitions of each permutation: a number (back to back on one provisioning), or {count, reprovision, order, seed}, or {min, max, until: {ciPct}} to repeat until stable');

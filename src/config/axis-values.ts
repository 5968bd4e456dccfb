// The axes a result record may carry, and the values each takes: the playbook matrix's own rules
// (its zod schema, whose enums come from the provider registry), plus `target` and `source`. What a
// user tags an import with (`import --set`, a results table's axis columns) is checked here, so an
// imported value lines up with a run's permutation only when a playbook could have produced it.
import { z } from 'zod';
import { axisValues } from '../providers/index.ts';
import { matrixSchema } from './playbook.ts';

/** Axes a record carries that are not matrix axes: the target (a playbook that lists several) and the source. */
export const RECORD_AXES = ['target', 'source'] as const;

function matrixElements(): Map<string, z.ZodType> {
  const out = new Map<string, z.ZodType>();
  for (const [section, schema] of Object.entries(matrixSchema.shape)) {
    const obj = (schema instanceof z.ZodOptional ? schema.unwrap() : schema) as z.ZodObject;
    for (const [key, axis] of Object.entries(obj.shape)) {
      const arr = (axis instanceof z.ZodOptional ? axis.unwrap() : axis) as z.ZodArray;
      out.set(`${section}.${key}`, arr.element as z.ZodType);
    }
  }
  return out;
}

let elements: Map<string, z.ZodType> | undefined;

/** Every axis name a record may carry, matrix axes first (playbook order). */
export function knownAxisNames(): string[] {
  elements ??= matrixElements();
  return [...elements.keys(), ...RECORD_AXES];
}

/** The values an enumerated axis takes, for messages; empty for an open-ended one. */
function allowedValues(name: string, element: z.ZodType): Array<string | number | boolean> {
  const fromRegistry = axisValues(name);
  if (fromRegistry.length > 0) return fromRegistry;
  if (element instanceof z.ZodEnum) return element.options;
  if (element instanceof z.ZodUnion) {
    const vals = (element.options as z.ZodType[]).flatMap((o) => (o instanceof z.ZodLiteral ? [...o.values] : []));
    if (vals.length === (element.options as z.ZodType[]).length) return vals as Array<string | number | boolean>;
  }
  return [];
}

export type AxisValueCheck = { ok: true; value: string | number | boolean } | { ok: false; problem: string };

/**
 * `raw` (as typed on the command line or in a table cell) as a value of axis `name`: a number when
 * the axis takes numbers, else the text. `problem` names the known axes or the allowed values.
 */
export function checkAxisValue(name: string, raw: string): AxisValueCheck {
  elements ??= matrixElements();
  if ((RECORD_AXES as readonly string[]).includes(name)) {
    return raw.trim() === '' ? { ok: false, problem: `${name} needs a non-empty value` } : { ok: true, value: raw };
  }
  const element = elements.get(name);
  if (!element) return { ok: false, problem: `"${name}" is not an axis (axes: ${knownAxisNames().join(', ')})` };
  const candidates: Array<string | number> = /^[+-]?\d+(\.\d+)?$/.test(raw.trim()) ? [Number(raw), raw] : [raw];
  let issue: string | undefined;
  for (const c of candidates) {
    const r = element.safeParse(c);
    if (r.success) return { ok: true, value: r.data as string | number | boolean };
    issue ??= r.error.issues[0]?.message;
  }
  const allowed = allowedValues(name, element);
  return { ok: false, problem: `${name} has no value "${raw}" (${allowed.length ? `values: ${allowed.join(', ')}` : (issue ?? 'not accepted')})` };
}

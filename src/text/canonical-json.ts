// JSON with every object's keys sorted and undefined members left out: one text for two values that
// mean the same (a playbook as parsed, a plan read back from a store). A leaf module: it imports
// nothing, so every layer may use it.

/** `v` as canonical JSON: equal texts for equal values, whatever their key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

// Sizes as engineers write them: `64m`, `1g`, `1GiB`, `512k`, or bytes. Binary units, as fio,
// vmkfstools and diskspd read their suffixes.
const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

export function parseSize(v: string | number): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/i.exec(v.trim());
  if (!m) throw new Error(`not a size: "${v}" (expected e.g. 64m, 1g or a number of bytes)`);
  return Math.round(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!);
}

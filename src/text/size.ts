// A byte count in words: the largest binary unit that is at least 1 (preflight's and the providers' messages).

const UNITS = [
  ['TiB', 1024 ** 4],
  ['GiB', 1024 ** 3],
  ['MiB', 1024 ** 2],
] as const;

/** Bytes in the largest binary unit that is at least 1 (KiB below a MiB). */
export function sizeText(bytes: number): string {
  for (const [unit, size] of UNITS) if (bytes >= size) return `${(bytes / size).toFixed(1)} ${unit}`;
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

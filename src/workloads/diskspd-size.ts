// diskspd's size tokens, shared by its command-line builders (diskspd.ts, prefill.ts, write-data.ts).
// Suffixes K/M/G/T are binary (diskspd CmdLineParser.cpp `_GetSizeInBytes`).

const KiB = 1024;

/** bytes → diskspd size token: binary suffixes as diskspd reads them (`4K`, `1M`, `1G`), else bytes. */
export function diskspdSize(bytes: number): string {
  for (const [suffix, mult] of [['T', KiB ** 4], ['G', KiB ** 3], ['M', KiB ** 2], ['K', KiB]] as const) {
    if (bytes >= mult && bytes % mult === 0) return `${bytes / mult}${suffix}`;
  }
  return String(bytes);
}

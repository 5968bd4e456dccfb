// The vcsim harness's Windows lab guest (guestwin.go) seen from this machine: its file system is
// `<guest-ops root>/<vm>/fs/<DRIVE>/…`, names compared case-insensitively as NTFS does.
//
//   const [rec] = await toolsWindowsPidFiles(labPaths(root).toolsGuests, TOOLS_WINDOWS_VM, TOOLS_WINDOWS_WORKDIR);
import fs from 'node:fs/promises';
import path from 'node:path';

/** The host path of a Windows path in the guest of `vm` (the existing components matched case-insensitively). */
export async function toolsWindowsHostPath(guestsRoot: string, vm: string, win: string): Promise<string> {
  const m = /^([A-Za-z]):[\\/](.*)$/.exec(win);
  if (!m) throw new Error(`not an absolute Windows path: ${win}`);
  let cur = path.join(guestsRoot, vm, 'fs', m[1]!.toUpperCase());
  for (const c of m[2]!.split(/[\\/]+/).filter(Boolean)) {
    const names = await fs.readdir(cur).catch(() => [] as string[]);
    cur = path.join(cur, names.find((n) => n.toLowerCase() === c.toLowerCase()) ?? c);
  }
  return cur;
}

/**
 * The pidfiles of owned programs (`.storsweep-run-<owner>.pid`: "<pid> <start time>", written by the
 * guest's PowerShell once Start-Process returned) in the work directory `workdir` of the guest.
 */
export async function toolsWindowsPidFiles(guestsRoot: string, vm: string, workdir: string): Promise<Array<{ pid: number; start: string }>> {
  const dir = await toolsWindowsHostPath(guestsRoot, vm, workdir);
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => /^\.storsweep-run-[a-z0-9]+\.pid$/i.test(n));
  const out: Array<{ pid: number; start: string }> = [];
  for (const n of names) {
    const m = /^(\d+) (\S+)/.exec((await fs.readFile(path.join(dir, n), 'utf8').catch(() => '')).replace(/^\uFEFF/, ''));
    if (m) out.push({ pid: Number(m[1]), start: m[2]! });
  }
  return out;
}

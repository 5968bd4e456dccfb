// What the Hyper-V host and its VM tell about themselves for the run's environment fingerprint,
// read-only: `Get-CimInstance -ClassName Win32_OperatingSystem` on the host and, through PowerShell
// Direct, in the guest (Caption, Version = major.minor.build, BuildNumber: Microsoft docs,
// "Win32_OperatingSystem class"), and diskspd's version from its usage banner (`diskspd -?`:
// "version <numeric> (<date>)", CmdLineParser.cpp _DisplayUsageInfo). A fact that cannot be read is left out.
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { runCalls, runGuestCalls, runInGuest, type GuestCredential } from './powershell.ts';

export const OS_CALL = { cmdlet: 'Get-CimInstance', params: { ClassName: 'Win32_OperatingSystem' }, select: ['Caption', 'Version', 'BuildNumber'] } as const;

/** `version 2.2 (2024/6/3)` in diskspd's usage text → `2.2 (2024/6/3)`; null when absent. */
export function parseDiskspdBanner(text: string): string | null {
  const m = /^version (\S+) \(([^)]*)\)\s*$/m.exec(text);
  return m ? `${m[1]} (${m[2]})` : null;
}

export function osFacts(rows: Record<string, unknown>[], prefix: string): Record<string, string> {
  const o = rows[0];
  const out: Record<string, string> = {};
  if (typeof o?.Caption === 'string') out[`${prefix}.os`] = o.Caption.trim();
  if (typeof o?.Version === 'string') out[`${prefix}.osBuild`] = o.Version;
  return out;
}

/** The Hyper-V host's Windows edition and build. */
export async function describeHypervHost(runner: CommandRunner): Promise<Record<string, string>> {
  const rows = await runCalls(runner, [{ ...OS_CALL, select: [...OS_CALL.select] }]).catch(() => []);
  return osFacts(rows, 'hyperv.host');
}

/** The guest's Windows edition and build and its diskspd version, through PowerShell Direct. */
export async function describeHypervGuest(runner: CommandRunner, vmName: string, credential: GuestCredential, diskspdPath: string): Promise<Record<string, string>> {
  const facts = osFacts(await runGuestCalls(runner, vmName, credential, [{ ...OS_CALL, select: [...OS_CALL.select] }]).catch(() => []), 'guest');
  const usage = await runInGuest(runner, vmName, credential, diskspdPath, ['-?']).catch(() => null);
  const version = usage ? parseDiskspdBanner(usage.output) : null;
  if (version) facts['guest.tool'] = `diskspd ${version}`;
  return facts;
}

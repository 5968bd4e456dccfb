// What the ESXi shell tells about the host and the VM for the run's environment fingerprint, read-only:
// `esxcli system version get` (Product/Version/Build/Update/Patch, 3-space indented "Key: Value" lines)
// and `vim-cmd vmsvc/get.guest <vmid>` (hostd's dump of vim.vm.GuestInfo: toolsVersion,
// toolsRunningStatus, guestFullName…). Pure builders and parsers, then the read.
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { shJoin } from '../../ssh/quote.ts';
import { checkEsxi } from './validate.ts';

export const systemVersionArgv = (): string[] => ['esxcli', 'system', 'version', 'get'];
export const getGuestArgv = (vmid: string | number): string[] => ['vim-cmd', 'vmsvc/get.guest', checkEsxi('vmid', vmid)];

/** `   Product: VMware ESXi` lines → {Product: 'VMware ESXi', …} */
export function parseSystemVersion(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s+([A-Za-z ]+):\s*(.*)$/.exec(line);
    if (m) out[m[1]!.trim()] = m[2]!.trim();
  }
  return out;
}

/** The top-level `name = "value",` lines of a vim.vm.GuestInfo dump (nested objects are skipped). */
export function parseGuestInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^ {3}(\w+) = "((?:[^"\\]|\\.)*)",?\s*$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** Host product and build, the VM's guest OS and VMware Tools as the host reports them; a fact that cannot be read is left out. */
export async function describeEsxiHost(runner: CommandRunner, vmid: string): Promise<Record<string, string>> {
  const facts: Record<string, string> = {};
  const v = await runner.run(shJoin(systemVersionArgv())).catch(() => null);
  if (v?.exitCode === 0) {
    const p = parseSystemVersion(v.stdout);
    if (p.Product && p.Version) facts['esxi.product'] = `${p.Product} ${p.Version}${p.Update && p.Update !== '0' ? ` Update ${p.Update}` : ''}`;
    if (p.Build) facts['esxi.build'] = p.Build.replace(/^Releasebuild-/, '');
    if (p.Patch) facts['esxi.patch'] = p.Patch;
  }
  const g = await runner.run(shJoin(getGuestArgv(vmid))).catch(() => null);
  if (g?.exitCode === 0) {
    const i = parseGuestInfo(g.stdout);
    if (i.guestFullName) facts['vm.guestFullName'] = i.guestFullName;
    if (i.toolsVersion) facts['vmwareTools.version'] = i.toolsVersion;
    if (i.toolsRunningStatus) facts['vmwareTools.runningStatus'] = i.toolsRunningStatus;
    if (i.toolsInstallType) facts['vmwareTools.installType'] = i.toolsInstallType;
  }
  return facts;
}

// The guest of a vSphere target as the inventory states it (`guest: {via, os, credential, …}`): what
// `validate` refuses at its line, so that `run` never meets it. Pure.
//
// - via: ssh (default) — today's behaviour: a Linux guest over SSH (sshHost) or this machine, fio.
// - via: tools — VMware Tools guest operations on the vCenter/ESXi (GuestOperationsManager:
//   StartProgramInGuest, ListProcessesInGuest, InitiateFileTransferTo/FromGuest) with the guest
//   credential (NamePasswordAuthentication); no network path from here to the guest is needed.
// - os: linux (fio, the disk found by WWN under byIdDir) or windows (diskspd, the disk found by
//   Get-Disk); a Windows guest is reached through guest operations only.
import type { TargetDiagnostic } from '../../contract/provider.ts';
import { linuxTestPathProblem } from '../../workloads/test-target.ts';
import type { AttachedDiskGuest } from '../guest.ts';
import { isHypervValue } from '../hyperv/validate.ts';
import { GUEST_FILESYSTEMS } from '../hyperv/guest-volume.ts';

/**
 * What a Windows guest measures: the raw disk (diskspd `#N`), or a test file on an NTFS (4 KiB or
 * 64 KiB allocation units) or ReFS volume made on it — the values and cmdlets of a Hyper-V guest
 * (hyperv/guest-volume.ts, ../hyperv/windows-guest-volume.ts).
 */
export const WINDOWS_GUEST_FILESYSTEMS = GUEST_FILESYSTEMS;

/** diskspd in a Windows guest when the inventory names none (where the Hyper-V provider looks too). */
export const DEFAULT_GUEST_DISKSPD = 'C:\\Tools\\diskspd.exe';

/** A Windows work directory: a drive-rooted folder of plain characters (no "..", no wildcards). */
export function windowsWorkdirProblem(p: string): string | null {
  return isHypervValue('folder', p) && !p.endsWith('\\') ? null : 'must be a drive-rooted folder like C:\\storsweep of letters, digits, space, ".", "_" and "-" (no "..", no trailing "\\")';
}

export function guestInventoryDiagnostics(g: AttachedDiskGuest): TargetDiagnostic[] {
  const out: TargetDiagnostic[] = [];
  const at = (...k: string[]) => ['guest', ...k];
  if (g.via === 'ssh') {
    if (g.credential !== undefined) out.push({ path: at('credential'), message: 'guest.credential is used only with via: tools (guest operations); over SSH the guest is reached with the sshHosts entry\'s login. Remove it, or set via: tools' });
    if (g.os === 'windows') out.push({ path: at('os'), message: 'a Windows guest is reached through VMware Tools guest operations only (storsweep runs no diskspd over SSH); with os: windows set via: tools (allowed: tools)' });
  } else {
    if (g.credential === undefined) out.push({ path: at('via'), message: 'via: tools logs in to the guest through VMware Tools: give guest.credential {username: <guest account>, password: ${env:NAME} or ${file:path}}' });
    if (g.sshHost !== undefined) out.push({ path: at('sshHost'), message: 'not used with via: tools: the guest is reached through vCenter/ESXi guest operations, never over SSH. Remove sshHost (or set via: ssh)' });
  }
  if (g.os === 'linux') {
    const problem = linuxTestPathProblem(g.workdir);
    if (problem) out.push({ path: at('workdir'), message: `a Linux guest's work directory ${problem}` });
    if (g.diskspdPath !== undefined) out.push({ path: at('diskspdPath'), message: 'a Linux guest runs fio (fioPath), not diskspd; remove diskspdPath, or set os: windows' });
  } else {
    const problem = windowsWorkdirProblem(g.workdir);
    if (problem) out.push({ path: at('workdir'), message: `a Windows guest's work directory ${problem}` });
  }
  return out;
}

// The one way storsweep runs something in a Windows guest: storage cmdlet calls (Get-Disk, Set-Disk…)
// with their selected properties back, and one program (diskspd) to its end with its output. Two
// implementations: PowerShell Direct from a Hyper-V host over SSH (providers/hyperv/powershell.ts)
// and VMware Tools guest operations (providers/vsphere/guest-runner.ts). The disk checks
// (providers/hyperv/guest-disk.ts) and the diskspd runs (workloads/run-diskspd.ts) take either.
import { ParseError } from '../errors.ts';
import type { GroupStop } from '../ssh/process-group.ts';

export interface WindowsGuestRunner {
  /** label for messages and logs, e.g. `hyperv:host/vm` or `tools://vc/vm` */
  readonly target: string;
  /** storage cmdlet calls inside the guest, in one session; the selected properties of each call's output */
  calls(calls: GuestCall[]): Promise<Record<string, unknown>[]>;
  /**
   * one program run to its end inside the guest: its exit code and output (stdout, then stderr).
   * With `owner` (process-group.ts toolOwner), a later process of the run can find and stop it
   * (stopOwned) if this one dies while it runs.
   */
  exec(exe: string, argv: string[], opts?: { timeoutMs?: number; signal?: AbortSignal; owner?: string }): Promise<{ exitCode: number; output: string }>;
  /** stops the program `exe` that exec started for `owner` and that still runs (an earlier process of the run died meanwhile) */
  stopOwned?(owner: string, exe: string): Promise<GroupStop>;
  /**
   * The write cache policy of guest disk `disk` (\\.\PhysicalDrive<disk>) as disk.sys reports it,
   * after setting what `set` gives (IOCTL_DISK_SET_CACHE_INFORMATION, IOCTL_DISK_SET_CACHE_SETTING:
   * ./windows-write-cache.ts). Absent where the runner has no way to send it.
   */
  diskCache?(disk: number, set?: { writeCache?: 'enabled' | 'disabled'; flushing?: 'on' | 'off' }): Promise<DiskCacheState>;
  close(): Promise<void>;
}

/**
 * What an owned run writes to its pidfile in the guest (vSphere: TOOLS_GUEST_RUN_BODY; Hyper-V:
 * GUEST_RUN_BODY): the program's pid and, after a space, its start time (Process.StartTime in UTC,
 * round-trip format). Null for anything else.
 */
export function parsePidFile(text: string): { pid: number; start: number } | null {
  const m = /^(\d+) (\S+)$/.exec(text.trim());
  if (!m) return null;
  const pid = Number(m[1]);
  const start = Date.parse(m[2]!);
  return pid > 0 && Number.isSafeInteger(pid) && Number.isFinite(start) ? { pid, start } : null;
}

/**
 * How far a listed start time may be from the pidfile's and still be that process: ListProcessesInGuest
 * reports whole seconds (open-vm-tools lib/include/procMgr.h: ProcMgrProcInfo.procStartTime is a
 * time_t); Win32_Process.CreationDate has microseconds, Process.StartTime 100 ns ticks, both read
 * from the same kernel creation time.
 */
export const START_SLACK_MS = 2000;

/**
 * Whether a running process is the program a pidfile names, not another that got its pid after it
 * ended (Windows reuses pids soon): that pid, that program's image name (case-insensitive, as
 * Windows compares them), started when the pidfile says. Nothing is ever matched by name alone.
 */
export function isRecordedProcess(p: { pid: number; name: string; startMs: number }, rec: { pid: number; start: number }, name: string): boolean {
  return p.pid === rec.pid && p.name.toLowerCase() === name.toLowerCase() && Number.isFinite(p.startMs) && Math.abs(p.startMs - rec.start) <= START_SLACK_MS;
}

/**
 * One argument on a Windows command line, quoted so that CommandLineToArgvW (and the Microsoft C
 * runtime) gives it back unchanged: double quotes around it when it is empty or has a space, tab or
 * quote, a quote escaped with a backslash, and the backslashes before a quote or the closing quote doubled.
 */
export function windowsArg(a: string): string {
  if (a !== '' && !/[\s"]/.test(a)) return a;
  return `"${a.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, '$1$1')}"`;
}

/**
 * The storage cmdlets a guest call may run (both ways in, hyperv/powershell.ts: GUEST_CALL_BODY over
 * PowerShell Direct, TOOLS_GUEST_CALL_BODY over guest operations); checked by each runner and again
 * inside the script. Get-CimInstance reads Win32_OperatingSystem (the fingerprint) and, over
 * PowerShell Direct, Win32_Process (an owned program: hyperv/provider.ts stopOwnedInGuest).
 */
export const GUEST_CMDLETS = ['Get-Disk', 'Set-Disk', 'Initialize-Disk', 'New-Partition', 'Get-Partition', 'Format-Volume', 'Get-Volume', 'Clear-Disk', 'Get-CimInstance'] as const;
/**
 * What else GUEST_CALL_BODY (PowerShell Direct only) may run: an owned run's leftovers — Get-Item /
 * Import-Csv / Remove-Item of its pidfile, Stop-Process -Id of the process it names (hyperv/provider.ts
 * stopOwnedInGuest). vSphere guests stop theirs through TerminateProcessInGuest instead.
 */
export const GUEST_PROCESS_CMDLETS = ['Get-Item', 'Import-Csv', 'Stop-Process', 'Remove-Item'] as const;
export type GuestCmdlet = (typeof GUEST_CMDLETS)[number] | (typeof GUEST_PROCESS_CMDLETS)[number];

/** One storage cmdlet call in a Windows guest, and the properties of its output to return. */
export interface GuestCall {
  cmdlet: GuestCmdlet;
  /** a JSON array binds to an array parameter (Import-Csv -Header) */
  params: Record<string, string | number | boolean | string[]>;
  /** properties to return from this call's output; omit to discard the output */
  select?: string[];
}

/**
 * A disk's caching as disk.sys reports it: IOCTL_DISK_GET_CACHE_INFORMATION (a MODE SENSE of the
 * caching mode page: WCE, RCD, PS) and IOCTL_DISK_GET_CACHE_SETTING (State; IsPowerProtected, the
 * "Turn off Windows write-cache buffer flushing" box). Source: ../windows-write-cache.ts.
 */
export interface DiskCacheState {
  WriteCacheEnabled: boolean;
  ReadCacheEnabled: boolean;
  ParametersSavable: boolean;
  IsPowerProtected: boolean;
  /** DISK_CACHE_STATE: Normal, WriteThroughNotSupported, ModifyUnsuccessful (a set the device refused) */
  State: 'Normal' | 'WriteThroughNotSupported' | 'ModifyUnsuccessful';
}

const CACHE_STATES = ['Normal', 'WriteThroughNotSupported', 'ModifyUnsuccessful'] as const;

/** The JSON the cache script (windows-write-cache-script.ts) writes: one object of DiskCacheState's fields. */
export function parseDiskCacheState(text: string, source: string): DiskCacheState {
  let v: unknown;
  try {
    v = JSON.parse(text.trim());
  } catch (err) {
    throw new ParseError(`${source}: expected JSON from ConvertTo-Json, got ${JSON.stringify(text.slice(0, 200))}`, { source, expected: 'JSON' }, { cause: err });
  }
  const o = (v ?? {}) as Record<string, unknown>;
  const flags = ['WriteCacheEnabled', 'ReadCacheEnabled', 'ParametersSavable', 'IsPowerProtected'] as const;
  if (typeof v !== 'object' || Array.isArray(v) || flags.some((f) => typeof o[f] !== 'boolean') || !(CACHE_STATES as readonly unknown[]).includes(o.State)) {
    throw new ParseError(`${source}: expected ${flags.join(', ')} (booleans) and State (${CACHE_STATES.join(', ')}), got ${JSON.stringify(text.slice(0, 200))}`, { source, expected: 'DiskCacheState' });
  }
  return { WriteCacheEnabled: o.WriteCacheEnabled as boolean, ReadCacheEnabled: o.ReadCacheEnabled as boolean, ParametersSavable: o.ParametersSavable as boolean, IsPowerProtected: o.IsPowerProtected as boolean, State: o.State as DiskCacheState['State'] };
}

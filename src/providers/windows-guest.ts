// The one way storsweep runs something in a Windows guest: storage cmdlet calls (Get-Disk, Set-Disk…)
// with their selected properties back, and one program (diskspd) to its end with its output. Two
// implementations: PowerShell Direct from a Hyper-V host over SSH (providers/hyperv/powershell.ts)
// and VMware Tools guest operations (providers/vsphere/guest-runner.ts). The disk checks
// (providers/hyperv/guest-disk.ts) and the diskspd runs (workloads/run-diskspd.ts) take either.
import type { GroupStop } from '../ssh/process-group.ts';
import type { GuestCall } from './hyperv/powershell.ts';

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
  close(): Promise<void>;
}

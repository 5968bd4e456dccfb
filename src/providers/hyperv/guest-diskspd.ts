// diskspd inside the Hyper-V VM (PowerShell Direct from the host): one pass, a pre-fill pass, and
// stopping what an earlier process of the run left running there. The guest credential is passed
// on stdin and never appears in commands, logs or errors.
import { InvalidArgument, RemoteCommandFailed } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import type { GroupStop } from '../../ssh/process-group.ts';
import { isRecordedProcess, parsePidFile } from '../windows-guest.ts';
import type { WorkloadProfile, WorkloadTest } from '../../workloads/spec.ts';
import { diskspdArgs } from '../../workloads/diskspd.ts';
import { checkDiskspdPath } from '../../workloads/tool-settings.ts';
import { checkHypervTarget, type HypervTargetConfig } from './config.ts';
import { ownedGuestFiles, runGuestCalls, runInGuest, runOwnedInGuest, type GuestCall, type GuestCredential } from './powershell.ts';

/**
 * One diskspd pass inside the VM via PowerShell Direct; returns diskspd's -Rxml output. The guest
 * credential is passed on stdin and never appears in commands, logs or errors.
 */
export async function runGuestDiskspd(runner: CommandRunner, target: HypervTargetConfig, credential: GuestCredential, test: WorkloadTest, profile: WorkloadProfile, opts: { guestTarget: string; diskspdPath?: string; owner?: string }): Promise<string> {
  return runGuestDiskspdArgv(runner, target, credential, diskspdArgs(test, profile, { target: opts.guestTarget }), opts);
}

/**
 * One diskspd invocation with a built argument vector (a pass, or a pre-fill pass: workloads/prefill.ts).
 * With `owner` (process-group.ts toolOwner: the run and its target) it is started so that a later
 * process of the run can find and stop it (powershell.ts GUEST_RUN_BODY, stopOwnedInGuest).
 */
export async function runGuestDiskspdArgv(runner: CommandRunner, target: HypervTargetConfig, credential: GuestCredential, argv: string[], opts: { diskspdPath?: string; owner?: string }): Promise<string> {
  const t = checkHypervTarget(target);
  const exe = opts.diskspdPath ?? 'diskspd.exe';
  checkDiskspdPath(exe);
  const r = opts.owner !== undefined ? await runOwnedInGuest(runner, t.vmName, credential, exe, argv, opts.owner) : await runInGuest(runner, t.vmName, credential, exe, argv);
  if (r.exitCode !== 0) {
    throw new RemoteCommandFailed({ host: runner.target, what: `diskspd in ${t.vmName}`, command: `Invoke-Command -VMName ${t.vmName} ${exe} ${argv.join(' ')}`, exitCode: r.exitCode, stderr: r.output, reason: 'exit' });
  }
  return r.output;
}

/**
 * A Win32_Process CreationDate as ConvertTo-Json wrote it: Windows PowerShell 5.1 serializes a
 * DateTime as `\/Date(<ms since 1970 UTC>)\/` (JavaScriptSerializer's form), PowerShell 7 as ISO 8601;
 * milliseconds since the epoch, NaN for anything else.
 */
export function cimDateMs(v: unknown): number {
  if (typeof v !== 'string') return NaN;
  const m = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/.exec(v);
  return m ? Number(m[1]) : Date.parse(v);
}

/** Win32_Process of one pid (Get-CimInstance -Filter: a WQL where clause); what is matched against a pidfile. */
export function processCall(pid: number): GuestCall {
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid > 0xffffffff) throw new InvalidArgument(`process id ${pid}: expected a Win32_Process ProcessId (uint32)`, { name: 'pid', value: String(pid) });
  return { cmdlet: 'Get-CimInstance', params: { ClassName: 'Win32_Process', Filter: `ProcessId = ${pid}` }, select: ['ProcessId', 'Name', 'CreationDate'] };
}

/**
 * Stops the program `exe` that an earlier process of the run started in the VM for `owner`
 * (runGuestDiskspdArgv with owner) and that still runs there: that process died (kill -9, a lost
 * host) while the program ran, and `run --resume` or `cleanup` is about to tear its disk down. Found
 * by the owner's pidfile in the guest (`<pid> <start time>`, read with Import-Csv), and stopped
 * (Stop-Process -Id -Force) only while Get-CimInstance Win32_Process shows that pid with the
 * program's image name and a CreationDate within 2 s of the recorded start: Windows reuses pids
 * soon, and nothing is ever stopped by name alone. The pidfile goes once nothing of it runs.
 * Microsoft docs: Get-CimInstance -ClassName -Filter; Win32_Process (ProcessId uint32, Name,
 * CreationDate datetime); Stop-Process -Id -Force; Import-Csv -LiteralPath -Delimiter -Header;
 * Get-Item -LiteralPath -ErrorAction SilentlyContinue; Remove-Item -LiteralPath -Force.
 */
export async function stopOwnedInGuest(runner: CommandRunner, target: HypervTargetConfig, credential: GuestCredential, owner: string, exe: string, opts: { pollMs?: number } = {}): Promise<GroupStop> {
  const t = checkHypervTarget(target);
  checkDiskspdPath(exe);
  const name = exe.slice(exe.lastIndexOf('\\') + 1);
  const { pid: pidFile } = ownedGuestFiles(owner);
  const calls = (c: GuestCall[]) => runGuestCalls(runner, t.vmName, credential, c);
  // no pidfile: no program of this owner was started in this VM, or its result was read (then the file went)
  const found = await calls([{ cmdlet: 'Get-Item', params: { LiteralPath: pidFile, ErrorAction: 'SilentlyContinue' }, select: ['FullName'] }]);
  if (found.length === 0) return { pgid: null, outcome: 'not-started' };
  const [row] = await calls([{ cmdlet: 'Import-Csv', params: { LiteralPath: pidFile, Delimiter: ' ', Header: ['ProcessId', 'StartTime'] }, select: ['ProcessId', 'StartTime'] }]);
  const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  const text = row ? `${str(row.ProcessId)} ${str(row.StartTime)}` : '';
  const rec = parsePidFile(text);
  if (!rec) return { pgid: null, outcome: 'unknown', detail: `the pidfile ${pidFile} in ${t.vmName} holds ${JSON.stringify(text.slice(0, 80))}` };
  const running = async () =>
    (await calls([processCall(rec.pid)])).some((p) => isRecordedProcess({ pid: Number(p.ProcessId), name: typeof p.Name === 'string' ? p.Name : '', startMs: cimDateMs(p.CreationDate) }, rec, name));
  // the guest's own script block, if its session outlived the storsweep that started it, removes the
  // pidfile too once the program has ended: already gone is as good
  const removePidFile = () => calls([{ cmdlet: 'Remove-Item', params: { LiteralPath: pidFile, Force: true, ErrorAction: 'SilentlyContinue' } }]);
  if (!(await running())) {
    await removePidFile();
    return { pgid: rec.pid, outcome: 'not-running' };
  }
  // Windows has no TERM: Stop-Process ends the process (Process.Kill, TerminateProcess); the
  // PowerShell Direct session that waited for it, if it is still there, then returns
  await calls([{ cmdlet: 'Stop-Process', params: { Id: rec.pid, Force: true } }]).catch((err: unknown) => {
    // gone between the look and the stop: what was wanted
    if (!(err instanceof RemoteCommandFailed && /Cannot find a process with the process identifier/.test(err.details.stderr ?? ''))) throw err;
  });
  for (let i = 0; i < 20 && (await running()); i++) await new Promise((r) => setTimeout(r, opts.pollMs ?? 500));
  if (await running()) return { pgid: rec.pid, outcome: 'still-running', pids: [rec.pid], detail: `${name} ${rec.pid} still runs in ${t.vmName} after Stop-Process` };
  await removePidFile();
  return { pgid: rec.pid, outcome: 'stopped', signal: 'KILL', pids: [rec.pid] };
}

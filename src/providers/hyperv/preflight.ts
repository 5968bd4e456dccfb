// What `storsweep preflight` asks of a Hyper-V host over SSH (contract/preflight.ts): the room on
// each volume the plan puts a VHDX on and on each pass-through disk, and read-only checks — the SSH
// host key and login, the Windows release against the inventory's `version`, the account's right to
// use Hyper-V, each cmdlet the steps run (Get-Command), the VM, each pass-through disk as the run
// will find it, the guest through PowerShell Direct, and both clocks. Nothing here changes the host.
import type { PlannedStep } from '../../contract/provider.ts';
import type { PreflightCheck, SpaceHave, SpacePlace, TargetPreflight } from '../../contract/preflight.ts';
import { errorMessage } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { withFreshSession } from '../fresh-session.ts';
import { checkHypervTarget, type HypervTargetConfig } from './config.ts';
import { OS_CALL } from './fingerprint.ts';
import { cimDateMs } from './guest-diskspd.ts';
import { hypervHost, holdersOf } from './host.ts';
import { checkPassthroughDisk, getDiskCall, HOST_DISK_NAME, listVmsCall, type HostDisk } from './passthrough.ts';
import { runCalls, runGuestCalls, runIdentity, type GuestCredential, type PsCall } from './powershell.ts';
import { hypervSpaceNeeds, VHDX_OVERHEAD_BYTES } from './space-needs.ts';

export { hypervSpaceNeeds, VHDX_OVERHEAD_BYTES };

const GiB = 1024 ** 3;

/**
 * The cmdlets each operation (operations/*.ts) runs on the host, including the reads it makes before
 * it changes anything. Invoke-Command is PowerShell Direct into the VM (powershell.ts GUEST_*_BODY).
 */
export const HOST_CMDLETS_OF: Readonly<Record<string, readonly string[]>> = {
  'New-VHD': ['New-VHD', 'Get-VHD', 'Get-Item', 'Remove-Item'],
  'Set-Disk -IsOffline': ['Get-Disk', 'Set-Disk', 'Get-VM', 'Get-VMHardDiskDrive'],
  'Add-VMHardDiskDrive': ['Add-VMHardDiskDrive', 'Remove-VMHardDiskDrive', 'Get-VMHardDiskDrive', 'Get-VM', 'Get-Disk'],
  'Set-Disk (guest)': ['Get-VMHardDiskDrive', 'Get-VHD', 'Get-Disk', 'Invoke-Command'],
  'Format-Volume (guest)': ['Get-VMHardDiskDrive', 'Get-VHD', 'Get-Disk', 'Invoke-Command'],
  diskspd: ['Invoke-Command'],
};

/** Pure: the host cmdlets a plan's steps run, in a stable order. */
export function cmdletsNeeded(steps: readonly PlannedStep[]): string[] {
  return [...new Set(steps.flatMap((s) => HOST_CMDLETS_OF[s.operation] ?? []))].sort();
}

const volumeCall = (letter: string): PsCall => ({ cmdlet: 'Get-Volume', params: { DriveLetter: letter }, select: ['FileSystem', 'FileSystemLabel', 'Size', 'SizeRemaining'] });

async function spaceOfPlace(runner: CommandRunner, place: SpacePlace): Promise<SpaceHave> {
  if (place.kind === 'volume') {
    const letter = place.folder.slice(0, 1).toUpperCase();
    const [v] = await runCalls(runner, [volumeCall(letter)]).catch((err: unknown): Record<string, unknown>[] => [{ error: errorMessage(err) }]);
    const free = v?.SizeRemaining;
    if (typeof free !== 'number') return { place, bytes: null, detail: `Get-Volume -DriveLetter ${letter} gave no free space${typeof v?.error === 'string' ? `: ${v.error.split('\n')[0] ?? ''}` : ''}` };
    return { place, bytes: free, detail: `volume ${letter}: has ${(free / GiB).toFixed(1)} GiB free of ${(Number(v?.Size) / GiB).toFixed(1)} GiB (Get-Volume SizeRemaining)` };
  }
  if (place.kind === 'disk') {
    const m = HOST_DISK_NAME.exec(place.name);
    const [d] = m ? await runCalls(runner, [getDiskCall(Number(m[1]))]).catch(() => []) : [];
    if (!d || typeof d.Size !== 'number') return { place, bytes: null, detail: `Get-Disk reports no disk ${m?.[1] ?? place.name}` };
    return { place, bytes: d.Size, detail: `host disk ${String(d.Number)} is ${(d.Size / GiB).toFixed(1)} GiB (Get-Disk Size)` };
  }
  return { place, bytes: null, detail: `a Hyper-V host has no ${place.kind}` };
}

/** The account may use Hyper-V: a member of BUILTIN\Administrators or BUILTIN\Hyper-V Administrators in this session's token. */
async function accountChecks(runner: CommandRunner, steps: readonly PlannedStep[]): Promise<PreflightCheck[]> {
  const id = await runIdentity(runner);
  const groups = [id.administrators ? 'Administrators' : '', id.hypervAdministrators ? 'Hyper-V Administrators' : ''].filter(Boolean);
  if (!groups.length) return [{ check: 'account', status: 'fail', detail: `${id.name} is in neither Administrators nor Hyper-V Administrators on the host: Hyper-V refuses its cmdlets`, remedy: `add ${id.name} to the host's Hyper-V Administrators group (or Administrators), then check again` }];
  const out: PreflightCheck[] = [{ check: 'account', status: 'ok', detail: `${id.name}: member of ${groups.join(' and ')}` }];
  // Set-Disk on a host disk is the Storage module, not Hyper-V: Hyper-V Administrators is no grant there
  if (!id.administrators && steps.some((s) => s.operation === 'Set-Disk -IsOffline')) out.push({ check: 'account (pass-through)', status: 'warn', detail: `${id.name} is not in Administrators: taking a host disk offline (Set-Disk) may be refused`, remedy: `add ${id.name} to Administrators for pass-through permutations` });
  return out;
}

/** Each cmdlet the steps run exists on the host (Get-Command; a missing one answers nothing with -ErrorAction SilentlyContinue). */
async function cmdletChecks(runner: CommandRunner, steps: readonly PlannedStep[]): Promise<PreflightCheck[]> {
  const names = cmdletsNeeded(steps);
  const found = await runCalls(runner, names.map((n) => ({ cmdlet: 'Get-Command', params: { Name: n, ErrorAction: 'SilentlyContinue' }, select: ['Name', 'CommandType', 'Source'] })));
  return names.map((n) => {
    const c = found.find((f) => typeof f.Name === 'string' && f.Name.toLowerCase() === n.toLowerCase());
    if (c) return { check: `cmdlet ${n}`, status: 'ok', detail: `${String(c.CommandType)}${typeof c.Source === 'string' && c.Source ? ` from ${c.Source}` : ''}` };
    const hv = n !== 'Invoke-Command' && !/^(Get|Set)-(Disk|Item|Volume)$|^Remove-Item$/.test(n);
    return { check: `cmdlet ${n}`, status: 'fail', detail: `${n} is not on the host (Get-Command found nothing)`, remedy: hv ? 'install the Hyper-V PowerShell module (Install-WindowsFeature Hyper-V-PowerShell)' : `the host must be Windows Server with ${n}` };
  });
}

function versionCheck(os: Record<string, unknown> | undefined, stated: string | undefined): PreflightCheck {
  const found = typeof os?.Version === 'string' ? os.Version : '';
  const caption = typeof os?.Caption === 'string' ? os.Caption.trim() : 'Windows';
  if (!found) return { check: 'version', status: 'fail', detail: 'Win32_OperatingSystem gave no Version', remedy: 'the SSH host must be a Windows Hyper-V host' };
  if (!stated || stated === found) return { check: 'version', status: 'ok', detail: `${caption} ${found}${stated ? ` (inventory: ${stated})` : ''}` };
  return { check: 'version', status: 'fail', detail: `the host runs ${caption} ${found}, the inventory says ${stated}`, remedy: `set version: "${found}" in the target` };
}

function clockCheck(check: string, at: unknown, before: number, after: number): PreflightCheck {
  const t = cimDateMs(at);
  if (!Number.isFinite(t)) return { check, status: 'warn', detail: 'Win32_OperatingSystem gave no LocalDateTime', remedy: 'check the clock by hand' };
  const offset = t - (before + after) / 2;
  const far = Math.abs(offset) > 5000;
  return { check, status: far ? 'warn' : 'ok', detail: `${offset >= 0 ? '+' : ''}${(offset / 1000).toFixed(1)} s from this machine's`, ...(far ? { remedy: 'set the clocks by NTP: diskspd\u2019s times and the run\u2019s are compared' } : {}) };
}

/** Win32_OperatingSystem with LocalDateTime (a DateTime: ConvertTo-Json of PowerShell 5.1 writes "\/Date(<ms>)\/"), on the host or in the guest. */
const CLOCK_CALL = { cmdlet: 'Get-CimInstance' as const, params: { ClassName: 'Win32_OperatingSystem' }, select: [...OS_CALL.select, 'LocalDateTime'] };

/** The VM is there and running (PowerShell Direct needs it running on this host). */
async function vmCheck(runner: CommandRunner, vmName: string): Promise<PreflightCheck> {
  const vms = await runCalls(runner, [{ ...listVmsCall(), select: ['Name', 'State'] }]);
  const vm = vms.find((v) => typeof v.Name === 'string' && v.Name.toLowerCase() === vmName.toLowerCase());
  if (!vm) return { check: 'VM', status: 'fail', detail: `no VM ${vmName} on the host (Get-VM lists ${vms.map((v) => String(v.Name)).join(', ') || 'none'})`, remedy: 'set vmName to a VM on this host' };
  if (vm.State !== 'Running') return { check: 'VM', status: 'fail', detail: `${vmName} is ${String(vm.State)}`, remedy: `start ${vmName}: the workload runs in it through PowerShell Direct` };
  return { check: 'VM', status: 'ok', detail: `${vmName} is Running` };
}

type Target = ReturnType<typeof checkHypervTarget>;

/** Each pass-through disk the steps take offline: there, the inventory's serial, no partitions, not system or boot, held by no VM — as the run checks it. */
async function passthroughChecks(runner: CommandRunner, t: Target, steps: readonly PlannedStep[]): Promise<PreflightCheck[]> {
  const numbers = [...new Set(steps.filter((s) => s.operation === 'Set-Disk -IsOffline').map((s) => Number(s.arguments.diskNumber)))];
  const out: PreflightCheck[] = [];
  for (const n of numbers) {
    const check = `pass-through disk ${n}`;
    const [disk] = (await runCalls(runner, [getDiskCall(n)]).catch(() => [])) as unknown as Array<HostDisk & { Size?: number; FriendlyName?: string }>;
    try {
      checkPassthroughDisk(t.host, t.allowedDisks, n, disk);
    } catch (err) {
      out.push({ check, status: 'fail', detail: errorMessage(err), remedy: 'list the disk in allowedDisks by number and serial, blank and online; the run takes it offline itself' });
      continue;
    }
    const holders = await holdersOf(hypervHost(t, runner), n);
    if (holders.length) out.push({ check, status: 'fail', detail: `${holders.join(', ')} already holds disk ${n} as a pass-through disk`, remedy: 'detach it from that VM first' });
    else out.push({ check, status: 'ok', detail: `${disk!.FriendlyName ?? 'disk'} serial ${String(disk!.SerialNumber)}, ${((disk!.Size ?? 0) / GiB).toFixed(1)} GiB, blank, online: the run takes it offline` });
  }
  return out;
}

/** The guest through PowerShell Direct, as the run reaches it, and its clock. */
async function guestDirectChecks(runner: CommandRunner, vmName: string, credential: GuestCredential): Promise<PreflightCheck[]> {
  const before = Date.now();
  let os: Record<string, unknown> | undefined;
  try {
    [os] = await runGuestCalls(runner, vmName, credential, [CLOCK_CALL]);
  } catch (err) {
    return [{ check: 'guest PowerShell Direct', status: 'fail', detail: errorMessage(err).split('\n')[0] ?? '', remedy: `start ${vmName} and check guestCredential (Invoke-Command -VMName needs the VM running and a guest account)` }];
  }
  const after = Date.now();
  const text = (v: unknown, or: string) => (typeof v === 'string' ? v.trim() : or);
  return [{ check: 'guest PowerShell Direct', status: 'ok', detail: `${text(os?.Caption, 'Windows')} ${text(os?.Version, '')}`.trim() }, clockCheck('guest clock', os?.LocalDateTime, before, after)];
}

/** A check that the host refused (an account outside the Hyper-V groups is refused Get-VM): a ✗ of its own, the other checks still run. */
async function guarded(check: string, fn: () => Promise<PreflightCheck[]>): Promise<PreflightCheck[]> {
  try {
    return await fn();
  } catch (err) {
    const lines = errorMessage(err).split('\n').filter((l) => l.trim() !== '');
    return [{ check, status: 'fail', detail: lines.slice(0, 2).join(' '), remedy: 'see the account and cmdlet checks' }];
  }
}

async function hostChecks(runner: CommandRunner, t: Target, o: HypervPreflightOptions, steps: readonly PlannedStep[]): Promise<PreflightCheck[]> {
  const out: PreflightCheck[] = [{ check: 'connection', status: 'ok', detail: `${runner.target}: SSH host key verified (known_hosts), logged in` }];
  const before = Date.now();
  const [os] = await runCalls(runner, [CLOCK_CALL]);
  const after = Date.now();
  out.push(versionCheck(os, o.version), ...(await guarded('account', () => accountChecks(runner, steps))), ...(await guarded('cmdlets', () => cmdletChecks(runner, steps))));
  out.push(...(await guarded('VM', async () => [await vmCheck(runner, t.vmName)])), ...(await guarded('pass-through disks', () => passthroughChecks(runner, t, steps))));
  out.push(...(await guestDirectChecks(runner, t.vmName, o.credential())), clockCheck('clock', os?.LocalDateTime, before, after));
  return out;
}

export interface HypervPreflightOptions {
  /** the inventory's `version`: Win32_OperatingSystem.Version, e.g. 10.0.20348 */
  version?: string;
  credential: () => GuestCredential;
}

/** The Hyper-V target's preflight; `connect` opens a fresh SSH session (closed after each use). */
export function hypervPreflight(connect: () => Promise<CommandRunner>, cfg: HypervTargetConfig, o: HypervPreflightOptions): TargetPreflight {
  const withRunner = <X>(fn: (r: CommandRunner) => Promise<X>): Promise<X> => withFreshSession(connect, fn);
  return {
    spaceNeeds: hypervSpaceNeeds,
    spaceOf: (places) => withRunner(async (r) => {
      const out: SpaceHave[] = [];
      for (const p of places) out.push(await spaceOfPlace(r, p));
      return out;
    }),
    checks: async (steps) => {
      let runner: CommandRunner;
      try {
        runner = await connect();
      } catch (err) {
        return [{ check: 'connection', status: 'fail', detail: errorMessage(err), remedy: 'check the sshHosts entry: address, key, known_hosts' }];
      }
      try {
        return await hostChecks(runner, checkHypervTarget(cfg), o, steps);
      } finally {
        await runner.close().catch(() => undefined);
      }
    },
  };
}

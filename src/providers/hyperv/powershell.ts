// PowerShell over SSH to a Windows host: every script is a CONSTANT body behind a fixed prelude;
// parameters travel as a base64 JSON blob decoded in the script (ConvertFrom-Json), secrets as one
// JSON line on stdin — so no value is ever interpolated into PowerShell source, and no secret is on
// the command line (process listings, logs). The script is sent as -EncodedCommand (UTF-16LE base64).
import { InvalidArgument, ParseError, RemoteCommandFailed } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { GUEST_CMDLETS, GUEST_PROCESS_CMDLETS, parseDiskCacheState, windowsArg, type DiskCacheState, type GuestCall } from '../windows-guest.ts';
import { GUEST_CACHE_BODY } from '../windows-write-cache-script.ts';

// The guest calls' shapes are the shared Windows guest's (../windows-guest.ts), named here too.
export { GUEST_CMDLETS, GUEST_PROCESS_CMDLETS, type GuestCall, type GuestCmdlet } from '../windows-guest.ts';

export const POWERSHELL_ARGV = ['powershell.exe', '-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand'] as const;

export function psPrelude(dataB64: string): string {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(dataB64)) throw new InvalidArgument('data blob is not base64', { name: 'data', value: dataB64 });
  return [
    "$ErrorActionPreference = 'Stop'",
    "$ProgressPreference = 'SilentlyContinue'",
    `$p = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String('${dataB64}')) | ConvertFrom-Json`,
  ].join('\n');
}

/** The cmdlets CALL_BODY may run; checked here and again inside the script. */
export const ALLOWED_CMDLETS = ['New-VHD', 'Get-VHD', 'Get-Item', 'Remove-Item', 'Get-Disk', 'Set-Disk', 'Get-VM', 'Add-VMHardDiskDrive', 'Remove-VMHardDiskDrive', 'Get-VMHardDiskDrive', 'Get-CimInstance', 'Get-Command', 'Get-Volume', 'New-VM', 'Start-VM', 'Stop-VM', 'Remove-VM'] as const;
export type Cmdlet = (typeof ALLOWED_CMDLETS)[number];

/**
 * Runs $p.calls in order, each `& <cmdlet> @params` (splatting: a JSON `true` is a switch), and
 * returns the `select`ed properties of every call's output as one JSON array. Enums become their
 * names, not Windows PowerShell 5.1's integers.
 */
export const CALL_BODY = [
  `$allowed = @('${ALLOWED_CMDLETS.join("', '")}')`,
  '$out = @()',
  'foreach ($c in $p.calls) {',
  '  if ($allowed -notcontains $c.cmdlet) { throw "cmdlet not allowed: $($c.cmdlet)" }',
  '  $a = @{}',
  '  foreach ($q in $c.params.PSObject.Properties) { $a[$q.Name] = $q.Value }',
  '  $r = & $c.cmdlet @a',
  '  if ($null -ne $c.select) {',
  '    $out += @($r | ForEach-Object { $o = [ordered]@{}; foreach ($n in $c.select) { $v = $_.$n; if ($v -is [Enum]) { $v = "$v" }; $o[$n] = $v }; [pscustomobject]$o })',
  '  }',
  '}',
  'ConvertTo-Json -InputObject @($out) -Depth 5 -Compress',
  'exit 0',
].join('\n');

/**
 * Who this SSH session runs as, and whether its token may use Hyper-V (preflight.ts): the account
 * name, and WindowsPrincipal.IsInRole for BUILTIN\Administrators (S-1-5-32-544) and BUILTIN\Hyper-V
 * Administrators (S-1-5-32-578, DOMAIN_ALIAS_RID_HYPER_V_ADMINS 578). IsInRole asks the token
 * itself (learn.microsoft.com System.Security.Principal.WindowsPrincipal.IsInRole(SecurityIdentifier)),
 * so a group held for deny only — Administrators in a UAC-filtered token — answers false. Reads only.
 */
export const IDENTITY_BODY = [
  '$id = [Security.Principal.WindowsIdentity]::GetCurrent()',
  '$pr = New-Object Security.Principal.WindowsPrincipal($id)',
  "$admins = $pr.IsInRole((New-Object Security.Principal.SecurityIdentifier('S-1-5-32-544')))",
  "$hvAdmins = $pr.IsInRole((New-Object Security.Principal.SecurityIdentifier('S-1-5-32-578')))",
  'ConvertTo-Json -InputObject ([pscustomobject]@{ name = $id.Name; administrators = $admins; hypervAdministrators = $hvAdmins }) -Compress',
  'exit 0',
].join('\n');

/**
 * PowerShell Direct: runs $p.exe with the argument vector $p.argv inside VM $p.vmName as the guest
 * user whose credential arrives on stdin; returns the exit code and combined output.
 */
export const GUEST_BODY = [
  '$s = [Console]::In.ReadLine() | ConvertFrom-Json',
  '$cred = New-Object System.Management.Automation.PSCredential ($s.user, (ConvertTo-SecureString $s.password -AsPlainText -Force))',
  '$r = Invoke-Command -VMName $p.vmName -Credential $cred -ScriptBlock { param($exe, $argv) $o = & $exe @argv 2>&1 | Out-String; [pscustomobject]@{ exitCode = $LASTEXITCODE; output = $o } } -ArgumentList $p.exe, $p.argv',
  'ConvertTo-Json -InputObject ([pscustomobject]@{ exitCode = $r.exitCode; output = $r.output }) -Depth 5 -Compress',
  'exit 0',
].join('\n');

/**
 * PowerShell Direct, a program of a run (process-group.ts toolOwner) that a later process of the run
 * must be able to find if this one dies while it runs (kill -9): in the VM, $p.run.exe is started
 * with Start-Process -PassThru and the command line $p.run.args (quoted by CommandLineToArgvW's
 * rules), stdout and stderr to files in $p.run.dir; its pid and start time (Process.StartTime as UTC
 * in the round-trip "o" format, `<pid> <start>`) go to the pidfile $p.run.pid named for the owner
 * before anything waits for it. The script block then waits for it, returns its exit code and
 * output (stdout, then stderr) and removes the three files. A storsweep killed meanwhile leaves the
 * pidfile (and, if the guest keeps it running, the program): `run --resume` and `cleanup` read it
 * (provider.ts stopOwnedInGuest) and stop that process only while Win32_Process shows that pid with
 * that name and that start time. `$h = $q.Handle` keeps ExitCode readable with -NoNewWindow in
 * Windows PowerShell 5.1 (the shape vSphere guests run: TOOLS_GUEST_RUN_BODY).
 * Microsoft docs: Start-Process (powershell-5.1: -FilePath, -ArgumentList <string[]>, -NoNewWindow,
 * -PassThru, -RedirectStandardOutput/-Error), System.Diagnostics.Process.StartTime / .Id /
 * .WaitForExit / .ExitCode, New-Item -ItemType Directory -Force, Remove-Item -LiteralPath -Force,
 * Invoke-Command -VMName -Credential -ScriptBlock -ArgumentList.
 */
export const GUEST_RUN_BODY = [
  '$s = [Console]::In.ReadLine() | ConvertFrom-Json',
  '$cred = New-Object System.Management.Automation.PSCredential ($s.user, (ConvertTo-SecureString $s.password -AsPlainText -Force))',
  "$r = Invoke-Command -VMName $p.vmName -Credential $cred -ScriptBlock { param($f) $ErrorActionPreference = 'Stop'; $null = New-Item -ItemType Directory -Path $f.dir -Force; $q = Start-Process -FilePath $f.exe -ArgumentList $f.args -NoNewWindow -PassThru -RedirectStandardOutput $f.out -RedirectStandardError $f.err; $h = $q.Handle; [IO.File]::WriteAllText($f.pid, [string]$q.Id + ' ' + $q.StartTime.ToUniversalTime().ToString('o')); $q.WaitForExit(); $o = [IO.File]::ReadAllText($f.out) + [IO.File]::ReadAllText($f.err); Remove-Item -LiteralPath $f.out, $f.err, $f.pid -Force; [pscustomobject]@{ exitCode = $q.ExitCode; output = $o } } -ArgumentList $p.run",
  'ConvertTo-Json -InputObject ([pscustomobject]@{ exitCode = $r.exitCode; output = $r.output }) -Depth 5 -Compress',
  'exit 0',
].join('\n');

/**
 * The guest directory of the owned runs' files (GUEST_RUN_BODY): under ProgramData, which Windows
 * keeps on the system drive (C: on every Windows Server install storsweep knows of; a guest whose
 * system drive is another letter fails at New-Item, visibly, before anything runs).
 */
export const GUEST_RUN_DIR = 'C:\\ProgramData\\storsweep';

/** The files of an owner's program in the guest: the pidfile a later process of the run reads, the output files. */
export function ownedGuestFiles(owner: string): { dir: string; pid: string; out: string; err: string } {
  if (!/^[a-z0-9]{1,40}$/.test(owner)) throw new InvalidArgument(`owner ${JSON.stringify(owner.slice(0, 60))}: expected 1–40 of a-z, 0-9`, { name: 'owner', value: owner });
  const base = `${GUEST_RUN_DIR}\\.storsweep-run-${owner}`;
  return { dir: GUEST_RUN_DIR, pid: `${base}.pid`, out: `${base}.out`, err: `${base}.err` };
}

const DIRECT_CMDLETS = [...GUEST_CMDLETS, ...GUEST_PROCESS_CMDLETS];

/**
 * PowerShell Direct: runs the storage cmdlet calls $p.calls inside VM $p.vmName (like CALL_BODY on
 * the host, in the VM's own session, which does not inherit the host script's preferences) as the
 * guest user whose credential arrives on stdin; returns the selected properties as one JSON array.
 */
export const GUEST_CALL_BODY = [
  '$s = [Console]::In.ReadLine() | ConvertFrom-Json',
  '$cred = New-Object System.Management.Automation.PSCredential ($s.user, (ConvertTo-SecureString $s.password -AsPlainText -Force))',
  `$r = Invoke-Command -VMName $p.vmName -Credential $cred -ScriptBlock { param($calls) $ErrorActionPreference = 'Stop'; $allowed = @('${DIRECT_CMDLETS.join("', '")}'); $out = @(); foreach ($c in $calls) { if ($allowed -notcontains $c.cmdlet) { throw "cmdlet not allowed: $($c.cmdlet)" }; $a = @{}; foreach ($q in $c.params.PSObject.Properties) { $a[$q.Name] = $q.Value }; $x = & $c.cmdlet @a; if ($null -ne $c.select) { $out += @($x | ForEach-Object { $o = [ordered]@{}; foreach ($n in $c.select) { $v = $_.$n; if ($v -is [Enum]) { $v = "$v" }; if ($v -is [char]) { $v = "$v" }; $o[$n] = $v }; [pscustomobject]$o }) } }; ,$out } -ArgumentList (,$p.calls)`,
  'ConvertTo-Json -InputObject @($r) -Depth 5 -Compress',
  'exit 0',
].join('\n');

/** The guest cmdlet calls of GUEST_CALL_BODY's script block, when the script itself runs in the guest. */
const GUEST_CALLS_INLINE = `$allowed = @('${GUEST_CMDLETS.join("', '")}'); $out = @(); foreach ($c in $p.calls) { if ($allowed -notcontains $c.cmdlet) { throw "cmdlet not allowed: $($c.cmdlet)" }; $a = @{}; foreach ($q in $c.params.PSObject.Properties) { $a[$q.Name] = $q.Value }; $x = & $c.cmdlet @a; if ($null -ne $c.select) { $out += @($x | ForEach-Object { $o = [ordered]@{}; foreach ($n in $c.select) { $v = $_.$n; if ($v -is [Enum]) { $v = "$v" }; if ($v -is [char]) { $v = "$v" }; $o[$n] = $v }; [pscustomobject]$o }) } }`;

/**
 * Guest operations (VMware Tools): the storage cmdlet calls $p.calls run by a powershell.exe
 * StartProgramInGuest started in the guest itself (providers/vsphere/guest-runner.ts). A started
 * program has no stdout: the JSON goes to the file $p.out, an error's text to $p.err (exit 1); the
 * caller reads them back (InitiateFileTransferFromGuest). The lab's Windows guest
 * (src/lab/harness/windows/vsphere_guest.py) accepts exactly these shapes.
 */
export const TOOLS_GUEST_CALL_BODY = [
  'try {',
  `  ${GUEST_CALLS_INLINE}`,
  '  [IO.File]::WriteAllText($p.out, (ConvertTo-Json -InputObject @($out) -Depth 5 -Compress))',
  '} catch { [IO.File]::WriteAllText($p.err, ($_ | Out-String)); exit 1 }',
  'exit 0',
].join('\n');

/**
 * Guest operations: runs the program $p.exe with the command line $p.args (arguments quoted by
 * CommandLineToArgvW's rules) in the guest, stdout to $p.out and stderr to $p.err; its pid and start
 * time (Process.StartTime, learn.microsoft.com System.Diagnostics.Process.StartTime, as UTC in the
 * round-trip "o" format) go to $p.pid first, so that an abort stops it too (TerminateProcessInGuest
 * of PowerShell alone would leave it running: Windows does not end a process's children with it),
 * and a later process of a run killed meanwhile finds it by that file (guest-runner.ts stopOwned)
 * and knows it from another that got its pid since. Exits with the program's
 * exit code (`$h = $q.Handle` keeps ExitCode readable with -NoNewWindow in PowerShell 5.1).
 */
export const TOOLS_GUEST_RUN_BODY = [
  'try {',
  '  $q = Start-Process -FilePath $p.exe -ArgumentList $p.args -NoNewWindow -PassThru -RedirectStandardOutput $p.out -RedirectStandardError $p.err',
  '  $h = $q.Handle',
  "  [IO.File]::WriteAllText($p.pid, [string]$q.Id + ' ' + $q.StartTime.ToUniversalTime().ToString('o'))",
  '  $q.WaitForExit()',
  '  exit $q.ExitCode',
  '} catch { [IO.File]::WriteAllText($p.err, ($_ | Out-String)); exit 1 }',
].join('\n');

/** Guest operations: removes the files $p.files (the output files of earlier calls), if there. */
export const TOOLS_GUEST_REMOVE_BODY = ['foreach ($f in $p.files) { Remove-Item -LiteralPath $f -Force -ErrorAction SilentlyContinue }', 'exit 0'].join('\n');

export function buildScript(body: string, data: unknown): string {
  const b64 = Buffer.from(JSON.stringify(data), 'utf8').toString('base64');
  return `${psPrelude(b64)}\n${body}\n`;
}

/** Base64 of the script as UTF-16LE, the only encoding -EncodedCommand accepts. */
export function encodeCommand(script: string): string {
  return Buffer.from(script, 'utf16le').toString('base64');
}

export function powershellCommandLine(script: string): string {
  return [...POWERSHELL_ARGV, encodeCommand(script)].join(' ');
}

export interface PsCall {
  cmdlet: Cmdlet;
  params: Record<string, string | number | boolean>;
  /** properties to return from this call's output; omit to discard the output */
  select?: string[];
}

/** A short, secret-free name for a script in messages (the encoded command itself is not shown). */
function describe(what: string): string {
  return `powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand <${what}>`;
}

async function runScript(runner: CommandRunner, script: string, what: string, stdin?: string): Promise<unknown> {
  const command = powershellCommandLine(script);
  const shown = describe(what);
  let r;
  try {
    r = await runner.run(command, stdin === undefined ? {} : { stdin });
  } catch (err) {
    if (err instanceof RemoteCommandFailed) {
      throw new RemoteCommandFailed({ ...err.details, what, command: shown }, { cause: err });
    }
    throw err;
  }
  if (r.exitCode !== 0) {
    throw new RemoteCommandFailed({ host: runner.target, what, command: shown, exitCode: r.exitCode, stderr: r.stderr, reason: 'exit' });
  }
  const line = r.stdout.trim().split('\n').filter((l) => l.trim() !== '').pop() ?? '';
  try {
    return JSON.parse(line) as unknown;
  } catch (err) {
    throw new ParseError(`${runner.target}: ${what}: expected one line of JSON from ConvertTo-Json, got ${JSON.stringify(r.stdout.slice(0, 200))}`, { source: what, expected: 'JSON' }, { cause: err });
  }
}

/** Runs cmdlet calls in one PowerShell process; returns the selected output objects in order. */
export async function runCalls(runner: CommandRunner, calls: PsCall[]): Promise<Record<string, unknown>[]> {
  for (const c of calls) {
    if (!(ALLOWED_CMDLETS as readonly string[]).includes(c.cmdlet)) throw new InvalidArgument(`cmdlet ${c.cmdlet} is not one the Hyper-V provider runs`, { name: 'cmdlet', value: c.cmdlet });
  }
  const out = await runScript(runner, buildScript(CALL_BODY, { calls }), calls.map((c) => c.cmdlet).join(', '));
  if (!Array.isArray(out)) throw new ParseError(`${runner.target}: expected a JSON array`, { source: 'ConvertTo-Json', expected: 'array' });
  return out as Record<string, unknown>[];
}

/** The session's account and its Administrators / Hyper-V Administrators membership (IDENTITY_BODY). */
export async function runIdentity(runner: CommandRunner): Promise<{ name: string; administrators: boolean; hypervAdministrators: boolean }> {
  const out = (await runScript(runner, buildScript(IDENTITY_BODY, {}), 'WindowsIdentity.GetCurrent')) as Record<string, unknown> | null;
  if (!out || typeof out.name !== 'string' || typeof out.administrators !== 'boolean' || typeof out.hypervAdministrators !== 'boolean') {
    throw new ParseError(`${runner.target}: expected {name, administrators, hypervAdministrators}`, { source: 'WindowsIdentity', expected: '{name:string, administrators:boolean, hypervAdministrators:boolean}' });
  }
  return { name: out.name, administrators: out.administrators, hypervAdministrators: out.hypervAdministrators };
}

export interface GuestCredential {
  user: string;
  password: string;
}

/** Storage cmdlet calls inside `vmName` through PowerShell Direct, in one session; the credential goes over stdin only. */
export async function runGuestCalls(runner: CommandRunner, vmName: string, credential: GuestCredential, calls: GuestCall[]): Promise<Record<string, unknown>[]> {
  for (const c of calls) {
    if (!(DIRECT_CMDLETS as readonly string[]).includes(c.cmdlet)) throw new InvalidArgument(`cmdlet ${c.cmdlet} is not one the Hyper-V provider runs in a guest`, { name: 'cmdlet', value: c.cmdlet });
  }
  const script = buildScript(GUEST_CALL_BODY, { vmName, calls });
  const out = await runScript(runner, script, `Invoke-Command -VMName ${vmName} ${calls.map((c) => c.cmdlet).join(', ')}`, JSON.stringify({ user: credential.user, password: credential.password }) + '\n');
  if (!Array.isArray(out)) throw new ParseError(`${runner.target}: PowerShell Direct in ${vmName}: expected a JSON array`, { source: 'ConvertTo-Json', expected: 'array' });
  return out as Record<string, unknown>[];
}

/**
 * PowerShell Direct: the write cache policy of guest disk `disk` in `vmName`, after setting what
 * `set` gives (../windows-write-cache-script.ts GUEST_CACHE_BODY); the credential goes over stdin only.
 */
export async function runGuestCache(runner: CommandRunner, vmName: string, credential: GuestCredential, disk: number, set: { writeCache?: 'enabled' | 'disabled'; flushing?: 'on' | 'off' } = {}): Promise<DiskCacheState> {
  if (!Number.isSafeInteger(disk) || disk < 0) throw new InvalidArgument(`guest disk number ${disk}: expected a whole number`, { name: 'disk', value: String(disk) });
  const script = buildScript(GUEST_CACHE_BODY, { vmName, disk, writeCache: set.writeCache ?? 'read', flushing: set.flushing ?? 'read' });
  const what = `Invoke-Command -VMName ${vmName} write cache of guest disk ${disk}`;
  const out = await runScript(runner, script, what, JSON.stringify({ user: credential.user, password: credential.password }) + '\n');
  return parseDiskCacheState(JSON.stringify(out), `${runner.target}: ${what}`);
}

/** PowerShell Direct into `vmName`; the credential goes over stdin only. */
export async function runInGuest(runner: CommandRunner, vmName: string, credential: GuestCredential, exe: string, argv: string[]): Promise<{ exitCode: number; output: string }> {
  const script = buildScript(GUEST_BODY, { vmName, exe, argv });
  const out = (await runScript(runner, script, `Invoke-Command -VMName ${vmName} ${exe}`, JSON.stringify({ user: credential.user, password: credential.password }) + '\n')) as { exitCode?: unknown; output?: unknown };
  if (typeof out.exitCode !== 'number' || typeof out.output !== 'string') {
    throw new ParseError(`${runner.target}: PowerShell Direct in ${vmName}: expected {exitCode, output}`, { source: 'Invoke-Command', expected: '{exitCode:number, output:string}' });
  }
  return { exitCode: out.exitCode, output: out.output };
}

/**
 * One program of a run's owner through PowerShell Direct (GUEST_RUN_BODY): its pidfile lets a later
 * process of the run find it; the credential goes over stdin only.
 */
export async function runOwnedInGuest(runner: CommandRunner, vmName: string, credential: GuestCredential, exe: string, argv: string[], owner: string): Promise<{ exitCode: number; output: string }> {
  const run = { exe, args: argv.map(windowsArg).join(' '), ...ownedGuestFiles(owner) };
  const script = buildScript(GUEST_RUN_BODY, { vmName, run });
  const out = (await runScript(runner, script, `Invoke-Command -VMName ${vmName} Start-Process ${exe}`, JSON.stringify({ user: credential.user, password: credential.password }) + '\n')) as { exitCode?: unknown; output?: unknown };
  if (typeof out.exitCode !== 'number' || typeof out.output !== 'string') {
    throw new ParseError(`${runner.target}: PowerShell Direct in ${vmName}: expected {exitCode, output}`, { source: 'Invoke-Command', expected: '{exitCode:number, output:string}' });
  }
  return { exitCode: out.exitCode, output: out.output };
}

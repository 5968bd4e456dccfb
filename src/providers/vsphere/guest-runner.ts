// The guest command runners over VMware Tools guest operations (guest-ops.ts): what SSH is for a
// guest with a network path, StartProgramInGuest is for one without. The Linux runner is a
// CommandRunner (src/ssh/command-runner.ts), so the fio endpoint, the process groups that stop fio
// and the guest-disk checks (providers/guest-disk.ts) run through it unchanged; the Windows runner is
// a WindowsGuestRunner (providers/windows-guest.ts), like PowerShell Direct for a Hyper-V guest.
//
// A program started in a guest has no stdin/stdout: like Invoke-VMScript, each command's output goes
// to files in the guest's work directory (`.storsweep-gop-<nonce>.out/.err`), read back with
// InitiateFileTransferFromGuest once ListProcessesInGuest reports the process ended (its exitCode),
// then removed. stdin, when given, is uploaded first. A timeout or an abort (Ctrl-C) terminates the
// started process (TerminateProcessInGuest) before the call rejects with reason 'timeout' — what the
// SSH runner reports — so process-group.ts then stops whatever it had started (fio's job processes,
// which setsid() away from it).
//
// On Linux, VMware Tools runs `"programPath" arguments` through /bin/sh -c (open-vm-tools
// procMgrPosix.c ProcMgr_ExecAsync); the program here is /bin/sh with `-c '<script>'` quoted for sh,
// which reads the same whether the arguments string goes through a shell or is split as words.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { InvalidArgument, ParseError, RemoteCommandFailed } from '../../errors.ts';
import { checkTimerMs } from '../../limits.ts';
import type { CommandResult, CommandRunner, RunOptions } from '../../ssh/command-runner.ts';
import type { GroupStop } from '../../ssh/process-group.ts';
import { shJoin, shQuote } from '../../ssh/quote.ts';
import { buildScript, encodeCommand, GUEST_CMDLETS, POWERSHELL_ARGV, TOOLS_GUEST_CALL_BODY, TOOLS_GUEST_RUN_BODY, type GuestCall } from '../hyperv/powershell.ts';
import { isRecordedProcess, parsePidFile, windowsArg, type WindowsGuestRunner } from '../windows-guest.ts';

export { parsePidFile, windowsArg };
import { isFault, VsphereClientError, VsphereFault } from './fault.ts';
import type { GuestOperations, GuestProcessInfo } from './guest-ops.ts';
import { SoapTransportError } from './soap.ts';

/** The most output one command may leave (fio json+ with histograms is a few MB). */
export const MAX_GUEST_OUTPUT_BYTES = 64 * 2 ** 20;

export interface ToolsRunnerOptions {
  /** `tools://<vcenter>/<vm>`: the label messages and logs name the guest by */
  target: string;
  /** the guest's work directory (absolute): where each command's output files go */
  workdir: string;
  /** between two ListProcessesInGuest calls while a program runs (default 500 ms) */
  pollMs?: number;
  /** releases what the runner holds (the SOAP session it was opened with) */
  onClose?: () => Promise<void>;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** The ended process's exit code, or undefined while it runs. */
export function exitOf(procs: readonly GuestProcessInfo[], pid: number): { ended: boolean; exitCode: number | null } | undefined {
  const p = procs.find((x) => Number(x.pid) === pid);
  if (!p) return undefined;
  if (p.endTime === undefined && p.exitCode === undefined) return { ended: false, exitCode: null };
  return { ended: true, exitCode: typeof p.exitCode === 'number' ? p.exitCode : null };
}

/** A failure of the guest operations themselves (not of the program) as the runner's contract words it. */
function opsFailure(target: string, what: string | undefined, command: string, err: unknown): RemoteCommandFailed {
  if (err instanceof RemoteCommandFailed) return err;
  const lost = err instanceof SoapTransportError;
  const detail = err instanceof VsphereFault || err instanceof VsphereClientError || err instanceof SoapTransportError ? err.message : String((err as Error)?.message ?? err);
  return new RemoteCommandFailed({ host: target, what, command, exitCode: null, stderr: '', reason: lost ? 'connection' : 'spawn', detail: `${lost ? 'lost the vSphere connection' : 'failed'}: ${detail}` }, { cause: err });
}

interface Started {
  pid: number;
  files: string[];
}

/**
 * One program in the guest, to its end: started, polled until ListProcessesInGuest reports it
 * ended, terminated on timeout or abort. Returns its exit code; rejects like a CommandRunner.
 */
async function runToEnd(ops: GuestOperations, o: { target: string; pollMs: number; what?: string; command: string; start: () => Promise<Started>; timeoutMs?: number; signal?: AbortSignal; onStop?: (pid: number) => Promise<void> }): Promise<{ exitCode: number; started: Started }> {
  if (o.timeoutMs) checkTimerMs(o.timeoutMs, `${o.target}: command timeout`);
  o.signal?.throwIfAborted();
  let started: Started;
  try {
    started = await o.start();
  } catch (err) {
    throw opsFailure(o.target, o.what, o.command, err);
  }
  const deadline = o.timeoutMs ? Date.now() + o.timeoutMs : Infinity;
  const timeout = new AbortController();
  const timer = o.timeoutMs ? setTimeout(() => timeout.abort(), o.timeoutMs) : undefined;
  const stopSignal = o.signal ? AbortSignal.any([o.signal, timeout.signal]) : timeout.signal;
  try {
    for (;;) {
      if (stopSignal.aborted) {
        // the started process goes first (TerminateProcessInGuest); what it started is the caller's (process groups)
        await ops.terminate(started.pid).catch((err: unknown) => (isFault(err, 'GuestProcessNotFound') ? undefined : undefined));
        await o.onStop?.(started.pid).catch(() => undefined);
        const aborted = o.signal?.aborted === true;
        throw new RemoteCommandFailed({ host: o.target, what: o.what, command: o.command, exitCode: null, stderr: '', reason: 'timeout', detail: aborted ? 'was aborted (the guest process was terminated)' : `timed out after ${o.timeoutMs} ms (the guest process was terminated)` }, { cause: aborted ? o.signal?.reason : undefined });
      }
      let procs: GuestProcessInfo[];
      try {
        procs = await ops.list([started.pid]);
      } catch (err) {
        // not a lost connection (the program is then stopped by whoever reconnects): nothing will
        // watch the program any more, so it goes now
        if (!(err instanceof SoapTransportError)) await ops.terminate(started.pid).catch(() => undefined);
        throw opsFailure(o.target, o.what, o.command, err);
      }
      const state = exitOf(procs, started.pid);
      if (!state) throw new RemoteCommandFailed({ host: o.target, what: o.what, command: o.command, exitCode: null, stderr: '', reason: 'connection', detail: `guest process ${started.pid} is no longer listed (ListProcessesInGuest keeps an ended process about 5 minutes)` });
      if (state.ended) {
        if (state.exitCode === null) throw new RemoteCommandFailed({ host: o.target, what: o.what, command: o.command, exitCode: null, stderr: '', reason: 'connection', detail: `guest process ${started.pid} ended without an exit code` });
        return { exitCode: state.exitCode, started };
      }
      await sleep(Math.min(o.pollMs, Math.max(0, deadline - Date.now())), stopSignal);
    }
  } finally {
    if (timer) clearTimeout(timer);
  }
}

async function readText(ops: GuestOperations, file: string): Promise<string> {
  try {
    const b = await ops.download(file, { maxBytes: MAX_GUEST_OUTPUT_BYTES });
    // a UTF-8 BOM (PowerShell 5.1 writes one) is not part of the text
    return b.toString('utf8').replace(/^\uFEFF/, '');
  } catch (err) {
    if (isFault(err, 'FileNotFound')) return '';
    throw err;
  }
}

/** Deletes a command's files in the guest (DeleteFileInGuest; best effort: a leftover is a small file in the work directory). */
async function removeFiles(ops: GuestOperations, files: readonly string[]): Promise<void> {
  for (const f of files) await ops.remove(f).catch(() => undefined);
}

/** Makes the guest's work directory on first use (MakeDirectoryInGuest); a failed attempt is made again by the next call. */
function workdirOnce(ops: GuestOperations, dir: string): () => Promise<void> {
  let ready: Promise<void> | undefined;
  return () => {
    ready ??= ops.mkdir(dir);
    ready.catch(() => (ready = undefined));
    return ready;
  };
}

/**
 * A CommandRunner whose commands run in a Linux guest through guest operations (`sh -c` there).
 * The first command makes the work directory (MakeDirectoryInGuest).
 */
export function toolsLinuxRunner(ops: GuestOperations, o: ToolsRunnerOptions): CommandRunner {
  const pollMs = o.pollMs ?? 500;
  const workdir = workdirOnce(ops, o.workdir);
  return {
    target: o.target,
    async run(command: string, options: RunOptions = {}): Promise<CommandResult> {
      const began = Date.now();
      await workdir().catch((err: unknown) => {
        throw opsFailure(o.target, 'MakeDirectoryInGuest (guest work directory)', command, err);
      });
      const base = path.posix.join(o.workdir, `.storsweep-gop-${randomBytes(8).toString('hex')}`);
      const out = `${base}.out`;
      const err = `${base}.err`;
      const input = options.stdin !== undefined ? `${base}.in` : '/dev/null';
      const files = [out, err, ...(options.stdin !== undefined ? [input] : [])];
      // the command in a subshell: its exit code is the script's; its output goes to the files
      const script = `( ${command} ) <${shQuote(input)} >${shQuote(out)} 2>${shQuote(err)}`;
      let exitCode: number;
      try {
        ({ exitCode } = await runToEnd(ops, {
          target: o.target,
          pollMs,
          command,
          ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          start: async () => {
            if (options.stdin !== undefined) await ops.upload(input, Buffer.from(options.stdin), { overwrite: false, windows: false });
            return { pid: await ops.start({ programPath: '/bin/sh', arguments: shJoin(['-c', script]), workingDirectory: o.workdir }), files };
          },
        }));
      } catch (e) {
        // output of a stopped or lost command is not read; its files go (best effort)
        if (!(e instanceof RemoteCommandFailed && e.details.reason === 'connection')) await removeFiles(ops, files);
        throw e;
      }
      try {
        const [stdout, stderr] = [await readText(ops, out), await readText(ops, err)];
        return { command, stdout, stderr, exitCode, durationMs: Date.now() - began };
      } catch (e) {
        throw opsFailure(o.target, 'InitiateFileTransferFromGuest', command, e);
      } finally {
        await removeFiles(ops, files);
      }
    },
    async close() {
      await o.onClose?.();
    },
  };
}

/** The pidfile of the program an owner (process-group.ts toolOwner: a run and its target) runs in the guest. */
export function ownedPidFile(workdir: string, owner: string): string {
  if (!/^[a-z0-9]{1,40}$/.test(owner)) throw new InvalidArgument(`owner ${JSON.stringify(owner.slice(0, 60))}: expected 1–40 of a-z, 0-9`, { name: 'owner', value: owner });
  return `${workdir}\\.storsweep-run-${owner}.pid`;
}

/**
 * Whether a listed process is the program a pidfile names (windows-guest.ts isRecordedProcess): still
 * running, that pid, that program's name, started within START_SLACK_MS of the recorded time.
 */
export function isThatProcess(p: GuestProcessInfo, rec: { pid: number; start: number }, name: string): boolean {
  return p.endTime === undefined && isRecordedProcess({ pid: Number(p.pid), name: p.name, startMs: Date.parse(p.startTime) }, rec, name);
}

/** Windows PowerShell 5.1's path in a Windows guest (the Storage module's Get-Disk, Set-Disk; Start-Process). */
export const GUEST_POWERSHELL = 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe';

interface WindowsScriptContext {
  ops: GuestOperations;
  o: ToolsRunnerOptions;
  powershell: string;
  pollMs: number;
  workdir: () => Promise<void>;
}

interface ScriptOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  owner?: string;
  onStop?: (pidFile: string) => Promise<void>;
}

/**
 * One PowerShell script (`body` with `data` and its output files' paths) run in the guest to its
 * end; its exit code and the text it wrote to its out and err files, which are then deleted.
 */
async function runScript(w: WindowsScriptContext, body: string, data: Record<string, unknown>, what: string, x: ScriptOptions = {}): Promise<{ exitCode: number; out: string; err: string; shown: string }> {
  const { ops, o, powershell } = w;
  const shown = `${powershell} ${POWERSHELL_ARGV.slice(1).join(' ')} <${what}>`;
  await w.workdir().catch((err: unknown) => {
    throw opsFailure(o.target, 'MakeDirectoryInGuest (guest work directory)', shown, err);
  });
  const base = `${o.workdir}\\.storsweep-gop-${randomBytes(8).toString('hex')}`;
  // an owned program's pidfile has the owner's name: a later process of the run finds it (stopOwned)
  const files = { out: `${base}.out`, err: `${base}.err`, pid: x.owner ? ownedPidFile(o.workdir, x.owner) : `${base}.pid` };
  const encoded = encodeCommand(buildScript(body, { ...data, ...files }));
  let exitCode: number;
  try {
    ({ exitCode } = await runToEnd(ops, {
      target: o.target,
      pollMs: w.pollMs,
      what,
      command: shown,
      ...(x.timeoutMs ? { timeoutMs: x.timeoutMs } : {}),
      ...(x.signal ? { signal: x.signal } : {}),
      start: async () => ({ pid: await ops.start({ programPath: powershell, arguments: [...POWERSHELL_ARGV.slice(1), encoded].join(' '), workingDirectory: o.workdir }), files: Object.values(files) }),
      ...(x.onStop ? { onStop: () => x.onStop!(files.pid) } : {}),
    }));
  } catch (e) {
    if (!(e instanceof RemoteCommandFailed && e.details.reason === 'connection')) await removeFiles(ops, Object.values(files));
    throw e;
  }
  try {
    return { exitCode, out: await readText(ops, files.out), err: await readText(ops, files.err), shown };
  } catch (e) {
    throw opsFailure(o.target, 'InitiateFileTransferFromGuest', shown, e);
  } finally {
    await removeFiles(ops, Object.values(files));
  }
}

/** The cmdlet calls in one PowerShell in the guest: their results, from ConvertTo-Json. */
async function runCalls(w: WindowsScriptContext, calls: GuestCall[]): Promise<Record<string, unknown>[]> {
  const target = w.o.target;
  for (const c of calls) if (!(GUEST_CMDLETS as readonly string[]).includes(c.cmdlet)) throw new InvalidArgument(`cmdlet ${c.cmdlet} is not one storsweep runs in a guest`, { name: 'cmdlet', value: c.cmdlet });
  const what = calls.map((c) => c.cmdlet).join(', ');
  const r = await runScript(w, TOOLS_GUEST_CALL_BODY, { calls }, what);
  if (r.exitCode !== 0) throw new RemoteCommandFailed({ host: target, what, command: r.shown, exitCode: r.exitCode, stderr: r.err, reason: 'exit' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(r.out.trim());
  } catch (err) {
    throw new ParseError(`${target}: ${what}: expected JSON from ConvertTo-Json, got ${JSON.stringify(r.out.slice(0, 200))}`, { source: what, expected: 'JSON' }, { cause: err });
  }
  if (!Array.isArray(parsed)) throw new ParseError(`${target}: ${what}: expected a JSON array`, { source: 'ConvertTo-Json', expected: 'array' });
  return parsed as Record<string, unknown>[];
}

/** Stops the program `exe` an owner started (its pidfile names it), while that pid is still that program. */
async function stopOwnedProgram(w: WindowsScriptContext, owner: string, exe: string): Promise<GroupStop> {
  const { ops, o } = w;
  const name = path.win32.basename(exe);
  const pidFile = ownedPidFile(o.workdir, owner);
  const shown = `stop ${name} of ${owner} (${pidFile})`;
  let text: string;
  try {
    text = await readText(ops, pidFile);
  } catch (err) {
    throw opsFailure(o.target, 'InitiateFileTransferFromGuest', shown, err);
  }
  // no pidfile: no program of this owner was started here, or its result was read (then the file went)
  if (text === '') return { pgid: null, outcome: 'not-started' };
  const rec = parsePidFile(text);
  if (!rec) return { pgid: null, outcome: 'unknown', detail: `the pidfile ${pidFile} holds ${JSON.stringify(text.slice(0, 80))}` };
  const running = async () => {
    const p = (await ops.list([rec.pid])).find((q) => Number(q.pid) === rec.pid);
    return p !== undefined && isThatProcess(p, rec, name);
  };
  try {
    if (!(await running())) {
      await removeFiles(ops, [pidFile]);
      return { pgid: rec.pid, outcome: 'not-running' };
    }
    // Windows has no TERM: TerminateProcessInGuest ends the process (TerminateProcess); the
    // PowerShell that waited for it then exits by itself
    await ops.terminate(rec.pid).catch((err: unknown) => {
      if (!isFault(err, 'GuestProcessNotFound')) throw err;
    });
    for (let i = 0; i < 20 && (await running()); i++) await sleep(w.pollMs);
    if (await running()) return { pgid: rec.pid, outcome: 'still-running', pids: [rec.pid], detail: `${name} ${rec.pid} still runs after TerminateProcessInGuest` };
  } catch (err) {
    throw opsFailure(o.target, 'ListProcessesInGuest / TerminateProcessInGuest', shown, err);
  }
  await removeFiles(ops, [pidFile]);
  return { pgid: rec.pid, outcome: 'stopped', signal: 'KILL', pids: [rec.pid] };
}

/**
 * A Windows guest through guest operations: each call is powershell.exe (-EncodedCommand, the data
 * as base64 JSON: hyperv/powershell.ts TOOLS_GUEST_*_BODY) started in the guest, writing its results
 * to files in the work directory that are read back and deleted. Storage cmdlets run in that
 * PowerShell; a program (diskspd) is its child (Start-Process), whose pid PowerShell records so an
 * abort terminates both.
 */
export function toolsWindowsRunner(ops: GuestOperations, o: ToolsRunnerOptions & { powershellPath?: string }): WindowsGuestRunner {
  const w: WindowsScriptContext = { ops, o, powershell: o.powershellPath ?? GUEST_POWERSHELL, pollMs: o.pollMs ?? 500, workdir: workdirOnce(ops, o.workdir) };
  return {
    target: o.target,
    calls: (calls: GuestCall[]) => runCalls(w, calls),
    async exec(exe, argv, x = {}) {
      const name = path.win32.basename(exe);
      const r = await runScript(w, TOOLS_GUEST_RUN_BODY, { exe, args: argv.map(windowsArg).join(' ') }, name, {
        ...x,
        // the program PowerShell started outlives PowerShell: stopped by the pid PowerShell
        // recorded, and only while that pid is still a running process of that program
        onStop: async (pidFile) => {
          const rec = parsePidFile(await readText(ops, pidFile));
          if (!rec) return;
          const p = (await ops.list([rec.pid])).find((q) => Number(q.pid) === rec.pid);
          if (p && isThatProcess(p, rec, name)) await ops.terminate(rec.pid);
        },
      });
      return { exitCode: r.exitCode, output: r.out + (r.err ? `\n${r.err}` : '') };
    },
    stopOwned: (owner, exe) => stopOwnedProgram(w, owner, exe),
    async close() {
      await o.onClose?.();
    },
  };
}

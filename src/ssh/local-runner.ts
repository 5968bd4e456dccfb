// CommandRunner for this machine: `sh -c <command>`, same semantics as the SSH runner.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { RemoteCommandFailed } from '../errors.ts';
import { checkTimerMs } from '../limits.ts';
import type { CommandResult, CommandRunner, RunOptions } from './command-runner.ts';
import { shJoin } from './quote.ts';

interface Start {
  file: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  /** what messages name: the command line */
  command: string;
  /** on an abort or timeout, kill the process group before settling (run); false: the caller stops it (runInSession) */
  killOnStop: boolean;
}

function start(s: Start, options: RunOptions): Promise<CommandResult> {
  const { command } = s;
  // A delay Node cannot hold would fire at once and kill the command: refuse it before starting.
  if (options.timeoutMs) checkTimerMs(options.timeoutMs, 'local: command timeout');
  const started = Date.now();
  return new Promise((resolve, reject) => {
    // Its own process group (detached = setsid): an abort or timeout kills everything the
    // command started in it, not only the shell; and a Ctrl-C on our terminal reaches us
    // only, so the run decides what to stop first.
    const child = spawn(s.file, s.args, { env: s.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const stop = (why: 'aborted' | 'timeout') => {
      if (s.killOnStop) {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      // Like the SSH runner, settle now: a process that left the group (setsid) may still hold
      // our pipes open; whoever started it (process-group.ts) stops it.
      child.stdout.destroy();
      child.stderr.destroy();
      settle(() =>
        reject(new RemoteCommandFailed({ host: 'local', command, exitCode: null, stderr, reason: 'timeout', detail: why === 'aborted' ? 'was aborted' : `timed out after ${options.timeoutMs} ms` }, { cause: why === 'aborted' ? options.signal?.reason : undefined })),
      );
    };
    const onAbort = () => stop('aborted');
    if (options.timeoutMs) timer = setTimeout(() => stop('timeout'), options.timeoutMs);
    if (options.signal?.aborted) setImmediate(onAbort);
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', (err) => {
      settle(() => reject(new RemoteCommandFailed({ host: 'local', what: s.file, command, exitCode: null, stderr, reason: 'spawn', detail: `could not be started: ${err.message}` }, { cause: err })));
    });
    child.on('close', (code, signal) => {
      settle(() => {
        if (code === null) {
          reject(new RemoteCommandFailed({ host: 'local', command, exitCode: null, stderr, reason: 'connection', detail: `was killed by ${signal}` }));
        } else {
          resolve({ command, stdout, stderr, exitCode: code, durationMs: Date.now() - started });
        }
      });
    });
    child.stdin.on('error', () => undefined);
    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    else child.stdin.end();
  });
}

/** `env`: what the commands it starts are given (the CLI read the environment once: decision 0088). */
export function createLocalRunner(env: NodeJS.ProcessEnv): CommandRunner {
  return {
    target: 'local',
    run(command: string, options: RunOptions = {}): Promise<CommandResult> {
      return start({ file: '/bin/sh', args: ['-c', command], env, command, killOnStop: true }, options);
    },
    // No shell in between: spawn's `detached` is setsid(), and the environment is spawn's own
    // option (command-runner.ts). An abort or timeout signals nothing here: the caller stops the
    // session (process-group.ts: TERM first, so the tool may end cleanly, then KILL).
    async runInSession(argv: readonly string[], extra: Readonly<Record<string, string>>, options: RunOptions = {}): Promise<CommandResult> {
      const [file, ...args] = argv;
      if (file === undefined) throw new RemoteCommandFailed({ host: 'local', command: '', exitCode: null, stderr: '', reason: 'spawn', detail: 'no command given' });
      return start({ file, args, env: { ...env, ...extra }, command: shJoin(argv), killOnStop: false }, options);
    },
    // no `sh -c rm` per call: fs.rm unlinks (a link itself, never its target); force: absent is fine
    async removeFile(file: string) {
      await fs.rm(file, { force: true });
    },
    // a work directory made, a test file checked, at each connection (fio-endpoint.ts): fs calls, no process each
    async makeDirectory(dir: string) {
      await fs.mkdir(dir, { recursive: true });
    },
    async isDevice(file: string) {
      try {
        const st = await fs.stat(file);
        return st.isBlockDevice() || st.isCharacterDevice();
      } catch {
        return false; // absent or unreadable: `test -b`/`-c` say no too
      }
    },
    async close() {},
  };
}

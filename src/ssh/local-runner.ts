// CommandRunner for this machine: `sh -c <command>`, same semantics as the SSH runner.
import { spawn } from 'node:child_process';
import { RemoteCommandFailed } from '../errors.ts';
import { checkTimerMs } from '../limits.ts';
import type { CommandResult, CommandRunner, RunOptions } from './command-runner.ts';

export function createLocalRunner(env: NodeJS.ProcessEnv = process.env): CommandRunner {
  return {
    target: 'local',
    run(command: string, options: RunOptions = {}): Promise<CommandResult> {
      // A delay Node cannot hold would fire at once and kill the command: refuse it before starting.
      if (options.timeoutMs) checkTimerMs(options.timeoutMs, 'local: command timeout');
      const started = Date.now();
      return new Promise((resolve, reject) => {
        const child = spawn('/bin/sh', ['-c', command], { env, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        let timedOut = false;
        let timer: NodeJS.Timeout | undefined;
        const onAbort = () => {
          timedOut = true;
          child.kill('SIGKILL');
        };
        if (options.timeoutMs) timer = setTimeout(onAbort, options.timeoutMs);
        options.signal?.addEventListener('abort', onAbort, { once: true });
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
        child.on('error', (err) => {
          if (timer) clearTimeout(timer);
          reject(new RemoteCommandFailed(`local: cannot start /bin/sh: ${err.message}`, { host: 'local', command, exitCode: null, stderr, reason: 'spawn' }, { cause: err }));
        });
        child.on('close', (code, signal) => {
          if (timer) clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          if (timedOut) {
            reject(new RemoteCommandFailed(`local: command ${options.signal?.aborted ? 'aborted' : `timed out after ${options.timeoutMs} ms`}: ${command}`, { host: 'local', command, exitCode: null, stderr, reason: 'timeout' }));
          } else if (code === null) {
            reject(new RemoteCommandFailed(`local: command killed by ${signal}: ${command}`, { host: 'local', command, exitCode: null, stderr, reason: 'connection' }));
          } else {
            resolve({ command, stdout, stderr, exitCode: code, durationMs: Date.now() - started });
          }
        });
        child.stdin.on('error', () => undefined);
        if (options.stdin !== undefined) child.stdin.end(options.stdin);
        else child.stdin.end();
      });
    },
    async close() {},
  };
}

// Spawns the CLI exactly as a user does (`node bin/storsweep.mjs …`, tsx loader, no build) and
// collects its output. Integration tests assert on exit codes and printed text, never on internals.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(REPO_ROOT, 'bin', 'storsweep.mjs');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** working directory (default: the repository root) */
  cwd?: string;
  /** merged over process.env; a value of `undefined` removes the variable */
  env?: Record<string, string | undefined>;
  /** kill the CLI (SIGKILL) after this long; a safety net, not an assertion (default 120 s) */
  timeoutMs?: number;
  /** called once the child exists, e.g. to watch its run directory while it works */
  onSpawn?: (pid: number) => void;
  /** options for node itself, before the script (e.g. `--import` of a probe) */
  nodeArgs?: readonly string[];
}

/** A CLI process under way: its pid at once, what it printed so far, and its end. */
export interface RunningCli {
  pid: number;
  done: Promise<CliResult>;
  stdout(): string;
  stderr(): string;
  /** SIGKILL */
  kill(): void;
}

/** `storsweep <args…>` started; `done` never rejects on a non-zero exit. */
export function startCli(args: readonly string[], opts: Omit<CliOptions, 'onSpawn'> = {}): RunningCli {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: '1', NO_COLOR: '1' };
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), CLI, ...args], { cwd: opts.cwd ?? REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { pid: child.pid ?? 0, done, stdout: () => stdout, stderr: () => stderr, kill: () => void child.kill('SIGKILL') };
}

/** `storsweep <args…>` → {code, stdout, stderr}. Never rejects on a non-zero exit. */
export function runCli(args: readonly string[], opts: CliOptions = {}): Promise<CliResult> {
  const c = startCli(args, opts);
  if (c.pid) opts.onSpawn?.(c.pid);
  return c.done;
}

/** Lines of a stack trace ("    at fn (file:1:2)"): the CLI must never print one. */
export function stackTraceLines(text: string): string[] {
  return text.split('\n').filter((l) => /^\s+at\s/.test(l));
}

/** The last line of a `--json` command's stdout, parsed. */
export function lastJsonLine<T = Record<string, unknown>>(stdout: string): T {
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
}

/** `storsweep submit <args…> --json`, which must succeed: its run id (and what it said on stderr). */
export async function submitRun(args: readonly string[]): Promise<{ runId: string; stderr: string }> {
  const r = await runCli(['submit', ...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return { runId: lastJsonLine<{ runId: string }>(r.stdout).runId, stderr: r.stderr };
}

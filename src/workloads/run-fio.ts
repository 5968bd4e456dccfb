// Runs a profile's tests with fio through any CommandRunner (local or SSH guest): an optional
// unmeasured warm-up pass, N measured passes, the profile's interval between tests, then the
// profile's aggregation rule. Nothing runs inside the measured window but fio itself.
import { ParseError, RemoteCommandFailed } from '../errors.ts';
import { checkTimerMs } from '../limits.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { shJoin } from '../ssh/quote.ts';
import { runPasses, type OnRaw, type TestOutcome } from './passes.ts';
import { fioArgs, parseFioJson } from './fio.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';
import { checkFioPath } from './tool-settings.ts';

export interface FioRunOptions {
  filename: string;
  fioPath?: string;
  ioengine?: string;
  signal?: AbortSignal;
  /** called with each measured pass's raw stdout before it is parsed (to persist it first) */
  onRaw?: OnRaw;
  /** extra seconds allowed beyond runtime + ramp before a pass is declared hung */
  timeoutSlackSec?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      },
      { once: true },
    );
  });
}

export function fioCommandLine(test: WorkloadTest, profile: WorkloadProfile, opts: Pick<FioRunOptions, 'filename' | 'fioPath' | 'ioengine'>, runtimeSec?: number): string {
  return shJoin([checkFioPath(opts.fioPath ?? 'fio'), ...fioArgs(test, profile, { filename: opts.filename, ioengine: opts.ioengine, runtimeSec })]);
}

async function onePass(runner: CommandRunner, command: string, profile: WorkloadProfile, opts: FioRunOptions): Promise<string> {
  // Refused, not clamped: a pass that could not be timed would run unbounded or be killed at once.
  const timeoutMs = checkTimerMs((profile.runtimeSec + profile.rampSec + (opts.timeoutSlackSec ?? 120)) * 1000, `${runner.target}: fio pass timeout`);
  const r = await runner.run(command, { timeoutMs, signal: opts.signal });
  if (r.exitCode !== 0) {
    throw new RemoteCommandFailed(`${runner.target}: fio failed with exit code ${r.exitCode}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`, {
      host: runner.target,
      command,
      exitCode: r.exitCode,
      stderr: r.stderr,
      reason: 'exit',
    });
  }
  return r.stdout;
}

/** Runs one test of a profile (warm-up, passes, aggregation) and returns its outcome. */
export async function runFioTest(runner: CommandRunner, test: WorkloadTest, profile: WorkloadProfile, opts: FioRunOptions): Promise<TestOutcome> {
  const command = fioCommandLine(test, profile, opts);
  return runPasses(
    test,
    profile,
    async () => {
      const raw = await onePass(runner, command, profile, opts);
      const parsed = parseFioJson(raw, `${runner.target} fio ${test.id}`);
      const job = parsed.jobs[0];
      if (!job) throw new ParseError(`${runner.target}: fio printed no job for ${test.id}`, { source: runner.target });
      if (job.error) throw new RemoteCommandFailed(`${runner.target}: fio reported error ${job.error} for ${test.id}`, { host: runner.target, command, exitCode: 0, stderr: '', reason: 'exit' });
      return { raw, toolVersion: parsed.version, iops: job.iops, bytesPerSecond: job.bytesPerSecond, latencyUs: job.latencyUs, cpuPercent: job.cpuPercent };
    },
    opts.onRaw,
  );
}

// Runs a profile's tests with fio through any CommandRunner (local or SSH guest): an optional
// unmeasured warm-up pass, N measured passes, the profile's interval between tests, then the
// profile's aggregation rule. Nothing runs inside the measured window but fio itself.
import os from 'node:os';
import { ParseError, RemoteCommandFailed } from '../errors.ts';
import { checkTimerMs } from '../limits.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { runInGroup, type GroupStop } from '../ssh/process-group.ts';
import { shJoin } from '../ssh/quote.ts';
import { runPasses, type OnRaw, type ScoredSpan, type TestOutcome } from './passes.ts';
import { fioArgs, mergeClones, parseFioJson } from './fio.ts';
import { LATENCY_SPAN } from './fio-latency.ts';
import { FIO_FILL_METHOD, fioFillArgs, type PrefillOutcome } from './prefill.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';
import { checkFioPath } from './tool-settings.ts';
import { halfFacts, isMixed } from '../results/mix-halves.ts';
import { histogramOf } from '../results/latency-histogram.ts';

export interface FioRunOptions {
  filename: string;
  fioPath?: string;
  ioengine?: string;
  /** as root through `sudo -n` (a non-root guest login measuring a raw device; the inventory's guest.sudo): ssh/process-group.ts */
  sudo?: boolean;
  signal?: AbortSignal;
  /** called with each measured pass's raw stdout before it is parsed (to persist it first) */
  onRaw?: OnRaw;
  /** marks the scored passes' span (passes.ts ScoredSpan) */
  scored?: ScoredSpan;
  /** extra seconds allowed beyond runtime + ramp before a pass is declared hung */
  timeoutSlackSec?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** a directory on the host for the pidfile of each running fio (default /tmp) */
  controlDir?: string;
  /** whose fio this is (toolOwner(runId, target)): every fio process carries it, so a later process of the run can stop what this one left */
  owner?: string;
  /** told when an aborted or timed-out fio was stopped (every process of it, jobs included, killed and checked gone) */
  onStopped?: (stop: GroupStop) => void;
}

/**
 * Waits `ms`, or until `signal` aborts. Its abort listener is removed when the wait ends either way:
 * the run's one signal sees a sleep between every two tests of every permutation of every target,
 * and a listener left per sleep piled up (MaxListenersExceededWarning after 10).
 */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    if (signal?.aborted) return reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function fioArgv(test: WorkloadTest, profile: WorkloadProfile, opts: Pick<FioRunOptions, 'filename' | 'fioPath' | 'ioengine'>, runtimeSec?: number): string[] {
  return [checkFioPath(opts.fioPath ?? 'fio'), ...fioArgs(test, profile, { filename: opts.filename, ioengine: opts.ioengine, runtimeSec })];
}

async function onePass(runner: CommandRunner, argv: string[], profile: WorkloadProfile, opts: FioRunOptions): Promise<string> {
  const command = shJoin(argv);
  // Refused, not clamped: a pass that could not be timed would run unbounded or be killed at once.
  const timeoutMs = checkTimerMs((profile.runtimeSec + profile.rampSec + (opts.timeoutSlackSec ?? 120)) * 1000, `${runner.target}: fio pass timeout`);
  // Marked as ours (process-group.ts): an abort (Ctrl-C) or a timeout stops fio's parent and every
  // job process there and checks they are gone before this rejects, so teardown never removes a disk
  // under a running fio. Jobs stay processes (fio's default, not --thread): what is measured is unchanged.
  const r = await runInGroup(runner, argv, { controlDir: opts.controlDir ?? '/tmp', owner: opts.owner, timeoutMs, signal: opts.signal, onStopped: opts.onStopped, ...(opts.sudo ? { asRoot: true } : {}) });
  if (r.exitCode !== 0) {
    throw new RemoteCommandFailed({ host: runner.target, what: 'fio', command, exitCode: r.exitCode, stderr: r.stderr, reason: 'exit' });
  }
  return r.stdout;
}

/** fio's job `error` is an errno: its name, when this system knows it (` (ENOSPC)`). */
function errnoName(n: number): string {
  const name = Object.entries(os.constants.errno).find(([, v]) => v === n)?.[0];
  return name ? ` (${name})` : '';
}

/** Runs one test of a profile (warm-up, passes, aggregation) and returns its outcome. */
export async function runFioTest(runner: CommandRunner, test: WorkloadTest, profile: WorkloadProfile, opts: FioRunOptions): Promise<TestOutcome> {
  return runPasses(
    test,
    profile,
    async (_measured, p) => {
      // the unscored pass may have its own length (WorkloadProfile.warmupPassSec)
      const argv = fioArgv(test, p, opts);
      const command = shJoin(argv);
      const raw = await onePass(runner, argv, p, opts);
      const parsed = parseFioJson(raw, `${runner.target} fio ${test.id}`);
      // one job per run; a custom group_reporting=0 prints its numjobs clones one by one: one test still
      const job = mergeClones(parsed.jobs)[0];
      if (!job) throw new ParseError(`${runner.target}: fio printed no job for ${test.id}`, { source: runner.target });
      if (job.error) throw new RemoteCommandFailed({ host: runner.target, what: 'fio', command, exitCode: 0, stderr: '', reason: 'output', detail: `reported error ${job.error}${errnoName(job.error)} for ${test.id}` });
      // json+ bins of lat (issue→completion): what the VMs of a vm.count pass are merged from
      const latencyHistogram = job.latency.bins ? histogramOf(job.latency.bins) : null;
      return {
        raw,
        toolVersion: parsed.version,
        iops: job.iops,
        bytesPerSecond: job.bytesPerSecond,
        latencyUs: job.latencyUs,
        cpuPercent: job.cpuPercent,
        ...(latencyHistogram ? { latencyHistogram } : {}),
        metadata: { latencySpan: LATENCY_SPAN, ...(job.notes.length > 0 ? { latencyNote: job.notes.join('; ') } : {}), ...(isMixed(test) ? halfFacts(job.read, job.write) : {}) },
      };
    },
    opts.onRaw,
    opts.scored,
  );
}

/**
 * The pre-fill (prefill.ts): fio writes the profile's region of the test file or device once, with
 * random data, before the first pass. Returns what was written and how long it took. Stopped like a
 * pass on abort; allowed as long as writing the region at 5 MB/s would take, plus the usual slack.
 */
export async function runFioPrefill(runner: CommandRunner, profile: WorkloadProfile, opts: FioRunOptions): Promise<PrefillOutcome> {
  const argv = [checkFioPath(opts.fioPath ?? 'fio'), ...fioFillArgs(profile, { filename: opts.filename, ioengine: opts.ioengine })];
  const command = shJoin(argv);
  const timeoutMs = checkTimerMs((Math.ceil(profile.fileSizeBytes / 5e6) + (opts.timeoutSlackSec ?? 120)) * 1000, `${runner.target}: fio pre-fill timeout`);
  const started = Date.now();
  const r = await runInGroup(runner, argv, { controlDir: opts.controlDir ?? '/tmp', owner: opts.owner, timeoutMs, signal: opts.signal, onStopped: opts.onStopped, ...(opts.sudo ? { asRoot: true } : {}) });
  const seconds = (Date.now() - started) / 1000;
  if (r.exitCode !== 0) {
    throw new RemoteCommandFailed({ host: runner.target, what: 'fio pre-fill', command, exitCode: r.exitCode, stderr: r.stderr, reason: 'exit' });
  }
  const job = mergeClones(parseFioJson(r.stdout, `${runner.target} fio pre-fill`).jobs)[0];
  if (!job) throw new ParseError(`${runner.target}: fio printed no job for the pre-fill`, { source: runner.target });
  if (job.error) throw new RemoteCommandFailed({ host: runner.target, what: 'fio pre-fill', command, exitCode: 0, stderr: '', reason: 'output', detail: `reported error ${job.error}${errnoName(job.error)}` });
  // a device smaller than the test size would end the job early: the region is not filled then
  if (job.write.ioBytes < profile.fileSizeBytes) {
    throw new ParseError(`${runner.target}: the fio pre-fill wrote ${job.write.ioBytes} of ${profile.fileSizeBytes} bytes (is ${opts.filename} smaller than the test size?)`, {
      source: runner.target,
      expected: `${profile.fileSizeBytes} bytes written`,
    });
  }
  return { filled: true, bytes: job.write.ioBytes, seconds, bytesPerSecond: job.write.bytesPerSecond, passes: 1, method: FIO_FILL_METHOD };
}

// Defence in depth behind the config's ranges: a timer helper refuses a delay Node cannot hold
// (Node sets it to 1 ms: a 25-day limit would fire at once) instead of starting the work.
import { describe, expect, it, vi } from 'vitest';
import { InvalidArgument } from '../../../src/errors.ts';
import { checkTimerMs, MAX_TIMER_MS } from '../../../src/limits.ts';
import { withTimeout } from '../../../src/run/retry.ts';
import type { CommandRunner } from '../../../src/ssh/command-runner.ts';
import { createLocalRunner } from '../../../src/ssh/local-runner.ts';
import { getProfile } from '../../../src/workloads/profiles.ts';
import { runFioTest } from '../../../src/workloads/run-fio.ts';

describe('checkTimerMs', () => {
  it('passes 1 ms to 2^31-1 ms, refuses the rest', () => {
    expect(checkTimerMs(1, 'x')).toBe(1);
    expect(checkTimerMs(MAX_TIMER_MS, 'x')).toBe(2147483647);
    for (const bad of [0, -5, MAX_TIMER_MS + 1, 3_000_000_000, NaN, Infinity]) expect(() => checkTimerMs(bad, 'x'), String(bad)).toThrow(InvalidArgument);
  });
});

describe('withTimeout', () => {
  it('refuses a 3000000 s deadline without starting the step (today it timed out after 1 ms)', async () => {
    let started = false;
    const run = withTimeout(
      async () => {
        started = true;
        return 'done';
      },
      3_000_000 * 1000,
      'datastore (CreateVmfsDatastore)',
    );
    await expect(run).rejects.toThrow(/datastore \(CreateVmfsDatastore\): a timeout of 3000000000 ms is outside 1 to 2147483647 ms/);
    expect(started).toBe(false);
  });

  it('still times out within range: at its deadline on the clock, not before', async () => {
    vi.useFakeTimers();
    try {
      let settled = false;
      const run = withTimeout(() => new Promise(() => undefined), 10, 'slow');
      run.catch(() => undefined).finally(() => (settled = true));
      await vi.advanceTimersByTimeAsync(9);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await expect(run).rejects.toThrow('slow timed out after 10 ms');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('fio pass timeout (runtime + ramp + slack)', () => {
  it('a slack of 3000000 s is refused before fio is started, not turned into a 1 ms kill', async () => {
    const commands: string[] = [];
    const runner: CommandRunner = { target: 'probe', run: async (c) => (commands.push(c), { command: c, stdout: '', stderr: '', exitCode: 0, durationMs: 0 }), close: async () => undefined };
    const profile = getProfile('cdm8-default')!;
    await expect(runFioTest(runner, profile.tests[0]!, profile, { filename: '/tmp/x', timeoutSlackSec: 3_000_000 })).rejects.toThrow(/probe: fio pass timeout: a timeout of \d+ ms is outside/);
    expect(commands).toEqual([]);
  });

  it('the local runner refuses such a timeout before it spawns anything', () => {
    expect(() => createLocalRunner(process.env).run('touch /tmp/should-not-exist', { timeoutMs: 3_000_000_000 })).toThrow(InvalidArgument);
  });
});

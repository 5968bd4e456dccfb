// Commands that must not outlive an abort (src/ssh/process-group.ts), run through the local runner
// with real processes: the group is stopped with TERM, or KILL when TERM is ignored, and checked gone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RemoteCommandFailed } from '../../../src/errors.ts';
import { createLocalRunner } from '../../../src/ssh/local-runner.ts';
import { groupCommand, runInGroup, stopGroup, type GroupStop } from '../../../src/ssh/process-group.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-pgroup-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Live (not zombie) processes whose command line holds `marker`. */
function live(marker: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z' && fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Live processes in the group named by the one pidfile in `controlDir` (0 before it exists). */
function groupSize(controlDir: string): number {
  const file = fs.readdirSync(controlDir).find((f) => f.endsWith('.pgid'));
  const pgid = file ? fs.readFileSync(path.join(controlDir, file), 'utf8').trim() : '';
  if (!pgid) return 0;
  let n = 0;
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z' && pgrp === pgid) n++;
    } catch {
      /* exited meanwhile */
    }
  }
  return n;
}

async function abortedRun(script: string, marker: string, graceSec = 0.5): Promise<{ stop: GroupStop | null; err: unknown }> {
  const ac = new AbortController();
  let stop: GroupStop | null = null;
  const running = runInGroup(createLocalRunner(), ['sh', '-c', script, marker], { controlDir: dir, signal: ac.signal, graceSec, onStopped: (s) => (stop = s) });
  // started: the wrapper wrote its pidfile and the command's processes run in that group
  await expect.poll(() => groupSize(dir), { timeout: 5000 }).toBeGreaterThanOrEqual(3);
  ac.abort(new Error('interrupted'));
  const err = await running.catch((e: unknown) => e);
  return { stop, err };
}

describe('runInGroup', () => {
  it('returns what the command printed and its exit code, and leaves no pidfile', async () => {
    const r = await runInGroup(createLocalRunner(), ['sh', '-c', 'echo "$1"; exit 3', 'x', 'hello world'], { controlDir: dir });
    expect(r).toMatchObject({ stdout: 'hello world\n', exitCode: 3 });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('on abort stops the whole group (a background child too) with TERM before it rejects', async () => {
    const marker = `ss-marker-${process.pid}-term`;
    const { stop, err } = await abortedRun('sleep 60 & sleep 61; wait', marker);
    expect(err).toBeInstanceOf(RemoteCommandFailed);
    expect(stop).toMatchObject({ outcome: 'stopped', signal: 'TERM' });
    expect(stop!.pgid).toBeGreaterThan(1);
    // already gone when the promise settled: no wait in the test
    expect(live(marker)).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('escalates to KILL when the command ignores TERM, and checks it is gone', async () => {
    const marker = `ss-marker-${process.pid}-kill`;
    const { stop } = await abortedRun("trap '' TERM; sleep 60 & sleep 61; wait", marker);
    expect(stop).toMatchObject({ outcome: 'stopped', signal: 'KILL' });
    expect(live(marker)).toEqual([]);
  });

  it('a timeout stops the group the same way before it rejects', async () => {
    const marker = `ss-marker-${process.pid}-timeout`;
    let stop: GroupStop | null = null;
    const err = await runInGroup(createLocalRunner(), ['sh', '-c', 'sleep 60 & sleep 61; wait', marker], { controlDir: dir, timeoutMs: 1500, graceSec: 0.5, onStopped: (s) => (stop = s) }).catch((e: unknown) => e);
    expect((err as RemoteCommandFailed).details.reason).toBe('timeout');
    expect(stop).toMatchObject({ outcome: 'stopped', signal: 'TERM' });
    expect(live(marker)).toEqual([]);
  });

  it('a stop that comes before the command started keeps it from starting', async () => {
    const runner = createLocalRunner();
    const pid = path.join(dir, 'x.pgid');
    const cancel = path.join(dir, 'x.cancel');
    expect(await stopGroup(runner, pid, cancel, 0.5)).toEqual({ pgid: null, outcome: 'not-started' });
    const marker = `ss-marker-${process.pid}-late`;
    // the wrapper as runInGroup starts it, with the same files: it sees the cancel marker and exits
    const r = await runner.run(groupCommand(['sh', '-c', 'echo started', marker], pid, cancel));
    expect(r).toMatchObject({ exitCode: 130, stdout: '' });
    expect(fs.existsSync(pid)).toBe(false);
  });
});

// The progress view from a scripted event sequence on a fake clock: plain timestamped lines when
// not on a TTY, a redrawn status block on a TTY; both count permutations and failures and give an
// ETA scaled by how long finished permutations took compared to their estimates.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProgressView, type ProgressEvent } from '../../../src/run/progress.ts';

function fakeStream() {
  const writes: string[] = [];
  return { writes, stream: { columns: 200, isTTY: true, write: (s: string) => (writes.push(s), true) } as unknown as NodeJS.WriteStream };
}

const axes = (bs: number) => ({ 'datastore.blockSizeMb': bs, 'disk.format': 'thin' });

/** Three permutations estimated at 10 s each; the first takes 20 s (twice its estimate), the second fails. */
function script(view: { onEvent(e: ProgressEvent): void }) {
  view.onEvent({ type: 'run-start', runId: 'r1', total: 3, estimateSec: 30 });
  view.onEvent({ type: 'permutation-start', index: 0, total: 3, permutationId: 'pa', axes: axes(1), estimateSec: 10 });
  view.onEvent({ type: 'step', permutationId: 'pa', step: 'datastore', operation: 'CreateVmfsDatastore' });
  vi.advanceTimersByTime(20_000);
  view.onEvent({ type: 'result', permutationId: 'pa', repetition: 1, testId: 'seq-1m', iops: 100, bytesPerSecond: 104_857_600 });
  view.onEvent({ type: 'permutation-end', permutationId: 'pa', status: 'done' });
  view.onEvent({ type: 'permutation-start', index: 1, total: 3, permutationId: 'pb', axes: axes(2), estimateSec: 10 });
  view.onEvent({ type: 'step', permutationId: 'pb', step: 'disk', operation: 'ReconfigVM_Task' });
  vi.advanceTimersByTime(5_000);
  view.onEvent({ type: 'failure', permutationId: 'pb', axes: axes(2), reason: 'TaskFailed FileAlreadyExists' });
  view.onEvent({ type: 'permutation-end', permutationId: 'pb', status: 'failed', reason: 'x' });
  view.onEvent({ type: 'permutation-start', index: 2, total: 3, permutationId: 'pc', axes: axes(4), estimateSec: 10 });
  view.onEvent({ type: 'run-end', summary: { done: 2, failed: 1, skipped: 0, pending: 0, interrupted: false, leftovers: 0 } });
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date('2026-01-02T03:04:05Z'));
});
afterEach(() => {
  vi.useRealTimers();
});

describe('progress view', () => {
  it('plain: timestamped lines with i/N, elapsed, ETA from measured times, results, failures, summary', () => {
    const { writes, stream } = fakeStream();
    const view = createProgressView(stream, { live: false });
    script(view);
    view.close();
    const lines = writes.join('').trimEnd().split('\n');
    expect(lines).toEqual([
      '03:04:05 run r1: 3 permutations, estimated 30s',
      '03:04:05 [1/3] pa blockSizeMb=1 format=thin (elapsed 0s, ETA 30s, failures 0)',
      '03:04:25   seq-1m rep 1: 104.9 MB/s, 100 IOPS',
      // 20 s for a 10 s estimate: the remaining 20 s of estimates become 40 s
      '03:04:25 [2/3] pb blockSizeMb=2 format=thin (elapsed 20s, ETA 40s, failures 0)',
      '03:04:30 FAILED pb blockSizeMb=2 format=thin: TaskFailed FileAlreadyExists',
      // 25 s for 20 s of estimates: the last 10 s become 12.5 s
      '03:04:30 [3/3] pc blockSizeMb=4 format=thin (elapsed 25s, ETA 12s, failures 1)',
      '03:04:30 finished: 2 done, 1 failed, 0 already done, 0 pending',
    ]);
    expect(writes.join('')).not.toContain('\x1b[');
  });

  it('TTY: a redrawn block with permutation i/N, ETA, failures, current step and last result', () => {
    const { writes, stream } = fakeStream();
    const view = createProgressView(stream, { live: true });
    script(view);
    view.close();
    const out = writes.join('');
    expect(out).toContain('\x1b[4A'); // moves up over the previous block to redraw it
    const blocks = writes.filter((w) => w.includes('storsweep  permutation'));
    // the block drawn at the start of the second permutation, and the last one
    const second = blocks.find((b) => b.includes('permutation 2/3'))!;
    expect(second).toContain('elapsed 20s  ETA 40s  failures 0');
    expect(second).toContain('last: seq-1m rep 1: 104.9 MB/s, 100 IOPS');
    const last = blocks.at(-1)!;
    expect(last).toContain('permutation 3/3  elapsed 25s  ETA 12s  failures 1');
    expect(out).toContain('FAILED pb blockSizeMb=2 format=thin: TaskFailed FileAlreadyExists\n');
    expect(out).toContain('finished: 2 done, 1 failed, 0 already done, 0 pending\n');
    // no timestamps on a TTY
    expect(out).not.toMatch(/^\d\d:\d\d:\d\d /m);
  });

  describe('input reaches the terminal only made visible (ESC, OSC 8, C1 CSI, NUL, bidi override)', () => {
    const evil = 'x\x1b[2J\x1b]8;;http://evil/\x07y\u009b31m\0\u202ez';
    const shown = 'x\\x1b[2J\\x1b]8;;http://evil/\\x07y\\x9b31m\\x00\\u202ez';
    function hostileScript(view: { onEvent(e: ProgressEvent): void }) {
      view.onEvent({ type: 'run-start', runId: `r-${evil}`, total: 1, estimateSec: 10 });
      view.onEvent({ type: 'permutation-start', index: 0, total: 1, permutationId: `p-${evil}`, axes: { [`workload.${evil}`]: evil }, estimateSec: 10 });
      view.onEvent({ type: 'step', permutationId: `p-${evil}`, step: `s-${evil}`, operation: 'op' });
      view.onEvent({ type: 'result', permutationId: `p-${evil}`, repetition: 1, testId: `t-${evil}`, iops: 1, bytesPerSecond: 1e6 });
      view.onEvent({ type: 'message', level: 'warn', text: `m-${evil}` });
      view.onEvent({ type: 'message', level: 'info', text: `i-${evil}` });
      view.onEvent({ type: 'failure', permutationId: `p-${evil}`, axes: { a: evil }, reason: `host said ${evil}\nsecond line` });
    }
    // eslint-disable-next-line no-control-regex
    const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

    it('plain mode: no raw control character at all, and each value shows \\x1b', () => {
      const { writes, stream } = fakeStream();
      const view = createProgressView(stream, { live: false });
      hostileScript(view);
      const out = writes.join('');
      expect(out).not.toMatch(RAW);
      for (const part of [`run r-${shown}`, `p-${shown} ${shown.split('.').pop()}=${shown}`, `t-${shown} rep 1`, `WARN: m-${shown}`, `i-${shown}`, `FAILED p-${shown} a=${shown}: host said ${shown}\n`]) {
        expect(out).toContain(part);
      }
    });

    it('live mode: the only escape sequences are the view\'s own cursor moves', () => {
      const { writes, stream } = fakeStream();
      const view = createProgressView(stream, { live: true });
      hostileScript(view);
      const out = writes.join('');
      // eslint-disable-next-line no-control-regex
      expect(out.replace(/\x1b\[(\d+A|2K|J)/g, '')).not.toMatch(RAW);
      expect(out).toContain(`step: s-${shown}`);
      expect(out).toContain(`last: t-${shown} rep 1`);
      expect(out).toContain(`FAILED p-${shown} a=${shown}: host said ${shown}\n`);
    });
  });
});

describe('listed targets run in parallel: every line about a permutation starts with its target', () => {
  function parallel(view: { onEvent(e: ProgressEvent): void }) {
    view.onEvent({ type: 'run-start', runId: 'r2', total: 4, estimateSec: 20, workSec: 40 });
    view.onEvent({ type: 'permutation-start', index: 0, total: 4, permutationId: 'pa', axes: { target: 'east', 'disk.format': 'thin' }, estimateSec: 10 });
    view.onEvent({ type: 'permutation-start', index: 2, total: 4, permutationId: 'pc', axes: { target: 'west', 'disk.format': 'thin' }, estimateSec: 10 });
    view.onEvent({ type: 'step', permutationId: 'pa', step: 'disk', operation: 'ReconfigVM_Task' });
    view.onEvent({ type: 'step', permutationId: 'pc', step: 'rep 1/1 seq-1m', operation: 'fio' });
    vi.advanceTimersByTime(10_000);
    view.onEvent({ type: 'result', permutationId: 'pc', repetition: 1, testId: 'seq-1m', iops: 100, bytesPerSecond: 104_857_600 });
    view.onEvent({ type: 'message', level: 'warn', text: 'retrying disk (attempt 2): busy', permutationId: 'pa' });
    view.onEvent({ type: 'failure', permutationId: 'pa', axes: { target: 'east', 'disk.format': 'thin' }, reason: 'TaskFailed' });
    view.onEvent({ type: 'permutation-end', permutationId: 'pa', status: 'failed', reason: 'TaskFailed' });
    view.onEvent({ type: 'permutation-end', permutationId: 'pc', status: 'done' });
  }

  it('plain: the target leads the permutation, result, message and failure lines', () => {
    const { writes, stream } = fakeStream();
    parallel(createProgressView(stream, { live: false }));
    expect(writes.join('').trimEnd().split('\n')).toEqual([
      '03:04:05 run r2: 4 permutations, estimated 20s',
      // 40 s of estimates, two targets at once: 20 s
      '03:04:05 east: [1/4] pa format=thin (elapsed 0s, ETA 20s, failures 0)',
      '03:04:05 west: [3/4] pc format=thin (elapsed 0s, ETA 20s, failures 0)',
      '03:04:15 west: seq-1m rep 1: 104.9 MB/s, 100 IOPS',
      '03:04:15 east: WARN: retrying disk (attempt 2): busy',
      '03:04:15 east: FAILED pa format=thin: TaskFailed',
    ]);
  });

  it('TTY: one line and step per running permutation, each with its target', () => {
    const { writes, stream } = fakeStream();
    parallel(createProgressView(stream, { live: true }));
    const both = writes.filter((w) => w.includes('storsweep  permutation')).find((b) => b.includes('west: pc') && b.includes('east: pa') && b.includes('seq-1m'))!;
    expect(both).toContain('  east: pa format=thin\n\x1b[2K  step: disk\n');
    expect(both).toContain('  west: pc format=thin\n\x1b[2K  step: rep 1/1 seq-1m\n');
  });

  it('a resumed run: the first line and the ETA count only what is left', () => {
    const { writes, stream } = fakeStream();
    const view = createProgressView(stream, { live: false });
    view.onEvent({ type: 'run-start', runId: 'r3', total: 4, estimateSec: 10, done: 3 });
    view.onEvent({ type: 'permutation-start', index: 3, total: 4, permutationId: 'pd', axes: { 'disk.format': 'thin' }, estimateSec: 10 });
    expect(writes.join('').trimEnd().split('\n')).toEqual(['03:04:05 run r3: 1 of 4 permutations left (3 already done), estimated 10s', '03:04:05 [4/4] pd format=thin (elapsed 0s, ETA 10s, failures 0)']);
  });
});

describe('the run-end line: objects left behind', () => {
  const endLine = (leftovers: number | null) => {
    const { writes, stream } = fakeStream();
    const view = createProgressView(stream, { live: false });
    view.onEvent({ type: 'run-end', summary: { done: 1, failed: 0, skipped: 0, pending: 0, interrupted: false, leftovers } });
    return writes.join('').trimEnd().replace(/^\S+ /, '');
  };
  it('none: not mentioned; one: singular; several: plural; unknown: said so (never "-1 objects")', () => {
    expect(endLine(0)).toBe('finished: 1 done, 0 failed, 0 already done, 0 pending');
    expect(endLine(1)).toBe('finished: 1 done, 0 failed, 0 already done, 0 pending, 1 object left behind (storsweep status lists it, storsweep cleanup removes it)');
    expect(endLine(3)).toBe('finished: 1 done, 0 failed, 0 already done, 0 pending, 3 objects left behind (storsweep status lists them, storsweep cleanup removes them)');
    expect(endLine(-1)).toBe('finished: 1 done, 0 failed, 0 already done, 0 pending, objects left behind unknown (the ledger could not be read; see storsweep status)');
    // not counted (a worker's one permutation of a run): nothing said, never "could not be read"
    expect(endLine(null)).toBe('finished: 1 done, 0 failed, 0 already done, 0 pending');
  });
});

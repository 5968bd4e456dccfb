// The pause between tests (settings.intervalSec) waits on the run's one AbortSignal. Every wait must
// take its abort listener off again, whichever way it ends: with two targets in parallel and a
// pause between every two tests, a listener left per pause passed Node's limit of 10
// (MaxListenersExceededWarning) and grew with the sweep.
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defaultSleep } from '../../../src/workloads/run-fio.ts';

describe('defaultSleep', () => {
  // the clock is the test's: a wait ends when the test moves time on, or when it is aborted
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('leaves no abort listener behind after it waited', async () => {
    const ac = new AbortController();
    for (let i = 0; i < 30; i++) {
      const w = defaultSleep(1, ac.signal);
      await vi.advanceTimersByTimeAsync(1);
      await w;
    }
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('many waits at once hold one listener each, and none once they are over', async () => {
    const ac = new AbortController();
    const waits = Array.from({ length: 12 }, () => defaultSleep(20, ac.signal));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(12);
    await vi.advanceTimersByTimeAsync(20);
    await Promise.all(waits);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('an abort ends the wait at once with its reason, and leaves no listener', async () => {
    const ac = new AbortController();
    const w = defaultSleep(60_000, ac.signal);
    ac.abort(new Error('interrupted by SIGINT'));
    // the clock has not moved: the abort ended it, and its timer is cleared, not left to fire
    await expect(w).rejects.toThrow('interrupted by SIGINT');
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('a signal already aborted: refused at once, nothing added', async () => {
    const ac = new AbortController();
    ac.abort(new Error('stopped'));
    await expect(defaultSleep(60_000, ac.signal)).rejects.toThrow('stopped');
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});

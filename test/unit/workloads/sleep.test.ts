// The pause between tests (settings.intervalSec) waits on the run's one AbortSignal. Every wait must
// take its abort listener off again, whichever way it ends: with two targets in parallel and a
// pause between every two tests, a listener left per pause passed Node's limit of 10
// (MaxListenersExceededWarning) and grew with the sweep.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { defaultSleep } from '../../../src/workloads/run-fio.ts';

describe('defaultSleep', () => {
  it('leaves no abort listener behind after it waited', async () => {
    const ac = new AbortController();
    for (let i = 0; i < 30; i++) await defaultSleep(1, ac.signal);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('many waits at once hold one listener each, and none once they are over', async () => {
    const ac = new AbortController();
    const waits = Array.from({ length: 12 }, () => defaultSleep(20, ac.signal));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(12);
    await Promise.all(waits);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('an abort ends the wait at once with its reason, and leaves no listener', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const w = defaultSleep(60_000, ac.signal);
    ac.abort(new Error('interrupted by SIGINT'));
    await expect(w).rejects.toThrow('interrupted by SIGINT');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('a signal already aborted: refused at once, nothing added', async () => {
    const ac = new AbortController();
    ac.abort(new Error('stopped'));
    await expect(defaultSleep(60_000, ac.signal)).rejects.toThrow('stopped');
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});

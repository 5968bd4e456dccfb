// Waiting on what a test is about — a file, a log line, a process, a row — instead of a fixed
// sleep. The timeout is a hang guard, never a performance claim: on expiry the test fails naming
// what it waited for (and the last value seen), however long the machine took.
//
//   await waitFor(() => fs.existsSync(pidfile), { what: 'the pidfile' });
//   const pid = await waitFor(() => readPid(), { what: 'fio started' });   // resolves to the value
//   await waitFor(async () => (await calls()).includes('ReconfigVM_Task'), { what: 'the reconfigure' });

export interface WaitOptions {
  /** what is awaited, for the failure message */
  what: string;
  /** hang guard (default 60 s) */
  timeoutMs?: number;
  /** pause between checks (default 20 ms) */
  intervalMs?: number;
  signal?: AbortSignal;
}

/** Resolves with the first truthy value `check` returns; rejects after `timeoutMs`. */
export async function waitFor<T>(check: () => T | Promise<T>, o: WaitOptions): Promise<NonNullable<T>> {
  const deadline = performance.now() + (o.timeoutMs ?? 60_000);
  let last: unknown;
  for (;;) {
    o.signal?.throwIfAborted();
    last = await check();
    if (last) return last as NonNullable<T>;
    if (performance.now() > deadline) throw new Error(`timed out after ${o.timeoutMs ?? 60_000} ms waiting for ${o.what} (last: ${JSON.stringify(last)})`);
    await pause(o.intervalMs ?? 20);
  }
}

/**
 * Holds the test for `ms` — only where the time itself is what is tested (a lease that must stay
 * held across a stretch; nothing may happen during it), never to let something else finish.
 */
export function hold(ms: number): Promise<void> {
  return pause(ms);
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Calls `sample` again and again (every `intervalMs`, default 100 ms) until `stop()`, which resolves
 * after the last call: what a state went through while something else ran. Only for states that
 * last far longer than the interval (a volume while a test's passes run), never to time anything.
 */
export function sampleUntilStopped(sample: () => unknown, o: { intervalMs?: number } = {}): { stop(): Promise<void> } {
  let done = false;
  const loop = (async () => {
    while (!done) {
      await sample();
      if (!done) await pause(o.intervalMs ?? 100);
    }
  })();
  return {
    stop: async () => {
      done = true;
      await loop;
    },
  };
}

// `storsweep status --watch`: a run's progress, live, from any machine that can read its store (a
// run directory, or `--run ID` in a PostgreSQL store). One line each time the counts change (and
// at least once a minute), the full status when the run has ended; Ctrl-C stops watching (exit
// 130), never the run. Everything goes through src/cli/output.ts (terminal-safe): no cursor
// sequences, so it reads the same in a terminal, a log or a pipe.
import { UsageError } from '../../errors.ts';
import type { RunStore } from '../../results/port.ts';
import { EXIT } from '../exit.ts';
import { jsonText, terminal } from '../output.ts';
import type { OpenedRun } from '../../app/store.ts';
import { visible } from '../../text/visible.ts';

export const DEFAULT_WATCH_SEC = 2;
const HEARTBEAT_MS = 60_000;

type Counts = { total: number; done: number; failed: number; running: number; pending: number };

export interface WatchOptions {
  /** seconds between looks, as given (`--watch 5`); default 2 */
  intervalSec?: string | undefined;
  json: boolean;
  statusText: (opened: Pick<OpenedRun, 'store' | 'sqlite'>) => Promise<string>;
  statusCounts: (store: RunStore) => Promise<Counts>;
  /** stops watching (tests); SIGINT does too */
  signal?: AbortSignal;
}

export function watchInterval(given: string | undefined): number {
  if (given === undefined) return DEFAULT_WATCH_SEC;
  const n = Number(given);
  if (!(n >= 0.2 && n <= 3600)) throw new UsageError(`--watch ${JSON.stringify(given)}: expected seconds between refreshes, 0.2 to 3600`);
  return n;
}

export async function watchStatus(opened: Pick<OpenedRun, 'store' | 'sqlite'>, o: WatchOptions): Promise<number> {
  const intervalMs = watchInterval(o.intervalSec) * 1000;
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.on('SIGINT', onSigint);
  o.signal?.addEventListener('abort', onSigint, { once: true });
  const { store } = opened;
  let last = '';
  let lastAt = 0;
  try {
    for (;;) {
      const c = await o.statusCounts(store);
      const running = c.running ? (await store.permutations()).filter((p) => p.status === 'running').map((p) => p.permutationId) : [];
      const key = JSON.stringify([c, running]);
      const now = Date.now();
      const ended = c.pending === 0;
      if (key !== last || now - lastAt >= HEARTBEAT_MS || ended) {
        last = key;
        lastAt = now;
        const at = new Date(now).toISOString();
        if (o.json) terminal.stdout(jsonText({ at, runId: store.runId, ...c, runningNow: running, ended }) + '\n');
        else terminal.stdout(`${at.slice(11, 19)} ${visible(store.runId)}: done ${c.done}, failed ${c.failed}, running ${c.running}, pending ${c.pending - c.running} of ${c.total}${running.length ? ` (now: ${running.map((id) => visible(id)).join(', ')})` : ''}\n`);
      }
      if (ended) {
        if (!o.json) terminal.stdout(`${await o.statusText(opened)}\n`);
        return EXIT.ok;
      }
      const stopped = await new Promise<boolean>((resolve) => {
        if (ac.signal.aborted) return resolve(true);
        const t = setTimeout(() => resolve(false), intervalMs);
        ac.signal.addEventListener('abort', () => (clearTimeout(t), resolve(true)), { once: true });
      });
      if (stopped) {
        if (!o.json) terminal.stderr('stopped watching (the run itself goes on)\n');
        return EXIT.interrupted;
      }
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
}

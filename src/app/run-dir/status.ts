// A run's state, as `status` shows it: the permutations, who holds the run now, its queue, and the
// objects it may have left behind.
import type { RunStore } from '../../results/port.ts';
import { runDirHolder } from '../../results/run-lock.ts';
import { axesLabel } from '../../run/progress.ts';
import { visible as v } from '../../text/visible.ts';
import { queueState } from '../queue/queue-meta.ts';
import type { OpenedRun } from '../store.ts';

/** Whether the run is in use now: the run directory's lock (SQLite); a store's run says nothing here. */
export function lockOf(opened: Pick<OpenedRun, 'sqlite'>): { held: false } | { held: true; holder: { pid: number; host: string; command: string; since: string } | null } {
  return opened.sqlite ? runDirHolder(opened.sqlite.runDir, opened.sqlite.lockAnchor()) : { held: false };
}

/** The run's state in numbers: `pending` counts what is not finished (pending and running). */
export async function statusCounts(store: RunStore): Promise<{ total: number; done: number; failed: number; running: number; pending: number }> {
  const c = await store.counts();
  return { total: c.pending + c.running + c.done + c.failed, done: c.done, failed: c.failed, running: c.running, pending: c.pending + c.running };
}

export async function statusText(opened: Pick<OpenedRun, 'store' | 'sqlite'> & Partial<Pick<OpenedRun, 'backend'>>): Promise<string> {
  const { store } = opened;
  const perms = await store.permutations();
  const count = (s: string) => perms.filter((p) => p.status === s).length;
  const meta = await store.meta();
  const lock = lockOf(opened);
  // every value from the run (its store, its run.lock) is shown on its one line: a run directory may
  // come from anyone, and a newline in a name would forge a line of its own
  const lines = [`run ${v(meta.runId)} (${v(meta.playbook)} → ${v(meta.target)}), started ${v(meta.startedAt)}${opened.sqlite ? '' : `, in ${v(store.where.replace(/^run \S+ in /, ''))}`}`, `done ${count('done')}, failed ${count('failed')}, pending ${count('pending') + count('running')} of ${perms.length}`];
  if (lock.held) lines.push(lock.holder ? `in use now by pid ${v(lock.holder.pid)} on host ${v(lock.holder.host)} (storsweep ${v(lock.holder.command)}, since ${v(lock.holder.since)})` : 'in use now by another process');
  for (const p of perms) {
    if (p.status === 'done') continue;
    const why = p.status === 'failed' || (p.status === 'pending' && p.reason) ? `: ${v(p.reason)}` : p.status === 'running' ? (!opened.sqlite ? ' (running now, or interrupted)' : lock.held ? ' (running now)' : ' (interrupted mid-permutation; resume redoes it)') : '';
    lines.push(`  ${v(p.status).padEnd(7)} ${v(p.permutationId)} ${axesLabel(p.axes)}${why}`);
  }
  // a submitted run: unfinished permutations whose job is on no queue would never run (a worker queues them again)
  const queued = opened.backend ? await queueState(store, opened.backend).catch(() => null) : null;
  if (queued?.missing) lines.push(`warning: ${queued.missing} of ${queued.unfinished} unfinished permutation(s) have no job on the run's queues (archived by pg-boss or removed): the next worker that looks at the run (storsweep worker) queues them again`);
  const live = await store.leftovers();
  if (live.length) {
    const objects = `${live.length} object${live.length === 1 ? '' : 's'} this run created`;
    const cleanup = opened.sqlite ? `storsweep cleanup ${v(store.runDir)}` : `storsweep cleanup --run ${v(meta.runId)} --store …`;
    lines.push(lock.held ? `${objects} ${live.length === 1 ? 'exists or is' : 'exist or are'} being created or removed now:` : `${objects} may still exist (${cleanup}):`);
    for (const o of live) lines.push(`  ${v(o.state).padEnd(13)} ${v(o.kind)} ${v(o.name)}${o.objectId ? ` (${v(o.objectId)})` : ''}${o.error ? `: ${v(o.error)}` : ''}`);
  }
  return lines.join('\n');
}

/** `status --json`: the counts, the permutations, the leftovers and who holds the run now. */
export async function statusJson(opened: OpenedRun): Promise<Record<string, unknown>> {
  const { store } = opened;
  const lock = lockOf(opened);
  const queued = opened.backend ? await queueState(store, opened.backend).catch(() => null) : null;
  return { runId: store.runId, ...(await statusCounts(store)), ...(queued ? { unqueued: queued.missing } : {}), permutations: await store.permutations(), leftovers: await store.leftovers(), inUseBy: lock.held ? (lock.holder ?? {}) : null };
}

// A submitted run's queue as the store records it: which groups, from which machine, which targets
// only that machine works; its state for `status` and its deletion by `cleanup`.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { LoadedInventory } from '../../config/index.ts';
import type { ResolvedStore } from '../../config/store.ts';
import { UsageError } from '../../errors.ts';
import { moduleOf } from '../../providers/index.ts';
import type { PgRunStoreBackend } from '../../results/pg-store.ts';
import type { RunStore } from '../../results/port.ts';
import { jobId, queuedJobIds, WorkQueue, type QueueGroup, type Sql } from '../../run/work-queue.ts';
import { endpointReach, isLoopback, resourceContext } from '../compose.ts';
import { selectStore } from '../store.ts';

/** The run meta key holding the queue groups of a submitted run (absent: not a queued run). */
export const QUEUE_META = 'queue';

/** What a submitted run records about its queue (meta key QUEUE_META). */
export interface QueueMeta {
  groups: QueueGroup[];
  /** false while `submit` is still putting the jobs on the queues (absent: a run from before it was recorded) */
  enqueued?: boolean;
  /** the machine that submitted the run (thisMachine) */
  submittedFrom?: Machine;
  /** targets that are the machine running them (machineBoundTargets): worked only on submittedFrom */
  machineBound?: string[];
  /** each vCenter endpoint's provisioning limit as submitted (compose.ts endpointLimits): every worker must use the same */
  endpointLimits?: Record<string, number>;
}

/** A machine: its host name (for messages) and id (/etc/machine-id; the host name where there is none). */
export interface Machine {
  host: string;
  id: string;
}

export function thisMachine(): Machine {
  let id = '';
  for (const f of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      id = readFileSync(f, 'utf8').trim();
    } catch {
      /* not there */
    }
    if (id) break;
  }
  return { host: os.hostname(), id: id || `host ${os.hostname()}` };
}

/**
 * The targets of `names` that are whatever machine runs them: a `local` target, or one reaching an
 * SSH host, a provider's endpoint (a vCenter: EndpointReach.host) or an NFS server at a loopback
 * address (the lab's targets: 127.0.0.1). A worker on another machine would measure its own disks
 * (or its own lab) under the submitter's target name.
 */
export function machineBoundTargets(names: readonly string[], inv: LoadedInventory): string[] {
  const base = resourceContext(inv);
  return names.filter((n) => {
    const t = inv.inventory.targets[n];
    if (!t) return false;
    if (t.provider === 'local') return true;
    let bound = false;
    moduleOf(t).sharedResources(t, {
      machine: (h) => {
        const m = base.machine(h);
        if (m === 'this machine') bound = true;
        return m;
      },
      endpoint: (section, name) => {
        const host = endpointReach(inv, section, name)?.host;
        if (host !== undefined && isLoopback(host)) bound = true;
        return base.endpoint(section, name);
      },
    });
    const nfsHost = (t as { nfs?: { remoteHost?: string } }).nfs?.remoteHost;
    return bound || (nfsHost !== undefined && isLoopback(nfsHost));
  });
}

/** The store's pool as pg-boss's database (status, cleanup). */
const sqlOf = (backend: PgRunStoreBackend): Sql => (text, params) => backend.pool.query(text, params);

/**
 * A submitted run's queue as `status` shows it: its unfinished permutations and how many of them
 * have no job on any queue (a worker queues those again); null for a run that was not submitted.
 */
export async function queueState(store: RunStore, backend: PgRunStoreBackend): Promise<{ unfinished: number; missing: number } | null> {
  const q = await store.getMeta<QueueMeta>(QUEUE_META);
  if (!q || q.enqueued === false) return null;
  const unfinished = (await store.permutations()).filter((p) => p.status === 'pending' || p.status === 'running');
  if (!unfinished.length) return { unfinished: 0, missing: 0 };
  const have = await queuedJobIds(sqlOf(backend), q.groups.map((g) => g.queue), unfinished.map((p) => jobId(store.runId, p.permutationId)));
  return { unfinished: unfinished.length, missing: unfinished.filter((p) => !have.has(jobId(store.runId, p.permutationId))).length };
}

/**
 * `cleanup` of a submitted run: once every permutation is final, its queues (pg-boss partition
 * tables) are deleted, if a worker has not already; `dryRun` only names them. Returns their names.
 */
export async function deleteFinishedQueues(store: RunStore, backend: PgRunStoreBackend, dryRun: boolean): Promise<string[]> {
  const q = await store.getMeta<QueueMeta>(QUEUE_META);
  if (!q) return [];
  const c = await store.counts();
  if (c.pending + c.running > 0) return [];
  const wq = WorkQueue.over(sqlOf(backend));
  const present = await wq.existing(q.groups);
  if (dryRun) return present.map((g) => g.queue);
  const deleted = await wq.deleteQueues(present);
  if (deleted.length) await store.appendJournal(null, 'cleanup', 'queues deleted', { queues: deleted });
  return deleted;
}

/** `--store`, else the inventory's `store:`: workers share the run through PostgreSQL, so one is needed. */
export function queueStore(command: string, o: { store?: string }, inv: LoadedInventory): { store: ResolvedStore; where: string } {
  const s = selectStore({ ...(o.store !== undefined ? { store: o.store } : {}), env: inv.env }, inv);
  if (!s) throw new UsageError(`${command}: which store? give --store postgresql://…, or a store: in ${inv.file}; workers share the run through PostgreSQL`);
  return { store: s, where: s.display };
}

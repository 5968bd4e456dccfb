// `submit`: a sweep planned, checked and confirmed exactly as `run` does, recorded in the PostgreSQL
// store, and one job per permutation put on its target group's queue for `storsweep worker`s.
import { PgRunStoreBackend } from '../../results/pg-store.ts';
import { queueGroups, WorkQueue, type QueueGroup } from '../../run/work-queue.ts';
import { endpointLimits } from '../compose.ts';
import { checkAgainstHostVersions } from '../host-versions.ts';
import { pgConnectionOf } from '../store.ts';
import { checkConfirmDestroy, foreignTestFiles } from '../run/confirm-destroy.ts';
import { newRunMeta, prepareNew, type NewRunOptions } from '../run/new-run.ts';
import { machineBoundTargets, QUEUE_META, queueStore, thisMachine, type Machine, type QueueMeta } from './queue-meta.ts';

export interface SubmitOptions extends NewRunOptions {
  store?: string;
  confirmDestroy?: string;
}

/** A run submitted: its id, the permutations queued in their groups, and the targets only this machine works. */
export interface SubmitOutcome {
  runId: string;
  permutations: number;
  groups: QueueGroup[];
  /** the store, as shown (no password) */
  where: string;
  machine: Machine;
  machineBound: string[];
}

export async function submitRun(playbookFile: string, o: SubmitOptions): Promise<SubmitOutcome> {
  // planned, validated and confirmed exactly as `run` does, before the store is touched
  const { plan, comps, inv, pb, timeouts } = prepareNew(playbookFile, o);
  const { store: s, where } = queueStore('submit', o, inv);
  // a test file storsweep did not create, where a target's guest can be reached from here, is confirmed too
  const confirmedDestroy = checkConfirmDestroy(plan, o.confirmDestroy, await foreignTestFiles(comps));
  await checkAgainstHostVersions(pb, inv, comps);
  const connection = await pgConnectionOf(s);
  const backend = await PgRunStoreBackend.connect(connection, where);
  let queue: WorkQueue | null = null;
  try {
    const meta = newRunMeta({ plan, comps, inv, pb, playbookFile, timeouts, confirmedDestroy });
    const store = await backend.createRun(meta, plan);
    const groups = queueGroups(plan);
    const machine = thisMachine();
    const names = plan.targets ? plan.targets.map((t) => t.name) : [plan.target];
    const bound = machineBoundTargets(names, inv);
    const limits = endpointLimits(names, inv);
    const qmeta: QueueMeta = { groups, enqueued: false, submittedFrom: machine, ...(bound.length ? { machineBound: bound } : {}), ...(Object.keys(limits).length ? { endpointLimits: limits } : {}) };
    await store.setMeta(QUEUE_META, qmeta);
    await store.setMeta('playbookText', pb.text);
    queue = await WorkQueue.open(connection);
    const n = await queue.enqueue(plan, groups);
    await store.setMeta(QUEUE_META, { ...qmeta, enqueued: true });
    await store.appendJournal(null, 'run', 'submitted', { permutations: n, queues: groups.map((g) => g.queue), host: machine.host, ...(bound.length ? { machineBound: bound } : {}) });
    return { runId: plan.runId, permutations: n, groups, where, machine, machineBound: bound };
  } finally {
    await queue?.close();
    await backend.close();
  }
}

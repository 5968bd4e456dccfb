// `cleanup`: removes what a run created and left behind — idempotent, and never anything the run
// did not create. Tools the run left running are stopped first; a submitted run's finished queues go.
import { loadInventory } from '../../config/index.ts';
import { redact } from '../../input/secrets.ts';
import type { HostProcessStop } from '../../contract/host-process.ts';
import type { Composition, Env, Provider } from '../../contract/provider.ts';
import { errorMessage } from '../../errors.ts';
import type { RunStore } from '../../results/port.ts';
import type { RunLock } from '../../results/run-lock.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { hostStopEvent, hostStopLines } from '../../run/host-leftovers.ts';
import { cleanupLedger, previewLedger } from '../../run/teardown.ts';
import { memberVmsOf, stopMemberLeftovers } from '../../run/vm-members.ts';
import { composeTargets } from '../compose.ts';
import { deleteFinishedQueues } from '../queue/queue-meta.ts';
import { parseConfirmDestroy } from '../run/confirm-destroy.ts';
import { takeRunLock } from '../run/lock.ts';
import type { OpenedRun, StoreOptions } from '../store.ts';

/** Where cleanup says what it did, line by line (stdout: it is the command's output). */
type Say = (text: string) => void;

export interface CleanupOptions extends StoreOptions {
  dryRun?: boolean;
  confirmDestroy?: string;
}

/** Whether anything could not be removed or confirmed stopped (the exit code says so). */
export interface CleanupOutcome {
  failed: boolean;
}

/**
 * Cleans up an opened run (closed here). One writer per run directory: never remove objects under
 * a live run (or another cleanup): the lock is taken before reading the ledger, which only the
 * holder may act on; --dry-run only reads.
 */
export async function cleanupRun(opened: OpenedRun, o: CleanupOptions, say: Say): Promise<CleanupOutcome> {
  const store = opened.store;
  let lock: RunLock | null = null;
  try {
    if (!o.dryRun && opened.sqlite) lock = takeRunLock(opened.sqlite, 'cleanup');
    else if (!o.dryRun && opened.backend) lock = await opened.backend.lockRun(store.runId, 'cleanup');
  } catch (err) {
    void opened.close();
    throw err;
  }
  try {
    return await cleanupLocked(opened, o, say);
  } finally {
    lock?.release();
    await opened.close();
  }
}

async function cleanupLocked(opened: OpenedRun, o: CleanupOptions, say: Say): Promise<CleanupOutcome> {
  const store = opened.store;
  // A submitted run whose every permutation is final: its queues go (a worker deletes them
  // after the last job; this is for a run whose last worker did not)
  if (opened.backend) {
    const queues = await deleteFinishedQueues(store, opened.backend, Boolean(o.dryRun));
    if (queues.length) say(`${o.dryRun ? 'would delete' : 'deleted'} the run's queue${queues.length === 1 ? '' : 's'} ${queues.join(', ')}\n`);
  }
  // A permutation left running (or failed) may have left its fio running on the guest: stop it
  // before anything of the run is removed (a disk deleted under it), and even when nothing is.
  let toolsFailed = new Map<string, string>();
  let hostFailed = 0;
  if (!o.dryRun && (await store.permutations()).some((p) => p.status === 'running' || p.status === 'failed')) {
    ({ tools: toolsFailed, hostFailed } = await stopLeftoverTools(store, o.inventory, o.env, say));
  }
  const live = (await store.leftovers()).reverse();
  if (!live.length) {
    say('nothing to clean up\n');
    return { failed: toolsFailed.size > 0 || hostFailed > 0 };
  }
  const failed = await removeLeftovers(store, o, toolsFailed, say);
  return { failed: failed > 0 || toolsFailed.size > 0 || hostFailed > 0 };
}

/** The ledger's live objects removed (or, --dry-run, previewed) through their targets' providers; returns how many failed. */
async function removeLeftovers(store: RunStore, o: CleanupOptions, toolsFailed: Map<string, string>, say: Say): Promise<number> {
  const confirmedDestroy = o.confirmDestroy === undefined ? undefined : parseConfirmDestroy(o.confirmDestroy);
  // the providers of the run's targets: for a dry run too, which reads the host as the cleanup would
  let providers: RunProviders | null = null;
  try {
    providers = await runProviders(store, o.inventory, o.env).catch((err: unknown) => {
      if (!o.dryRun) throw err;
      // a dry run without an inventory or a host: each row is shown from the ledger, saying why
      const fail = async (): Promise<never> => {
        throw err;
      };
      return { providerFor: fail, targetOf: () => store.runId, close: async () => undefined };
    });
    if (o.dryRun) {
      await previewLedger(store, providers.providerFor, (line) => say(`${line}\n`), confirmedDestroy);
      return 0;
    }
    const meta = await store.meta();
    // the run's teardown policy, as it recorded it: the same retries and deadline per attempt
    // (older run directories: timeouts.stepSec and the default retries)
    const stepSec = meta.teardown?.stepSec ?? meta.timeouts?.stepSec;
    const retries = meta.teardown?.retries;
    // Where a tool of the run may still be running, the disks of the permutations it may be
    // writing to (those left running or failed) stay: nothing is detached or deleted under it.
    const statusOf = new Map((await store.permutations()).map((p) => [p.permutationId, p.status]));
    const targetOf = providers.targetOf;
    const heldBack = (permutationId: string): string | undefined => {
      if (!['running', 'failed'].includes(statusOf.get(permutationId) ?? '')) return undefined;
      return toolsFailed.get(targetOf(permutationId));
    };
    const policy = { ...(stepSec !== undefined ? { timeoutMs: stepSec * 1000 } : {}), ...(retries !== undefined ? { retry: { retries } } : {}), ...(confirmedDestroy ? { confirmedDestroy } : {}) };
    return await cleanupLedger(store, providers.providerFor, (line) => say(`${line}\n`), policy, heldBack);
  } finally {
    await providers?.close();
  }
}

interface RunProviders {
  /** the provider of a permutation's target, connected on first use (targets on one vCenter share one session) */
  providerFor: (permutationId: string) => Promise<Provider | null>;
  /** the target a permutation ran on */
  targetOf: (permutationId: string) => string;
  close: () => Promise<void>;
}

/** Each object goes to the provider of its permutation's target (the `target` axis when the playbook lists several). */
async function runProviders(store: RunStore, inventoryFile: string | readonly string[] | undefined, env: Env): Promise<RunProviders> {
  const meta = await store.meta();
  const inv = loadInventory(inventoryFile ?? meta.inventoryFiles ?? meta.inventoryFile, env);
  const comps = composeTargets(meta.targets ?? [meta.target], inv, store.runDir ?? undefined);
  const targets = new Map((await store.permutations()).map((p) => [p.permutationId, meta.targets ? String(p.axes.target) : meta.target]));
  const targetOf = (permutationId: string) => targets.get(permutationId) ?? meta.target;
  const providers = new Map<string, Promise<Provider | null>>();
  return {
    targetOf,
    providerFor: (permutationId) => {
      const name = targetOf(permutationId);
      let p = providers.get(name);
      if (!p) {
        const comp = comps.get(name);
        p = comp ? comp.connectProvider() : Promise.resolve(null);
        providers.set(name, p);
      }
      return p;
    },
    close: async () => {
      for (const p of providers.values()) await (await p.catch(() => null))?.close().catch(() => undefined);
    },
  };
}

/**
 * Stops, on each of the run's targets, any tool process the run left running (found by the run's
 * token: ssh/process-group.ts) and any monitor its provider left on the host (esxtop: only while the
 * host shows it ours). Prints one line per target where something was found or nothing could be
 * confirmed; returns, by target name, why a tool may still be running there (unreachable too), and
 * how many host monitors could not be confirmed stopped (they only read: nothing is held back).
 */
async function stopLeftoverTools(store: RunStore, inventoryFile: string | readonly string[] | undefined, env: Env, say: Say): Promise<{ tools: Map<string, string>; hostFailed: number }> {
  const meta = await store.meta();
  const inv = loadInventory(inventoryFile ?? meta.inventoryFiles ?? meta.inventoryFile, env);
  const comps = composeTargets(meta.targets ?? [meta.target], inv, store.runDir ?? undefined);
  const failed = new Map<string, string>();
  let hostFailed = 0;
  for (const [name, comp] of comps) {
    const why = (await stopTargetTools(store, meta.runId, name, comp, say)) ?? (await stopCloneTools(store, meta.runId, name, comp, say, comps.size > 1));
    if (why) failed.set(name, why);
    if (comp.stopHostLeftovers && !(await stopTargetHostLeftovers(store, meta.runId, name, comp.stopHostLeftovers.bind(comp), say))) hostFailed++;
  }
  return { tools: failed, hostFailed };
}

/** The workload's leftovers on one target; why one may still run there, or null. */
async function stopTargetTools(store: RunStore, runId: string, name: string, comp: Composition, say: Say): Promise<string | null> {
  const stop = comp.workload.stopLeftovers?.bind(comp.workload);
  if (!stop) return null;
  let runner: CommandRunner | null = null;
  try {
    runner = await comp.workload.connect();
    const r = await stop(runner, runId, name);
    const record = (event: string) => void store.appendJournal(null, 'workload leftovers', event, r).catch(() => undefined);
    if (r.outcome === 'stopped') {
      record('stopped');
      say(`stopped ${comp.workload.tool} left running on ${name} (pids ${r.pids?.join(', ') ?? '?'}, SIG${r.signal})\n`);
    } else if (r.outcome === 'still-running' || r.outcome === 'unknown') {
      record('stop-failed');
      const why = `could not confirm that no ${comp.workload.tool} of this run is left running on ${name}${r.detail ? `: ${r.detail}` : ''}${r.pids?.length ? ` (pids ${r.pids.join(', ')})` : ''}`;
      say(`${why}\n`);
      return why;
    } else record('none');
    return null;
  } catch (err) {
    const why = `could not reach ${name} to look for a ${comp.workload.tool} left running: ${redact(errorMessage(err))}`;
    say(`${why}\n`);
    return why;
  } finally {
    await runner?.close().catch(() => undefined);
  }
}

/**
 * The workload's leftovers in the guests of the VMs a `vm.count` permutation of the target cloned
 * or named (run/vm-members.ts memberVmsOf), before any of their disks is detached; why one may still
 * run there, or null.
 */
async function stopCloneTools(store: RunStore, runId: string, name: string, comp: Composition, say: Say, listed: boolean): Promise<string | null> {
  const live = await store.ledger({ live: true });
  const rows = live.filter((r) => memberVmsOf([r]).length > 0);
  if (!rows.length) return null;
  const ofTarget = listed ? new Set((await store.permutations(rows.map((r) => r.permutationId))).filter((p) => p.axes.target === name).map((p) => p.permutationId)) : null;
  const vms = memberVmsOf(rows.filter((r) => !ofTarget || ofTarget.has(r.permutationId)));
  for (const { vm, stop } of await stopMemberLeftovers(comp.workload, vms, runId, name)) {
    void store.appendJournal(null, `workload leftovers ${vm}`, stop.outcome === 'still-running' || stop.outcome === 'unknown' ? 'stop-failed' : stop.outcome === 'stopped' ? 'stopped' : 'none', stop).catch(() => undefined);
    if (stop.outcome === 'stopped') say(`stopped ${comp.workload.tool} left running in ${vm}'s guest (pids ${stop.pids?.join(', ') ?? '?'})\n`);
    if (stop.outcome === 'still-running' || stop.outcome === 'unknown') {
      const why = `could not confirm that no ${comp.workload.tool} of this run is left running in ${vm}'s guest${stop.detail ? `: ${stop.detail}` : ''}`;
      say(`${why}\n`);
      return why;
    }
  }
  return null;
}

/** The provider's monitors left on one target's host (run/host-leftovers.ts); false when one may still run. */
async function stopTargetHostLeftovers(store: RunStore, runId: string, name: string, stop: NonNullable<Composition['stopHostLeftovers']>, say: Say): Promise<boolean> {
  let r: HostProcessStop;
  try {
    r = await stop(runId, name);
  } catch (err) {
    r = { pgid: null, outcome: 'unknown', what: 'host monitor', processes: [], detail: redact(errorMessage(err)) };
  }
  await store.appendJournal(null, 'host leftovers', hostStopEvent(r), r).catch(() => undefined);
  for (const line of hostStopLines(r, name)) say(`${line.text}\n`);
  return hostStopEvent(r) !== 'stop-failed';
}

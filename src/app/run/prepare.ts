// The first half of `run`: a new run planned, checked, confirmed and recorded, or an interrupted
// one (`--resume`) opened and checked against its own configuration. Nothing is measured here; a
// dry run ends here with the calls it would send.
import fs from 'node:fs';
import path from 'node:path';
import { inventoryName, loadInventory } from '../../config/index.ts';
import type { RunPlan } from '../../contract/plan.ts';
import { UsageError } from '../../errors.ts';
import { serialisedResources } from '../../plan/plan.ts';
import { createEndpointPool, type EndpointPool } from '../../providers/endpoint-pool.ts';
import { checkRunConfirmed, readConfirmed } from '../../results/confirmation.ts';
import type { RunStore } from '../../results/port.ts';
import { lockRunDir, type RunLock } from '../../results/run-lock.ts';
import { SqliteRunStore } from '../../results/sqlite-store.ts';
import { DB_FILE, ResultStore } from '../../results/store.ts';
import { writeFileAtomic } from '../../results/raw.ts';
import { preflightBeforeRun } from '../../preflight/before-run.ts';
import { refuseWithoutRoom } from '../../preflight/capacity.ts';
import { visibleText } from '../../text/visible.ts';
import { composeTargets, measurementFacts, type Composition } from '../compose.ts';
import { checkAgainstHostVersions } from '../host-versions.ts';
import { checkPlanOnline } from '../online-checks.ts';
import type { Notify } from '../notify.ts';
import { ensureOutputDirectory } from '../out-dir.ts';
import { connectPointerStore, connectStore, readStorePointer, selectStore, storePointerOf, writeStorePointer, type StorePointer } from '../store.ts';
import { checkConfirmDestroy, checkResumeConfirmation, foreignTestFiles } from './confirm-destroy.ts';
import { dryRunOf, type DryRun } from './dry-run.ts';
import { lockTakeoverNote, takeRunLock } from './lock.ts';
import { newRunMeta, prepareNew, runDirFor, type NewRunOptions } from './new-run.ts';
import { checkResumeInventory, checkResumeOverrides, checkResumePlaybook, checkStoredPlan, doneIn, resumeCleanupLines, resumeLeft } from './resume-checks.ts';

/** What `run` is asked to do (parsed and range-checked by the CLI). */
export interface RunOptions extends NewRunOptions {
  out: string;
  dryRun?: boolean;
  resume?: string;
  keep?: boolean;
  failFast?: boolean;
  confirmDestroy?: string;
  retries?: number;
  stepTimeout?: number;
  report?: boolean;
  /** `--out` was given on the command line (not its default): a resume refuses it */
  outGiven?: boolean;
  /** `--store URL`: the PostgreSQL store the run is written to (else the inventory's store:, else run.sqlite) */
  store?: string;
  /** `--preflight`: run the read-only preflight checks first and stop on a ✗ */
  preflight?: boolean;
  /** how long a timed-out create is waited for before teardown (ExecuteOptions.orphanGraceMs); not a CLI option: the default, or a test's */
  orphanGraceMs?: number;
}

/** A run ready to execute: its plan, its open store and its targets. */
export interface Prepared {
  plan: RunPlan;
  store: RunStore;
  /** closes the store (and, for a PostgreSQL store, releases the run's lock there) */
  close: () => Promise<void>;
  /** by target name, in playbook order */
  comps: Map<string, Composition>;
  resumed: boolean;
  /** what the user confirmed this run may destroy (a resume: confirmed again now) */
  confirmed: string[];
}

export type PrepareOutcome = { kind: 'dry-run'; dryRun: DryRun } | { kind: 'prepared'; prep: Prepared };

/** The run directory's lock, held by the caller from before the first write until after the report. */
export interface HeldLock {
  lock?: RunLock;
  /**
   * The endpoint sessions of the run's compositions (made by prepareRun): the caller closes it on
   * every exit path, so a run refused after a check opened a vCenter session logs it out.
   */
  pool?: EndpointPool;
}

/** Prepares a new run, or a resume (`o.resume`); a dry run returns what it would send. */
export async function prepareRun(playbookFile: string | undefined, o: RunOptions, held: HeldLock, note: Notify): Promise<PrepareOutcome> {
  held.pool ??= createEndpointPool();
  if (o.resume) return prepareResume(path.resolve(o.resume), playbookFile, o, held, note);
  if (!playbookFile) throw new UsageError('run: a playbook is required (or --resume <runDir>)');
  return prepareFresh(playbookFile, o, held, note);
}

async function prepareResume(runDir: string, playbookFile: string | undefined, o: RunOptions, held: HeldLock, note: Notify): Promise<PrepareOutcome> {
  // a resumed run continues in its own directory: an --out would be silently ignored
  if (o.outGiven) throw new UsageError(`run --resume: --out is not used by a resume (the run continues in its own directory ${JSON.stringify(runDir)}); leave --out out`);
  const pointer = fs.existsSync(path.join(runDir, DB_FILE)) ? null : readStorePointer(runDir);
  if (pointer) return prepareStoreResume(runDir, pointer, playbookFile, o, held, note);
  return prepareSqliteResume(runDir, playbookFile, o, held, note);
}

/** The run's stored configuration checked against what is given now; its targets composed. */
function checkedResume(a: { runDir: string; where: string; meta: Awaited<ReturnType<RunStore['meta']>>; plan: RunPlan; playbookFile: string | undefined; o: RunOptions; note: Notify; pool?: EndpointPool }): Map<string, Composition> {
  const { runDir, where, meta, plan, playbookFile, o, note } = a;
  const overrides = checkResumeOverrides(plan, o.set);
  checkResumePlaybook(playbookFile, meta, runDir, overrides);
  checkStoredPlan(plan, where);
  const inv = loadInventory(o.inventory ?? meta.inventoryFiles ?? meta.inventoryFile, o.env);
  const names = meta.targets ?? [meta.target];
  const comps = composeTargets(names, inv, runDir, a.pool);
  // a plan stored before targets that share something were serialised: the same rule, from the inventory
  if (plan.targets && plan.serialised === undefined) plan.serialised = serialisedResources(names.map((name) => ({ name, resources: comps.get(name)?.sharedResources })));
  checkResumeInventory(meta, names, plan, measurementFacts(names, inv, plan), inventoryName(inv), note);
  return comps;
}

async function prepareSqliteResume(runDir: string, playbookFile: string | undefined, o: RunOptions, held: HeldLock, note: Notify): Promise<PrepareOutcome> {
  // --dry-run reads the run as it is: opened read-only, no lock taken, nothing journaled
  const store = o.dryRun ? ResultStore.openReadOnly(runDir) : ResultStore.open(runDir);
  try {
    if (!o.dryRun) held.lock = takeRunLock(store, 'run --resume', note);
    const meta = store.meta();
    const plan = store.plan();
    const comps = checkedResume({ runDir, where: runDir, meta, plan, playbookFile, o, note, ...(held.pool ? { pool: held.pool } : {}) });
    // what is left must be the plan the run was confirmed for (a dry run too: it would print an edited plan)
    const isDone = doneIn(store.permutations());
    checkRunConfirmed(plan, await readConfirmed(new SqliteRunStore(store)), (id) => !isDone(id));
    if (o.dryRun) {
      // a dry run confirms nothing: it says what --confirm-destroy must name
      const dryRun = dryRunOf(resumeLeft(plan, store.permutations()), resumeCleanupLines(plan, store.permutations(), store.ledger({ live: true })));
      store.close();
      return { kind: 'dry-run', dryRun };
    }
    // last: once the configuration is known to be the run's own, what is left to destroy is confirmed again
    // a test file storsweep did not create is looked for on the guests now, before anything is written
    const reconfirmed = checkResumeConfirmation(plan, isDone, meta.confirmedDestroy, o.confirmDestroy, await foreignTestFiles(comps));
    store.appendJournal(null, 'run', 'resume', { pid: process.pid, ...(reconfirmed.length ? { confirmedDestroy: reconfirmed } : {}) });
    return { kind: 'prepared', prep: { plan, store: new SqliteRunStore(store), close: async () => store.close(), comps, resumed: true, confirmed: reconfirmed } };
  } catch (err) {
    store.close();
    throw err;
  }
}

/**
 * `run --resume RUNDIR` of a run written to a PostgreSQL store (RUNDIR's store.json names it): the
 * same checks as a run.sqlite's resume, read from the store, then the same executor (done
 * permutations skipped, a half-done one cleaned up from the ledger and redone). The run's lock in
 * the store (one writer across machines) and the run directory's own are held to the end.
 */
async function prepareStoreResume(runDir: string, pointer: StorePointer, playbookFile: string | undefined, o: RunOptions, held: HeldLock, note: Notify): Promise<PrepareOutcome> {
  // the password only from the store given now (--store, -i): store.json never picks it (app/store.ts)
  const backend = await connectPointerStore(runDir, pointer, o);
  let storeLock: { release(): void } | null = null;
  try {
    if (!o.dryRun) {
      held.lock = lockRunDir(runDir, 'run --resume');
      if (held.lock.previous) note(lockTakeoverNote(runDir, held.lock.previous));
      storeLock = await backend.lockRun(pointer.runId, 'run --resume');
    }
    const store = await backend.openRun(pointer.runId, { runDir });
    const meta = await store.meta();
    const plan = await store.plan();
    const comps = checkedResume({ runDir, where: store.where, meta, plan, playbookFile, o, note, ...(held.pool ? { pool: held.pool } : {}) });
    const permutations = await store.permutations();
    // what is left must be the plan the run was confirmed for (a dry run too: it would print an edited plan)
    const isDone = doneIn(permutations);
    checkRunConfirmed(plan, await readConfirmed(store), (id) => !isDone(id));
    if (o.dryRun) {
      const dryRun = dryRunOf(resumeLeft(plan, permutations), resumeCleanupLines(plan, permutations, await store.ledger({ live: true })));
      await backend.close();
      return { kind: 'dry-run', dryRun };
    }
    const reconfirmed = checkResumeConfirmation(plan, isDone, meta.confirmedDestroy, o.confirmDestroy, await foreignTestFiles(comps));
    await store.appendJournal(null, 'run', 'resume', { pid: process.pid, ...(reconfirmed.length ? { confirmedDestroy: reconfirmed } : {}) });
    const lock = storeLock;
    return { kind: 'prepared', prep: { plan, store, close: async () => (lock?.release(), await backend.close()), comps, resumed: true, confirmed: reconfirmed } };
  } catch (err) {
    storeLock?.release();
    await backend.close();
    throw err;
  }
}

async function prepareFresh(playbookFile: string, o: RunOptions, held: HeldLock, note: Notify): Promise<PrepareOutcome> {
  const { plan, comps, inv, pb, pbText, timeouts } = prepareNew(playbookFile, o, held.pool);
  if (o.dryRun) return { kind: 'dry-run', dryRun: dryRunOf(plan) };
  // the test files looked at on their guests (read-only) first: one storsweep did not create must be confirmed too
  const confirmedDestroy = checkConfirmDestroy(plan, o.confirmDestroy, await foreignTestFiles(comps));
  // a host whose release the inventory does not state is asked (read-only) before anything changes
  await checkAgainstHostVersions(pb, inv, comps);
  // the last preflight's age and ✗, or (--preflight) the checks now, stopping on a ✗
  await preflightBeforeRun(plan, comps, { out: o.out, inventory: inv.file, preflight: o.preflight, say: (l) => note(`${visibleText(l)}\n`) });
  // every LUN and datastore the plan fills has room for its largest permutation: read before anything is formatted
  await refuseWithoutRoom(plan, comps);
  // storage policies exist and fit (app/online-checks.ts)
  await checkPlanOnline(plan, comps);
  const runDir = runDirFor(o.out, plan);
  const meta = newRunMeta({ plan, comps, inv, pb, playbookFile, timeouts, confirmedDestroy });
  // --store, else the inventory's store:, else the run directory's run.sqlite
  // (the inventory's was checked and its password resolved at load, refused at its line if wrong)
  const resolved = selectStore(o, inv);
  // connected (and migrated) before anything is created: a store that cannot be used stops the run first
  const backend = resolved ? await connectStore(resolved) : null;
  let prep: Prepared;
  try {
    ensureOutputDirectory(o.out, '--out');
    fs.mkdirSync(runDir);
    held.lock = lockRunDir(runDir, 'run');
    if (backend && resolved) {
      const storeLock = await backend.lockRun(plan.runId, 'run');
      const store = await backend.createRun(meta, plan, { runDir });
      writeStorePointer(runDir, { ...storePointerOf(resolved), runId: plan.runId });
      prep = { plan, store, close: async () => (storeLock.release(), await backend.close()), comps, resumed: false, confirmed: confirmedDestroy };
    } else {
      const store = ResultStore.create(runDir, meta, plan);
      held.lock.anchorTo(store.lockAnchor());
      prep = { plan, store: new SqliteRunStore(store), close: async () => store.close(), comps, resumed: false, confirmed: confirmedDestroy };
    }
  } catch (err) {
    await backend?.close();
    throw err;
  }
  writeFileAtomic(path.join(runDir, 'plan.json'), JSON.stringify(plan, null, 1));
  writeFileAtomic(path.join(runDir, 'playbook.yaml'), pbText);
  return { kind: 'prepared', prep };
}

// The run store, as a port: everything the executor, teardown and the commands that read a run ask
// of a run's journal, ledger and results, behind one asynchronous interface. Two adapters:
// - SQLite (results/sqlite-store.ts over results/store.ts): the run directory's run.sqlite, the
//   embedded default — one writer, one machine;
// - PostgreSQL (results/pg-store.ts): many runs in one database, read and written from any
//   machine (`--store postgresql://…`, the inventory's `store:`).
// The contract (test/unit/results/store-contract.test.ts) runs against both. The ledger's order
// rules hold for every adapter: each method resolves only once what it wrote is durable (SQLite:
// synchronous=FULL; PostgreSQL: the statement or transaction committed), so the executor's
// `await store.ledgerIntent(…)` before `provider.apply` keeps "an intent is durable before the
// create is sent" (docs/architecture.md, "The ledger").
import type { Replication, RunPlan } from '../contract/plan.ts';
import type { CreatedObject, OwnedObjectRef, ProviderName } from '../contract/provider.ts';
import { StoreLost } from '../errors.ts';
import type { ResultRecord } from './record.ts';

/**
 * What a store adapter throws for a failure that means "the store is lost" (`lost` says which, per
 * adapter): a StoreLost wrapping it; any other error as it is. The executor stops the sweep on
 * StoreLost (`isStoreLost`), never on a code: an SSH connection refused is not a lost store.
 */
export function storeLostOr(err: unknown, where: string, lost: (e: unknown) => boolean): unknown {
  if (err instanceof StoreLost) return err;
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) if (lost(e)) return new StoreLost(where, err);
  return err;
}

/** A write to the run directory's disk that cannot succeed later either: full, over quota, read-only, an I/O error (errno, or SQLite's result code). */
export function isDiskLost(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return ['ENOSPC', 'EDQUOT', 'EROFS', 'EIO'].includes(code) || /^SQLITE_(FULL|IOERR|READONLY)/.test(code);
}

/** `err` (or an error it wraps) is a StoreLost: every later permutation would fail the same way. */
export function isStoreLost(err: unknown): boolean {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) if (e instanceof StoreLost) return true;
  return false;
}

export type PermutationStatus = 'pending' | 'running' | 'done' | 'failed';
/**
 * A ledger row's life (docs/architecture.md, "The ledger"):
 * - intent: written before apply(); authorises nothing (a legacy or crashed row is torn down only
 *   if the provider finds the object by its owned name)
 * - sent: apply's guards passed and its first mutating command went out; `data` is what destroy
 *   needs to prove the object is ours
 * - refused / not-sent: apply ended before sending anything (a guard refused, or it failed
 *   earlier); terminal, never torn down
 * - created: the id came back; removed / absent / remove-failed / kept: teardown's outcome
 */
export type LedgerState = 'intent' | 'sent' | 'refused' | 'not-sent' | 'created' | 'removed' | 'absent' | 'remove-failed' | 'kept';

/** States whose object may exist and is ours to remove (subject to the provider's checks). */
export const LIVE_LEDGER_STATES: readonly LedgerState[] = ['intent', 'sent', 'created', 'remove-failed'];
/** States after which nothing is left to remove. */
export const FINAL_LEDGER_STATES: readonly LedgerState[] = ['removed', 'absent', 'refused', 'not-sent'];

export interface LedgerRow extends OwnedObjectRef {
  seq: number;
  permutationId: string;
  provider: ProviderName;
  objectId: string | null;
  data: Record<string, unknown>;
  state: LedgerState;
  error: string | null;
}

export interface PermutationRow {
  permutationId: string;
  index: number;
  axes: Record<string, string | number | boolean>;
  status: PermutationStatus;
  reason: string | null;
  attempts: number;
  completedRepetitions: number;
}

export interface JournalEntry {
  seq: number;
  at: string;
  permutationId: string | null;
  step: string;
  event: string;
  detail: unknown;
}

export interface RunMeta {
  runId: string;
  playbook: string;
  playbookFile: string;
  inventoryFile: string;
  /** every inventory file of a run given several (`-i a -i b`), in order; `inventoryFile` is the first */
  inventoryFiles?: string[];
  /** the target's name; for a playbook that lists targets, their names joined (see `targets`) */
  target: string;
  /** every target of a playbook that lists them (absent for one target) */
  targets?: string[];
  startedAt: string;
  fingerprint: Record<string, string>;
  /** the playbook's `environment:` (free facts about the setup: array, RAID level, protocol, QoS, VM spec) */
  environment?: Record<string, string>;
  insecureEndpoints: string[];
  /** exactly what the plan destroys, as confirmed with --confirm-destroy when the run started */
  confirmedDestroy?: string[];
  /** the playbook's `timeouts` (kept here so that --resume applies them too) */
  timeouts?: { stepSec?: number; workloadSlackSec?: number };
  /**
   * the policy the run's teardown used (its --retries, and --step-timeout or timeouts.stepSec):
   * `storsweep cleanup` removes with the same retries and deadline per attempt
   */
  teardown?: { retries?: number; stepSec?: number };
  /** what `run --resume` must find unchanged: the playbook's SHA-256 and the inventory's measurement facts (cli/compose.ts) */
  config?: { playbookSha256: string; facts: Record<string, string> };
  /** what a repetition is a sample of and the order they ran in (the plan's replication; absent before it existed: within one provisioning) */
  replication?: Pick<Replication, 'unit' | 'order' | 'seed' | 'min' | 'max' | 'until'>;
}

/** How many permutations are in each state (status, `status --watch`). */
export type StatusCounts = Record<PermutationStatus, number>;

/**
 * One run's journal, ledger and results. Every write resolves once it is durable, and a run's
 * calls take effect in the order they are made, awaited or not (a write from a synchronous
 * callback is in place before anything called after it; a read sees every write called before).
 */
export interface RunStore {
  readonly kind: 'sqlite' | 'postgresql';
  /** the run's id */
  readonly runId: string;
  /**
   * The local directory raw tool output and the log go to: the run directory (SQLite), or the
   * directory `run --store` was given (PostgreSQL); null for a run opened by id to be read.
   */
  readonly runDir: string | null;
  /** where the run is, for messages (a run directory, or `run <id> in postgresql://user@host:port/db`); never a password */
  readonly where: string;
  close(): Promise<void>;

  meta(): Promise<RunMeta>;
  plan(): Promise<RunPlan>;
  /** the playbook's `baseline:` as planned (the plan's header only) */
  planBaseline(): Promise<RunPlan['baseline']>;
  setMeta(key: string, value: unknown): Promise<void>;
  getMeta<T>(key: string): Promise<T | null>;

  /** in plan order; only those named, when `ids` is given (a worker's one permutation: not the whole run read per permutation) */
  permutations(ids?: readonly string[]): Promise<PermutationRow[]>;
  counts(): Promise<StatusCounts>;
  markRunning(permutationId: string): Promise<void>;
  /** a target that did not connect: a journal entry per permutation not done, the reason on pending ones; how many */
  noteNotStarted(step: string, reason: string, detail?: Record<string, unknown>): Promise<number>;
  markFinished(permutationId: string, status: 'done' | 'failed', reason: string | null): Promise<void>;
  /** one repetition's records, its counter and journal entry: all or nothing */
  addRepetition(permutationId: string, repetition: number, records: ResultRecord[]): Promise<void>;
  addRepetitions(batch: ReadonlyArray<{ permutationId: string; repetition: number; records: ResultRecord[] }>): Promise<void>;
  discardRepetitionsAfter(permutationId: string, keep: number): Promise<number>;
  /** in plan order, then repetition, then insertion */
  records(): Promise<ResultRecord[]>;
  /**
   * The same records in the same order, each handed to `visit` as it is read and not kept by the
   * store (a report of 100,000 records never holds them all); resolves once every one was handed over.
   */
  eachRecord(visit: (r: ResultRecord) => void): Promise<void>;

  appendJournal(permutationId: string | null, step: string, event: string, detail: unknown): Promise<void>;
  journal(): Promise<JournalEntry[]>;

  /** durable BEFORE apply(); an intent authorises nothing */
  ledgerIntent(permutationId: string, provider: ProviderName, ref: OwnedObjectRef, data: Record<string, unknown>): Promise<void>;
  ledgerSent(permutationId: string, ref: OwnedObjectRef, data: Record<string, unknown>): Promise<void>;
  ledgerCreated(permutationId: string, obj: CreatedObject): Promise<void>;
  ledgerState(ref: OwnedObjectRef, state: LedgerState, error?: string | null): Promise<void>;
  /** what the run created and has not removed: live objects and those `run --keep` left */
  leftovers(): Promise<LedgerRow[]>;
  ledger(filter?: { permutationId?: string; live?: boolean }): Promise<LedgerRow[]>;
  ledgerRow(kind: string, name: string): Promise<LedgerRow | undefined>;
}

/** A run in a store, as `runs()` lists it. */
export interface RunSummary {
  runId: string;
  playbook: string;
  target: string;
  startedAt: string;
  counts: StatusCounts;
}

/** A place holding runs: a PostgreSQL database (the SQLite store is one run directory per run). */
export interface RunStoreBackend {
  readonly kind: 'postgresql';
  /** the store for messages: `postgresql://user@host:port/db` (never a password) */
  readonly where: string;
  createRun(meta: RunMeta, plan: RunPlan, o?: { runDir?: string | null }): Promise<RunStore>;
  /** a run by id; `runDir`: where raw output goes (a writer's local directory) */
  openRun(runId: string, o?: { runDir?: string | null }): Promise<RunStore>;
  runs(): Promise<RunSummary[]>;
  close(): Promise<void>;
}

export const emptyCounts = (): StatusCounts => ({ pending: 0, running: 0, done: 0, failed: 0 });

/** What a report needs to know about a stored run (report/model.ts RunInfo), from either adapter. */
export interface StoredRunInfo {
  runId: string;
  playbook?: string;
  target?: string;
  baseline?: Record<string, string | number | boolean>;
  startedAt?: string;
  fingerprint?: Record<string, string>;
  environment?: Record<string, string>;
  insecureEndpoints?: string[];
  failures?: Array<{ permutationId: string; axes: Record<string, unknown>; reason: string }>;
  /** permutations not (fully) measured: the run was interrupted (Ctrl-C, a crash) or is still running */
  unfinished?: Array<{ runId: string; left: number; total: number }>;
  replication?: 'within-provisioning' | 'between-provisionings';
  /** repetitions in rounds, each round in an order drawn from this seed */
  rounds?: { seed: number };
  repeatUntil?: { ciPct: number; min: number; max: number };
}

/** What the report says of the run's repetitions, from its meta (RunMeta.replication). */
function replicationInfo(r: RunMeta['replication']): Pick<StoredRunInfo, 'replication' | 'rounds' | 'repeatUntil'> {
  if (!r) return {};
  return {
    replication: r.unit,
    ...(r.unit === 'between-provisionings' && r.order === 'rounds' ? { rounds: { seed: r.seed } } : {}),
    ...(r.until ? { repeatUntil: { ciPct: r.until.ciPct, min: r.min, max: r.max } } : {}),
  };
}

export function runInfoOf(meta: RunMeta, baseline: RunPlan['baseline'], permutations: readonly PermutationRow[]): StoredRunInfo {
  return {
    runId: meta.runId,
    playbook: meta.playbook,
    target: meta.target,
    ...(baseline ? { baseline } : {}),
    startedAt: meta.startedAt,
    fingerprint: meta.fingerprint,
    ...(meta.environment ? { environment: meta.environment } : {}),
    insecureEndpoints: meta.insecureEndpoints,
    failures: permutations.filter((p) => p.status === 'failed').map((p) => ({ permutationId: p.permutationId, axes: p.axes, reason: p.reason ?? 'unknown' })),
    ...unfinishedOf(meta.runId, permutations),
    ...replicationInfo(meta.replication),
  };
}

function unfinishedOf(runId: string, permutations: readonly PermutationRow[]): Pick<StoredRunInfo, 'unfinished'> {
  const left = permutations.filter((p) => p.status === 'pending' || p.status === 'running').length;
  return left ? { unfinished: [{ runId, left, total: permutations.length }] } : {};
}

/** A `permutations` row as both adapters read it (the same columns in SQLite and PostgreSQL). */
export function permutationRowOf(r: Record<string, unknown>): PermutationRow {
  return {
    permutationId: r.permutation_id as string,
    index: r.idx as number,
    axes: JSON.parse(r.axes as string) as PermutationRow['axes'],
    status: r.status as PermutationStatus,
    reason: (r.reason as string | null) ?? null,
    attempts: r.attempts as number,
    completedRepetitions: r.completed_repetitions as number,
  };
}

/** A `ledger` row as both adapters read it (PostgreSQL returns the bigserial seq as text). */
export function ledgerRowOf(r: Record<string, unknown>): LedgerRow {
  return {
    seq: Number(r.seq),
    permutationId: r.permutation_id as string,
    provider: r.provider as ProviderName,
    kind: r.kind as string,
    name: r.name as string,
    objectId: (r.object_id as string | null) ?? null,
    data: JSON.parse(r.data as string) as Record<string, unknown>,
    state: r.state as LedgerState,
    error: (r.error as string | null) ?? null,
  };
}

/** A `journal` row as both adapters read it (PostgreSQL returns the bigserial seq as text). */
export function journalEntryOf(r: Record<string, unknown>): JournalEntry {
  return {
    seq: Number(r.seq),
    at: r.at as string,
    permutationId: (r.permutation_id as string | null) ?? null,
    step: r.step as string,
    event: r.event as string,
    detail: r.detail ? (JSON.parse(r.detail as string) as unknown) : null,
  };
}

/**
 * Parses a stored record and shares what records of one run repeat — the permutation's axes, the
 * test's identity, the tool, the metadata — with the records parsed before it by the same function
 * (read-only by contract): a 100,000-record report needs half the memory. One per read of a run.
 */
export function recordReader(): (text: string) => ResultRecord {
  const shared = new Map<string, unknown>();
  const intern = <T>(key: string, v: T): T => {
    const hit = shared.get(key);
    if (hit !== undefined) return hit as T;
    shared.set(key, v);
    return v;
  };
  return (text) => {
    const r = JSON.parse(text) as ResultRecord;
    r.axes = intern(`a:${r.permutationId}`, r.axes);
    r.test = intern(`t:${r.test.id}:${r.test.pattern}:${r.test.blockSizeBytes}:${r.test.queueDepth}:${r.test.threads}:${r.test.readPercent}`, r.test);
    r.tool = intern(`o:${r.tool.name}:${r.tool.version}`, r.tool);
    if (r.metadata) r.metadata = intern(`m:${JSON.stringify(r.metadata)}`, r.metadata);
    return r;
  };
}

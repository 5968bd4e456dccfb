// The SQLite adapter of the run store port (results/port.ts): the run directory's run.sqlite,
// through the synchronous ResultStore (results/store.ts). Each call does its work synchronously
// (WAL, synchronous=FULL: durable when the statement returns) and resolves afterwards, so the
// order of writes is exactly the order of calls, as before the port existed.
import type { RunPlan } from '../contract/plan.ts';
import type { CreatedObject, OwnedObjectRef, ProviderName } from '../contract/provider.ts';
import { emptyCounts, type JournalEntry, type LedgerRow, type LedgerState, type PermutationRow, type PermutationStatus, type RunMeta, type RunStore, type StatusCounts } from './port.ts';
import type { ResultRecord } from './record.ts';
import { ResultStore } from './store.ts';

export class SqliteRunStore implements RunStore {
  readonly kind = 'sqlite' as const;
  readonly runId: string;
  constructor(readonly sqlite: ResultStore) {
    this.runId = sqlite.meta().runId;
  }

  static async create(runDir: string, meta: RunMeta, plan: RunPlan): Promise<SqliteRunStore> {
    return new SqliteRunStore(ResultStore.create(runDir, meta, plan));
  }
  static async open(runDir: string): Promise<SqliteRunStore> {
    return wrap(() => ResultStore.open(runDir));
  }
  static async openReadOnly(runDir: string): Promise<SqliteRunStore> {
    return wrap(() => ResultStore.openReadOnly(runDir));
  }

  get runDir(): string {
    return this.sqlite.runDir;
  }
  get where(): string {
    return this.sqlite.runDir;
  }
  async close() {
    this.sqlite.close();
  }
  async meta() {
    return this.sqlite.meta();
  }
  async plan() {
    return this.sqlite.plan();
  }
  async planBaseline() {
    return this.sqlite.planBaseline();
  }
  async setMeta(key: string, value: unknown) {
    this.sqlite.setMeta(key, value);
  }
  async getMeta<T>(key: string) {
    return this.sqlite.getMeta<T>(key);
  }
  async permutations(): Promise<PermutationRow[]> {
    return this.sqlite.permutations();
  }
  async counts(): Promise<StatusCounts> {
    const out = emptyCounts();
    const rows = this.sqlite.db.prepare('SELECT status, count(*) AS n FROM permutations GROUP BY status').all() as Array<{ status: PermutationStatus; n: number }>;
    for (const r of rows) out[r.status] = r.n;
    return out;
  }
  async markRunning(permutationId: string) {
    this.sqlite.markRunning(permutationId);
  }
  async noteNotStarted(step: string, reason: string, detail?: Record<string, unknown>) {
    return this.sqlite.noteNotStarted(step, reason, detail);
  }
  async markFinished(permutationId: string, status: 'done' | 'failed', reason: string | null) {
    this.sqlite.markFinished(permutationId, status, reason);
  }
  async addRepetition(permutationId: string, repetition: number, records: ResultRecord[]) {
    this.sqlite.addRepetition(permutationId, repetition, records);
  }
  async addRepetitions(batch: ReadonlyArray<{ permutationId: string; repetition: number; records: ResultRecord[] }>) {
    this.sqlite.addRepetitions(batch);
  }
  async discardRepetitionsAfter(permutationId: string, keep: number) {
    return this.sqlite.discardRepetitionsAfter(permutationId, keep);
  }
  async records() {
    return this.sqlite.records();
  }
  async appendJournal(permutationId: string | null, step: string, event: string, detail: unknown) {
    this.sqlite.appendJournal(permutationId, step, event, detail);
  }
  async journal(): Promise<JournalEntry[]> {
    return this.sqlite.journal();
  }
  async ledgerIntent(permutationId: string, provider: ProviderName, ref: OwnedObjectRef, data: Record<string, unknown>) {
    this.sqlite.ledgerIntent(permutationId, provider, ref, data);
  }
  async ledgerSent(permutationId: string, ref: OwnedObjectRef, data: Record<string, unknown>) {
    this.sqlite.ledgerSent(permutationId, ref, data);
  }
  async ledgerCreated(permutationId: string, obj: CreatedObject) {
    this.sqlite.ledgerCreated(permutationId, obj);
  }
  async ledgerState(ref: OwnedObjectRef, state: LedgerState, error: string | null = null) {
    this.sqlite.ledgerState(ref, state, error);
  }
  async leftovers(): Promise<LedgerRow[]> {
    return this.sqlite.leftovers();
  }
  async ledger(filter?: { permutationId?: string; live?: boolean }) {
    return this.sqlite.ledger(filter);
  }
  async ledgerRow(kind: string, name: string) {
    return this.sqlite.ledgerRow(kind, name);
  }
}

/** Opened, then its meta read (the run's id); closed again if that throws. */
function wrap(open: () => ResultStore): SqliteRunStore {
  const s = open();
  try {
    return new SqliteRunStore(s);
  } catch (err) {
    s.close();
    throw err;
  }
}

/** The synchronous SQLite store (tests, benchmarks, older callers) or any port adapter, as the port. */
export type AnyRunStore = RunStore | ResultStore;
export function asRunStore(s: AnyRunStore): RunStore {
  return s instanceof ResultStore ? new SqliteRunStore(s) : s;
}

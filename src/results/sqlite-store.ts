// The SQLite adapter of the run store port (results/port.ts): the run directory's run.sqlite,
// through the synchronous ResultStore (results/store.ts). Each call does its work synchronously
// (WAL, synchronous=FULL: durable when the statement returns) and resolves afterwards, so the
// order of writes is exactly the order of calls, as before the port existed. A call that fails
// because the disk is full or read-only, or on an I/O error, throws StoreLost (port.ts isDiskLost).
import type { RunPlan } from '../contract/plan.ts';
import type { CreatedObject, OwnedObjectRef, ProviderName } from '../contract/provider.ts';
import { emptyCounts, isDiskLost, storeLostOr, type JournalEntry, type LedgerRow, type LedgerState, type PermutationRow, type PermutationStatus, type RunMeta, type RunStore, type StatusCounts } from './port.ts';
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

  /** One call of the synchronous store: a full or read-only disk, an I/O error is a StoreLost. */
  private guard<T>(call: () => T): T {
    try {
      return call();
    } catch (err) {
      throw storeLostOr(err, this.sqlite.runDir, isDiskLost);
    }
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
    return this.guard(() => this.sqlite.meta());
  }
  async plan() {
    return this.guard(() => this.sqlite.plan());
  }
  async planBaseline() {
    return this.guard(() => this.sqlite.planBaseline());
  }
  async setMeta(key: string, value: unknown) {
    this.guard(() => this.sqlite.setMeta(key, value));
  }
  async getMeta<T>(key: string) {
    return this.guard(() => this.sqlite.getMeta<T>(key));
  }
  async permutations(ids?: readonly string[]): Promise<PermutationRow[]> {
    const all = this.guard(() => this.sqlite.permutations());
    if (!ids) return all;
    const wanted = new Set(ids);
    return all.filter((p) => wanted.has(p.permutationId));
  }
  async counts(): Promise<StatusCounts> {
    const out = emptyCounts();
    const rows = this.guard(() => this.sqlite.db.prepare('SELECT status, count(*) AS n FROM permutations GROUP BY status').all() as Array<{ status: PermutationStatus; n: number }>);
    for (const r of rows) out[r.status] = r.n;
    return out;
  }
  async markRunning(permutationId: string) {
    this.guard(() => this.sqlite.markRunning(permutationId));
  }
  async noteNotStarted(step: string, reason: string, detail?: Record<string, unknown>) {
    return this.guard(() => this.sqlite.noteNotStarted(step, reason, detail));
  }
  async markFinished(permutationId: string, status: 'done' | 'failed', reason: string | null) {
    this.guard(() => this.sqlite.markFinished(permutationId, status, reason));
  }
  async addRepetition(permutationId: string, repetition: number, records: ResultRecord[]) {
    this.guard(() => this.sqlite.addRepetition(permutationId, repetition, records));
  }
  async addRepetitions(batch: ReadonlyArray<{ permutationId: string; repetition: number; records: ResultRecord[] }>) {
    this.guard(() => this.sqlite.addRepetitions(batch));
  }
  async discardRepetitionsAfter(permutationId: string, keep: number) {
    return this.guard(() => this.sqlite.discardRepetitionsAfter(permutationId, keep));
  }
  async records() {
    return this.guard(() => this.sqlite.records());
  }
  async eachRecord(visit: (r: ResultRecord) => void) {
    this.guard(() => this.sqlite.eachRecord(visit));
  }
  async appendJournal(permutationId: string | null, step: string, event: string, detail: unknown) {
    this.guard(() => this.sqlite.appendJournal(permutationId, step, event, detail));
  }
  async journal(): Promise<JournalEntry[]> {
    return this.guard(() => this.sqlite.journal());
  }
  async ledgerIntent(permutationId: string, provider: ProviderName, ref: OwnedObjectRef, data: Record<string, unknown>) {
    this.guard(() => this.sqlite.ledgerIntent(permutationId, provider, ref, data));
  }
  async ledgerSent(permutationId: string, ref: OwnedObjectRef, data: Record<string, unknown>) {
    this.guard(() => this.sqlite.ledgerSent(permutationId, ref, data));
  }
  async ledgerCreated(permutationId: string, obj: CreatedObject) {
    this.guard(() => this.sqlite.ledgerCreated(permutationId, obj));
  }
  async ledgerState(ref: OwnedObjectRef, state: LedgerState, error: string | null = null) {
    this.guard(() => this.sqlite.ledgerState(ref, state, error));
  }
  async leftovers(): Promise<LedgerRow[]> {
    return this.guard(() => this.sqlite.leftovers());
  }
  async ledger(filter?: { permutationId?: string; live?: boolean }) {
    return this.guard(() => this.sqlite.ledger(filter));
  }
  async ledgerRow(kind: string, name: string) {
    return this.guard(() => this.sqlite.ledgerRow(kind, name));
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

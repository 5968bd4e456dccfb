// The run directory's database (SQLite, WAL, synchronous=FULL): the plan, each permutation's
// status, the journal of step intents and outcomes, the ledger of created objects, and the results.
// Results of a repetition, its permutation status and journal entry commit in one transaction, so a
// crash at any instant leaves either all of a repetition's records or none.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { RunPlan } from '../contract/plan.ts';
import type { CreatedObject, OwnedObjectRef, ProviderName } from '../contract/provider.ts';
import type { ResultRecord } from './record.ts';
import { CONFIRMATION_KEY, confirmationOf } from './confirmation.ts';
import { visible } from '../text/visible.ts';
import type { AnchoredLock, LockAnchor } from './run-lock.ts';
import { errorMessage, NotARegularFile, NotARunDirectory, RunStoreDamaged, RunStoreInaccessible } from '../errors.ts';

export const DB_FILE = 'run.sqlite';

import { FINAL_LEDGER_STATES, journalEntryOf, ledgerRowOf, LIVE_LEDGER_STATES, permutationRowOf, recordReader, runInfoOf, type JournalEntry, type LedgerRow, type LedgerState, type PermutationRow, type PermutationStatus, type RunMeta, type StoredRunInfo } from './port.ts';
import { resultKey } from './result-key.ts';

// The shapes belong to the port (results/port.ts); re-exported for the callers of this adapter.
export { FINAL_LEDGER_STATES, LIVE_LEDGER_STATES };
export type { LedgerRow, LedgerState, PermutationRow, PermutationStatus, RunMeta };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS permutations (
  permutation_id TEXT PRIMARY KEY, idx INTEGER NOT NULL, axes TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending', reason TEXT, attempts INTEGER NOT NULL DEFAULT 0,
  completed_repetitions INTEGER NOT NULL DEFAULT 0, updated_at TEXT, plan TEXT);
CREATE TABLE IF NOT EXISTS results (
  permutation_id TEXT NOT NULL, repetition INTEGER NOT NULL, test_id TEXT NOT NULL, record TEXT NOT NULL,
  PRIMARY KEY (permutation_id, repetition, test_id));
CREATE TABLE IF NOT EXISTS journal (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, permutation_id TEXT, step TEXT NOT NULL,
  event TEXT NOT NULL, detail TEXT);
CREATE TABLE IF NOT EXISTS ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, permutation_id TEXT NOT NULL, provider TEXT NOT NULL,
  kind TEXT NOT NULL, name TEXT NOT NULL, object_id TEXT, data TEXT NOT NULL DEFAULT '{}',
  state TEXT NOT NULL, error TEXT, updated_at TEXT NOT NULL, UNIQUE (kind, name));
CREATE INDEX IF NOT EXISTS ledger_permutation ON ledger (permutation_id);
`;

const now = () => new Date().toISOString();

/** SQLite's codes for a file that is not, or no longer, a readable database. */
export function isDamagedDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/** run.sqlite must be a regular file (or a link to one): a FIFO or device there is never opened. */
function refuseNonFile(file: string): void {
  const st = fs.statSync(file);
  if (st.isFile()) return;
  const type = st.isFIFO() ? 'a FIFO (named pipe)' : st.isCharacterDevice() ? 'a character device' : st.isBlockDevice() ? 'a block device' : st.isDirectory() ? 'a directory' : st.isSocket() ? 'a socket' : 'not a regular file';
  const reason = `it is ${type}, not the run's database file; a run directory's ${DB_FILE} is a regular file written by storsweep run`;
  throw new NotARegularFile(`${visible(file)}: ${reason}`, { file, type, reason });
}

function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The database file's bytes, for a read-only in-memory copy (regular file, never blocking). The
 * header's file format bytes (offsets 18 and 19, https://www.sqlite.org/fileformat2.html#the_database_header)
 * are set from 2 (WAL) to 1 (rollback journal): an in-memory database cannot be in WAL mode.
 */
function readDatabaseBytes(file: string): Buffer {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) refuseNonFile(file);
    const bytes = fs.readFileSync(fd);
    if (bytes.length >= 100 && bytes[18] === 2 && bytes[19] === 2) bytes[18] = bytes[19] = 1;
    return bytes;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Damage SQLite finds only when it reads a page (a query, not the open) becomes RunStoreDamaged
 * naming the file and what to do, wherever the store is used: every statement, transaction and
 * pragma of the connection goes through this wrapper.
 */
function guardDamage(db: Database.Database, file: string): Database.Database {
  const guard = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      if (isDamagedDatabase(err)) throw new RunStoreDamaged(file, errorMessage(err), { cause: err });
      throw err;
    }
  };
  const wrapIterator = (it: IterableIterator<unknown>): IterableIterator<unknown> => ({
    next: () => guard(() => it.next()),
    return: (v?: unknown) => it.return?.(v) ?? { done: true, value: v },
    [Symbol.iterator]() {
      return this;
    },
  });
  const wrapStatement = (stmt: Database.Statement): Database.Statement => {
    const proxy: Database.Statement = new Proxy(stmt, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          const r = guard(() => (v as (...a: unknown[]) => unknown).apply(target, args));
          if (r === target) return proxy;
          return prop === 'iterate' ? wrapIterator(r as IterableIterator<unknown>) : r;
        };
      },
    });
    return proxy;
  };
  return new Proxy(db, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      if (prop === 'prepare') return (sql: string) => wrapStatement(guard(() => target.prepare(sql)));
      if (prop === 'transaction') {
        return (fn: (...a: unknown[]) => unknown) => {
          const tx = target.transaction(fn);
          return (...args: unknown[]) => guard(() => tx(...args));
        };
      }
      if (prop === 'exec' || prop === 'pragma') return (...args: unknown[]) => guard(() => (v as (...a: unknown[]) => unknown).apply(target, args));
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

/** A read-only look: the database has our meta table with a run's meta row. */
function holdsRun(db: Database.Database): boolean {
  // A read that fails (damaged, unreadable, a read-only directory without -shm) throws: the
  // caller words it; only a readable database without our run is "holds no storsweep run".
  db.pragma('busy_timeout = 5000');
  const t = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
  if (!t) return false;
  return db.prepare("SELECT 1 FROM meta WHERE key = 'meta'").get() !== undefined;
}

export class ResultStore {
  private constructor(
    readonly runDir: string,
    readonly db: Database.Database,
  ) {}

  static create(runDir: string, meta: RunMeta, plan: RunPlan): ResultStore {
    fs.mkdirSync(runDir, { recursive: true });
    const store = ResultStore.open(runDir, true);
    store.db.transaction(() => {
      const put = store.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
      put.run('meta', JSON.stringify(meta));
      // The plan's header in meta, each permutation's plan in its own row: one JSON string of a
      // 100,000-permutation plan would be over 100 MB at once.
      put.run('plan', JSON.stringify({ ...plan, permutations: [] }));
      // what the run is confirmed for, with each permutation's digest: checked before each is run (confirmation.ts)
      put.run(CONFIRMATION_KEY, JSON.stringify(confirmationOf(meta.runId, meta.confirmedDestroy, plan)));
      const ins = store.db.prepare('INSERT OR IGNORE INTO permutations (permutation_id, idx, axes, plan) VALUES (?, ?, ?, ?)');
      for (const p of plan.permutations) ins.run(p.permutationId, p.index, JSON.stringify(p.axes), JSON.stringify(p));
    })();
    return store;
  }

  static open(runDir: string, create = false): ResultStore {
    const file = path.join(runDir, DB_FILE);
    if (!create && !fs.existsSync(file)) throw new NotARunDirectory(runDir, `no ${DB_FILE}`);
    if (!create) refuseNonFile(file);
    let db: Database.Database | null = null;
    try {
      db = new Database(file);
      // Never touch what we did not create: an existing run.sqlite gets our schema (and WAL mode,
      // which rewrites its header) only once it is seen holding a storsweep run — read first.
      if (!create && !holdsRun(db)) {
        db.close();
        db = null;
        throw new NotARunDirectory(runDir, `${DB_FILE} holds no storsweep run (left unchanged)`);
      }
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('busy_timeout = 5000');
      db.exec(SCHEMA);
    } catch (err) {
      db?.close();
      // a damaged header or schema page shows here, as SQLite's bare "file is not a database" /
      // "database disk image is malformed": say which file and what can be done
      if (isDamagedDatabase(err)) throw new RunStoreDamaged(file, errorMessage(err), { cause: err });
      const code = (err as { code?: unknown } | null)?.code;
      if (!create && typeof code === 'string' && (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY')) && !writable(runDir)) {
        throw new RunStoreInaccessible(file, `${runDir} is not writable, and this command records what it does in the run's database; status, results and report read it as it is`, { cause: err });
      }
      throw err;
    }
    return new ResultStore(runDir, guardDamage(db, file));
  }

  /**
   * For commands that only read (status, results, report, compare): opened read-only, nothing
   * created or changed, so a run directory on a read-only mount or without write permission reads
   * too. SQLite needs run.sqlite-shm (and -wal) to read a WAL database; when the directory is not
   * writable and they are absent, the file is read into memory (its last checkpoint: a run that
   * closed cleanly left everything there) — or refused when a -wal with data sits next to it.
   */
  static openReadOnly(runDir: string): ResultStore {
    const file = path.join(runDir, DB_FILE);
    if (!fs.existsSync(file)) throw new NotARunDirectory(runDir, `no ${DB_FILE}`);
    refuseNonFile(file);
    let db: Database.Database | null = null;
    try {
      try {
        db = new Database(file, { readonly: true, fileMustExist: true });
        db.pragma('busy_timeout = 5000');
        db.prepare('SELECT count(*) FROM sqlite_master').get();
      } catch (err) {
        db?.close();
        db = null;
        if (isDamagedDatabase(err) || writable(runDir)) throw err;
        const wal = `${file}-wal`;
        if (fs.existsSync(wal) && fs.statSync(wal).size > 0) {
          throw new RunStoreInaccessible(file, `cannot be read here: its write-ahead log ${wal} holds data SQLite can read only with a ${DB_FILE}-shm next to it, and ${runDir} is not writable; copy the run directory somewhere writable and read the copy`, { cause: err });
        }
        db = new Database(readDatabaseBytes(file), { readonly: true });
      }
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      // SQLite's own default page cache (2 MB), not better-sqlite3's 16 MB (deps/defines.gypi
      // SQLITE_DEFAULT_CACHE_SIZE=-16000): a read-only command reads each page about once, and a
      // report of 100,000 records kept 16 MB of pages it would never read again.
      db.pragma('cache_size = -2000');
    } catch (err) {
      (db as Database.Database | null)?.close();
      if (isDamagedDatabase(err)) throw new RunStoreDamaged(file, errorMessage(err), { cause: err });
      throw err;
    }
    return new ResultStore(runDir, guardDamage(db, file));
  }

  close(): void {
    this.db.close();
  }

  meta(): RunMeta {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'meta'").get() as { value: string } | undefined;
    if (!row) throw new NotARunDirectory(this.runDir, `its ${DB_FILE} holds no run: metadata missing`);
    return JSON.parse(row.value) as RunMeta;
  }

  plan(): RunPlan {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'plan'").get() as { value: string } | undefined;
    if (!row) throw new NotARunDirectory(this.runDir, `its ${DB_FILE} holds no run: plan missing`);
    const plan = JSON.parse(row.value) as RunPlan;
    if (plan.permutations.length === 0) {
      const rows = this.db.prepare('SELECT plan FROM permutations WHERE plan IS NOT NULL ORDER BY idx').pluck();
      for (const text of rows.iterate() as IterableIterator<string>) plan.permutations.push(JSON.parse(text) as RunPlan['permutations'][number]);
    }
    return plan;
  }

  /** The playbook's `baseline:` as planned (the plan's header only, not its permutations). */
  planBaseline(): RunPlan['baseline'] {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'plan'").get() as { value: string } | undefined;
    return row ? ((JSON.parse(row.value) as Partial<RunPlan>).baseline ?? null) : null;
  }

  setMeta(key: string, value: unknown): void {
    this.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, JSON.stringify(value));
  }

  /** Where the run directory's lock records which lock file it holds (src/results/run-lock.ts). */
  lockAnchor(): LockAnchor {
    return {
      read: () => this.getMeta<AnchoredLock>('lock'),
      write: (lock) => this.setMeta('lock', lock),
    };
  }

  getMeta<T>(key: string): T | null {
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : null;
  }

  // --- permutations ------------------------------------------------------------------------

  permutations(): PermutationRow[] {
    // not the plan column: each permutation's plan (its steps) is read only by plan()
    const rows = this.db.prepare('SELECT permutation_id, idx, axes, status, reason, attempts, completed_repetitions FROM permutations ORDER BY idx').all() as Array<Record<string, unknown>>;
    return rows.map(permutationRowOf);
  }

  markRunning(permutationId: string): void {
    this.db.transaction(() => {
      this.db.prepare("UPDATE permutations SET status = 'running', attempts = attempts + 1, reason = NULL, updated_at = ? WHERE permutation_id = ?").run(now(), permutationId);
      this.appendJournal(permutationId, 'permutation', 'start', null);
    })();
  }

  /**
   * The run could not start its permutations (a target's provider did not connect): each one not
   * done gets a journal entry (`step` failed, with the reason); a pending one also carries the
   * reason (what `status` shows) and stays pending, so `run --resume` runs it. Returns how many.
   */
  noteNotStarted(step: string, reason: string, detail: Record<string, unknown> = {}): number {
    let n = 0;
    this.db.transaction(() => {
      const setReason = this.db.prepare("UPDATE permutations SET reason = ?, updated_at = ? WHERE permutation_id = ? AND status = 'pending'");
      for (const p of this.permutations()) {
        if (p.status === 'done') continue;
        this.appendJournal(p.permutationId, step, 'failed', { reason, ...detail });
        setReason.run(reason, now(), p.permutationId);
        n++;
      }
    })();
    return n;
  }

  markFinished(permutationId: string, status: 'done' | 'failed', reason: string | null): void {
    this.db.transaction(() => {
      this.db.prepare('UPDATE permutations SET status = ?, reason = ?, updated_at = ? WHERE permutation_id = ?').run(status, reason, now(), permutationId);
      this.appendJournal(permutationId, 'permutation', status, reason ? { reason } : null);
    })();
  }

  /** One repetition's records, its counter and its journal entry: all or nothing. */
  addRepetition(permutationId: string, repetition: number, records: ResultRecord[]): void {
    this.db.transaction(() => {
      const ins = this.db.prepare('INSERT INTO results (permutation_id, repetition, test_id, record) VALUES (?, ?, ?, ?)');
      for (const r of records) ins.run(permutationId, repetition, resultKey(r), JSON.stringify(r));
      this.db.prepare('UPDATE permutations SET completed_repetitions = ?, updated_at = ? WHERE permutation_id = ?').run(repetition, now(), permutationId);
      this.appendJournal(permutationId, `repetition-${repetition}`, 'recorded', { records: records.length });
    })();
  }

  /**
   * Many repetitions in one transaction (one fsync): for bulk loads such as imports and benchmarks.
   * Live sweeps use addRepetition, so that each finished repetition is durable on its own.
   */
  addRepetitions(batch: ReadonlyArray<{ permutationId: string; repetition: number; records: ResultRecord[] }>): void {
    this.db.transaction(() => {
      const ins = this.db.prepare('INSERT INTO results (permutation_id, repetition, test_id, record) VALUES (?, ?, ?, ?)');
      const upd = this.db.prepare('UPDATE permutations SET completed_repetitions = ?, updated_at = ? WHERE permutation_id = ?');
      for (const { permutationId, repetition, records } of batch) {
        for (const r of records) ins.run(permutationId, repetition, resultKey(r), JSON.stringify(r));
        upd.run(repetition, now(), permutationId);
        this.appendJournal(permutationId, `repetition-${repetition}`, 'recorded', { records: records.length });
      }
    })();
  }

  /** Drop the records of repetitions after `keep` (a half-done permutation being redone). */
  discardRepetitionsAfter(permutationId: string, keep: number): number {
    return this.db.prepare('DELETE FROM results WHERE permutation_id = ? AND repetition > ?').run(permutationId, keep).changes;
  }

  records(): ResultRecord[] {
    const out: ResultRecord[] = [];
    this.eachRecord((r) => out.push(r));
    return out;
  }

  /**
   * Every record, in plan order, handed to `visit` as it is read and not kept here: a report reads
   * a 100,000-record run without holding it (report/model.ts ReportRecords). Synchronous, so the
   * connection is never left busy with a half-read statement.
   */
  eachRecord(visit: (r: ResultRecord) => void): void {
    // Row by row: holding every row's JSON text next to the parsed records doubled peak memory.
    // One permutation at a time, in plan order, through the results' primary key: one statement
    // ordering the whole join by p.idx had SQLite sort every record's text (~50 MB of sorter
    // memory for 100,000 records, kept by the allocator after the sort).
    const ids = this.db.prepare('SELECT permutation_id FROM permutations ORDER BY idx').pluck().all() as string[];
    const rowsOf = this.db.prepare('SELECT record FROM results WHERE permutation_id = ? ORDER BY repetition, rowid').pluck();
    // Records of one permutation share their axes, test identity, tool and metadata: share the
    // objects too (port.ts recordReader), which halves the memory of a 100,000-record report.
    const read = recordReader();
    for (const id of ids) {
      for (const text of rowsOf.all(id) as string[]) visit(read(text));
    }
  }

  // --- journal -----------------------------------------------------------------------------

  appendJournal(permutationId: string | null, step: string, event: string, detail: unknown): void {
    this.db.prepare('INSERT INTO journal (at, permutation_id, step, event, detail) VALUES (?, ?, ?, ?, ?)').run(now(), permutationId, step, event, detail === null || detail === undefined ? null : JSON.stringify(detail));
  }

  journal(): JournalEntry[] {
    return (this.db.prepare('SELECT * FROM journal ORDER BY seq').all() as Array<Record<string, unknown>>).map(journalEntryOf);
  }

  // --- ledger ------------------------------------------------------------------------------

  /**
   * Recorded BEFORE apply(). An intent authorises nothing; after a crash the owned name is enough
   * to find the object. A row left over from an earlier attempt that ended in a final state starts
   * again from scratch (its old data must not authorise anything now).
   */
  ledgerIntent(permutationId: string, provider: ProviderName, ref: OwnedObjectRef, data: Record<string, unknown>): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO ledger (permutation_id, provider, kind, name, data, state, updated_at) VALUES (?, ?, ?, ?, ?, 'intent', ?)
           ON CONFLICT (kind, name) DO UPDATE SET
             object_id = CASE WHEN state IN ('removed', 'absent', 'refused', 'not-sent') THEN NULL ELSE object_id END,
             data = CASE WHEN state IN ('removed', 'absent', 'refused', 'not-sent') THEN excluded.data ELSE data END,
             error = CASE WHEN state IN ('removed', 'absent', 'refused', 'not-sent') THEN NULL ELSE error END,
             state = CASE WHEN state IN ('removed', 'absent', 'refused', 'not-sent') THEN 'intent' ELSE state END,
             updated_at = excluded.updated_at`,
        )
        .run(permutationId, provider, ref.kind, ref.name, JSON.stringify(data), now());
      this.appendJournal(permutationId, `${ref.kind}:${ref.name}`, 'intent', null);
    })();
  }

  /**
   * apply() is about to send its first mutating command: from now on the object may exist, and
   * `data` is what destroy() needs to prove it is ours. Called again, it replaces the data.
   */
  ledgerSent(permutationId: string, ref: OwnedObjectRef, data: Record<string, unknown>): void {
    this.db.transaction(() => {
      const r = this.db.prepare("UPDATE ledger SET data = ?, state = 'sent', error = NULL, updated_at = ? WHERE kind = ? AND name = ? AND state IN ('intent', 'sent', 'not-sent')").run(JSON.stringify(data), now(), ref.kind, ref.name);
      if (r.changes) this.appendJournal(permutationId, `${ref.kind}:${ref.name}`, 'sent', null);
    })();
  }

  ledgerCreated(permutationId: string, obj: CreatedObject): void {
    this.db.transaction(() => {
      this.db.prepare("UPDATE ledger SET object_id = ?, data = ?, state = 'created', error = NULL, updated_at = ? WHERE kind = ? AND name = ?").run(obj.id, JSON.stringify(obj.data), now(), obj.kind, obj.name);
      this.appendJournal(permutationId, `${obj.kind}:${obj.name}`, 'created', { id: obj.id });
    })();
  }

  ledgerState(ref: OwnedObjectRef, state: LedgerState, error: string | null = null): void {
    this.db.prepare('UPDATE ledger SET state = ?, error = ?, updated_at = ? WHERE kind = ? AND name = ?').run(state, error, now(), ref.kind, ref.name);
  }

  /** What the run created and has not removed: live objects and those `run --keep` left in place. */
  leftovers(): LedgerRow[] {
    return this.ledger().filter((o) => !FINAL_LEDGER_STATES.includes(o.state));
  }

  ledger(filter?: { permutationId?: string; live?: boolean }): LedgerRow[] {
    // Teardown asks for one permutation's rows after every permutation: select them in SQL rather
    // than parsing the whole run's ledger each time.
    const rows = (
      filter?.permutationId === undefined
        ? this.db.prepare('SELECT * FROM ledger ORDER BY seq').all()
        : this.db.prepare('SELECT * FROM ledger WHERE permutation_id = ? ORDER BY seq').all(filter.permutationId)
    ) as Array<Record<string, unknown>>;
    return rows.map(ledgerRowOf).filter((r) => !filter?.live || LIVE_LEDGER_STATES.includes(r.state));
  }

  /** One row by its owned object (kind and name are unique in a run). */
  ledgerRow(kind: string, name: string): LedgerRow | undefined {
    const r = this.db.prepare('SELECT * FROM ledger WHERE kind = ? AND name = ?').get(kind, name) as Record<string, unknown> | undefined;
    return r ? ledgerRowOf(r) : undefined;
  }
}

/** Read side for reports: records and run info only. */
export function openResults(runDir: string): { records(): ResultRecord[]; eachRecord(visit: (r: ResultRecord) => void): void; runInfo(): StoredRunInfo; close(): void } {
  const store = ResultStore.openReadOnly(runDir);
  return {
    records: () => store.records(),
    eachRecord: (visit) => store.eachRecord(visit),
    runInfo: () => runInfoOf(store.meta(), store.planBaseline(), store.permutations()),
    close: () => store.close(),
  };
}

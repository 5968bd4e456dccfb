// The PostgreSQL adapter of the run store port (results/port.ts): many runs in one database
// (schema `storsweep`, results/pg-migrations.ts), read and written from any machine. Every write
// resolves once committed (PostgreSQL's default synchronous_commit=on: the commit is flushed to its
// WAL), so `await store.ledgerIntent(…)` before apply keeps the ledger's rule: the intent is
// durable before the create is sent. What several statements write (a repetition's records with
// its counter and journal entry; a ledger change with its journal entry) commits in one
// transaction, as in the SQLite store: one statement (data-modifying CTEs, atomic like any
// statement) where that is enough, so the commit costs one round trip, not BEGIN … COMMIT's four.
import os from 'node:os';
import pg from 'pg';
import type { RunPlan } from '../contract/plan.ts';
import type { CreatedObject, OwnedObjectRef, ProviderName } from '../contract/provider.ts';
import { errorMessage, RunDirLocked, RunNotFound, StoreSchemaTooNew, StoreUnavailable } from '../errors.ts';
import { visible } from '../text/visible.ts';
import type { LockHolder, RunLock } from './run-lock.ts';
import { CONFIRMATION_KEY, confirmationOf } from './confirmation.ts';
import { LATEST_VERSION, MIGRATIONS, SCHEMA } from './pg-migrations.ts';
import { emptyCounts, FINAL_LEDGER_STATES, journalEntryOf, ledgerRowOf, LIVE_LEDGER_STATES, permutationRowOf, recordReader, storeLostOr, type JournalEntry, type LedgerRow, type LedgerState, type PermutationRow, type PermutationStatus, type RunMeta, type RunStore, type RunStoreBackend, type RunSummary, type StatusCounts } from './port.ts';
import type { ResultRecord } from './record.ts';
import { resultKey } from './result-key.ts';

const now = () => new Date().toISOString();

/** What to connect to: the password already revealed by the caller (cli/, from a secret reference). */
export interface PgConnection {
  host: string;
  port: number;
  user: string;
  database: string;
  /** a function: asked only when the server wants a password (it may refuse by rejecting) */
  password?: string | (() => Promise<string>);
  /** `sslmode=require` and stricter: TLS, verifying the server unless `rejectUnauthorized: false` */
  ssl?: boolean | { rejectUnauthorized: boolean };
  /** client-side bound on one query, default STORE_QUERY_TIMEOUT_MS */
  queryTimeoutMs?: number;
}

type Queryable = pg.Pool | pg.PoolClient;

/** One connection's statements, as a write needs them (a pool, a pooled client, a lease session). */
export interface PgStatements {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * Where a run's writes go: by default the store's pool; a worker's writes go through its lease
 * session (results/pg-coordination.ts LeaseSession.writer), so that a write can only take effect
 * while the session holding the lease's locks lives (docs/decisions.md, "Store writes under a
 * lease: on the lease session").
 */
export interface PgWriter {
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
  /** `fn`'s statements as one transaction, nothing else on its connection in between */
  transaction<T>(fn: (q: PgStatements) => Promise<T>): Promise<T>;
}

/** The pool as a writer: each statement on any pooled connection, a transaction on one. */
function poolWriter(pool: pg.Pool): PgWriter {
  return { query: (text, values) => pool.query(text, values), transaction: (fn) => inTransaction(pool, fn) };
}

/** Any session-level lock key of ours (pg_advisory_xact_lock): migrations run one at a time. */
const MIGRATION_LOCK = 0x73746f72; // 'stor'

/** Client-side bound on any one store query (node-postgres `query_timeout`). */
export const STORE_QUERY_TIMEOUT_MS = 60_000;

/** The journal's insert, for the statements that write a row and its journal entry at once. */
const JOURNAL_INSERT = `INSERT INTO ${SCHEMA}.journal (run_id, at, permutation_id, step, event, detail)`;

/** Records are read in batches of this many rows: a 100,000-record run is never one result set. */
const RECORD_BATCH = 5000;

export async function migrate(db: Queryable, where: string): Promise<{ from: number; to: number }> {
  // Up to date already: read the version without the lock or any CREATE, so a least-privilege role
  // (CONNECT, USAGE on the schema, DML) can use a store its DBA set up — PostgreSQL checks the
  // database's CREATE privilege even for CREATE SCHEMA IF NOT EXISTS on an existing schema.
  const current = await schemaVersion(db);
  if (current !== null && current > LATEST_VERSION) throw new StoreSchemaTooNew(where, current, LATEST_VERSION);
  if (current === LATEST_VERSION) return { from: current, to: current };
  const client = 'release' in db ? db : await db.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
      const { rows } = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${SCHEMA}.schema_migrations`);
      const from = rows[0]?.v ?? 0;
      if (from > LATEST_VERSION) throw new StoreSchemaTooNew(where, from, LATEST_VERSION);
      for (const m of MIGRATIONS) {
        if (m.version <= from) continue;
        await client.query(m.sql);
        await client.query(`INSERT INTO ${SCHEMA}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      }
      await client.query('COMMIT');
      return { from, to: Math.max(from, LATEST_VERSION) };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    if (client !== db) client.release();
  }
}

/** The applied schema version, or null when the store has no migrations table yet. */
async function schemaVersion(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [`${SCHEMA}.schema_migrations`]);
  if (!rows[0]?.t) return null;
  const v = await db.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${SCHEMA}.schema_migrations`);
  return v.rows[0]?.v ?? 0;
}

async function inTransaction<T>(pool: pg.Pool, fn: (c: PgStatements) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    try {
      const r = await fn(c);
      await c.query('COMMIT');
      return r;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    c.release();
  }
}

/**
 * The advisory lock key of a run (hashtextextended(key, 0)): `run --store` and `cleanup` hold it
 * exclusively (lockRun); every worker working the run holds it shared on its lease session
 * (pg-coordination.ts), so cleanup is refused while any worker works the run, and a worker takes
 * none of its permutations while cleanup runs.
 */
export function runLockKey(runId: string): string {
  return `storsweep run ${runId}`;
}

/** A database holding runs. `connect` checks the login and applies pending migrations. */
export class PgRunStoreBackend implements RunStoreBackend {
  readonly kind = 'postgresql' as const;
  private constructor(
    readonly pool: pg.Pool,
    readonly where: string,
  ) {}

  /** `where`: the store as shown in messages (`postgresql://user@host:port/db`, never the password). */
  static async connect(conn: PgConnection, where: string): Promise<PgRunStoreBackend> {
    const { queryTimeoutMs, ...target } = conn;
    const pool = new pg.Pool({
      ...target,
      max: 4,
      application_name: 'storsweep',
      connectionTimeoutMillis: 15_000,
      // A stalled server or a partitioned network must not hang the sweep (and teardown queued behind
      // it, see inCallOrder): every query gives up after STORE_QUERY_TIMEOUT_MS on the client side
      // (node-postgres `query_timeout`, "Query read timeout"), and TCP keep-alives notice a dead peer.
      // Giving up on a write stops the sweep as a lost store (StoreLost, isPgConnectionLost):
      // a ledger write that did not come back means nothing is sent after it.
      query_timeout: queryTimeoutMs ?? STORE_QUERY_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // The ledger's rule needs each commit flushed before it resolves; a role or database configured
      // with synchronous_commit=off would acknowledge commits a server crash can still lose
      // (https://www.postgresql.org/docs/15/runtime-config-wal.html#GUC-SYNCHRONOUS-COMMIT), so our
      // sessions set it back to on (PGOPTIONS-style startup option, settable by any user).
      options: '-c synchronous_commit=on',
    });
    // an idle client's error (the server restarted) must not crash the process: the next query reports it
    pool.on('error', () => undefined);
    try {
      await migrate(pool, where);
    } catch (err) {
      await pool.end().catch(() => undefined);
      if (err instanceof StoreSchemaTooNew) throw err;
      throw new StoreUnavailable(where, errorMessage(err), { cause: err });
    }
    return new PgRunStoreBackend(pool, where);
  }

  async createRun(meta: RunMeta, plan: RunPlan, o: { runDir?: string | null } = {}): Promise<RunStore> {
    await inTransaction(this.pool, async (c) => {
      await c.query(`INSERT INTO ${SCHEMA}.runs (run_id) VALUES ($1) ON CONFLICT DO NOTHING`, [meta.runId]);
      const put = `INSERT INTO ${SCHEMA}.run_meta (run_id, key, value) VALUES ($1, $2, $3) ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value`;
      await c.query(put, [meta.runId, 'meta', JSON.stringify(meta)]);
      await c.query(put, [meta.runId, 'plan', JSON.stringify({ ...plan, permutations: [] })]);
      // what the run is confirmed for, with each permutation's digest: checked before each is run (confirmation.ts)
      await c.query(put, [meta.runId, CONFIRMATION_KEY, JSON.stringify(confirmationOf(meta.runId, meta.confirmedDestroy, plan))]);
      for (let i = 0; i < plan.permutations.length; i += 1000) {
        const chunk = plan.permutations.slice(i, i + 1000);
        await c.query(
          `INSERT INTO ${SCHEMA}.permutations (run_id, permutation_id, idx, axes, plan)
           SELECT $1, * FROM unnest($2::text[], $3::int[], $4::text[], $5::text[]) ON CONFLICT DO NOTHING`,
          [meta.runId, chunk.map((p) => p.permutationId), chunk.map((p) => p.index), chunk.map((p) => JSON.stringify(p.axes)), chunk.map((p) => JSON.stringify(p))],
        );
      }
    });
    return inCallOrder(new PgRunStore(this.pool, meta.runId, o.runDir ?? null, this.where));
  }

  async openRun(runId: string, o: { runDir?: string | null } = {}): Promise<RunStore> {
    const { rowCount } = await this.pool.query(`SELECT 1 FROM ${SCHEMA}.run_meta WHERE run_id = $1 AND key = 'meta'`, [runId]);
    if (!rowCount) throw new RunNotFound(runId, this.where);
    return inCallOrder(new PgRunStore(this.pool, runId, o.runDir ?? null, this.where));
  }

  /**
   * A run (opened before) whose writes all go through `writer` — a worker's lease session: each
   * can only take effect while the session holding the lease lives. Reads stay on the pool.
   */
  runWritingThrough(runId: string, o: { runDir?: string | null }, writer: PgWriter): RunStore {
    return inCallOrder(new PgRunStore(this.pool, runId, o.runDir ?? null, this.where, writer));
  }

  async runs(): Promise<RunSummary[]> {
    const { rows } = await this.pool.query<{ run_id: string; meta: string; status: PermutationStatus | null; n: string }>(
      `SELECT r.run_id, m.value AS meta, p.status, count(p.*) AS n FROM ${SCHEMA}.runs r
       JOIN ${SCHEMA}.run_meta m ON m.run_id = r.run_id AND m.key = 'meta'
       LEFT JOIN ${SCHEMA}.permutations p ON p.run_id = r.run_id
       GROUP BY r.run_id, m.value, p.status ORDER BY r.run_id`,
    );
    const out = new Map<string, RunSummary>();
    for (const r of rows) {
      let s = out.get(r.run_id);
      if (!s) {
        const meta = JSON.parse(r.meta) as RunMeta;
        s = { runId: r.run_id, playbook: meta.playbook, target: meta.target, startedAt: meta.startedAt, counts: emptyCounts() };
        out.set(r.run_id, s);
      }
      if (r.status) s.counts[r.status] = Number(r.n);
    }
    return [...out.values()].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  /**
   * One writer per run (`run --store`, `cleanup`), across machines: a session-level advisory lock
   * on the run's id, held by a connection of its own for as long as the holder lives. The server
   * drops it when that connection ends (the process exits or dies: no stale lock). Who holds it is
   * recorded in the run's meta for the refusal.
   */
  async lockRun(runId: string, command: string): Promise<RunLock> {
    const client = await this.pool.connect();
    const key = runLockKey(runId);
    try {
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [key]);
      if (!rows[0]?.ok) {
        // workers working the run hold it shared (their lease sessions): name them
        const { rows: w } = await client.query<{ pid: number; app: string | null; addr: string | null; since: Date | null }>(
          `SELECT a.pid, a.application_name AS app, a.client_addr::text AS addr, a.backend_start AS since
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid, (SELECT hashtextextended($1, 0) AS v) k
            WHERE l.locktype = 'advisory' AND l.granted AND l.mode = 'ShareLock' AND l.objsubid = 1
              AND l.classid = ((k.v >> 32) & 4294967295)::oid AND l.objid = (k.v & 4294967295)::oid
            ORDER BY a.pid`,
          [key],
        );
        if (w.length) {
          const one = (r: (typeof w)[number]) => `${visible(r.app || 'a session')} (server pid ${r.pid}${r.addr ? ` from ${r.addr}` : ''}${r.since ? `, connected since ${r.since.toISOString()}` : ''})`;
          throw new RunDirLocked(`run ${runId} in ${this.where}`, null, {
            who: `${w.length} worker(s) working it: ${w.map(one).join(', ')}`,
            note: `${command} must not run while workers work the run (it would stop their tools and remove what they are using): stop them (Ctrl-C gives their jobs back) or let them finish, then ${command} again`,
          });
        }
        const { rows: h } = await client.query<{ value: string }>(`SELECT value FROM ${SCHEMA}.run_meta WHERE run_id = $1 AND key = 'lock'`, [runId]);
        const holder = h[0] ? (JSON.parse(h[0].value) as LockHolder) : null;
        throw new RunDirLocked(`run ${runId} in ${this.where}`, holder);
      }
      const holder: LockHolder = { pid: process.pid, host: os.hostname(), since: new Date().toISOString(), command };
      // a new run is locked before it is created: its row first (createRun does the same, ON CONFLICT)
      await client.query(`INSERT INTO ${SCHEMA}.runs (run_id) VALUES ($1) ON CONFLICT DO NOTHING`, [runId]);
      await client.query(`INSERT INTO ${SCHEMA}.run_meta (run_id, key, value) VALUES ($1, 'lock', $2) ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value`, [runId, JSON.stringify(holder)]);
      let released = false;
      return {
        holder,
        previous: null,
        anchorTo: () => undefined,
        release: () => {
          if (released) return;
          released = true;
          // ending the session frees its advisory locks
          client.release(true);
        },
      };
    } catch (err) {
      client.release(true);
      throw err;
    }
  }

  /**
   * Adds `facts` to a run's environment fingerprint (RunMeta.fingerprint) in one statement, so
   * workers recording theirs at once lose none; a key the run has already keeps its value. Returns
   * the fingerprint after (a caller compares its own facts with what was kept).
   */
  async addFingerprint(runId: string, facts: Record<string, string>): Promise<Record<string, string>> {
    const { rows } = await this.pool.query<{ fp: Record<string, string> | null }>(
      `UPDATE ${SCHEMA}.run_meta SET value = jsonb_set(value::jsonb, '{fingerprint}', $2::jsonb || COALESCE(value::jsonb -> 'fingerprint', '{}'::jsonb))::text
       WHERE run_id = $1 AND key = 'meta' RETURNING value::jsonb -> 'fingerprint' AS fp`,
      [runId, JSON.stringify(facts)],
    );
    if (!rows[0]) throw new RunNotFound(runId, this.where);
    return rows[0].fp ?? {};
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

export class PgRunStore implements RunStore {
  readonly kind = 'postgresql' as const;
  readonly where: string;
  constructor(
    private readonly pool: pg.Pool,
    readonly runId: string,
    readonly runDir: string | null,
    store: string,
    writer?: PgWriter,
  ) {
    this.where = `run ${runId} in ${store}`;
    this.w = writer ?? poolWriter(pool);
  }

  /** where every write of this run goes (PgWriter) */
  private readonly w: PgWriter;

  /** The run's connections belong to the backend (several runs share its pool): closing the run closes nothing. */
  async close(): Promise<void> {}

  private async metaValue(key: string, q: Queryable = this.pool): Promise<string | null> {
    const { rows } = await q.query<{ value: string }>(`SELECT value FROM ${SCHEMA}.run_meta WHERE run_id = $1 AND key = $2`, [this.runId, key]);
    return rows[0]?.value ?? null;
  }

  async meta(): Promise<RunMeta> {
    const v = await this.metaValue('meta');
    if (v === null) throw new RunNotFound(this.runId, this.where);
    return JSON.parse(v) as RunMeta;
  }

  async plan(): Promise<RunPlan> {
    const v = await this.metaValue('plan');
    if (v === null) throw new RunNotFound(this.runId, this.where);
    const plan = JSON.parse(v) as RunPlan;
    if (plan.permutations.length === 0) {
      const { rows } = await this.pool.query<{ plan: string }>(`SELECT plan FROM ${SCHEMA}.permutations WHERE run_id = $1 AND plan IS NOT NULL ORDER BY idx`, [this.runId]);
      for (const r of rows) plan.permutations.push(JSON.parse(r.plan) as RunPlan['permutations'][number]);
    }
    return plan;
  }

  async planBaseline(): Promise<RunPlan['baseline']> {
    const v = await this.metaValue('plan');
    return v ? ((JSON.parse(v) as Partial<RunPlan>).baseline ?? null) : null;
  }

  async setMeta(key: string, value: unknown): Promise<void> {
    await this.w.query(`INSERT INTO ${SCHEMA}.run_meta (run_id, key, value) VALUES ($1, $2, $3) ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value`, [this.runId, key, JSON.stringify(value)]);
  }

  async getMeta<T>(key: string): Promise<T | null> {
    const v = await this.metaValue(key);
    return v === null ? null : (JSON.parse(v) as T);
  }

  // --- permutations ------------------------------------------------------------------------

  async permutations(ids?: readonly string[]): Promise<PermutationRow[]> {
    const cols = 'permutation_id, idx, axes, status, reason, attempts, completed_repetitions';
    const { rows } = ids
      ? await this.pool.query<Record<string, unknown>>(`SELECT ${cols} FROM ${SCHEMA}.permutations WHERE run_id = $1 AND permutation_id = ANY($2::text[]) ORDER BY idx`, [this.runId, [...ids]])
      : await this.pool.query<Record<string, unknown>>(`SELECT ${cols} FROM ${SCHEMA}.permutations WHERE run_id = $1 ORDER BY idx`, [this.runId]);
    return rows.map(permutationRowOf);
  }

  async counts(): Promise<StatusCounts> {
    const out = emptyCounts();
    const { rows } = await this.pool.query<{ status: PermutationStatus; n: string }>(`SELECT status, count(*) AS n FROM ${SCHEMA}.permutations WHERE run_id = $1 GROUP BY status`, [this.runId]);
    for (const r of rows) out[r.status] = Number(r.n);
    return out;
  }

  async markRunning(permutationId: string): Promise<void> {
    // the status and its journal entry in one statement (one commit, one round trip)
    await this.w.query(
      `WITH u AS (UPDATE ${SCHEMA}.permutations SET status = 'running', attempts = attempts + 1, reason = NULL, updated_at = $3 WHERE run_id = $1 AND permutation_id = $2)
       ${JOURNAL_INSERT} VALUES ($1, $3, $2, 'permutation', 'start', NULL)`,
      [this.runId, permutationId, now()],
    );
  }

  async noteNotStarted(step: string, reason: string, detail: Record<string, unknown> = {}): Promise<number> {
    return this.w.transaction(async (c) => {
      const at = now();
      const { rowCount } = await c.query(
        `INSERT INTO ${SCHEMA}.journal (run_id, at, permutation_id, step, event, detail)
         SELECT run_id, $2, permutation_id, $3, 'failed', $4 FROM ${SCHEMA}.permutations WHERE run_id = $1 AND status <> 'done' ORDER BY idx`,
        [this.runId, at, step, JSON.stringify({ reason, ...detail })],
      );
      await c.query(`UPDATE ${SCHEMA}.permutations SET reason = $2, updated_at = $3 WHERE run_id = $1 AND status = 'pending'`, [this.runId, reason, at]);
      return rowCount ?? 0;
    });
  }

  async markFinished(permutationId: string, status: 'done' | 'failed', reason: string | null): Promise<void> {
    await this.w.query(
      `WITH u AS (UPDATE ${SCHEMA}.permutations SET status = $3, reason = $4, updated_at = $5 WHERE run_id = $1 AND permutation_id = $2)
       ${JOURNAL_INSERT} VALUES ($1, $5, $2, 'permutation', $3, $6)`,
      [this.runId, permutationId, status, reason, now(), reason ? JSON.stringify({ reason }) : null],
    );
  }

  /** A repetition's records, its counter and its journal entry: one statement, all or nothing. */
  private async repetitionIn(q: PgStatements | PgWriter, permutationId: string, repetition: number, records: ResultRecord[]): Promise<void> {
    await q.query(
      `WITH r AS (INSERT INTO ${SCHEMA}.results (run_id, permutation_id, repetition, test_id, record)
         SELECT $1, $2, $3, test_id, record FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS t(test_id, record, n) ORDER BY n),
       u AS (UPDATE ${SCHEMA}.permutations SET completed_repetitions = $3, updated_at = $6 WHERE run_id = $1 AND permutation_id = $2)
       ${JOURNAL_INSERT} VALUES ($1, $6, $2, $7, 'recorded', $8)`,
      [this.runId, permutationId, repetition, records.map((r) => resultKey(r)), records.map((r) => JSON.stringify(r)), now(), `repetition-${repetition}`, JSON.stringify({ records: records.length })],
    );
  }

  async addRepetition(permutationId: string, repetition: number, records: ResultRecord[]): Promise<void> {
    await this.repetitionIn(this.w, permutationId, repetition, records);
  }

  async addRepetitions(batch: ReadonlyArray<{ permutationId: string; repetition: number; records: ResultRecord[] }>): Promise<void> {
    await this.w.transaction(async (c) => {
      for (const b of batch) await this.repetitionIn(c, b.permutationId, b.repetition, b.records);
    });
  }

  async discardRepetitionsAfter(permutationId: string, keep: number): Promise<number> {
    const r = await this.w.query(`DELETE FROM ${SCHEMA}.results WHERE run_id = $1 AND permutation_id = $2 AND repetition > $3`, [this.runId, permutationId, keep]);
    return r.rowCount ?? 0;
  }

  async records(): Promise<ResultRecord[]> {
    const out: ResultRecord[] = [];
    await this.eachRecord((r) => out.push(r));
    return out;
  }

  async eachRecord(visit: (r: ResultRecord) => void): Promise<void> {
    // Records of one permutation share their axes, test identity, tool and metadata: share the
    // objects too (port.ts recordReader), as the SQLite store does.
    const read = recordReader();
    // keyset pages in plan order (idx, repetition, insertion): bounded memory per round trip
    let after: [number, number, string] = [-1, 0, '0'];
    for (;;) {
      const { rows } = await this.pool.query<{ idx: number; repetition: number; seq: string; record: string }>(
        `SELECT p.idx, r.repetition, r.seq, r.record FROM ${SCHEMA}.results r JOIN ${SCHEMA}.permutations p USING (run_id, permutation_id)
         WHERE r.run_id = $1 AND (p.idx, r.repetition, r.seq) > ($2, $3, $4::bigint)
         ORDER BY p.idx, r.repetition, r.seq LIMIT ${RECORD_BATCH}`,
        [this.runId, after[0], after[1], after[2]],
      );
      for (const row of rows) visit(read(row.record));
      if (rows.length < RECORD_BATCH) return;
      const last = rows[rows.length - 1]!;
      after = [last.idx, last.repetition, last.seq];
    }
  }

  // --- journal -----------------------------------------------------------------------------

  private async journalIn(q: PgStatements | PgWriter, permutationId: string | null, step: string, event: string, detail: unknown): Promise<void> {
    await q.query(`${JOURNAL_INSERT} VALUES ($1, $2, $3, $4, $5, $6)`, [this.runId, now(), permutationId, step, event, detail === null || detail === undefined ? null : JSON.stringify(detail)]);
  }

  async appendJournal(permutationId: string | null, step: string, event: string, detail: unknown): Promise<void> {
    await this.journalIn(this.w, permutationId, step, event, detail);
  }

  async journal(): Promise<JournalEntry[]> {
    const { rows } = await this.pool.query<Record<string, unknown>>(`SELECT seq, at, permutation_id, step, event, detail FROM ${SCHEMA}.journal WHERE run_id = $1 ORDER BY seq`, [this.runId]);
    return rows.map(journalEntryOf);
  }

  // --- ledger ------------------------------------------------------------------------------

  async ledgerIntent(permutationId: string, provider: ProviderName, ref: OwnedObjectRef, data: Record<string, unknown>): Promise<void> {
    const final = `l.state IN (${FINAL_LEDGER_STATES.map((s) => `'${s}'`).join(', ')})`;
    // the row and its journal entry in one statement: one commit, one round trip
    await this.w.query(
      `WITH w AS (INSERT INTO ${SCHEMA}.ledger AS l (run_id, permutation_id, provider, kind, name, data, state, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'intent', $7)
         ON CONFLICT (run_id, kind, name) DO UPDATE SET
           object_id = CASE WHEN ${final} THEN NULL ELSE l.object_id END,
           data = CASE WHEN ${final} THEN excluded.data ELSE l.data END,
           error = CASE WHEN ${final} THEN NULL ELSE l.error END,
           state = CASE WHEN ${final} THEN 'intent' ELSE l.state END,
           updated_at = excluded.updated_at)
       ${JOURNAL_INSERT} VALUES ($1, $7, $2, $8, 'intent', NULL)`,
      [this.runId, permutationId, provider, ref.kind, ref.name, JSON.stringify(data), now(), `${ref.kind}:${ref.name}`],
    );
  }

  async ledgerSent(permutationId: string, ref: OwnedObjectRef, data: Record<string, unknown>): Promise<void> {
    // journalled only when a row was changed (as before: an update that matched nothing says nothing)
    await this.w.query(
      `WITH u AS (UPDATE ${SCHEMA}.ledger SET data = $4, state = 'sent', error = NULL, updated_at = $5 WHERE run_id = $1 AND kind = $2 AND name = $3 AND state IN ('intent', 'sent', 'not-sent') RETURNING 1)
       ${JOURNAL_INSERT} SELECT $1, $5, $6, $7, 'sent', NULL WHERE EXISTS (SELECT 1 FROM u)`,
      [this.runId, ref.kind, ref.name, JSON.stringify(data), now(), permutationId, `${ref.kind}:${ref.name}`],
    );
  }

  async ledgerCreated(permutationId: string, obj: CreatedObject): Promise<void> {
    await this.w.query(
      `WITH u AS (UPDATE ${SCHEMA}.ledger SET object_id = $4, data = $5, state = 'created', error = NULL, updated_at = $6 WHERE run_id = $1 AND kind = $2 AND name = $3)
       ${JOURNAL_INSERT} VALUES ($1, $6, $7, $8, 'created', $9)`,
      [this.runId, obj.kind, obj.name, obj.id, JSON.stringify(obj.data), now(), permutationId, `${obj.kind}:${obj.name}`, JSON.stringify({ id: obj.id })],
    );
  }

  async ledgerState(ref: OwnedObjectRef, state: LedgerState, error: string | null = null): Promise<void> {
    await this.w.query(`UPDATE ${SCHEMA}.ledger SET state = $4, error = $5, updated_at = $6 WHERE run_id = $1 AND kind = $2 AND name = $3`, [this.runId, ref.kind, ref.name, state, error, now()]);
  }

  async leftovers(): Promise<LedgerRow[]> {
    return (await this.ledger()).filter((o) => !FINAL_LEDGER_STATES.includes(o.state));
  }

  async ledger(filter?: { permutationId?: string; live?: boolean }): Promise<LedgerRow[]> {
    const { rows } =
      filter?.permutationId === undefined
        ? await this.pool.query<Record<string, unknown>>(`SELECT * FROM ${SCHEMA}.ledger WHERE run_id = $1 ORDER BY seq`, [this.runId])
        : await this.pool.query<Record<string, unknown>>(`SELECT * FROM ${SCHEMA}.ledger WHERE run_id = $1 AND permutation_id = $2 ORDER BY seq`, [this.runId, filter.permutationId]);
    return rows.map(ledgerRowOf).filter((r) => !filter?.live || LIVE_LEDGER_STATES.includes(r.state));
  }

  async ledgerRow(kind: string, name: string): Promise<LedgerRow | undefined> {
    const { rows } = await this.pool.query<Record<string, unknown>>(`SELECT * FROM ${SCHEMA}.ledger WHERE run_id = $1 AND kind = $2 AND name = $3`, [this.runId, kind, name]);
    return rows[0] ? ledgerRowOf(rows[0]) : undefined;
  }
}

/**
 * The PostgreSQL store is lost (StoreLost: the sweep stops) when the server went away or stopped
 * answering — SQLSTATE (https://www.postgresql.org/docs/current/errcodes-appendix.html) class 08
 * connection exception, 53 insufficient resources (disk full), 57P operator intervention
 * (shutdown), 25006 read-only transaction; the connection refused, reset or timed out (a partition:
 * TCP keep-alive or retransmission gives up with ETIMEDOUT/EHOSTUNREACH); node-postgres and pg-pool
 * errors without a code: the server closed the connection, a query outlived `query_timeout`, no
 * pooled connection came free in time, a client already broken by a connection error. Anything
 * else (a constraint, a bug in a statement) is the call's own failure.
 */
export function isPgConnectionLost(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (/^(08|53|57P)/.test(code) || code === '25006') return true;
    if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code)) return true;
  }
  return e instanceof Error && /^(Connection terminated|Query read timeout|timeout exceeded when trying to connect|Client has encountered a connection error)/.test(e.message);
}

/**
 * The port's order rule (results/port.ts): a run's reads and writes take effect in the order they
 * are called, awaited or not — as with SQLite, whose calls complete synchronously. A journal entry
 * written from a synchronous callback (a provider's note, a stopped tool) is therefore in the
 * journal before anything called after it, and a read sees every write called before it.
 */
function inCallOrder(store: PgRunStore): RunStore {
  let tail: Promise<unknown> = Promise.resolve();
  return new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function' || prop === 'constructor') return v;
      return (...args: unknown[]) => {
        const run = () => (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const r = tail.then(run, run).catch((err: unknown) => {
          throw storeLostOr(err, target.where, isPgConnectionLost);
        });
        tail = r.catch(() => undefined);
        return r;
      };
    },
  });
}

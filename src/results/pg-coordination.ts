// What several controllers (`storsweep worker`) hold in PostgreSQL while they work through one
// sweep, so that the rules one process keeps in memory (run/resource-locks.ts, the endpoint pool's
// per-vCenter limit) hold across processes and machines:
// - a lease session: one connection per worker holding session-level advisory locks for the span of
//   a permutation (its target's group and every resource key the target uses). PostgreSQL releases
//   them when the session ends — at once when the worker dies (kill -9 closes its socket), after
//   the keepalive window when its machine goes silent — so a dead worker's lease expires without
//   anyone guessing from timestamps. The worker runs a heartbeat on that session while it works; a
//   heartbeat that fails or is not answered in time means the lease may already be someone else's:
//   whatever it guards touches nothing more (LeaseSession below, run/executor.ts LeaseGuard).
//   A key made by sharedKey() is held shared (pg_try_advisory_lock_shared): any number of workers
//   at once, none while someone holds it exclusively — a run's lock (pg-store.ts runLockKey), which
//   every worker working the run holds shared and `cleanup` needs exclusively.
// - endpoint slots: a counting semaphore per endpoint (N advisory locks on (endpoint, slot)), held
//   for one provisioning call, so all workers together send at most N calls to one vCenter.
import pg from 'pg';
import { errorMessage, LeaseLost } from '../errors.ts';
import { STORE_QUERY_TIMEOUT_MS, type PgConnection, type PgStatements, type PgWriter } from './pg-store.ts';

const SHARED = 'shared: ';

/** A lease key held shared (see above): several workers together, never while it is held exclusively. */
export function sharedKey(key: string): string {
  return `${SHARED}${key}`;
}

/** Default lease: how long a silent worker keeps its locks (TCP keepalive on its session). */
export const DEFAULT_LEASE_SEC = 30;

export interface LeaseOptions {
  /** a silent session's locks are released after about this long; the heartbeat runs at a quarter of it */
  leaseSec?: number;
  /** called once when the lease is lost (the session failed, or a heartbeat went unconfirmed): stop what it protects */
  onLost?: (err: LeaseLost) => void;
  applicationName?: string;
  /**
   * The server-side budget of one store write on the session (statement_timeout while a write runs),
   * by default the store's own (`queryTimeoutMs` of the connection, else STORE_QUERY_TIMEOUT_MS)
   */
  writeTimeoutMs?: number;
}

/** The server's TCP keepalive settings for a lease: idle half of it, then three probes a sixth apart (each at least 1 s). */
function keepalives(leaseSec: number): { idle: number; interval: number } {
  return { idle: Math.max(1, Math.floor(leaseSec / 2)), interval: Math.max(1, Math.floor(leaseSec / 6)) };
}

/** The earliest the server drops a silent lease session (and its locks): idle + 3 probes. */
function serverKeepsSec(leaseSec: number): number {
  const { idle, interval } = keepalives(leaseSec);
  return idle + 3 * interval;
}

/**
 * A statement that failed because of the connection: no SQLSTATE (broken, timed out: the session's
 * state is unknown), or the server saying the session is gone — class 08 (connection exception),
 * 57P (operator intervention: pg_terminate_backend's 57P01, a shutdown, a crash).
 */
function isConnectionFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return !(typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) || /^(08|57P)/.test(code);
}

/**
 * The worker's lease session (see above). One holder at a time per key, across all sessions.
 *
 * What the lease guarantees its holder (docs/architecture.md, "Several controllers"):
 * - `check()` throws LeaseLost, and `signal` is aborted, once the session failed (the server ended
 *   it, the connection broke) or once no statement has been confirmed for three quarters of the
 *   lease: the server keeps a silent session's locks for at least the whole lease after the last
 *   packet it received (tcp_keepalives_*), so a holder that stops by then stops before anyone can
 *   take over (the client-side bound: a heartbeat that does not answer in time is a lost lease).
 *   While a store write holds the session (up to the store's budget), a probe from another
 *   connection that finds the backend still holding its locks confirms it instead (probe()).
 * - `db` runs a statement ON the lease session (pg-boss's `db` option): it can only take effect
 *   while the session, and so every lock it holds, lives. The worker fetches, completes and gives
 *   back its jobs through it: a worker that lost its lease cannot touch a job another now runs.
 * - `writer(keys)` is the same for the run store's writes (PgRunStoreBackend.runWritingThrough):
 *   a write is executed by the very backend that holds the lease's advisory locks, so the server
 *   itself refuses it once that session is gone — also in the round trip in which the server ended
 *   the session and the worker has not heard yet — and it is refused here once `keys` were released.
 */
export class LeaseSession {
  private heartbeat: NodeJS.Timeout | undefined;
  private lost: LeaseLost | null = null;
  private readonly ac = new AbortController();
  /** the keys this session holds (each once: tryHold refuses a key already held) */
  private readonly held = new Map<string, number>();
  /** the shared keys this session holds, with how often (PostgreSQL counts a session's shared locks too) */
  private readonly sharedHeld = new Map<string, number>();
  private queue: Promise<unknown> = Promise.resolve();
  /** when the last statement the server answered was sent (performance.now()) */
  private confirmedAt = performance.now();
  /** how long a confirmation keeps the lease valid: three quarters of the lease */
  private readonly validMs: number;
  /** the session's statement_timeout for everything but store writes (ms) */
  private readonly shortMs: number;
  /** the server-side budget of a store write (ms; its client-side bound is a little longer) */
  private readonly writeMs: number;
  /** the statement_timeout the session has now: the short one, a write's, or unknown (a SET failed) */
  private timeoutNow: number | undefined;
  /** when the store write the session is running now was sent (performance.now()), or null */
  private writingSince: number | null = null;
  /** the lease backend (its pid and start): what the probe looks for while a write holds the session */
  private backend: { pid: number; start: string } | null = null;
  /** the probe's own connection (opened the first time a write outlasts a heartbeat interval) */
  private probeClient: Promise<pg.Client> | null = null;
  private probing = false;
  /** a heartbeat is queued or running (one at a time: behind a long write they would pile up) */
  private beating = false;
  /** statements queued or running on the session */
  private pending = 0;
  /**
   * The store writes run on the session so far (a transaction counts once): how many, how many found
   * it busy (another statement queued or running: a slot's write behind another's, a job statement,
   * the heartbeat), and the milliseconds they spent waiting for it and running on it.
   */
  readonly writeStats = { writes: 0, behind: 0, queuedMs: 0, runMs: 0 };

  /** pg-boss's `db` option: a statement on the lease session (fenced by it; see above) */
  readonly db = { executeSql: (text: string, values?: unknown[]) => this.fenced(text, values) };

  private constructor(
    private readonly client: pg.Client,
    private readonly conn: PgConnection,
    private readonly o: LeaseOptions & { leaseSec: number },
  ) {
    // three quarters of the lease, and of the earliest the server can drop a silent session
    this.validMs = Math.floor(Math.min(o.leaseSec, serverKeepsSec(o.leaseSec)) * 750);
    this.shortMs = Math.max(1000, Math.floor((o.leaseSec * 1000) / 4));
    this.writeMs = Math.max(1000, Math.round(o.writeTimeoutMs ?? conn.queryTimeoutMs ?? STORE_QUERY_TIMEOUT_MS));
  }

  static async open(conn: PgConnection, o: LeaseOptions = {}): Promise<LeaseSession> {
    const leaseSec = Math.max(2, Math.round(o.leaseSec ?? DEFAULT_LEASE_SEC));
    // Client-side bounds: TCP keepalive on the socket, and no statement waits longer than the
    // lease is valid (node-postgres' query_timeout; the heartbeat's own limit is shorter, below).
    const client = new pg.Client({
      ...conn,
      application_name: o.applicationName ?? 'storsweep worker',
      keepAlive: true,
      keepAliveInitialDelayMillis: 1000,
      // the run store's writes go through this session too (writer()): each commit flushed before it
      // resolves, as on the store's own connections (pg-store.ts)
      options: '-c synchronous_commit=on',
      query_timeout: Math.floor(Math.min(leaseSec, serverKeepsSec(leaseSec)) * 750),
      connectionTimeoutMillis: Math.max(2000, leaseSec * 1000),
    });
    await client.connect();
    const s = new LeaseSession(client, conn, { ...o, leaseSec });
    client.on('error', (err) => s.fail(`the lease session failed: ${errorMessage(err)}`, err));
    client.on('end', () => s.fail('the lease session ended'));
    // The server drops a silent session (and its locks) after idle + interval × count seconds:
    // at least the lease (idle half of it, three probes a sixth apart, each at least 1 s).
    const { idle, interval } = keepalives(leaseSec);
    await s.run(() => client.query(`SET tcp_keepalives_idle = ${idle}; SET tcp_keepalives_interval = ${interval}; SET tcp_keepalives_count = 3`));
    // a statement that hangs on the server fails instead of waiting forever: everything but a store
    // write within a quarter of the lease (a write has the store's budget: writer() below)
    await s.run(() => client.query(`SET statement_timeout = ${s.shortMs}`));
    s.timeoutNow = s.shortMs;
    // Who the lease is on the server (the probe looks for it while a long write holds the session),
    // and: a statement still running once its client is gone is stopped by the server within a second
    // (PostgreSQL 14+, client_connection_check_interval), so a write never commits after the worker
    // gave the session up (fail() ends it) or the keepalive found the worker gone — without it the
    // backend runs the write to its end, holding the locks and committing it.
    const { rows } = await s.run(() =>
      client.query<{ pid: number; start: string }>(
        `SELECT pg_backend_pid() AS pid, (SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()) AS start,
                CASE WHEN current_setting('server_version_num')::int >= 140000 THEN set_config('client_connection_check_interval', '1000', false) END AS checked`,
      ),
    );
    if (rows[0]) s.backend = { pid: rows[0].pid, start: rows[0].start };
    const every = Math.max(250, Math.floor((leaseSec * 1000) / 4));
    s.heartbeat = setInterval(() => void s.beat(), every);
    s.heartbeat.unref();
    return s;
  }

  /**
   * One heartbeat: answered before the lease's validity ends, or the lease is lost. While a store
   * write holds the session (it may take the store's whole budget: a lock wait, a big batch), the
   * heartbeat cannot run on it: the probe then asks another connection whether the lease backend
   * still holds its locks (see probe()).
   */
  private async beat(): Promise<void> {
    if (this.lost) return;
    if (this.writingSince !== null && performance.now() - this.writingSince >= Math.min(1000, this.shortMs / 2)) void this.probe();
    if (this.beating) return;
    this.beating = true;
    try {
      this.check();
      // The deadline is the lease's validity, which any statement answered meanwhile extends: the
      // heartbeat may be queued behind store writes (writer(), every slot's) that each confirm the
      // session; only when none did for validMs is the lease lost (review s23: a fixed deadline
      // taken when the beat was queued lost it spuriously behind a few answered writes).
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        const arm = () => {
          const left = this.confirmedAt + this.validMs - performance.now();
          if (left <= 0) reject(new Error(`the heartbeat was not answered within ${Math.round(this.validMs / 1000)} s of the last confirmation`));
          else timer = setTimeout(arm, Math.max(1, left));
        };
        arm();
      });
      try {
        await Promise.race([this.run(() => this.client.query('SELECT 1')), late]);
      } finally {
        clearTimeout(timer);
      }
    } catch (err) {
      this.fail(err instanceof LeaseLost ? err.details.reason : `heartbeat: ${errorMessage(err)}`, err);
    } finally {
      this.beating = false;
    }
  }

  /**
   * While a store write holds the session: does its backend still hold advisory locks (pg_locks, on a
   * connection of the probe's own)? Yes confirms the lease as of when the probe was sent — the
   * backend, and every lock it holds, lived then (a backend releases its locks before it leaves
   * pg_stat_activity, so pg_locks is asked, not only whether it runs). No: the session is gone, the
   * lease lost at once. No answer: nothing confirmed; the lease's validity runs out as for a silent
   * heartbeat. Only a write is probed for: it is the one statement allowed to run longer than the
   * heartbeat's bound, and it is bounded itself (the store's budget, on the server and the client).
   */
  private async probe(): Promise<void> {
    const backend = this.backend;
    if (this.probing || this.lost || !backend) return;
    this.probing = true;
    try {
      if (!this.probeClient) {
        const c = new pg.Client({
          ...this.conn,
          application_name: `${this.o.applicationName ?? 'storsweep worker'} (lease probe)`,
          keepAlive: true,
          keepAliveInitialDelayMillis: 1000,
          query_timeout: this.validMs,
          connectionTimeoutMillis: this.validMs,
        });
        const p = c.connect().then(() => c);
        const drop = () => {
          if (this.probeClient === p) this.probeClient = null;
        };
        c.on('error', drop);
        c.on('end', drop);
        p.catch(drop);
        this.probeClient = p;
      }
      const c = await this.probeClient;
      const sentAt = performance.now();
      const heldAtSend = this.held.size + this.sharedHeld.size > 0;
      const { rows } = await c.query<{ locked: boolean }>(
        `SELECT EXISTS (SELECT FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted) AS locked
         FROM pg_stat_activity a WHERE a.pid = $1 AND a.backend_start::text = $2`,
        [backend.pid, backend.start],
      );
      // holding keys both when the probe was sent and now (a key taken meanwhile is not in its answer)
      const holding = heldAtSend && this.held.size + this.sharedHeld.size > 0;
      if (rows[0] && (rows[0].locked || !holding)) {
        if (sentAt > this.confirmedAt) this.confirmedAt = sentAt;
      } else if (!this.lost) {
        this.fail(rows[0] ? `the lease session's backend (pid ${backend.pid}) holds none of its locks any more` : `the lease session's backend (pid ${backend.pid}) is gone`);
      }
    } catch {
      // no answer: nothing confirmed (the deadline decides)
    } finally {
      this.probing = false;
    }
  }

  /** Why the lease is gone, or null. */
  get lostReason(): LeaseLost | null {
    if (!this.lost && performance.now() > this.confirmedAt + this.validMs) this.fail(`no statement confirmed the session for ${Math.round(this.validMs / 1000)} s (the server may have released its locks)`);
    return this.lost;
  }

  /** Aborted, with the LeaseLost as its reason, when the lease is lost. */
  get signal(): AbortSignal {
    return this.ac.signal;
  }

  /** Throws LeaseLost when the lease is lost or no longer confirmed (see the class comment). */
  check(): void {
    const lost = this.lostReason;
    if (lost) throw lost;
  }

  private fail(reason: string, cause?: unknown): void {
    if (this.lost) return;
    this.lost = new LeaseLost(reason, cause === undefined ? undefined : { cause });
    clearInterval(this.heartbeat);
    this.ac.abort(this.lost);
    try {
      this.o.onLost?.(this.lost);
    } catch {
      /* the caller's stop is best effort here */
    }
    // a session in doubt is closed: whatever it still held is released by the server (and a write
    // still running on it is stopped: client_connection_check_interval, see open())
    void this.client.end().catch(() => undefined);
    this.endProbe();
  }

  private endProbe(): void {
    const p = this.probeClient;
    this.probeClient = null;
    void p?.then((c) => c.end()).catch(() => undefined);
  }

  /**
   * One statement at a time on the session (pg queues too; this keeps our bookkeeping in step). A
   * statement the server answered confirms the lease from when it was sent; one that failed on the
   * connection (no SQLSTATE: broken, timed out) loses it.
   */
  private run<T>(fn: () => Promise<T>, write = false): Promise<T> {
    const queuedAt = performance.now();
    const behind = this.pending++ > 0;
    const go = async (): Promise<T> => {
      const sentAt = performance.now();
      try {
        const r = await fn();
        if (sentAt > this.confirmedAt) this.confirmedAt = sentAt;
        return r;
      } catch (err) {
        if (isConnectionFailure(err)) this.fail(`a statement on the lease session failed: ${errorMessage(err)}`, err);
        // the server answered (a constraint, a write past its budget): the session lived
        else if (sentAt > this.confirmedAt) this.confirmedAt = sentAt;
        throw err;
      } finally {
        this.pending--;
        if (write) {
          const w = this.writeStats;
          w.writes++;
          if (behind) w.behind++;
          w.queuedMs += sentAt - queuedAt;
          w.runMs += performance.now() - sentAt;
        }
      }
    };
    const p = this.queue.then(go, go);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** A statement on the lease session, refused once the lease is lost. */
  private async fenced(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    this.check();
    return this.run(async () => {
      await this.timeout(this.shortMs);
      return this.client.query(text, values);
    });
  }

  /**
   * The session's statement_timeout set to `ms` when it has another (called inside run(): nothing
   * else is on the session). A session-level switch, made only when the kind of statement changes
   * (the job statements' short bound, a write's budget), rather than a SET LOCAL around every write:
   * a single write is one statement (one commit, one round trip) and stays one.
   */
  private async timeout(ms: number): Promise<void> {
    if (this.timeoutNow === ms) return;
    this.timeoutNow = undefined;
    await this.client.query(`SET statement_timeout = ${ms}`);
    this.timeoutNow = ms;
  }

  /**
   * The run store's writes for work done under `keys` (PgWriter), on this session: each statement,
   * and each transaction as a whole, is queued with the heartbeat and the job statements, and
   * refused before it is queued once the lease is lost or any of `keys` was released (a write called
   * after the permutation's keys were given back would otherwise run after the unlock). What is
   * queued runs on the backend holding the locks: if the server ended that session, it runs nowhere.
   */
  writer(keys: readonly string[]): PgWriter {
    const guard = () => {
      this.check();
      const gone = keys.find((k) => (k.startsWith(SHARED) ? !this.sharedHeld.has(k.slice(SHARED.length)) : !this.held.has(k)));
      if (gone !== undefined) throw new LeaseLost(`a store write after the lease's key was released (${gone})`);
    };
    // A write runs under the store's budget, not the session's short statement_timeout (review s23
    // L2: a lock wait or a big batch longer than a quarter of the lease failed the permutation): on
    // the server (statement_timeout) and a little longer on the client (query_timeout), so that the
    // server's cancel, an answer, comes first. The heartbeat cannot run while it holds the session:
    // beat() probes the backend from another connection instead (probe()).
    const statement = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      this.client.query<R>({ text, values, query_timeout: this.writeMs + this.shortMs } as pg.QueryConfig);
    const write = <T>(fn: () => Promise<T>): Promise<T> =>
      this.run(async () => {
        await this.timeout(this.writeMs);
        this.writingSince = performance.now();
        try {
          return await fn();
        } finally {
          this.writingSince = null;
        }
      }, true);
    // a transaction's own statements (it holds the queue for its whole span, so nothing else can)
    // confirm the session as any statement does: one longer than the lease, each of its statements
    // answered in time, keeps it (review s23)
    const on: PgStatements = {
      query: async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => {
        const sentAt = performance.now();
        const r = await statement<R>(text, values);
        if (sentAt > this.confirmedAt) this.confirmedAt = sentAt;
        return r;
      },
    };
    return {
      query: async (text, values) => {
        guard();
        return write(() => statement(text, values));
      },
      transaction: async <T>(fn: (q: PgStatements) => Promise<T>): Promise<T> => {
        guard();
        return write(async () => {
          await statement('BEGIN');
          try {
            const r = await fn(on);
            await statement('COMMIT');
            return r;
          } catch (err) {
            await this.client.query('ROLLBACK').catch(() => undefined);
            throw err;
          }
        });
      },
    };
  }

  /**
   * Takes every key or none (each key an advisory lock on hashtextextended(key, 0); when one is
   * held elsewhere, the ones taken are given back): nobody waits while holding, so two workers
   * never deadlock. Returns the release.
   */
  async tryHold(keys: readonly string[]): Promise<(() => Promise<void>) | null> {
    this.check();
    const all = [...new Set(keys)];
    const wanted = all.filter((k) => !k.startsWith(SHARED));
    const shared = all.filter((k) => k.startsWith(SHARED)).map((k) => k.slice(SHARED.length));
    // PostgreSQL's advisory locks are re-entrant within a session: a key this worker already holds
    // (another of its slots works under it) is as busy as one held elsewhere (a shared key is not:
    // its slots hold it together, counted)
    if (wanted.some((k) => this.held.has(k))) return null;
    // one round trip: try every key (a try never waits, so the order cannot deadlock)
    const { rows } = await this.run(() =>
      this.client.query<{ k: string; s: boolean; ok: boolean }>(
        `SELECT k, false AS s, pg_try_advisory_lock(hashtextextended(k, 0)) AS ok FROM unnest($1::text[]) AS k
         UNION ALL SELECT k, true AS s, pg_try_advisory_lock_shared(hashtextextended(k, 0)) AS ok FROM unnest($2::text[]) AS k`,
        [wanted, shared],
      ),
    );
    const taken = rows.filter((r) => r.ok && !r.s).map((r) => r.k);
    const takenShared = rows.filter((r) => r.ok && r.s).map((r) => r.k);
    for (const k of taken) this.held.set(k, 1);
    for (const k of takenShared) this.sharedHeld.set(k, (this.sharedHeld.get(k) ?? 0) + 1);
    if (taken.length !== wanted.length || takenShared.length !== shared.length) {
      await this.unlock(taken, takenShared);
      return null;
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.unlock(taken, takenShared);
    };
  }

  private async unlock(keys: readonly string[], shared: readonly string[] = []): Promise<void> {
    for (const k of keys) this.held.delete(k);
    for (const k of shared) {
      const n = (this.sharedHeld.get(k) ?? 1) - 1;
      if (n > 0) this.sharedHeld.set(k, n);
      else this.sharedHeld.delete(k);
    }
    if (this.lost || (!keys.length && !shared.length)) return; // the session is gone: so are its locks
    await this.run(() =>
      this.client.query(
        `SELECT pg_advisory_unlock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k
         UNION ALL SELECT pg_advisory_unlock_shared(hashtextextended(k, 0)) FROM unnest($2::text[]) AS k`,
        [keys, shared],
      ),
    ).catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    this.endProbe();
    if (!this.lost) {
      this.lost = new LeaseLost('closed');
      this.ac.abort(this.lost);
    }
    await this.client.end().catch(() => undefined);
  }
}

export interface EndpointSlots {
  /** takes a slot of `key` (one of `max`), waiting while all are held anywhere; returns its release */
  gate(key: string, max: number, signal?: AbortSignal): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * A counting semaphore per endpoint across every worker: `max` advisory locks on (endpoint, slot),
 * each held for the span of one call. Polls every `pollMs` while all are held.
 *
 * The slots live on a connection of their own, never on the store's pool: the call a slot guards
 * writes the ledger (ctx.sent) through that pool, and slots holding its connections starved it
 * (review 17, finding 7: four calls in flight held all four, the ledger write timed out and the
 * sweep stopped as a lost store). One session holds any number of slots (this process keeps which:
 * PostgreSQL's advisory locks are re-entrant within a session, so a slot this worker holds would be
 * granted again); it ends with the process, and its slots with it.
 *
 * Every worker must use the same `max` for one endpoint: each counts slots 0..max-1, so a worker
 * configured with a larger max than the others sends more at once (docs/decisions.md; the worker
 * refuses a run whose inventory differs in it: queue-commands.ts measurementFacts).
 */
export function endpointSlots(conn: PgConnection, o: { pollMs?: number; applicationName?: string } = {}): EndpointSlots {
  const pollMs = o.pollMs ?? 50;
  const held = new Set<string>();
  let client: Promise<pg.Client> | null = null;
  let closed = false;
  const session = (): Promise<pg.Client> => {
    if (closed) return Promise.reject(new Error('endpoint slots closed'));
    if (!client) {
      const c = new pg.Client({ ...conn, application_name: o.applicationName ?? 'storsweep endpoint slots', keepAlive: true, keepAliveInitialDelayMillis: 1000 });
      const p = c.connect().then(() => c);
      // a session that ends takes its slots with it: the next call opens another
      const drop = () => {
        if (client === p) client = null;
      };
      c.on('error', drop);
      c.on('end', drop);
      p.catch(drop);
      client = p;
    }
    return client;
  };
  const gate = async (key: string, max: number, signal?: AbortSignal): Promise<() => Promise<void>> => {
    const name = `endpoint ${key}`;
    for (;;) {
      signal?.throwIfAborted();
      const c = await session();
      for (let slot = 0; slot < Math.max(1, max); slot++) {
        const id = `${slot} ${name}`;
        if (held.has(id)) continue;
        // taken locally before the round trip: two calls of this process never try the same slot
        held.add(id);
        let ok = false;
        try {
          const { rows } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok', [name, slot]);
          ok = Boolean(rows[0]?.ok);
        } finally {
          if (!ok) held.delete(id);
        }
        if (!ok) continue;
        let released = false;
        return async () => {
          if (released) return;
          released = true;
          try {
            await c.query('SELECT pg_advisory_unlock(hashtext($1), $2)', [name, slot]);
          } catch {
            // a session that cannot unlock is closed: its locks go with it
            await c.end().catch(() => undefined);
          } finally {
            held.delete(id);
          }
        };
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  };
  return {
    gate,
    async close() {
      closed = true;
      const c = await client?.catch(() => null);
      await c?.end().catch(() => undefined);
    },
  };
}

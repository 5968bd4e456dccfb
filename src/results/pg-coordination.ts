// What several controllers (`storsweep worker`) hold in PostgreSQL while they work through one
// sweep, so that the rules one process keeps in memory (run/resource-locks.ts, the endpoint pool's
// per-vCenter limit) hold across processes and machines:
// - a lease session: one connection per worker holding session-level advisory locks for the span of
//   a permutation (its target's group and every resource key the target uses). PostgreSQL releases
//   them when the session ends — at once when the worker dies (kill -9 closes its socket), after
//   the keepalive window when its machine goes silent — so a dead worker's lease expires without
//   anyone guessing from timestamps. The worker runs a heartbeat on that session while it works; a
//   heartbeat that fails means the lease may already be someone else's: it stops the permutation.
//   A key made by sharedKey() is held shared (pg_try_advisory_lock_shared): any number of workers
//   at once, none while someone holds it exclusively — a run's lock (pg-store.ts runLockKey), which
//   every worker working the run holds shared and `cleanup` needs exclusively.
// - endpoint slots: a counting semaphore per endpoint (N advisory locks on (endpoint, slot)), held
//   for one provisioning call, so all workers together send at most N calls to one vCenter.
import pg from 'pg';
import type { PgConnection } from './pg-store.ts';

const SHARED = 'shared: ';

/** A lease key held shared (see above): several workers together, never while it is held exclusively. */
export function sharedKey(key: string): string {
  return `${SHARED}${key}`;
}

/** Default lease: how long a silent worker keeps its locks (TCP keepalive on its session). */
export const DEFAULT_LEASE_SEC = 30;

export interface LeaseOptions {
  /** a silent session's locks are released after about this long; the heartbeat runs at a third of it */
  leaseSec?: number;
  /** called once when the heartbeat fails: the locks may be gone; stop what they protect */
  onLost?: (err: Error) => void;
  applicationName?: string;
}

/** The worker's lease session (see above). One holder at a time per key, across all sessions. */
export class LeaseSession {
  private heartbeat: NodeJS.Timeout | undefined;
  private lost: Error | null = null;
  /** the keys this session holds (each once: tryHold refuses a key already held) */
  private readonly held = new Map<string, number>();
  /** the shared keys this session holds, with how often (PostgreSQL counts a session's shared locks too) */
  private readonly sharedHeld = new Map<string, number>();
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly client: pg.Client,
    private readonly o: LeaseOptions,
  ) {}

  static async open(conn: PgConnection, o: LeaseOptions = {}): Promise<LeaseSession> {
    const leaseSec = Math.max(2, Math.round(o.leaseSec ?? DEFAULT_LEASE_SEC));
    // client-side keepalive too: a worker cut off from the server learns it from its heartbeat
    const client = new pg.Client({ ...conn, application_name: o.applicationName ?? 'storsweep worker', keepAlive: true, keepAliveInitialDelayMillis: 1000 });
    await client.connect();
    const s = new LeaseSession(client, { ...o, leaseSec });
    client.on('error', (err) => s.fail(err));
    client.on('end', () => s.fail(new Error('the lease session ended')));
    // The server drops a silent session (and its locks) after idle + interval × count seconds.
    const idle = Math.max(1, Math.floor(leaseSec / 2));
    const interval = Math.max(1, Math.floor(leaseSec / 6));
    await client.query(`SET tcp_keepalives_idle = ${idle}; SET tcp_keepalives_interval = ${interval}; SET tcp_keepalives_count = 3`);
    // a statement that hangs (the server unreachable) fails the heartbeat instead of waiting forever
    await client.query(`SET statement_timeout = ${Math.max(1000, Math.floor((leaseSec * 1000) / 3))}`);
    const every = Math.max(500, Math.floor((leaseSec * 1000) / 3));
    s.heartbeat = setInterval(() => {
      void s.run(() => client.query('SELECT 1')).catch((err: unknown) => s.fail(err instanceof Error ? err : new Error(String(err))));
    }, every);
    s.heartbeat.unref();
    return s;
  }

  /** Why the lease is gone, or null. */
  get lostReason(): Error | null {
    return this.lost;
  }

  private fail(err: Error): void {
    if (this.lost) return;
    this.lost = err;
    clearInterval(this.heartbeat);
    try {
      this.o.onLost?.(err);
    } catch {
      /* the caller's stop is best effort here */
    }
  }

  /** One statement at a time on the session (pg queues too; this keeps our bookkeeping in step). */
  private run<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.queue.then(fn, fn);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /**
   * Takes every key or none (each key an advisory lock on hashtextextended(key, 0); when one is
   * held elsewhere, the ones taken are given back): nobody waits while holding, so two workers
   * never deadlock. Returns the release.
   */
  async tryHold(keys: readonly string[]): Promise<(() => Promise<void>) | null> {
    if (this.lost) throw this.lost;
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
    this.lost ??= new Error('closed');
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

// The shared work of a run on PostgreSQL, through pg-boss (docs/decisions.md, "Several controllers"):
// `storsweep submit` puts one job per permutation on the queue of its target group; `storsweep worker`
// fetches from the groups it can reach. A group is the targets that must take turns (one target, or
// the targets a RunPlan.serialised key joins: a shared VM, guest, LUN); its queue is worked by one
// worker at a time, under the group's lease (results/pg-coordination.ts), so within a group the
// permutations run one after the other in plan order, whichever worker runs them.
import { createHash } from 'node:crypto';
import PgBoss from 'pg-boss';
import type { RunPlan } from '../contract/plan.ts';
import type { PgConnection } from '../results/pg-store.ts';

/** The pg-boss schema (its own tables, next to the store's `storsweep` schema). */
export const QUEUE_SCHEMA = 'storsweep_queue';

/** One group of targets that take turns, and its queue. */
export interface QueueGroup {
  queue: string;
  targets: string[];
}

/**
 * How long a job may wait on its queue: for ever. pg-boss 10 archives (moves out of the queue, so
 * no worker fetches it again) a job still waiting once its `keep_until` passes (plans.js `archive`:
 * `state < 'active' AND keep_until < now()`), 14 days after it became fetchable by default, while
 * one group of 100 permutations of 4 h takes 16 days. PostgreSQL's `infinity` is never passed; a
 * failed-back job keeps its keep_until (plans.js `failJobs`). Completed jobs are archived on
 * pg-boss's own schedule (`archiveCompletedAfterSeconds`, 12 h), which loses nothing: the results
 * are in the store.
 */
export const KEEP_UNTIL = 'infinity';

/** What a job carries: which permutation of which run. */
export interface PermutationJob {
  runId: string;
  permutationId: string;
}

/**
 * The target groups of a plan: each listed target alone, unless a serialised resource joins it to
 * others (union of every key's targets). One target: one group. Queue names from the run id and the
 * group's position (pg-boss: letters, digits, `_`, `-`).
 */
export function queueGroups(plan: Pick<RunPlan, 'runId' | 'target' | 'targets' | 'serialised'>): QueueGroup[] {
  const names = plan.targets ? plan.targets.map((t) => t.name) : [plan.target];
  const parent = new Map(names.map((n) => [n, n]));
  const root = (n: string): string => {
    let r = n;
    while (parent.get(r) !== r) r = parent.get(r)!;
    parent.set(n, r);
    return r;
  };
  for (const s of plan.serialised ?? []) {
    const [first, ...rest] = s.targets.filter((t) => parent.has(t));
    if (first === undefined) continue;
    for (const t of rest) parent.set(root(t), root(first));
  }
  const groups = new Map<string, string[]>();
  for (const n of names) groups.set(root(n), [...(groups.get(root(n)) ?? []), n]);
  return [...groups.values()].map((targets, i) => ({ queue: `storsweep_${plan.runId}_g${i}`, targets }));
}

/** The job id of a permutation: the same every time (a uuid from its run and permutation id). */
export function jobId(runId: string, permutationId: string): string {
  const h = createHash('sha256').update(`${runId}/${permutationId}`).digest('hex');
  // shaped as an RFC 4122 version-5-style uuid (pg-boss's id column is uuid)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** pg-boss's `db` option: where a job statement runs (results/pg-coordination.ts LeaseSession.db). */
export interface JobDb {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** pg-boss's command response: how many jobs the statement changed. */
function affected(r: unknown): number {
  const n = (r as { affected?: unknown } | null)?.affected;
  return typeof n === 'number' ? n : 0;
}

export interface WorkQueueOptions {
  /**
   * pg-boss's own expiry of an active job (seconds): the backstop that puts a job back when nobody
   * took it over earlier (a worker takes a dead worker's job over as soon as its lease is gone).
   * Must exceed the longest permutation. Default 4 h.
   */
  expireSec?: number;
}

export class WorkQueue {
  private constructor(
    readonly boss: PgBoss,
    private readonly o: WorkQueueOptions,
    private readonly started = true,
  ) {}

  /**
   * The queues over a connection pool of the store (`status`, `cleanup`): pg-boss's calls without
   * starting it (no maintenance, no schema migration), for a database where `submit` created it.
   */
  static over(query: Sql): WorkQueue {
    const boss = new PgBoss({ db: { executeSql: (text: string, values?: unknown[]) => query(text, values ?? []) }, schema: QUEUE_SCHEMA, schedule: false, supervise: false });
    boss.on('error', () => undefined);
    return new WorkQueue(boss, {}, false);
  }

  /** Which of `groups`' queues exist. */
  async existing(groups: readonly QueueGroup[]): Promise<QueueGroup[]> {
    if (!(await schemaPresent((sql, params) => this.boss.getDb().executeSql(sql, params)))) return [];
    const out: QueueGroup[] = [];
    for (const g of groups) if (await this.boss.getQueue(g.queue)) out.push(g);
    return out;
  }

  static async open(conn: PgConnection, o: WorkQueueOptions = {}): Promise<WorkQueue> {
    const boss = new PgBoss({
      host: conn.host,
      port: conn.port,
      user: conn.user,
      database: conn.database,
      ...(conn.password !== undefined ? { password: conn.password } : {}),
      ...(conn.ssl !== undefined ? { ssl: conn.ssl } : {}),
      schema: QUEUE_SCHEMA,
      max: 3,
      application_name: 'storsweep queue',
      // no cron schedules; maintenance (expiry, archive) stays on
      schedule: false,
    });
    // pg-boss reports its background errors as events: a worker keeps going, the next call says it
    boss.on('error', () => undefined);
    await boss.start();
    return new WorkQueue(boss, o);
  }

  /** One job per permutation on its group's queue, in plan order; done again, nothing is added twice. */
  async enqueue(plan: RunPlan, groups: readonly QueueGroup[]): Promise<number> {
    const queueOf = new Map(groups.flatMap((g) => g.targets.map((t) => [t, g.queue] as const)));
    for (const g of groups) {
      if (!(await this.boss.getQueue(g.queue))) {
        // a queue is never created again for a finished run: restore() only enqueues unfinished permutations
        await this.boss.createQueue(g.queue, { name: g.queue, policy: 'standard', retryLimit: 1000, retryDelay: 0, expireInSeconds: this.o.expireSec ?? 4 * 3600 });
      }
    }
    const jobs: PgBoss.JobInsert<PermutationJob>[] = plan.permutations.map((p) => ({
      id: jobId(plan.runId, p.permutationId),
      name: queueOf.get(plan.targets ? String(p.axes.target) : plan.target)!,
      data: { runId: plan.runId, permutationId: p.permutationId },
      // plan order within a queue: pg-boss fetches by priority, then creation time
      priority: -p.index,
      keepUntil: KEEP_UNTIL,
    }));
    for (let i = 0; i < jobs.length; i += 500) await this.boss.insert(jobs.slice(i, i + 500));
    return jobs.length;
  }

  /**
   * Puts back on its queue the job of every permutation in `unfinished` that no queue holds in any
   * state (archived or removed by hand: a run queued before KEEP_UNTIL, a database restored from
   * an older copy); returns those permutation ids. A job the queue still has (waiting, active,
   * completed, failed) is left alone: the ids are fixed, and pg-boss inserts ON CONFLICT DO NOTHING.
   */
  async restore(plan: RunPlan, groups: readonly QueueGroup[], unfinished: ReadonlySet<string>): Promise<string[]> {
    const perms = plan.permutations.filter((p) => unfinished.has(p.permutationId));
    if (!perms.length) return [];
    const have = await queuedJobIds((sql, params) => this.boss.getDb().executeSql(sql, params), groups.map((g) => g.queue), perms.map((p) => jobId(plan.runId, p.permutationId)));
    const missing = perms.filter((p) => !have.has(jobId(plan.runId, p.permutationId)));
    if (missing.length) await this.enqueue({ ...plan, permutations: missing }, groups);
    return missing.map((p) => p.permutationId);
  }

  /**
   * Removes the run's queues (each a partition table of pg-boss's job table, with its indexes) with
   * whatever jobs they still hold: called once every permutation of the run is final. Returns the
   * queues this call deleted (none when another worker was first).
   *
   * One transaction in one round trip for all the queues, not four round trips and a commit per
   * queue: dropping a partition takes an ACCESS EXCLUSIVE lock on pg-boss's job table and commits
   * catalog changes, so 40 queues deleted one by one, by every worker that saw the run end (each
   * blocking the others' statements on the job table), held the last --until-idle workers 3–8 s
   * after the last permutation (bench scale.workers' timeline). Deleters take turns (a transaction
   * advisory lock first: two sessions dropping partitions at once deadlock on the job and queue
   * tables); the one that comes second finds nothing left. The jobs go first: pg-boss's
   * delete_queue drops the partition under the queue row's foreign key and fails while the
   * partition holds any job, completed ones too. When the transaction fails anyway, queue by queue
   * as before. Queue names are checked as pg-boss checks them (letters, digits, `_`, `-`) before
   * they are written into the statement: parameters would need the extended protocol, which runs
   * one statement per round trip and no transaction across them on a pool.
   */
  async deleteQueues(groups: readonly QueueGroup[]): Promise<string[]> {
    const names = groups.map((g) => g.queue);
    if (!names.length) return [];
    for (const n of names) if (!/^[\w-]+$/.test(n)) throw new Error(`not a queue name: ${JSON.stringify(n)}`);
    const list = names.map((n) => `'${n}'`).join(', ');
    try {
      const results = (await this.boss.getDb().executeSql(
        [
          `SELECT pg_advisory_xact_lock(hashtextextended('storsweep: deleting queues', 0))`,
          `DELETE FROM ${QUEUE_SCHEMA}.job WHERE name IN (${list})`,
          `SELECT name, ${QUEUE_SCHEMA}.delete_queue(name)::text FROM ${QUEUE_SCHEMA}.queue WHERE name IN (${list}) ORDER BY name`,
        ].join(';\n'),
        // no values: the simple query protocol, which takes several statements as one transaction
        [],
      )) as unknown;
      // several statements in one query: one result each (node-postgres), the queues deleted last
      const last = (Array.isArray(results) ? results[results.length - 1] : results) as { rows: Array<{ name: string }> };
      return last.rows.map((r) => r.name);
    } catch {
      return this.deleteQueuesOneByOne(groups);
    }
  }

  private async deleteQueuesOneByOne(groups: readonly QueueGroup[]): Promise<string[]> {
    const deleted: string[] = [];
    for (const g of groups) {
      if (!(await this.boss.getQueue(g.queue))) continue;
      try {
        await this.boss.getDb().executeSql(`DELETE FROM ${QUEUE_SCHEMA}.job WHERE name = $1`, [g.queue]);
        await this.boss.deleteQueue(g.queue);
        deleted.push(g.queue);
      } catch (err) {
        // another worker deleting it at the same moment (pg-boss's delete_queue then has no table name)
        if (await this.boss.getQueue(g.queue)) throw err;
      }
    }
    return deleted;
  }

  /**
   * The next job of a queue, or null. `via`: pg-boss's `db` option, the statement's connection
   * (the worker passes its lease session: a fetch can only take effect while its lease lives).
   */
  async fetch(queue: string, via?: JobDb): Promise<{ id: string; data: unknown } | null> {
    const [job] = await this.boss.fetch<unknown>(queue, { batchSize: 1, ...(via ? { db: via } : {}) });
    return job ? { id: job.id, data: job.data } : null;
  }

  /** Completes an active job; false when it was not active any more (nothing changed). */
  async complete(queue: string, id: string, via?: JobDb, output?: object): Promise<boolean> {
    const r = await this.boss.complete(queue, id, output ?? {}, via ? { db: via } : {});
    return affected(r) > 0;
  }

  /** Cancels a job that must never run (not this group's); false when it was finished already. */
  async cancel(queue: string, id: string, via?: JobDb): Promise<boolean> {
    const r = await this.boss.cancel(queue, id, via ? { db: via } : {});
    return affected(r) > 0;
  }

  /**
   * Pushes back pg-boss's expiry of an active job (its backstop for a job nobody took over): from
   * now, another `expireSec` of the queue's own expiry at least. The worker does this on its lease
   * session while the permutation runs, so a permutation longer than the expiry is never put back
   * (and redone) while it runs. pg-boss has no call for it: its job table (pg-boss 10, pinned).
   */
  async renew(queue: string, id: string, via: JobDb, expireSec: number): Promise<boolean> {
    const { rows }: { rows: unknown[] } = await via.executeSql(
      `UPDATE ${QUEUE_SCHEMA}.job SET expire_in = greatest(expire_in, (now() - started_on) + make_interval(secs => $3)) WHERE name = $1 AND id = $2 AND state = 'active' RETURNING id`,
      [queue, id, expireSec],
    );
    return rows.length > 0;
  }

  /**
   * Jobs of `queue` that are active: called under the group's lease, so whoever fetched them no
   * longer holds it (its session ended: a dead or cut-off worker). pg-boss has no call that lists
   * jobs by state, so this reads its job table (pg-boss 10's schema, pinned by package.json).
   */
  async active(queue: string): Promise<string[]> {
    const db = this.boss.getDb();
    const { rows }: { rows: Array<{ id: string }> } = await db.executeSql(`SELECT id FROM ${QUEUE_SCHEMA}.job WHERE name = $1 AND state = 'active'`, [queue]);
    return rows.map((r) => r.id);
  }

  /**
   * Per queue: jobs waiting (created or to be retried, due now), active, and unfinished (those and
   * the retries not yet due: pg-boss's getQueueSize before 'completed'); one round trip for all.
   */
  async status(queues: readonly string[]): Promise<Map<string, { waiting: number; active: number; unfinished: number }>> {
    const db = this.boss.getDb();
    const { rows }: { rows: Array<{ name: string; waiting: number; active: number; unfinished: number }> } = await db.executeSql(
      `SELECT name, count(*) FILTER (WHERE state < 'active' AND start_after < now())::int AS waiting, count(*) FILTER (WHERE state = 'active')::int AS active, count(*)::int AS unfinished
       FROM ${QUEUE_SCHEMA}.job WHERE name = ANY($1::text[]) AND state <= 'active' GROUP BY name`,
      [[...queues]],
    );
    return new Map(rows.map((r) => [r.name, { waiting: r.waiting, active: r.active, unfinished: r.unfinished }]));
  }

  /**
   * Puts jobs back (pg-boss: retry, fetchable at once): a dead worker's, or one's own unfinished.
   * How many were put back (a job no longer unfinished is left as it is).
   */
  async giveBack(queue: string, ids: readonly string[], why: string, via?: JobDb): Promise<number> {
    let n = 0;
    for (const id of ids) n += affected(await this.boss.fail(queue, id, { message: why }, via ? { db: via } : {}));
    return n;
  }

  /** Jobs not finished on a queue (waiting, to be retried, or active). */
  async unfinished(queue: string): Promise<number> {
    return this.boss.getQueueSize(queue, { before: 'completed' });
  }

  async close(): Promise<void> {
    if (!this.started) return;
    await this.boss.stop({ graceful: false, wait: true, timeout: 5000 }).catch(() => undefined);
  }
}

export type Sql = (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>;

async function schemaPresent(query: Sql): Promise<boolean> {
  const { rows } = await query(`SELECT to_regclass($1) IS NOT NULL AS present`, [`${QUEUE_SCHEMA}.job`]);
  return Boolean((rows[0] as { present: boolean } | undefined)?.present);
}

/**
 * Which of the job ids `ids` the queues `queues` hold, in any state (pg-boss 10's job table, the
 * schema package.json pins). A database where nothing was ever queued holds none.
 */
export async function queuedJobIds(query: Sql, queues: readonly string[], ids: readonly string[]): Promise<Set<string>> {
  if (!(await schemaPresent(query))) return new Set();
  const { rows } = await query(`SELECT id::text AS id FROM ${QUEUE_SCHEMA}.job WHERE name = ANY($1::text[]) AND id = ANY($2::uuid[])`, [[...queues], [...ids]]);
  return new Set((rows as Array<{ id: string }>).map((r) => r.id));
}

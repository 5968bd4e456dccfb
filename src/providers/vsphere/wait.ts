// Waiting for properties to change, the way govmomi's property.Collector + WaitForUpdatesEx loop
// does it: every wait of one session shares ONE PropertyCollector and ONE long poll. A wait adds
// a PropertyFilter for its object to the shared collector (CreateFilter) and removes it when it
// ends (DestroyPropertyFilter, sent without holding the caller up); a single loop per session
// calls WaitForUpdatesEx with the version the server last returned and hands each
// PropertyFilterUpdate to the wait that owns the filter. No sleep-polling: the server answers the
// long poll as soon as a filter reports something (a new filter reports its objects at once).
//
// What a wait may meet:
//  - session expiry: the session layer (session.ts) logs in again and replays the call, but a
//    collector lives as long as its session, so the replay says ManagedObjectNotFound for it (or
//    the session's generation tells a re-login happened): the collector is retired, a new one made
//    (session-scoped.ts), every open wait's filter created again on it, and the loop starts again
//    from version '' (everything reported afresh).
//  - InvalidCollectorVersion (the server no longer knows our version): poll again from ''.
//  - its own timeout or abort: only that wait ends.
// The poll stays open for a while after the last wait ended (IDLE_POLL_MS): the next wait's
// CreateFilter is then answered by the poll already under way, one round trip instead of two
// (CreateFilter, then WaitForUpdatesEx). After that it stops; close() (the client's logout)
// cancels a poll under way with CancelWaitForUpdates.
// A wait may name more objects (`also`): the same filter reports them with the waited-for one, so
// a task's wait can bring the properties the task changed (disks.ts: a VM's devices after adding
// a disk) instead of a read after it.
// Tasks (task.ts) and VM states (vms.ts) both wait through it.
import { isFault, VsphereClientError } from './fault.ts';
import { cancelWaitForUpdates, createFilter, createPropertyCollector, destroyPropertyFilter, waitForUpdatesEx, type RoundTripper } from './methods.ts';
import { isGone, SessionScoped, type Scoped } from './session-scoped.ts';
import type { MoRef } from './soap.ts';
import { arr, type DataObject, type ServiceContent, type UpdateSet } from './types.ts';

export interface WaitOptions {
  /** overall limit; undefined = as long as it takes */
  timeoutMs?: number;
  /**
   * More objects in the same filter: their properties come with the same updates as the waited-for
   * object's, in the collector's order (see PropertyWaits.wait), and reach `settle` as its second
   * argument, one values record per entry.
   */
  also?: Watch[];
  signal?: AbortSignal;
  /** for the timeout message, e.g. `task task-12 (CreateVmfsDatastore)` */
  what: () => string;
  host: string;
}

/** Server-side bound of one long poll; below the SOAP client's HTTP timeout (soap.ts, 10 min). */
export const LONG_POLL_SECONDS = 30;
/** How long the poll stays open with no wait, for the next one. */
export const IDLE_POLL_MS = 5_000;

/** An object and the properties of it to report. */
export interface Watch {
  obj: MoRef;
  paths: string[];
}

type ObjectUpdates = NonNullable<NonNullable<UpdateSet['filterSet']>[number]['objectSet']>;

interface Waiter {
  obj: MoRef;
  paths: string[];
  values: Record<string, unknown>;
  also: Watch[];
  /** the latest values of each of `also`, by index */
  alsoValues: Array<Record<string, unknown>>;
  /** its filter on `collector`, once created */
  filter?: MoRef;
  collector?: Scoped;
  done: boolean;
  /** the values changed: ask settle */
  update(truncated: boolean): void;
  fail(err: unknown): void;
}

export interface PropertyWaitsOptions {
  /** WaitForUpdatesEx maxWaitSeconds (tests shorten it) */
  longPollSeconds?: number;
  /** how long the poll stays open with no wait (default IDLE_POLL_MS) */
  idlePollMs?: number;
}

/** The shared collector and poll loop of one session (one round-tripper). */
export class PropertyWaits {
  private readonly collectors: SessionScoped;
  /** the collector `version` belongs to */
  private collector: Scoped | undefined;
  private version = '';
  private readonly byFilter = new Map<string, Waiter>();
  private readonly open = new Set<Waiter>();
  private polling: Promise<void> | undefined;
  /** the collector the poll under way is on, if one is */
  private polled: MoRef | undefined;
  private cancelling = false;
  private closed = false;
  private readonly longPollSeconds: number;
  private readonly idlePollMs: number;
  /** when the last wait ended (the idle poll's deadline counts from it) */
  private lastEnded = 0;
  /**
   * Updates of a filter whose CreateFilter answer has not arrived yet: the poll under way may
   * answer first (the server reports a new filter at once). Kept until claimed, or a minute.
   */
  private readonly unclaimed = new Map<string, { at: number; objectSet: ObjectUpdates }>();

  constructor(
    private readonly rt: RoundTripper,
    private readonly sc: ServiceContent,
    opts: PropertyWaitsOptions = {},
  ) {
    this.longPollSeconds = opts.longPollSeconds ?? LONG_POLL_SECONDS;
    this.idlePollMs = opts.idlePollMs ?? IDLE_POLL_MS;
    this.collectors = new SessionScoped(rt, () => createPropertyCollector(this.rt, this.sc.propertyCollector), { onRetire: (c) => this.reattach(c) });
  }

  /**
   * Waits until `settle(values, also)` returns `{ value }`; `values` holds the latest value of each
   * of `paths` of `obj` (absent until the server reported it), `also` the same for each object of
   * `opts.also`. `settle` may throw to end the wait.
   *
   * With `opts.also`, one filter covers them all, so what `settle` sees of them is one state of the
   * server: the versions WaitForUpdatesEx returns "are strongly ordered in the sense that passing a
   * version … requests updates that reflect changes in the objects selected by the Filter that
   * happened after the specified version" (vSphere Web Services API, UpdateSet.version), and all
   * updates of one answer are applied before `settle` is asked. A change the server made before the
   * one `settle` waits for has therefore been reported by then, in that answer or an earlier one.
   */
  wait<V>(obj: MoRef, paths: string[], settle: (values: Record<string, unknown>, also: Array<Record<string, unknown>>) => { value: V } | undefined, opts: WaitOptions): Promise<V> {
    if (this.closed) return Promise.reject(new VsphereClientError('closed', `${opts.what()}: the vSphere session is closed`, { method: 'WaitForUpdatesEx', host: opts.host }));
    opts.signal?.throwIfAborted();
    return new Promise<V>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => end(() => reject(asError(opts.signal!.reason)));
      const end = (report: () => void) => {
        if (w.done) return;
        w.done = true;
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.detach(w);
        report();
      };
      const also = opts.also ?? [];
      const w: Waiter = {
        obj,
        paths,
        values: {},
        also,
        alsoValues: also.map(() => ({})),
        done: false,
        update: (truncated) => {
          if (truncated) return;
          let done;
          try {
            done = settle(w.values, w.alsoValues);
          } catch (err) {
            end(() => reject(asError(err)));
            return;
          }
          if (done) {
            const v = done.value;
            end(() => resolve(v));
          }
        },
        fail: (err) => end(() => reject(asError(err))),
      };
      if (opts.timeoutMs !== undefined) {
        timer = setTimeout(() => end(() => reject(new VsphereClientError('timeout', `${opts.what()} not ready after ${opts.timeoutMs} ms`, { method: 'WaitForUpdatesEx', host: opts.host }))), opts.timeoutMs);
      }
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.open.add(w);
      this.attach(w).catch((err: unknown) => w.fail(err));
    });
  }

  /** Ends the poll under way (if any) and refuses new waits; open waits fail. The session's logout destroys the collector. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of [...this.open]) w.fail(new VsphereClientError('closed', `waiting for ${w.obj.type} ${w.obj.value}: the vSphere session was closed`, { method: 'WaitForUpdatesEx', host: '' }));
    await this.cancelPoll();
    await this.polling;
  }

  private currentCollector(): Scoped {
    const c = this.collectors.current();
    if (c !== this.collector) {
      this.collector = c;
      this.version = '';
    }
    return c;
  }

  /** The collector is gone with its session (retired): every open wait gets a filter on a new one. */
  private reattach(c: Scoped): void {
    for (const w of this.open) {
      if (w.collector !== c) continue;
      if (w.filter) this.byFilter.delete(w.filter.value);
      w.filter = undefined;
      w.collector = undefined;
      w.values = {};
      w.alsoValues = w.also.map(() => ({}));
      this.attach(w).catch((err: unknown) => w.fail(err));
    }
  }

  private async attach(w: Waiter): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const c = this.currentCollector();
      const pc = await c.ref;
      let filter: MoRef;
      try {
        filter = await createFilter(this.rt, pc, filterSpec(w), false);
      } catch (err) {
        if (attempt < 2 && isGone(err, pc)) {
          this.collectors.retire(c);
          continue;
        }
        throw err;
      }
      if (w.done) {
        destroyPropertyFilter(this.rt, filter).catch(() => undefined);
        return;
      }
      // retired while CreateFilter was under way: the filter went with the old session
      if (c.retired) continue;
      w.filter = filter;
      w.collector = c;
      this.byFilter.set(filter.value, w);
      const early = this.unclaimed.get(filter.value);
      if (early) {
        this.unclaimed.delete(filter.value);
        if (this.apply(w, early.objectSet)) w.update(false);
      }
      this.ensurePolling();
      return;
    }
  }

  private detach(w: Waiter): void {
    this.open.delete(w);
    if (w.filter) {
      this.byFilter.delete(w.filter.value);
      // not awaited: the caller goes on while the server drops the filter (its updates, if any
      // still come, find no wait and are ignored)
      if (!w.collector?.retired) destroyPropertyFilter(this.rt, w.filter).catch(() => undefined);
      w.filter = undefined;
    }
    if (this.open.size === 0) this.lastEnded = Date.now();
  }

  private idleLeftMs(): number {
    return this.open.size > 0 ? Infinity : this.lastEnded + this.idlePollMs - Date.now();
  }

  private async cancelPoll(): Promise<void> {
    const pc = this.polled;
    if (!pc || this.cancelling) return;
    this.cancelling = true;
    await cancelWaitForUpdates(this.rt, pc).catch(() => undefined);
  }

  private ensurePolling(): void {
    if (this.polling || this.closed) return;
    this.polling = this.pollLoop()
      .catch((err: unknown) => {
        for (const w of [...this.open]) if (w.filter) w.fail(err);
      })
      .finally(() => {
        this.polling = undefined;
        if (this.byFilter.size > 0 && !this.closed) this.ensurePolling();
      });
  }

  private async pollLoop(): Promise<void> {
    let canceledBySomeoneElse = 0;
    for (;;) {
      // open waits not yet attached (re-made after a re-login) are attached before polling on
      const idle = this.idleLeftMs();
      if (this.closed || (this.byFilter.size === 0 && (this.open.size > 0 || idle <= 0))) return;
      const c = this.currentCollector();
      const pc = await c.ref;
      let set: UpdateSet | undefined;
      this.polled = pc;
      this.cancelling = false;
      const seconds = idle === Infinity ? this.longPollSeconds : Math.max(1, Math.min(this.longPollSeconds, Math.ceil(idle / 1000)));
      try {
        set = await waitForUpdatesEx(this.rt, pc, this.version, { maxWaitSeconds: seconds });
      } catch (err) {
        if (isGone(err, pc)) {
          this.collectors.retire(c);
          continue;
        }
        if (isFault(err, 'InvalidCollectorVersion')) {
          this.version = '';
          continue;
        }
        if (isFault(err, 'RequestCanceled')) {
          // ours (close)
          if (this.cancelling) continue;
          if (++canceledBySomeoneElse < 3) continue;
        }
        throw err;
      } finally {
        this.polled = undefined;
      }
      canceledBySomeoneElse = 0;
      // an answer from a collector retired meanwhile belongs to no open wait
      if (c.retired || !set) continue;
      this.version = set.version;
      const now = Date.now();
      for (const [k, u] of this.unclaimed) if (now - u.at > 60_000) this.unclaimed.delete(k);
      const touched = new Set<Waiter>();
      for (const fu of arr(set.filterSet)) {
        const w = this.byFilter.get(fu.filter.value);
        if (!w) {
          const prev = this.unclaimed.get(fu.filter.value);
          this.unclaimed.set(fu.filter.value, { at: now, objectSet: [...(prev?.objectSet ?? []), ...arr(fu.objectSet)] });
          continue;
        }
        if (this.apply(w, arr(fu.objectSet))) touched.add(w);
      }
      for (const w of touched) if (!w.done) w.update(set.truncated === true);
    }
  }

  /** `objectSet` into the wait's values; false when an object left (the wait failed). */
  private apply(w: Waiter, objectSet: ObjectUpdates): boolean {
    for (const ou of objectSet) {
      if (ou.kind === 'leave') {
        w.fail(new VsphereClientError('not-found', `${ou.obj.type} ${ou.obj.value} is gone (WaitForUpdatesEx reported it leaving)`, { method: 'WaitForUpdatesEx', host: '' }));
        return false;
      }
      const values = sameRef(ou.obj, w.obj) ? w.values : w.alsoValues[w.also.findIndex((a) => sameRef(a.obj, ou.obj))];
      if (!values) continue;
      for (const ch of arr(ou.changeSet)) {
        if (ch.op === 'remove') delete values[ch.name];
        else values[ch.name] = ch.val;
      }
    }
    return true;
  }
}

function sameRef(a: MoRef, b: MoRef): boolean {
  return a.type === b.type && a.value === b.value;
}

/**
 * The wait's PropertyFilterSpec: its object first, then `also`, one PropertySpec per type (paths
 * of objects of one type merged: a PropertySpec names a type, not an object).
 */
function filterSpec(w: Waiter): DataObject {
  const byType = new Map<string, Set<string>>();
  for (const { obj, paths } of [{ obj: w.obj, paths: w.paths }, ...w.also]) {
    const set = byType.get(obj.type) ?? new Set<string>();
    for (const p of paths) set.add(p);
    byType.set(obj.type, set);
  }
  return {
    propSet: [...byType].map(([type, paths]) => ({ type, pathSet: [...paths] })),
    objectSet: [w.obj, ...w.also.map((a) => a.obj)].map((obj) => ({ obj, skip: false })),
  };
}

/** What a wait rejects with: the error as thrown (an abort reason that is no Error, wrapped). */
function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

const perSession = new WeakMap<RoundTripper, PropertyWaits>();

/** The shared waits of the session behind `rt` (made on first use). */
export function propertyWaits(rt: RoundTripper, sc: ServiceContent, opts?: PropertyWaitsOptions): PropertyWaits {
  let w = perSession.get(rt);
  if (!w) {
    w = new PropertyWaits(rt, sc, opts);
    perSession.set(rt, w);
  }
  return w;
}

/** Closes the shared waits of `rt`, if it has any (before logging out). */
export async function closePropertyWaits(rt: RoundTripper): Promise<void> {
  const w = perSession.get(rt);
  if (!w) return;
  perSession.delete(rt);
  await w.close();
}

/**
 * Waits until `settle(values)` returns `{ value }` (see PropertyWaits.wait), through the shared
 * collector of the session behind `rt`.
 */
export function waitForUpdates<V>(
  rt: RoundTripper,
  sc: ServiceContent,
  obj: MoRef,
  paths: string[],
  settle: (values: Record<string, unknown>, also: Array<Record<string, unknown>>) => { value: V } | undefined,
  opts: WaitOptions,
): Promise<V> {
  return propertyWaits(rt, sc).wait(obj, paths, settle, opts);
}

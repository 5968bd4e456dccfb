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
// cancels a poll under way with CancelWaitForUpdates. The next poll and a filter's destroy go out
// after a macrotask (setImmediate): the call the resolved wait's caller makes next goes first.
// A wait may name more objects (`also`): the same filter reports them with the waited-for one, so
// a task's wait can bring the properties the task changed (disks.ts: a VM's devices after adding
// a disk) instead of a read after it.
// Task waits (task.ts, `taskView`) do not make a filter each: the session keeps ONE ListView and
// one filter on it (Task.info through the view), and a wait adds its task with ModifyListView,
// which also takes out the tasks whose waits ended (batched: one call in flight, the rest in the
// next). A wait that wants a VM's devices with its task (`also`) keeps its own filter. The API
// reference recommends this ("Generally, a ListView is a better way to monitor a specific set of
// Task objects", TaskManager.recentTask); recentTask itself is not used: "vSphere Servers might
// not generate property collector update notifications for this property" (ManagedEntity and
// TaskManager.recentTask, vSphere API since 5.0). Updates through the view are keyed by object,
// so a wait sees only its own task; a task that finished before it was added is reported with
// its final info when it enters the view; one the server no longer knows is unresolved (the
// wait fails not-found). The view lives as long as its session, like the collector: when the
// collector is given up (session-scoped.ts) the view goes with it, and the open waits' tasks go
// into a new one. docs/decisions.md, "Task waits through one ListView".
// Tasks (task.ts) and VM states (vms.ts) both wait through it.
import { isFault, VsphereClientError } from './fault.ts';
import {
  cancelWaitForUpdates,
  createFilter,
  createListView,
  createPropertyCollector,
  destroyPropertyFilter,
  modifyListView,
  waitForUpdatesEx,
  type RoundTripper,
} from './methods.ts';
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
  /**
   * A Task's wait: through the session's task view (one ListView, one filter) when it asks for
   * `info` and nothing `also`; else (a wait that wants a VM's devices with the task) its own filter.
   */
  taskView?: boolean;
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
  /** waits through the task view instead of a filter of its own */
  viaView: boolean;
  /** the task view it is registered with */
  view?: TaskView;
  done: boolean;
  /** the values changed: ask settle */
  update(truncated: boolean): void;
  fail(err: unknown): void;
}

/**
 * The session's task view: a ListView on the shared collector with one filter through it (Task
 * `info`). A task is added when a wait needs it and taken out with the next ModifyListView once
 * no wait needs it. `values` are the latest reported, per task.
 */
interface TaskView {
  collector: Scoped;
  /** the collector's moref (the view was made after it was) */
  pc: MoRef;
  /** the ListView and its filter, once made (CreateListView, CreateFilter) */
  ready?: Promise<{ view: MoRef; filter: MoRef }>;
  view?: MoRef;
  filter?: MoRef;
  /** objects in the view or on their way in, by key */
  members: Set<string>;
  /** `again`: already sent once in a ModifyListView that failed (sent again once, see pump) */
  pendingAdd: Map<string, { obj: MoRef; settled: Array<(unresolved: boolean, err?: unknown) => void>; again?: boolean }>;
  /** adds sent and not yet answered: a wait for one of them is told with them (review s23 V4) */
  inFlight: Map<string, { settled: Array<(unresolved: boolean, err?: unknown) => void> }>;
  pendingRemove: Map<string, MoRef>;
  /** a ModifyListView under way (one at a time: the server sees adds and removes in order) */
  modifying: boolean;
  values: Map<string, Record<string, unknown>>;
  /** the waits registered, by task key */
  byObject: Map<string, Set<Waiter>>;
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
  private taskView: TaskView | undefined;

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
        viaView: opts.taskView === true && this.sc.viewManager !== undefined && fitsTaskView(obj, paths, also),
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
    // the task view lives as long as its session too: made again by the first wait re-attached
    if (this.taskView?.collector === c) this.taskView = undefined;
    for (const w of this.open) {
      if (w.collector !== c) continue;
      if (w.filter) this.byFilter.delete(w.filter.value);
      w.filter = undefined;
      w.collector = undefined;
      w.view = undefined;
      w.values = {};
      w.alsoValues = w.also.map(() => ({}));
      this.attach(w).catch((err: unknown) => w.fail(err));
    }
  }

  private async attach(w: Waiter): Promise<void> {
    if (w.viaView) return this.attachToView(w);
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

  /**
   * A task wait through the session's task view: registers the wait by object, then has its task
   * added with the next ModifyListView. The caller's updates
   * need no reply first (they are keyed by object, not by filter); the reply matters only when it
   * says the task could not be resolved, or the view is gone with its session.
   */
  private async attachToView(w: Waiter): Promise<void> {
    for (;;) {
      const c = this.currentCollector();
      const pc = await c.ref;
      if (w.done) return;
      if (c.retired) continue;
      let tv = this.taskView;
      if (!tv || tv.collector !== c) {
        tv = { collector: c, pc, members: new Set(), pendingAdd: new Map(), inFlight: new Map(), pendingRemove: new Map(), modifying: false, values: new Map(), byObject: new Map() };
        this.taskView = tv;
      }
      const view = tv;
      w.collector = c;
      w.view = view;
      for (const o of waiterObjects(w)) {
        const k = refKey(o);
        let set = view.byObject.get(k);
        if (!set) view.byObject.set(k, (set = new Set()));
        set.add(w);
        this.want(view, o, (unresolved, err) => this.added(w, view, o, unresolved, err));
      }
      if (!view.ready) this.makeView(view);
      else {
        this.pump(view);
        // the poll may have stopped (idle): its answers bring this task
        if (view.filter) this.ensurePolling();
      }
      // already reported (a task waited for again while still in the view)
      if (view.filter && view.values.has(refKey(w.obj))) this.updateFromView(w, view, false);
      return;
    }
  }

  /** `o` into the view (if not in it or on its way): queued for the next ModifyListView. */
  private want(tv: TaskView, o: MoRef, settled: (unresolved: boolean, err?: unknown) => void): void {
    const k = refKey(o);
    // taken out with the next call: stays in instead, a member again (detach took it out of
    // `members`: else its next detach would queue no removal, and a leave would be ignored)
    if (tv.pendingRemove.delete(k)) {
      tv.members.add(k);
      return;
    }
    if (tv.members.has(k)) {
      (tv.pendingAdd.get(k) ?? tv.inFlight.get(k))?.settled.push(settled);
      return;
    }
    tv.members.add(k);
    tv.pendingAdd.set(k, { obj: o, settled: [settled] });
  }

  /** The answer to adding `o` for `w`: unresolved = the server does not know it. */
  private added(w: Waiter, tv: TaskView, o: MoRef, unresolved: boolean, err?: unknown): void {
    if (w.done || w.view !== tv) return;
    if (err !== undefined) {
      if (isGone(err, tv.pc) || (tv.view && isFault(err, 'ManagedObjectNotFound') && sameRef(err.details.detail.obj as MoRef, tv.view))) {
        // the session was replaced: the view went with it
        this.collectors.retire(tv.collector);
        return;
      }
      // vcsim (govmomi 0.24) faults ManagedObjectNotFound where vCenter returns the object as
      // unresolved; for another object of the same call, this one is added again
      if (isFault(err, 'ManagedObjectNotFound')) {
        const other = err.details.detail.obj as MoRef | undefined;
        if (other && sameRef(other, o)) unresolved = true;
        else {
          this.want(tv, o, (u, e) => this.added(w, tv, o, u, e));
          this.pump(tv);
          return;
        }
      } else {
        w.fail(err);
        return;
      }
    }
    if (unresolved && sameRef(o, w.obj)) {
      w.fail(new VsphereClientError('not-found', `${o.type} ${o.value} is unknown to the server (ModifyListView could not resolve it)`, { method: 'ModifyListView', host: '' }));
    }
  }

  /** CreateListView (empty) and the filter through it, then the adds queued meanwhile. */
  private makeView(tv: TaskView): void {
    tv.modifying = true;
    const c = tv.collector;
    tv.ready = (async () => {
      const view = await createListView(this.rt, this.sc.viewManager!, []);
      const filter = await createFilter(this.rt, tv.pc, taskViewSpec(view), false);
      return { view, filter };
    })();
    tv.ready.then(
      ({ view, filter }) => {
        tv.modifying = false;
        if (this.taskView !== tv || c.retired) return;
        tv.view = view;
        tv.filter = filter;
        const early = this.unclaimed.get(filter.value);
        if (early) {
          this.unclaimed.delete(filter.value);
          this.dispatch(this.applyView(tv, early.objectSet), false);
        }
        this.pump(tv);
        this.ensurePolling();
      },
      (err: unknown) => {
        tv.modifying = false;
        if (this.taskView !== tv) return;
        if (isGone(err, tv.pc)) {
          this.collectors.retire(c);
          return;
        }
        // a fault of the view itself: the waits fail with it, the next wait tries again
        this.taskView = undefined;
        for (const w of [...this.open]) if (w.view === tv) w.fail(err);
      },
    );
  }

  /** Sends the queued adds (with the queued removals) when no ModifyListView is under way. */
  private pump(tv: TaskView): void {
    if (this.closed || tv.modifying || !tv.view || this.taskView !== tv || tv.collector.retired || tv.pendingAdd.size === 0) return;
    const adds = [...tv.pendingAdd.values()];
    for (const a of adds) tv.inFlight.set(refKey(a.obj), a);
    tv.pendingAdd.clear();
    const removes = [...tv.pendingRemove.values()];
    tv.pendingRemove.clear();
    tv.modifying = true;
    modifyListView(
      this.rt,
      tv.view,
      adds.map((a) => a.obj),
      removes,
    )
      .then(
        (unresolved) => {
          for (const a of adds) if (tv.inFlight.get(refKey(a.obj)) === a) tv.inFlight.delete(refKey(a.obj));
          const bad = new Set(unresolved.map(refKey));
          for (const a of adds) {
            const u = bad.has(refKey(a.obj));
            if (u) tv.members.delete(refKey(a.obj));
            for (const cb of a.settled) cb(u);
          }
        },
        (err: unknown) => {
          for (const a of adds) if (tv.inFlight.get(refKey(a.obj)) === a) tv.inFlight.delete(refKey(a.obj));
          // what was to leave the view did not: it leaves with the next call (unless wanted again meanwhile)
          for (const r of removes) if (!tv.members.has(refKey(r))) tv.pendingRemove.set(refKey(r), r);
          // One fault must not fail every wait of the batch while their tasks run on: the adds are
          // sent again once (ModifyListView is idempotent). ManagedObjectNotFound goes to added():
          // the view or collector gone with the session, or an object the server does not know.
          const failing: typeof adds = [];
          for (const a of adds) {
            const k = refKey(a.obj);
            // still wanted (not detached meanwhile: then it is queued for removal, not again)
            if (!a.again && !isFault(err, 'ManagedObjectNotFound') && tv.byObject.has(k) && !tv.pendingRemove.has(k)) tv.pendingAdd.set(k, { ...a, again: true });
            else failing.push(a);
          }
          for (const a of failing) tv.members.delete(refKey(a.obj));
          for (const a of failing) for (const cb of a.settled) cb(false, err);
        },
      )
      .finally(() => {
        tv.modifying = false;
        this.pump(tv);
      });
  }

  /** `objectSet` of the view's filter into its values; the waits it concerns. */
  private applyView(tv: TaskView, objectSet: ObjectUpdates): Set<Waiter> {
    const touched = new Set<Waiter>();
    for (const ou of objectSet) {
      const k = refKey(ou.obj);
      const ws = tv.byObject.get(k);
      if (ou.kind === 'leave') {
        tv.values.delete(k);
        // a task we took out, or one the server dropped: a wait still on it adds it again (the
        // server then reports it afresh, or says it cannot resolve it: not-found)
        if (ws && tv.members.delete(k)) {
          for (const w of ws) this.want(tv, ou.obj, (u, e) => this.added(w, tv, ou.obj, u, e));
          this.pump(tv);
        }
        continue;
      }
      let values = tv.values.get(k);
      if (!values) tv.values.set(k, (values = {}));
      for (const ch of arr(ou.changeSet)) {
        if (ch.op === 'remove') delete values[ch.name];
        else values[ch.name] = ch.val;
      }
      if (ws) for (const w of ws) touched.add(w);
    }
    return touched;
  }

  private updateFromView(w: Waiter, tv: TaskView, truncated: boolean): void {
    w.values = tv.values.get(refKey(w.obj)) ?? {};
    w.alsoValues = w.also.map((a) => tv.values.get(refKey(a.obj)) ?? {});
    w.update(truncated);
  }

  private dispatch(touched: Set<Waiter>, truncated: boolean): void {
    for (const w of touched) {
      if (w.done) continue;
      if (w.view) this.updateFromView(w, w.view, truncated);
      else w.update(truncated);
    }
  }

  private detach(w: Waiter): void {
    this.open.delete(w);
    if (w.view) {
      const tv = w.view;
      w.view = undefined;
      for (const o of waiterObjects(w)) {
        const k = refKey(o);
        const set = tv.byObject.get(k);
        if (!set) continue;
        set.delete(w);
        if (set.size > 0) continue;
        tv.byObject.delete(k);
        // a finished task leaves the view with the next ModifyListView
        if (tv.pendingAdd.delete(k)) tv.members.delete(k);
        else if (tv.members.delete(k)) tv.pendingRemove.set(k, o);
      }
    }
    if (w.filter) {
      this.byFilter.delete(w.filter.value);
      // not awaited: the caller goes on while the server drops the filter (its updates, if any
      // still come, find no wait and are ignored)
      const filter = w.filter;
      // after what the caller sends next (setImmediate): it waits for nothing of this
      if (!w.collector?.retired) setImmediate(() => void destroyPropertyFilter(this.rt, filter).catch(() => undefined));
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
        for (const w of [...this.open]) if (w.filter || w.view) w.fail(err);
      })
      .finally(() => {
        this.polling = undefined;
        if (this.attached() && !this.closed) this.ensurePolling();
      });
  }

  /** Whether a wait has something the server reports: its own filter, or the task view's. */
  private attached(): boolean {
    return this.byFilter.size > 0 || (this.taskView?.filter !== undefined && this.taskView.byObject.size > 0);
  }

  private async pollLoop(): Promise<void> {
    let canceledBySomeoneElse = 0;
    for (;;) {
      // open waits not yet attached (re-made after a re-login) are attached before polling on
      const idle = this.idleLeftMs();
      if (this.closed || (!this.attached() && (this.open.size > 0 || idle <= 0))) return;
      const c = this.currentCollector();
      const pc = await c.ref;
      let set: UpdateSet | undefined;
      this.polled = pc;
      this.cancelling = false;
      const seconds = idle === Infinity ? this.longPollSeconds : Math.max(1, Math.min(this.longPollSeconds, Math.ceil(idle / 1000)));
      const from = this.version;
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
      const tv = this.taskView;
      // from '' the server reports everything afresh: what left meanwhile is not said to leave
      if (from === '' && tv) tv.values.clear();
      for (const fu of arr(set.filterSet)) {
        if (tv?.filter && tv.filter.value === fu.filter.value) {
          for (const w of this.applyView(tv, arr(fu.objectSet))) touched.add(w);
          continue;
        }
        const w = this.byFilter.get(fu.filter.value);
        if (!w) {
          const prev = this.unclaimed.get(fu.filter.value);
          this.unclaimed.set(fu.filter.value, { at: now, objectSet: [...(prev?.objectSet ?? []), ...arr(fu.objectSet)] });
          continue;
        }
        if (this.apply(w, arr(fu.objectSet))) touched.add(w);
      }
      this.dispatch(touched, set.truncated === true);
      // the next poll after what the waits' callers send next: an answer that ended a wait lets
      // its caller's next call go out first (this one is only needed by the wait after it)
      await new Promise<void>((resolve) => setImmediate(resolve));
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

function sameRef(a: MoRef | undefined, b: MoRef): boolean {
  return a !== undefined && a.type === b.type && a.value === b.value;
}

function refKey(o: MoRef): string {
  return `${o.type}:${o.value}`;
}

function waiterObjects(w: Waiter): MoRef[] {
  return [w.obj, ...w.also.map((a) => a.obj)];
}

/**
 * Whether a wait can go through the task view: a Task's `info`, nothing `also`. A wait that wants
 * a VM's devices with its task keeps a filter of its own: in the view the VM would stay between
 * operations and every reconfigure of it would wake the poll before its task is added (one more
 * answer and poll per operation), or leave and enter again (its whole device list each time).
 */
function fitsTaskView(obj: MoRef, paths: string[], also: Watch[]): boolean {
  return obj.type === 'Task' && paths.length === 1 && paths[0] === 'info' && also.length === 0;
}

/** The task view's filter: Task `info` of every object of the ListView. */
function taskViewSpec(view: MoRef): DataObject {
  return {
    propSet: [{ type: 'Task', pathSet: ['info'] }],
    objectSet: [{ obj: view, skip: true, selectSet: [{ _type: 'TraversalSpec', name: 'view', type: 'ListView', path: 'view', skip: false }] }],
  };
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

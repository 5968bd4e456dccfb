// The one property-collector wait loop: a private PropertyCollector with a filter on one object's
// properties, then WaitForUpdatesEx (a server-side long poll, no sleep-polling) until `settle`
// accepts what the properties now hold. The collector (and with it the filter) is destroyed
// however the wait ends, so an aborted wait leaks nothing server-side. Tasks (task.ts) and VM
// states (vms.ts) both wait through it.
import { isFault, VsphereClientError } from './fault.ts';
import { createFilter, createPropertyCollector, destroyPropertyCollector, waitForUpdatesEx, type RoundTripper } from './methods.ts';
import type { MoRef } from './soap.ts';
import { arr, type ServiceContent } from './types.ts';

export interface WaitOptions {
  /** overall limit; undefined = as long as it takes */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** server-side long-poll bound per WaitForUpdatesEx call; keep below the HTTP timeout */
  maxWaitSeconds?: number;
  /** for the timeout message, e.g. `task task-12 (CreateVmfsDatastore)` */
  what: () => string;
  host: string;
}

/**
 * Waits until `settle(values)` returns `{ value }`; `values` holds the latest value of each of
 * `paths` (absent until the server reported it). `settle` may throw to end the wait.
 */
export async function waitForUpdates<V>(rt: RoundTripper, sc: ServiceContent, obj: MoRef, paths: string[], settle: (values: Record<string, unknown>) => { value: V } | undefined, opts: WaitOptions): Promise<V> {
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  const maxWaitSeconds = opts.maxWaitSeconds ?? 30;
  const values: Record<string, unknown> = {};
  let pc: MoRef | undefined;
  let version = '';
  try {
    for (;;) {
      opts.signal?.throwIfAborted();
      const left = deadline - Date.now();
      if (left <= 0) throw new VsphereClientError('timeout', `${opts.what()} not ready after ${opts.timeoutMs} ms`, { method: 'WaitForUpdatesEx', host: opts.host });
      if (!pc) {
        pc = await createPropertyCollector(rt, sc.propertyCollector);
        await createFilter(rt, pc, { propSet: [{ type: obj.type, pathSet: paths }], objectSet: [{ obj, skip: false }] }, false);
        version = '';
      }
      let set;
      try {
        set = await waitForUpdatesEx(rt, pc, version, { maxWaitSeconds: Math.max(1, Math.min(maxWaitSeconds, Math.ceil(left / 1000))) });
      } catch (err) {
        // A private collector lives as long as its session: when the session expired (the session
        // layer logged in again and replayed the call), the server no longer knows it. Make a new
        // one and read everything again from version ''.
        const gone = (isFault(err, 'ManagedObjectNotFound') && (err.details.detail.obj as MoRef | undefined)?.value === pc.value) || false;
        if (!gone) throw err;
        pc = undefined;
        continue;
      }
      // undefined: nothing changed within maxWaitSeconds; ask again with the same version.
      if (!set) continue;
      version = set.version;
      for (const fu of arr(set.filterSet)) {
        for (const ou of arr(fu.objectSet)) {
          for (const ch of arr(ou.changeSet)) {
            if (ch.op === 'remove') delete values[ch.name];
            else values[ch.name] = ch.val;
          }
        }
      }
      if (set.truncated) continue;
      const done = settle(values);
      if (done) return done.value;
    }
  } finally {
    if (pc) await destroyPropertyCollector(rt, pc).catch(() => undefined);
  }
}

// VM power state and guest IP: the state changes are awaited with WaitForUpdatesEx, not polling.
import type { Ctx } from './datastores.ts';
import { VsphereFault } from './fault.ts';
import { createFilter, createPropertyCollector, destroyPropertyCollector, powerOffVMTask, powerOnVMTask, waitForUpdatesEx } from './methods.ts';
import { readProps } from './property.ts';
import type { MoRef } from './soap.ts';
import { waitForTask } from './task.ts';
import { arr } from './types.ts';

export type PowerState = 'poweredOn' | 'poweredOff' | 'suspended';

export async function powerState(ctx: Ctx, vm: MoRef): Promise<PowerState> {
  return (await readProps(ctx.rt, ctx.sc, vm, ['runtime.powerState']))['runtime.powerState'] as PowerState;
}

/** No-op when already on. */
export async function powerOn(ctx: Ctx, vm: MoRef): Promise<void> {
  if ((await powerState(ctx, vm)) === 'poweredOn') return;
  await waitForTask(ctx.rt, ctx.sc, await powerOnVMTask(ctx.rt, vm));
}

/** No-op when already off. */
export async function powerOff(ctx: Ctx, vm: MoRef): Promise<void> {
  if ((await powerState(ctx, vm)) === 'poweredOff') return;
  await waitForTask(ctx.rt, ctx.sc, await powerOffVMTask(ctx.rt, vm));
}

/**
 * Wait until `path` of `obj` satisfies `accept`, via a private collector and WaitForUpdatesEx;
 * resolves with the accepted value. The collector is destroyed however the wait ends.
 */
export async function waitForProperty<V>(ctx: Ctx, obj: MoRef, path: string, accept: (v: unknown) => v is V, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<V> {
  const deadline = Date.now() + opts.timeoutMs;
  const pc = await createPropertyCollector(ctx.rt, ctx.sc.propertyCollector);
  try {
    await createFilter(ctx.rt, pc, { propSet: [{ type: obj.type, pathSet: [path] }], objectSet: [{ obj, skip: false }] }, false);
    let version = '';
    for (;;) {
      opts.signal?.throwIfAborted();
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new VsphereFault('Timedout', `${obj.type} ${obj.value}: ${path} not ready after ${opts.timeoutMs} ms`, { method: 'WaitForUpdatesEx', host: ctx.endpoint, detail: {} });
      }
      const set = await waitForUpdatesEx(ctx.rt, pc, version, { maxWaitSeconds: Math.max(1, Math.min(30, Math.ceil(left / 1000))) });
      if (!set) continue;
      version = set.version;
      for (const fu of arr(set.filterSet)) {
        for (const ou of arr(fu.objectSet)) {
          for (const ch of arr(ou.changeSet)) if (ch.name === path && accept(ch.val)) return ch.val;
        }
      }
    }
  } finally {
    await destroyPropertyCollector(ctx.rt, pc).catch(() => undefined);
  }
}

const isIp = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

export async function waitForGuestIp(ctx: Ctx, vm: MoRef, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<string> {
  return waitForProperty(ctx, vm, 'guest.ipAddress', isIp, { timeoutMs: opts.timeoutMs ?? 10 * 60_000, ...(opts.signal ? { signal: opts.signal } : {}) });
}

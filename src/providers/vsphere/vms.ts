// VM power state and guest IP: the state changes are awaited with WaitForUpdatesEx, not polling.
import type { Ctx } from './datastores.ts';
import { powerOffVMTask, powerOnVMTask } from './methods.ts';
import { readProps } from './property.ts';
import type { MoRef } from './soap.ts';
import { waitForTask } from './task.ts';
import { waitForUpdates } from './wait.ts';

export type PowerState = 'poweredOn' | 'poweredOff' | 'suspended';

export async function powerState(ctx: Ctx, vm: MoRef): Promise<PowerState> {
  return (await readProps(ctx.rt, ctx.sc, vm, ['runtime.powerState']))['runtime.powerState'] as PowerState;
}

/** No-op when already on. */
export async function powerOn(ctx: Ctx, vm: MoRef): Promise<void> {
  if ((await powerState(ctx, vm)) === 'poweredOn') return;
  await waitForTask(ctx.rt, ctx.sc, await powerOnVMTask(ctx.rt, vm), { host: ctx.endpoint });
}

/** No-op when already off. */
export async function powerOff(ctx: Ctx, vm: MoRef): Promise<void> {
  if ((await powerState(ctx, vm)) === 'poweredOff') return;
  await waitForTask(ctx.rt, ctx.sc, await powerOffVMTask(ctx.rt, vm), { host: ctx.endpoint });
}

/** Wait until `path` of `obj` satisfies `accept` (the session's shared wait loop, wait.ts); resolves with it. */
export async function waitForProperty<V>(ctx: Ctx, obj: MoRef, path: string, accept: (v: unknown) => v is V, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<V> {
  return waitForUpdates(ctx.rt, ctx.sc, obj, [path], (values) => (accept(values[path]) ? { value: values[path] } : undefined), {
    timeoutMs: opts.timeoutMs,
    ...(opts.signal ? { signal: opts.signal } : {}),
    what: () => `${obj.type} ${obj.value}: ${path}`,
    host: ctx.endpoint,
  });
}

const isIp = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

export async function waitForGuestIp(ctx: Ctx, vm: MoRef, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<string> {
  return waitForProperty(ctx, vm, 'guest.ipAddress', isIp, { timeoutMs: opts.timeoutMs ?? 10 * 60_000, ...(opts.signal ? { signal: opts.signal } : {}) });
}

// What the compositions of one run share per remote endpoint (a vCenter): one session (logged out
// once, when the last provider using it closes, or by close() at the end of the command: a refused
// run has no provider to do it) and one queue that limits the provisioning calls sent
// to it at once, so targets running in parallel do not flood one endpoint.
import PQueue from 'p-queue';
import type { CreatedObject, EndpointPool, PlannedStep, Provider, ProviderContext } from '../contract/provider.ts';

export type { EndpointPool } from '../contract/provider.ts';

export const DEFAULT_ENDPOINT_CONCURRENCY = 2;

interface SharedEndpoint {
  session?: Promise<{ logout(): Promise<void> }>;
  users: number;
}

/**
 * Held around each provisioning call on top of the in-process limit: `storsweep worker` passes one
 * backed by PostgreSQL (results/pg-coordination.ts endpointSlots), so the limit holds across every
 * worker on the endpoint, not only within one process.
 */
export type EndpointGate = (key: string, maxConcurrent: number, signal?: AbortSignal) => Promise<() => Promise<void>>;

/**
 * `provider` with its apply, destroy and planned destroy run through `queued` (the endpoint's limit
 * and gate); everything else passes through; close() is idempotent and calls `release` once.
 */
function queuedProvider(provider: Provider, queued: <T>(signal: AbortSignal | undefined, call: () => Promise<T>) => Promise<T>, release: () => Promise<void>): Provider {
  let closed = false;
  return {
    name: provider.name,
    apply: (step, ctx) => queued(ctx.signal, () => provider.apply(step, ctx)),
    destroy: (obj, ctx) => queued(ctx.signal, () => provider.destroy(obj, ctx)),
    find: (ref, sent) => provider.find(ref, sent),
    // the plan reads; its run() is a destroy, queued on the endpoint's limit like one
    ...(provider.planDestroy
      ? {
          planDestroy: async (obj: Parameters<NonNullable<Provider['planDestroy']>>[0], ctx: ProviderContext) => {
            const plan = await provider.planDestroy!(obj, ctx);
            if (plan?.outcome !== 'remove') return plan;
            return { ...plan, run: () => queued(ctx.signal, () => plan.run()) };
          },
        }
      : {}),
    ...(provider.verify ? { verify: (step: PlannedStep, created: CreatedObject, ctx: ProviderContext) => provider.verify!(step, created, ctx) } : {}),
    ...(provider.isTransient ? { isTransient: (err: unknown) => provider.isTransient!(err) } : {}),
    ...(provider.describe ? { describe: () => provider.describe!() } : {}),
    ...(provider.observeHost ? { observeHost: (provisioned: readonly CreatedObject[], ctx: ProviderContext) => provider.observeHost!(provisioned, ctx) } : {}),
    ...(provider.stopLeftovers ? { stopLeftovers: (runId: string, target: string) => provider.stopLeftovers!(runId, target) } : {}),
    async close() {
      if (closed) return;
      closed = true;
      await release();
    },
  };
}

export function createEndpointPool(o: { gate?: EndpointGate } = {}): EndpointPool {
  const gated = async <T>(key: string, max: number, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> => {
    if (!o.gate) return call();
    const release = await o.gate(key, max, signal);
    try {
      return await call();
    } finally {
      await release();
    }
  };
  const endpoints = new Map<string, SharedEndpoint>();
  const entry = (key: string): SharedEndpoint => {
    let e = endpoints.get(key);
    if (!e) {
      e = { users: 0 };
      endpoints.set(key, e);
    }
    return e;
  };
  // one limit per endpoint (limitKey), shared by its sessions; the smallest maxConcurrent given holds
  const limits = new Map<string, PQueue>();
  const limit = (key: string, maxConcurrent: number): PQueue => {
    let q = limits.get(key);
    if (!q) {
      q = new PQueue({ concurrency: maxConcurrent });
      limits.set(key, q);
    } else q.concurrency = Math.min(q.concurrency, maxConcurrent);
    return q;
  };
  return {
    session<S extends { logout(): Promise<void> }>(key: string, connect: () => Promise<S>): Promise<S> {
      const e = entry(key);
      if (!e.session) {
        const p = connect();
        e.session = p;
        p.catch(() => {
          if (e.session === p) e.session = undefined;
        });
      }
      return e.session as Promise<S>;
    },
    share(key, maxConcurrent, provider, so = {}) {
      const e = entry(key);
      const lk = so.limitKey ?? key;
      const q = limit(lk, maxConcurrent);
      e.users++;
      const queued = <T>(signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> => q.add(() => gated(lk, q.concurrency, signal, call));
      // the endpoint's last provider to close logs its shared session out
      return queuedProvider(provider, queued, async () => {
        if (--e.users > 0) return;
        const p = e.session;
        e.session = undefined;
        const c = await p?.catch(() => undefined);
        await c?.logout();
      });
    },
    async close() {
      for (const e of endpoints.values()) {
        const p = e.session;
        if (!p) continue;
        e.session = undefined;
        const c = await p.catch(() => undefined);
        await c?.logout().catch(() => undefined);
      }
    },
  };
}

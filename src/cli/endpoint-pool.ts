// What the compositions of one run share per vCenter: one SOAP session (logged out once, when the
// last provider using it closes) and one queue that limits the provisioning calls sent to it at
// once, so targets running in parallel do not flood one endpoint.
import PQueue from 'p-queue';
import type { VsphereClient } from '../providers/vsphere/client.ts';
import type { CreatedObject, PlannedStep, Provider, ProviderContext } from '../contract/provider.ts';

export const DEFAULT_VCENTER_CONCURRENCY = 2;

interface SharedEndpoint {
  client?: Promise<VsphereClient>;
  queue: PQueue;
  users: number;
}

export interface EndpointPool {
  /** the session of `key`, connecting on first use; a failed connect is retried by the next caller */
  client(key: string, connect: () => Promise<VsphereClient>): Promise<VsphereClient>;
  /**
   * `provider` with its apply/destroy queued on the endpoint's limit and a close() that is
   * idempotent and logs the shared session out only when the endpoint's last provider closes.
   */
  share(key: string, maxConcurrent: number, provider: Provider): Provider;
}

export function createEndpointPool(): EndpointPool {
  const endpoints = new Map<string, SharedEndpoint>();
  const entry = (key: string, maxConcurrent = DEFAULT_VCENTER_CONCURRENCY): SharedEndpoint => {
    let e = endpoints.get(key);
    if (!e) {
      e = { queue: new PQueue({ concurrency: maxConcurrent }), users: 0 };
      endpoints.set(key, e);
    }
    return e;
  };
  return {
    client(key, connect) {
      const e = entry(key);
      if (!e.client) {
        const p = connect();
        e.client = p;
        p.catch(() => {
          if (e.client === p) e.client = undefined;
        });
      }
      return e.client;
    },
    share(key, maxConcurrent, provider) {
      const e = entry(key, maxConcurrent);
      e.queue.concurrency = maxConcurrent;
      e.users++;
      let closed = false;
      return {
        name: provider.name,
        apply: (step, ctx) => e.queue.add(() => provider.apply(step, ctx)),
        destroy: (obj, ctx) => e.queue.add(() => provider.destroy(obj, ctx)),
        find: (ref, sent) => provider.find(ref, sent),
        ...(provider.verify ? { verify: (step: PlannedStep, created: CreatedObject, ctx: ProviderContext) => provider.verify!(step, created, ctx) } : {}),
        ...(provider.isTransient ? { isTransient: (err: unknown) => provider.isTransient!(err) } : {}),
        ...(provider.describe ? { describe: () => provider.describe!() } : {}),
        async close() {
          if (closed) return;
          closed = true;
          if (--e.users > 0) return;
          const p = e.client;
          e.client = undefined;
          const c = await p?.catch(() => undefined);
          await c?.logout();
        },
      };
    },
  };
}

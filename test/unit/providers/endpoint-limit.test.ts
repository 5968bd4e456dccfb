// The per-vCenter provisioning limit (review 17, finding 15): one limit per endpoint, whatever the
// spelling of its URL or the account a target uses; the smallest maxConcurrent given holds.
import { describe, expect, it } from 'vitest';
import type { Provider, ProviderContext } from '../../../src/contract/provider.ts';
import { createEndpointPool } from '../../../src/providers/endpoint-pool.ts';
import { sdkEndpointKey } from '../../../src/providers/vsphere/client.ts';
import { limitDifferences } from '../../../src/app/queue/worker-runs.ts';

describe('sdkEndpointKey', () => {
  it('one key for every spelling of one endpoint: scheme, host case, default port, /sdk, trailing slash, user, query', () => {
    const same = ['vc.lab', 'https://vc.lab', 'https://VC.Lab/', 'https://vc.lab:443/sdk', 'https://vc.lab/sdk/', 'https://admin@vc.lab/sdk', 'https://vc.lab/sdk?x=1#f'];
    expect(new Set(same.map(sdkEndpointKey))).toEqual(new Set(['https://vc.lab/sdk']));
    expect(sdkEndpointKey('https://vc.lab:8443')).toBe('https://vc.lab:8443/sdk');
    expect(sdkEndpointKey('vc2.lab')).not.toBe(sdkEndpointKey('vc.lab'));
  });
});

describe('endpoint pool limit', () => {
  it('two accounts (sessions) on one endpoint share its limit, the smallest maxConcurrent given', async () => {
    let now = 0;
    let peak = 0;
    const provider = (name: string): Provider =>
      ({
        name,
        apply: async () => {
          peak = Math.max(peak, ++now);
          // one turn of the event loop inside the call: every other call already started would be
          // inside too by then, unless the limit holds it back
          await new Promise((r) => setImmediate(r));
          now--;
          return [];
        },
        destroy: async () => undefined,
        find: async () => null,
        close: async () => undefined,
      }) as unknown as Provider;
    const gated: string[] = [];
    const pool = createEndpointPool({
      gate: async (key) => {
        gated.push(key);
        return async () => undefined;
      },
    });
    const a = pool.share('https://vc.lab/sdk|alice', 3, provider('a'), { limitKey: 'vcenter https://vc.lab/sdk' });
    const b = pool.share('https://vc.lab/sdk|bob', 1, provider('b'), { limitKey: 'vcenter https://vc.lab/sdk' });
    const ctx = { signal: new AbortController().signal } as ProviderContext;
    await Promise.all([...Array.from({ length: 4 }, () => a.apply({} as never, ctx)), ...Array.from({ length: 4 }, () => b.apply({} as never, ctx))]);
    expect(peak).toBe(1);
    expect(now).toBe(0);
    // the cross-worker gate is asked for the endpoint, not the account
    expect(new Set(gated)).toEqual(new Set(['vcenter https://vc.lab/sdk']));
  });
});

describe('limitDifferences (workers must agree on maxConcurrent)', () => {
  it('names each endpoint whose limit differs from the submitted one; none for a run submitted before limits were recorded', () => {
    expect(limitDifferences({ 'https://vc.lab/sdk': 2 }, { 'https://vc.lab/sdk': 4 })).toEqual(['https://vc.lab/sdk: maxConcurrent 2 → 4']);
    expect(limitDifferences({ 'https://vc.lab/sdk': 2 }, { 'https://vc.lab/sdk': 2 })).toEqual([]);
    expect(limitDifferences(undefined, { 'https://vc.lab/sdk': 4 })).toEqual([]);
  });
});

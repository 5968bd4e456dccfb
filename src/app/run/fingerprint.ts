// A run's environment fingerprint: what only connecting tells (product versions, guest OS, tool
// version), recorded so comparisons can warn when two runs differ in more than their axes.
import { redactDeep } from '../../input/secrets.ts';
import type { Provider } from '../../contract/provider.ts';
import type { RunStore } from '../../results/port.ts';
import type { Composition } from '../compose.ts';

/**
 * Adds what can only be learned by connecting (product versions, guest OS, tool version) to the
 * run's environment fingerprint, so comparisons can warn when two runs differ in more than their
 * axes. Best effort: a fact that cannot be read is left out, the run goes on.
 */
export async function recordFingerprint(store: RunStore, targets: Array<[string, { provider: Provider | null; comp: Composition }]>): Promise<void> {
  const facts = await targetFacts(targets);
  const meta = await store.meta();
  await store.setMeta('meta', { ...meta, fingerprint: { ...meta.fingerprint, ...facts } });
}

/**
 * What connecting to `targets` tells of their environment (product versions, guest OS, tool
 * version), redacted: one target named '' gives plain keys, else each target's facts are under
 * `<target>/`. `run` and `worker` record the same.
 */
export async function targetFacts(targets: Array<[string, { provider: Provider | null; comp: Pick<Composition, 'workload'> }]>): Promise<Record<string, string>> {
  const facts: Record<string, string> = {};
  // One target: plain keys; several: each target's facts under `<target>/`.
  for (const [name, { provider, comp }] of targets) {
    const own: Record<string, string> = { 'workload.tool': comp.workload.tool };
    Object.assign(own, await provider?.describe?.().catch(() => ({})));
    if (comp.workload.describe) {
      const runner = await comp.workload.connect().catch(() => null);
      if (runner) {
        Object.assign(own, await comp.workload.describe(runner).catch(() => ({})));
        await runner.close().catch(() => undefined);
      }
    }
    for (const [k, v] of Object.entries(own)) facts[name ? `${name}/${k}` : k] = v;
  }
  return redactDeep(facts);
}

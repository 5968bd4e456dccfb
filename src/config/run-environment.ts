// What a run records of its setup that no host reports: the playbook's `environment:` for the whole
// run, the inventory's `environment:` of each target, the playbook's `environmentOf:` per axis value,
// and the datastore a `datastore.kind: existing` permutation measures on (the target's `datastore`).
// One flat map, each key saying what it is about (`target=array-01: raid`), which every report shows
// beside the fingerprint.
import type { Playbook } from './playbook.ts';
import type { Inventory } from './inventory.ts';
import { environmentText } from '../input/environment.ts';

export function runEnvironment(pb: Pick<Playbook, 'environment' | 'environmentOf' | 'matrix'>, inv: Pick<Inventory, 'targets'>, targets: readonly string[]): Record<string, string> | undefined {
  const out: Record<string, string> = { ...environmentText(pb.environment) };
  const about = (what: string, env: Record<string, string> | undefined) => {
    for (const [k, v] of Object.entries(env ?? {})) out[`${what}: ${k}`] = v;
  };
  const existing = pb.matrix.datastore?.kind.includes('existing') === true;
  for (const name of targets) {
    const t = inv.targets[name] as { environment?: Record<string, string | number | boolean>; datastore?: unknown } | undefined;
    about(`target=${name}`, environmentText(t?.environment));
    // the report names the datastore behind `existing` (the target's own, not created by the run)
    if (existing && typeof t?.datastore === 'string') out[`target=${name}: datastore.kind=existing is`] = t.datastore;
  }
  for (const [key, env] of Object.entries(pb.environmentOf ?? {})) about(key, environmentText(env));
  return Object.keys(out).length ? out : undefined;
}

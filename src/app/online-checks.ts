// Run start: what only the endpoint can answer (a storage policy by name, a datastore's fit for it)
// is asked of each target's composition before anything is created (Composition.checkOnline).
import type { Axes } from '../contract/axis.ts';
import type { RunPlan } from '../contract/plan.ts';
import type { Composition } from '../contract/provider.ts';

/** Each target's permutations handed to its composition's online check; the first refusal is thrown. */
export async function checkPlanOnline(plan: RunPlan, comps: ReadonlyMap<string, Composition>): Promise<void> {
  const byTarget = new Map<string, Axes[]>();
  for (const p of plan.permutations) {
    const target = plan.targets ? String(p.axes.target ?? '') : plan.target;
    const list = byTarget.get(target) ?? [];
    list.push(p.axes);
    byTarget.set(target, list);
  }
  for (const [name, axes] of byTarget) await comps.get(name)?.checkOnline?.(axes);
}

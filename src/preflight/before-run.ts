// What `run` does with preflight (issue 29): it says how old the playbook's last preflight is and
// what failed in it; with `run --preflight` it runs the read-only checks first (not the canary: the
// sweep's first permutation is one) and stops before anything is created when one fails.
import type { RunPlan } from '../contract/plan.ts';
import type { Composition } from '../contract/provider.ts';
import { UsageError } from '../errors.ts';
import { checklistLines, preflightTargets, type PreflightReport } from './preflight.ts';
import { preflightNotice, readPreflight, storePreflight } from './stored.ts';

export async function preflightBeforeRun(plan: RunPlan, comps: ReadonlyMap<string, Composition>, o: { out: string; inventory: string; preflight?: boolean; say(line: string): void }): Promise<void> {
  if (!o.preflight) {
    for (const l of preflightNotice(readPreflight(o.out, plan.playbook))) o.say(l);
    return;
  }
  const targets = await preflightTargets(plan, comps);
  const report: PreflightReport = { playbook: plan.playbook, inventory: o.inventory, at: new Date().toISOString(), targets, ok: targets.every((t) => t.checks.every((c) => c.status !== 'fail')) };
  storePreflight(o.out, report);
  for (const l of checklistLines(report)) o.say(l);
  if (!report.ok) throw new UsageError('run --preflight: a check failed (✗ above); nothing was created');
}

// `storsweep preflight`: online, read-mostly checks of everything a plan will use, per target, as a
// checklist (✓ ok, ✗ fail, ! warn with its remedy). The command (cli/commands/preflight.ts) only
// parses options and prints; the checks are here and in each provider's preflight.ts.
import type { RunPlan } from '../contract/plan.ts';
import type { Composition } from '../contract/provider.ts';
import type { PreflightCheck } from '../contract/preflight.ts';
import { errorMessage } from '../errors.ts';
import { checkCapacity } from './capacity.ts';
import { guestChecks } from './guest.ts';
import { windowsVolumeChecks } from './windows-volume.ts';

export interface TargetResult {
  target: string;
  checks: PreflightCheck[];
}

export interface PreflightReport {
  playbook: string;
  inventory: string;
  /** when it ran (ISO 8601) */
  at: string;
  targets: TargetResult[];
  /** no check failed */
  ok: boolean;
  canary?: unknown;
}

/** Every check of every target the plan uses; never throws for a target's failure (it is a ✗). */
export async function preflightTargets(plan: RunPlan, comps: ReadonlyMap<string, Composition>): Promise<TargetResult[]> {
  const out: TargetResult[] = [];
  const capacity = await checkCapacity(plan, comps);
  const volumes = windowsVolumeChecks(plan);
  for (const [name, comp] of comps) {
    const mine = plan.permutations.filter((p) => !plan.targets || String(p.axes.target) === name);
    const steps = mine.flatMap((p) => p.steps);
    const checks: PreflightCheck[] = [];
    if (comp.preflight?.checks) {
      try {
        checks.push(...(await comp.preflight.checks(steps)));
      } catch (err) {
        checks.push({ check: 'host', status: 'fail', detail: errorMessage(err), remedy: 'check the endpoint, its credentials and the objects the inventory names' });
      }
    }
    checks.push(...capacity.filter((c) => c.target === name).map((c) => c.check));
    // the largest test file a permutation of this target writes (a file test's room in the guest)
    const fileBytes = Math.max(0, ...mine.map((p) => plan.profiles[p.workload]?.fileSizeBytes ?? 0));
    checks.push(...(await guestChecks(comp.workload, { fileBytes })));
    const volume = volumes.get(name);
    if (volume) checks.push(volume);
    out.push({ target: name, checks });
  }
  return out;
}

const MARK = { ok: '✓', fail: '✗', warn: '!' } as const;

/** The checklist as text: one line per check, its remedy under a ✗ or !. */
export function checklistLines(report: PreflightReport): string[] {
  const lines: string[] = [];
  for (const t of report.targets) {
    lines.push(`${t.target}:`);
    for (const c of t.checks) {
      lines.push(`  ${MARK[c.status]} ${c.check}: ${c.detail}`);
      if (c.status !== 'ok' && c.remedy) lines.push(`      → ${c.remedy}`);
    }
  }
  const failed = report.targets.flatMap((t) => t.checks).filter((c) => c.status === 'fail').length;
  lines.push(failed ? `${failed} check(s) failed (✗): the run would fail; fix them and run preflight again` : 'every check passed');
  return lines;
}

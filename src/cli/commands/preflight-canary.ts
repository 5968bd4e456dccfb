// The canary's wiring (src/preflight/canary.ts does the work): the playbook planned again with 1 GiB
// disks, one repetition and one-second passes, cut to one permutation per kind, confirmed like a run.
import path from 'node:path';
import type { RunPlan } from '../../contract/plan.ts';
import { canaryPermutations, runCanary, type CanaryResult } from '../../preflight/canary.ts';
import type { PreflightCheck } from '../../contract/preflight.ts';
import type { Env } from '../../contract/provider.ts';
import type { PreflightReport } from '../../preflight/preflight.ts';
import { newRunId } from '../../plan/permutation.ts';
import { planRun } from '../../app/compose.ts';
import { destroyedNames, parseConfirmDestroy } from '../../app/run/confirm-destroy.ts';
import { newRunMeta, prepareNew } from '../../app/run/new-run.ts';
import { createEndpointPool, type EndpointPool } from '../../providers/endpoint-pool.ts';

/** The options of `storsweep preflight` (here, below preflight.ts, so the two files do not import each other). */
export interface PreflightOptions {
  inventory?: string;
  json?: boolean;
  out: string;
  set?: string[];
  canary?: boolean;
  confirmDestroy?: string;
  /** the environment, as the CLI read it */
  env: Env;
}

/** The short timing a canary measures with (a few seconds per permutation). */
const CANARY_SET = ['repeat=1', 'settings.fileSize=16m', 'settings.runtimeSec=1', 'settings.passes=1', 'settings.warmupPass=false', 'settings.intervalSec=0', 'settings.rampSec=0'];

export async function runCanaryFor(playbookFile: string, o: PreflightOptions, report: PreflightReport, night: RunPlan): Promise<CanaryResult> {
  const set = [...(o.set ?? []), ...CANARY_SET];
  const pool = createEndpointPool();
  try {
    return await canaryWith(playbookFile, o, report, night, set, pool);
  } finally {
    await pool.close();
  }
}

async function canaryWith(playbookFile: string, o: PreflightOptions, report: PreflightReport, night: RunPlan, set: string[], pool: EndpointPool): Promise<CanaryResult> {
  const { comps, inv, pb, timeouts } = prepareNew(playbookFile, { ...o, set }, pool);
  const m = pb.playbook.matrix;
  const small = { ...pb.playbook, matrix: { ...m, ...(m.disk ? { disk: { ...m.disk, ...(m.disk.sizeGb ? { sizeGb: [1] } : {}) } } : {}) } };
  const plan = canaryPermutations(planRun(small, comps, newRunId(), set));
  const destroys = destroyedNames(plan);
  const confirmed = parseConfirmDestroy(o.confirmDestroy);
  const missing = destroys.filter((d) => !confirmed.includes(d));
  const runDir = path.resolve(o.out, `preflight-canary-${plan.runId}`);
  if (missing.length) return { runDir, ok: false, permutations: [], skipped: `the canary formats ${missing.join(', ')} as the run does: confirm with --confirm-destroy ${destroys.join(',')} (or leave it out with --no-canary)` };
  const meta = newRunMeta({ plan, comps, inv, pb, playbookFile, timeouts, confirmedDestroy: destroys });
  const result = await runCanary({ plan, comps, meta, runDir, night: { estimateSec: night.totalEstimateSec, permutations: night.permutations.length } });
  report.targets.push({ target: 'canary', checks: canaryChecks(result) });
  return result;
}

/** The canary as checklist lines: one per permutation (identity found, times), and the night's estimate. */
export function canaryChecks(r: CanaryResult): PreflightCheck[] {
  if (r.skipped) return [{ check: 'canary', status: r.permutations.length ? 'fail' : 'warn', detail: r.skipped }];
  const out: PreflightCheck[] = r.permutations.map((p) => {
    const what = Object.entries(p.axes).filter(([k]) => k !== 'workload.profile').map(([k, v]) => `${k}=${String(v)}`).join(' ');
    const times = `provisioned in ${p.provisionSec ?? '?'} s, torn down in ${p.teardownSec ?? '?'} s`;
    return p.status === 'done' && p.identity
      ? { check: `canary ${p.permutationId}`, status: 'ok', detail: `${what}: found in the guest as ${p.identity}${p.device ? ` (${p.device})` : ''}; ${times}` }
      : { check: `canary ${p.permutationId}`, status: 'fail', detail: `${what}: ${p.error ?? p.status}`, remedy: `see ${r.runDir} (storsweep status / cleanup)` };
  });
  if (r.estimate) out.push({ check: 'canary estimate', status: 'ok', detail: `the night: planned ${Math.round(r.estimate.plannedSec / 60)} min, revised with the measured times ${Math.round(r.estimate.revisedSec / 60)} min` });
  return out;
}

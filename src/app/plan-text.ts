// A plan in words: what `plan` prints, and the schedule `run` says before targets take turns.
import type { Replication, RunPlan } from '../contract/plan.ts';
import { formatBytes } from '../input/read-input.ts';
import { fillSec, remainingEstimate } from '../plan/estimate.ts';
import { replicationOf } from '../plan/rounds.ts';
import { axesLabel } from '../run/progress.ts';
import { visible } from '../text/visible.ts';
import type { WorkloadProfile } from '../workloads/spec.ts';


function fmtSec(s: number): string {
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}h ${m}m` : `${m}m ${s % 60}s`;
}

/** How one profile is timed, as the estimate counts it: warm-up, passes, intervals, pre-fill. */
function profileTiming(name: string, profile: WorkloadProfile, plan: RunPlan): string {
  const n = profile.tests.length;
  const pass = `${profile.runtimeSec} s${profile.rampSec > 0 ? ` (+ ${profile.rampSec} s ramp)` : ''}`;
  const passes = `${profile.passes} measured pass${profile.passes === 1 ? '' : 'es'} of ${pass}`;
  const each = profile.warmupPass ? `1 unscored warm-up pass + ${passes}` : `${passes}, no warm-up pass`;
  const apart = n > 1 && profile.intervalSec > 0 ? `, ${profile.intervalSec} s between tests` : '';
  let fill = 'no pre-fill (settings.prefill: false)';
  if (profile.prefill !== false) {
    const basis = plan.estimateBasis;
    const perm = plan.permutations.find((p) => p.workload === name);
    fill = `pre-fill ${formatBytes(profile.fileSizeBytes)} once per ${plan.replication?.unit === 'between-provisionings' ? 'repetition (each on a new provisioning)' : 'permutation'}`;
    if (basis && perm) {
      const from = basis.prefillMBpsFrom === 'assumed' ? 'assumed; settings.prefillMBps sets it' : 'settings.prefillMBps';
      const sec = fillSec(profile, perm.steps, basis.prefillMBps);
      fill += `, ${sec < 1 ? 'under 1 s' : `~${fmtSec(Math.round(sec))}`} at ${basis.prefillMBps} MB/s (${from})`;
    }
  }
  return `      ${name}: ${n === 1 ? '1 test:' : `${n} tests, each`} ${each}${apart}; ${fill}`;
}

/**
 * How listed targets run: in parallel, except those that share something (plan.serialised), which
 * take turns — one line per set of targets, naming what they share.
 */
export function scheduleLines(plan: Pick<RunPlan, 'targets' | 'serialised'>): string[] {
  if (!plan.targets) return [];
  const shared = plan.serialised ?? [];
  if (!shared.length) return [`targets ${plan.targets.map((t) => visible(t.name)).join(', ')} run in parallel (they share no VM, guest, test file, LUN, disk, datastore or volume)`];
  const bySet = new Map<string, { targets: string[]; what: string[] }>();
  for (const s of shared) {
    const k = JSON.stringify(s.targets);
    const e = bySet.get(k) ?? { targets: s.targets, what: [] };
    e.what.push(s.what);
    bySet.set(k, e);
  }
  const lines = ['targets run in parallel, except these, which run one after the other (one permutation at a time):'];
  for (const e of bySet.values()) lines.push(`  ${e.targets.map(visible).join(', ')}: they share ${e.what.map(visible).join('; ')}`);
  return lines;
}

/** What a repetition is, how many, in which order, and what reprovisioning adds (RunPlan.replication). */
export function repetitionLines(plan: Pick<RunPlan, 'replication' | 'permutations'>): string[] {
  const r = replicationOf(plan);
  return r.max === 1 && r.unit === 'within-provisioning' ? [] : [repetitionText(r)];
}

function repetitionText(r: Replication): string {
  const n = r.until ? `${r.min}–${r.max} repetitions each, until the main metric's 95 % interval is within ±${r.until.ciPct} % of its mean (estimated at ${r.max}, the worst case${r.bestCaseSec !== undefined ? `; ~${fmtSec(r.bestCaseSec)} if all stop at ${r.min}` : ''})` : `${r.max} repetition${r.max === 1 ? '' : 's'} each`;
  if (r.unit === 'within-provisioning') return `repetitions: ${n}, back to back on one provisioning (they sample run-to-run noise only)`;
  const order = r.order === 'rounds' ? `in rounds (repetition k of every permutation before any k+1), each round in a fresh random order, seed ${r.seed}` : 'each permutation\'s back to back';
  return `repetitions: ${n}, each on freshly provisioned objects (between provisionings), ${order}; reprovisioning adds ~${fmtSec(r.extraProvisionSec)}`;
}

export function renderPlanText(plan: RunPlan): string {
  const wall = plan.targets ? remainingEstimate(plan, () => false).wallSec : plan.totalEstimateSec;
  const lines = [
    `playbook ${plan.playbook} → ${plan.targets ? `targets ${plan.targets.map((t) => `${t.name} (${t.provider})`).join(', ')}` : `target ${plan.target} (${plan.provider})`}: ${plan.permutations.length} permutations, estimated ${fmtSec(wall)}${wall !== plan.totalEstimateSec ? ` (${fmtSec(plan.totalEstimateSec)} one after the other)` : ''}`,
    ...(plan.overrides?.length ? [`with ${plan.overrides.map((o) => `--set ${visible(o)}`).join(' ')}`] : []),
    ...repetitionLines(plan),
    ...scheduleLines(plan),
    // the keys compare names (providers/shared-resources.ts): what they cannot see, said
    ...(plan.targets ? ['  (one machine reached under two names — a DNS name and its address, two aliases — is not recognised as one: such targets are not serialised)'] : []),
  ];
  lines.push('    workloads:');
  for (const [name, profile] of Object.entries(plan.profiles)) lines.push(profileTiming(name, profile, plan));
  for (const p of plan.permutations) {
    lines.push(`${String(p.index + 1).padStart(4)}. ${p.permutationId}  ${axesLabel(p.axes)}  ×${plan.replication?.until ? `${plan.replication.min}–` : ''}${p.repetitions}  ~${fmtSec(p.estimateSec)}`);
    // a vm.count permutation: which VM each member is (a clone's owned name, or a VM the inventory names)
    const members = p.steps.filter((s) => typeof s.arguments.member === 'number' && typeof s.arguments.vm === 'string' && typeof s.arguments.disk === 'string').map((s) => `vm${String(s.arguments.member)} ${visible(String(s.arguments.vm))}`);
    if (members.length) lines.push(`        VMs: ${members.join(', ')}`);
    for (const s of p.steps) lines.push(`        ${s.destructive ? '!' : '-'} ${s.step}: ${s.provider} ${s.operation}${s.creates ? ` → ${s.creates.kind} ${s.creates.name}` : ''}${s.destroys?.length ? ` (destroys ${s.destroys.join(', ')})` : ''}`);
  }
  return lines.join('\n');
}

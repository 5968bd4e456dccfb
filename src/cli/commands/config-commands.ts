// validate, plan, schema: the commands that read configuration and touch nothing.
import type { Command } from 'commander';
import { z } from 'zod';
import { inventoryDiagnosticAt, inventoryName, loadInventory, loadPlaybook, type LoadedInventory } from '../../config/index.ts';
import { sortDiagnostics } from '../../config/load.ts';
import { inventorySchema } from '../../config/inventory.ts';
import { playbookSchema } from '../../config/playbook.ts';
import { ConfigError, UsageError, type Diagnostic } from '../../errors.ts';
import { checkPlaybookAgainst } from '../../plan/check.ts';
import type { Replication, RunPlan } from '../../contract/plan.ts';
import { formatBytes } from '../../input/read-input.ts';
import type { WorkloadProfile } from '../../workloads/spec.ts';
import { newRunId } from '../../plan/permutation.ts';
import { axesLabel } from '../../run/progress.ts';
import { fillSec, remainingEstimate } from '../../plan/estimate.ts';
import { replicationOf } from '../../plan/rounds.ts';
import { visible } from '../../text/visible.ts';
import { composeTargets, planRun } from '../compose.ts';
import { overrideTexts, parseSetArguments } from '../../config/overrides.ts';
import { jsonText, terminal } from '../output.ts';

export function jsonSchemaFor(kind: string): unknown {
  const schema = kind === 'playbook' ? playbookSchema : kind === 'inventory' ? inventorySchema : null;
  if (!schema) throw new UsageError(`schema: expected "playbook" or "inventory", got "${kind}"`);
  // io:'input' keeps defaulted fields optional, which is what an editor should offer; draft-07 is
  // what yaml-language-server understands best.
  return z.toJSONSchema(schema, { io: 'input', target: 'draft-7', unrepresentable: 'any' });
}

export function planFor(playbookFile: string, inventoryFile: string | readonly string[], runId = 'rplan0000', set: readonly string[] = []): RunPlan {
  const overrides = parseSetArguments(set);
  const pb = loadPlaybook(playbookFile, overrides);
  const inv = loadInventory(inventoryFile);
  const targets = checkPlaybookAgainst(pb, inv);
  return planRun(pb.playbook, composeTargets([...targets.keys()], inv), runId, overrideTexts(overrides));
}

/** commander: a repeatable option collects its values. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export const SET_HELP = 'override a playbook value, repeatable: target, repeat (a number: the file\'s reprovision and order stay), settings.<name>, timeouts.<name>, matrix.<section>.<axis> (e.g. --set settings.fileSize=16m --set target=lab-vcenter --set matrix.disk.sizeGb=[16]); checked like the file\'s own value';

/** `-i` more than once: the later files add or replace targets and endpoints (config/inventory-layers.ts). */
export const INVENTORY_REPEAT_HELP = 'repeatable: a later file adds or replaces targets, vcenters and sshHosts by name and may use the earlier files\' (-i .lab/inventory.yaml -i my-arrays.yaml)';

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
    for (const s of p.steps) lines.push(`        ${s.destructive ? '!' : '-'} ${s.step}: ${s.provider} ${s.operation}${s.creates ? ` → ${s.creates.kind} ${s.creates.name}` : ''}${s.destroys?.length ? ` (destroys ${s.destroys.join(', ')})` : ''}`);
  }
  return lines.join('\n');
}

/**
 * The test files of the targets that run on this machine, looked at now (read-only; validate connects
 * nowhere, so a guest's is looked at by `run`): one storsweep did not create is refused at the
 * inventory line that names it, unless `confirm` (validate's --confirm-destroy) names its path.
 */
export async function checkLocalTestFiles(targets: ReadonlyMap<string, unknown>, inv: LoadedInventory, confirm: string | undefined): Promise<void> {
  const confirmed = (confirm ?? '').split(',').map((n) => n.trim());
  const diags: Diagnostic[] = [];
  for (const [name, comp] of composeTargets([...targets.keys()], inv)) {
    const check = comp.testFile;
    if (!check?.local) continue;
    const f = await check.look();
    if (!f || confirmed.includes(f.path)) continue;
    const where = check.key === 'workdir' ? `the default test file ${f.path} in this workdir` : `the test file ${f.path}`;
    diags.push(inventoryDiagnosticAt(inv, ['targets', name, check.key], `${where} exists on this machine and storsweep did not create it (${f.found}); run refuses to write over it unless --confirm-destroy names ${f.path}`));
  }
  if (diags.length) throw new ConfigError(sortDiagnostics(diags));
}

export function registerConfigCommands(program: Command): void {
  program
    .command('validate')
    .description('check a playbook and/or an inventory and report every problem with file:line:col')
    .argument('[playbook]', 'playbook YAML')
    .option('-i, --inventory <file>', `inventory YAML (checked on its own, and the playbook against it); ${INVENTORY_REPEAT_HELP}`, collect)
    .option('--set <key=value>', SET_HELP, collect)
    .option('--confirm-destroy <names>', 'what run will be given: a test file on this machine that storsweep did not create is accepted when named here, as run accepts it')
    .action(async (playbook: string | undefined, o: { inventory?: string[]; set?: string[]; confirmDestroy?: string }) => {
      if (!playbook && !o.inventory) throw new UsageError('validate: give a playbook, an inventory (-i), or both');
      if (!playbook && o.set?.length) throw new UsageError('validate: --set overrides a playbook value; give the playbook');
      const overrides = parseSetArguments(o.set);
      const inv = o.inventory ? loadInventory(o.inventory) : null;
      if (playbook) {
        const pb = loadPlaybook(playbook, overrides);
        if (inv) await checkLocalTestFiles(checkPlaybookAgainst(pb, inv), inv, o.confirmDestroy);
      }
      const withSet = overrides.length ? ` with ${overrides.map((x) => x.argument).join(' ')}` : '';
      terminal.stdout(playbook ? `${playbook}${withSet}: ok${inv ? ` (against ${inventoryName(inv)})` : ''}\n` : `${inv ? inventoryName(inv) : ''}: ok\n`);
    });
  program
    .command('plan')
    .description('expand the matrix into permutations and show each one with its steps and an estimate')
    .argument('<playbook>', 'playbook YAML')
    .requiredOption('-i, --inventory <file>', `inventory YAML; ${INVENTORY_REPEAT_HELP}`, collect)
    .option('--json', 'print the plan as JSON')
    .option('--set <key=value>', SET_HELP, collect)
    .action((playbook: string, o: { inventory: string[]; json?: boolean; set?: string[] }) => {
      const plan = planFor(playbook, o.inventory, newRunId(), o.set);
      terminal.stdout((o.json ? jsonText(plan) : renderPlanText(plan)) + '\n');
    });
  program
    .command('schema')
    .description('print the JSON Schema of playbooks or inventories (for editor autocompletion)')
    .argument('<kind>', 'playbook | inventory')
    .action((kind: string) => {
      terminal.stdout(jsonText(jsonSchemaFor(kind), 2) + '\n');
    });
}

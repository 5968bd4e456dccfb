// `storsweep preflight PLAYBOOK -i INVENTORY`: the checks of src/preflight/ as a checklist or JSON;
// exit 0 only when no check failed (✗). The result is kept in --out for `run` to show.
import type { Command } from 'commander';
import { preflightTargets, checklistLines, type PreflightReport } from '../../preflight/preflight.ts';
import { storePreflight } from '../../preflight/stored.ts';
import { visibleText } from '../../text/visible.ts';
import { TEST_FILE_KIND } from '../../providers/test-file-mark.ts';
import { EXIT } from '../exit.ts';
import { jsonText, terminal } from '../output.ts';
import { collect, SET_HELP } from './config-commands.ts';
import { prepareNew } from '../../app/run/new-run.ts';
import { createEndpointPool, type EndpointPool } from '../../providers/endpoint-pool.ts';
import { canaryChecks, runCanaryFor, type PreflightOptions } from './preflight-canary.ts';

export type { PreflightOptions } from './preflight-canary.ts';

export async function preflightCommand(playbookFile: string, o: PreflightOptions): Promise<number> {
  // every session a check opens is logged out on the way out, whatever happened
  const pool = createEndpointPool();
  try {
    return await preflightWith(playbookFile, o, pool);
  } finally {
    await pool.close();
  }
}

async function preflightWith(playbookFile: string, o: PreflightOptions, pool: EndpointPool): Promise<number> {
  const { plan, comps, inv } = prepareNew(playbookFile, o, pool);
  const report: PreflightReport = { playbook: plan.playbook, inventory: inv.file, at: new Date().toISOString(), targets: await preflightTargets(plan, comps), ok: false };
  const passed = () => report.targets.every((t) => t.checks.every((c) => c.status !== 'fail'));
  // the canary provisions for real (disks, datastores: a test file alone is no canary), only once every read-only check passed
  if (o.canary !== false && passed() && plan.permutations.some((p) => p.steps.some((s) => s.creates && s.creates.kind !== TEST_FILE_KIND))) {
    const canary = await runCanaryFor(playbookFile, o, report, plan);
    report.canary = canary;
    if (canary.skipped && !report.targets.some((t) => t.target === 'canary')) report.targets.push({ target: 'canary', checks: canaryChecks(canary) });
  }
  report.ok = passed();
  storePreflight(o.out, report);
  if (o.json) terminal.stdout(jsonText(report, 1) + '\n');
  else terminal.stdout(checklistLines(report).map(visibleText).join('\n') + '\n');
  return report.ok ? EXIT.ok : EXIT.failure;
}

export function registerPreflight(program: Command): void {
  program
    .command('preflight')
    .description('check on the real lab, before a sweep, everything its plan will use: connection, login, version, privileges, room, guest, host metrics, and a canary permutation')
    .argument('<playbook>', 'playbook YAML')
    .option('-i, --inventory <file>', 'inventory YAML')
    .option('--json', 'machine-readable output')
    .option('-o, --out <dir>', 'directory for run directories, where the result is kept for `run`', 'runs')
    .option('--no-canary', 'do not provision the smallest permutation for real')
    .option('--confirm-destroy <names>', 'what the canary may destroy (the LUNs it formats), as for run')
    .option('--set <key=value>', SET_HELP, collect)
    .action(async (playbook: string, o: PreflightOptions) => {
      process.exitCode = await preflightCommand(playbook, { ...o, env: process.env });
    });
}

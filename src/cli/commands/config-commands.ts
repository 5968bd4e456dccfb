// validate, plan, schema: the commands that read configuration and touch nothing (src/app/config.ts).
import type { Command } from 'commander';
import { jsonSchemaFor, planFor, validateConfig, type ValidateOptions } from '../../app/config.ts';
import { renderPlanText } from '../../app/plan-text.ts';
import { newRunId } from '../../plan/permutation.ts';
import { endpointSections } from '../../providers/index.ts';
import { jsonText, terminal } from '../output.ts';

/** commander: a repeatable option collects its values. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export const SET_HELP = 'override a playbook value, repeatable: target, repeat (a number: the file\'s reprovision and order stay), settings.<name>, timeouts.<name>, matrix.<section>.<axis> (e.g. --set settings.fileSize=16m --set target=lab-vcenter --set matrix.disk.sizeGb=[16]); checked like the file\'s own value';

/** `-i` more than once: the later files add or replace targets and endpoints (config/inventory-layers.ts), each provider's endpoint section named as the registry has it. */
export function inventoryRepeatHelp(): string {
  const sections = ['targets', ...endpointSections().map((e) => e.key)];
  return `repeatable: a later file adds or replaces ${sections.join(', ')} and sshHosts by name and may use the earlier files' (-i .lab/inventory.yaml -i my-arrays.yaml)`;
}

export function registerConfigCommands(program: Command): void {
  program
    .command('validate')
    .description('check a playbook and/or an inventory and report every problem with file:line:col')
    .argument('[playbook]', 'playbook YAML')
    .option('-i, --inventory <file>', `inventory YAML (checked on its own, and the playbook against it); ${inventoryRepeatHelp()}`, collect)
    .option('--set <key=value>', SET_HELP, collect)
    .option('--confirm-destroy <names>', 'what run will be given: a test file on this machine that storsweep did not create is accepted when named here, as run accepts it')
    .action(async (playbook: string | undefined, o: ValidateOptions) => {
      const { set, inventory } = await validateConfig(playbook, { ...o, env: process.env });
      const withSet = set.length ? ` with ${set.join(' ')}` : '';
      terminal.stdout(playbook ? `${playbook}${withSet}: ok${inventory ? ` (against ${inventory})` : ''}\n` : `${inventory ?? ''}: ok\n`);
    });
  program
    .command('plan')
    .description('expand the matrix into permutations and show each one with its steps and an estimate')
    .argument('<playbook>', 'playbook YAML')
    .requiredOption('-i, --inventory <file>', `inventory YAML; ${inventoryRepeatHelp()}`, collect)
    .option('--json', 'print the plan as JSON')
    .option('--set <key=value>', SET_HELP, collect)
    .action((playbook: string, o: { inventory: string[]; json?: boolean; set?: string[] }) => {
      const plan = planFor(playbook, o.inventory, newRunId(), o.set ?? [], process.env);
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


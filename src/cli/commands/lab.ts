// `storsweep lab up|down|status`: the embedded local lab from the installed tool, as `npm run lab`
// gives it in the checkout (one implementation: src/lab/command.ts). State in `<dir>/.lab`.
import path from 'node:path';
import type { Command } from 'commander';
import { terminal } from '../output.ts';

interface LabOptions {
  dir?: string;
  labVersion?: string;
  postgres?: boolean;
  vcsim?: boolean;
  purge?: boolean;
  json?: boolean;
}

/** The flags as src/lab/command.ts reads them (the lab's own spelling: `--version`). */
function labArgs(action: string, o: LabOptions): string[] {
  return [
    action,
    ...(o.labVersion !== undefined ? ['--version', o.labVersion] : []),
    ...(o.postgres ? ['--postgres'] : []),
    ...(o.vcsim === false ? ['--no-vcsim'] : []),
    ...(o.purge ? ['--purge'] : []),
    ...(o.json ? ['--json'] : []),
  ];
}

export function registerLab(program: Command): void {
  program
    .command('lab')
    .description('the embedded local lab: an OpenSSH guest with fio, the ESXi and Hyper-V stand-ins and the vCenter simulator, on this machine; `.lab/inventory.yaml` points playbooks at it')
    .argument('<action>', 'up, down or status')
    .option('--dir <dir>', 'the directory whose .lab/ holds the lab (default: the current directory)')
    .option('--lab-version <version>', 'up: the ESXi/vCenter release the lab acts as: 5.5, 6.7, 7.0 or 8.0 (default 8.0, or the running lab\'s)')
    .option('--postgres', 'up: also start a PostgreSQL store in .lab/postgres')
    .option('--no-vcsim', 'up: without the vCenter simulator')
    .option('--purge', 'down: also delete the PostgreSQL store\'s data')
    .option('--json', 'up, status: as JSON')
    .action(async (action: string, o: LabOptions) => {
      const { labCommand } = await import('../../lab/command.ts');
      const root = path.resolve(o.dir ?? '.');
      try {
        process.exitCode = await labCommand(labArgs(action, o), root, { out: terminal.stdout, errOut: terminal.stderr, invocation: 'storsweep lab' });
      } catch (e) {
        // as `npm run lab` says it (src/lab/main.ts)
        terminal.stderr(`lab: ${(e as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}

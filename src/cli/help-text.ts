// What `--help` adds to each command's own text: an example per command, the environment variables
// that stand for options people set once per shell, and the program's closing notes. Constant text
// only: nothing from input.

/** Long option → the environment variable that gives it when the command line does not. */
export const ENV_OPTIONS: Readonly<Record<string, string>> = {
  '--inventory': 'STORSWEEP_INVENTORY',
  '--store': 'STORSWEEP_STORE',
  '--out': 'STORSWEEP_OUT',
};

/** Command → example command lines (shown after "Example:" in its --help). */
export const COMMAND_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  validate: ['storsweep validate playbooks/quickstart.yaml -i .lab/inventory.yaml'],
  plan: ['storsweep plan playbooks/vmfs6-block-size.yaml -i .lab/inventory.yaml'],
  schema: ['storsweep schema playbook > playbook.schema.json'],
  run: ['storsweep run playbooks/quickstart.yaml -i .lab/inventory.yaml', 'storsweep run --resume runs/<runDir>'],
  preflight: ['storsweep preflight playbooks/vmfs6-block-size.yaml -i .lab/inventory.yaml --confirm-destroy <lun>', 'storsweep preflight playbooks/quickstart.yaml -i .lab/inventory.yaml --json'],
  submit: ['storsweep submit playbooks/quickstart.yaml -i inventory.yaml --store \'postgresql://bench:${env:PGPASSWORD}@db/storsweep\''],
  worker: ['storsweep worker -i inventory.yaml --targets esx01,esx02'],
  results: ['storsweep results runs/<runDir> --csv'],
  status: ['storsweep status runs/<runDir> --watch'],
  cleanup: ['storsweep cleanup runs/<runDir> --dry-run'],
  report: ['storsweep report runs/<runDir> -f html -o report.html'],
  compare: ['storsweep compare runs/<runA> runs/<runB> --fail-on-regression 5'],
  import: ['storsweep import cdm-before.txt cdm-after.txt --set datastore.blockSizeMb=1'],
  profiles: ['storsweep profiles --json'],
  lab: ['storsweep lab up && storsweep run playbooks/quickstart.yaml -i .lab/inventory.yaml', 'storsweep lab down --dir ~/storsweep-lab'],
  completion: ['storsweep completion fish > ~/.config/fish/completions/storsweep.fish', 'source <(storsweep completion bash)    # in ~/.bashrc'],
};

/** Closing notes of `storsweep --help` (read when every command is registered: profiles.ts is loaded then). */
export async function GLOBAL_HELP(): Promise<string> {
  const { IOMETER_SPEC_HELP } = await import('./commands/profiles.ts');
  const env = Object.entries(ENV_OPTIONS)
    .map(([flag, name]) => `  ${name.padEnd(25)} ${flag} of the commands that have it`)
    .join('\n');
  return [
    '',
    'Example:',
    '  $ storsweep lab up',
    '  $ storsweep run playbooks/quickstart.yaml -i .lab/inventory.yaml',
    '',
    'Environment (the command line wins):',
    env,
    `  ${'STORSWEEP_MAX_INPUT_SIZE'.padEnd(25)} --max-input-size`,
    `  ${'NO_COLOR'.padEnd(25)} set: no colour (as --color never)`,
    `  ${'FORCE_COLOR'.padEnd(25)} set, not 0: colour in a pipe too (as --color always)`,
    '',
    'Exit codes: `storsweep help exit-codes`. Shell completion: `storsweep completion bash|zsh|fish`.',
    'Workloads: `storsweep profiles` lists the presets and their tests.',
    IOMETER_SPEC_HELP,
    '',
  ].join('\n');
}

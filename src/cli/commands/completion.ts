// `storsweep completion bash|zsh|fish`: the shell completion script (src/app/completion.ts), from
// the commands as registered; and the hidden `storsweep __complete targets FILE` the script calls
// for an inventory's target names.
import type { Command, Option } from 'commander';
import { UsageError } from '../../errors.ts';
import { visible } from '../../text/visible.ts';
import { terminal } from '../output.ts';
import type { CompletionSpec, FlagSpec, Shell, ValueKind } from '../../app/completion.ts';

const YAML: ValueKind = { kind: 'yaml' };
const DIR: ValueKind = { kind: 'dir' };
const words = (...w: string[]): ValueKind => ({ kind: 'words', words: w });

/** What a flag's value is, by its long name (a file, when not listed). */
const FLAG_VALUES: Readonly<Record<string, ValueKind>> = {
  '--inventory': YAML,
  '--out': DIR,
  '--dir': DIR,
  '--resume': DIR,
  '--set': { kind: 'set' },
  '--targets': { kind: 'targets' },
  '--format': words('md', 'html', 'json', 'csv'),
  '--lab-version': words('5.5', '6.7', '7.0', '8.0'),
  '--store': { kind: 'none' },
  '--run': { kind: 'none' },
};

/** What a command's arguments are (files, when not listed). */
const COMMAND_ARGS: Readonly<Record<string, ValueKind>> = {
  validate: YAML,
  plan: YAML,
  run: YAML,
  submit: YAML,
  schema: words('playbook', 'inventory'),
  lab: words('up', 'down', 'status'),
  completion: words('bash', 'zsh', 'fish'),
  worker: { kind: 'none' },
  profiles: { kind: 'none' },
};

function flagSpec(o: Option): FlagSpec {
  const names = [o.short, o.long].filter((n): n is string => Boolean(n));
  const takesValue = o.required || o.optional;
  const value = takesValue ? (FLAG_VALUES[o.long ?? ''] ?? (o.argChoices ? words(...o.argChoices) : { kind: 'file' })) : undefined;
  return { names, description: o.description, ...(value ? { value } : {}) };
}

/** The command line as the completion scripts need it: every visible command, its flags and arguments. */
export function completionSpec(program: Command): CompletionSpec {
  const visibleCommands = program.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
  return {
    program: program.name(),
    globalFlags: program.options.filter((o) => o.long !== '--version').map(flagSpec),
    commands: visibleCommands.map((c) => {
      const argChoices = (c.registeredArguments)[0]?.argChoices;
      return { name: c.name(), description: c.description(), flags: c.options.map(flagSpec), args: COMMAND_ARGS[c.name()] ?? (argChoices ? words(...argChoices) : { kind: 'file' }) };
    }),
  };
}

async function printScript(shell: string, fullProgram: () => Promise<Command>): Promise<void> {
  const { SHELLS, completionScript } = await import('../../app/completion.ts');
  if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`completion: expected one of ${SHELLS.join(', ')}, got "${visible(shell)}"`);
  // every command, whichever this process registered
  terminal.stdout(completionScript(shell as Shell, completionSpec(await fullProgram())));
}

/** The inventory's target names, one a line; nothing when it cannot be read (completion stays quiet). */
async function printTargets(file: string): Promise<void> {
  const [{ readFileSync, statSync }, { parse }, { targetNamesOf }] = await Promise.all([import('node:fs'), import('yaml'), import('../../app/completion.ts')]);
  let names: string[] = [];
  try {
    // a regular file of inventory size only: a TAB never waits on a FIFO or reads a huge file
    const st = statSync(file);
    if (!st.isFile() || st.size > 4 << 20) return;
    names = targetNamesOf(parse(readFileSync(file, 'utf8')));
  } catch {
    names = [];
  }
  if (names.length) terminal.stdout(`${names.join('\n')}\n`);
}

/** `fullProgram` builds the program with every command (program.ts passes it: no import back to it). */
export function registerCompletion(program: Command, fullProgram: () => Promise<Command>): void {
  program
    .command('completion')
    .description('print the shell completion script: commands, flags, playbook and inventory files, target names from the -i inventory')
    .argument('<shell>', 'bash, zsh or fish')
    .action((shell: string) => printScript(shell, fullProgram));
  program
    .command('__complete', { hidden: true })
    .argument('<what>', 'targets')
    .argument('<file>', 'the inventory')
    .action(async (what: string, file: string) => {
      if (what !== 'targets') throw new UsageError(`__complete: expected "targets", got "${visible(what)}"`);
      await printTargets(file);
    });
}

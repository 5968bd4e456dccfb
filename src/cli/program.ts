// The one place commands are registered. Each command's module is imported only when that command
// runs (commander needs a command's options only to parse it): `storsweep validate` loads config/
// and plan/, never the run executor, the stores or the providers' SOAP clients; `--help`, an unknown
// or a missing command load them all. COMMANDS says which module registers which command; a unit
// test (test/unit/cli/program.test.ts) checks it against the full registration.
import { Command, Option } from 'commander';
import { UsageError } from '../errors.ts';
import { visible } from '../text/visible.ts';
import { DEFAULT_INPUT_LIMITS, formatBytes, setInputLimitOverride } from '../input/read-input.ts';
import { parseSize } from '../config/size.ts';
import { boldTitle, colorWanted, setOutputLevel, terminal, writeHelp } from './output.ts';
import { COMMAND_EXAMPLES, ENV_OPTIONS, GLOBAL_HELP } from './help-text.ts';
import { PLAYBOOK_COMMANDS, shippedPlaybook } from './shipped-playbook.ts';
import { VERSION, versionText } from '../version.ts';

type Register = (program: Command) => unknown;

/** Each module that registers commands, in the order `--help` lists them. */
const MODULES = {
  config: async () => (await import('./commands/config-commands.ts')).registerConfigCommands,
  run: async () => (await import('./commands/run.ts')).registerRun,
  preflight: async () => (await import('./commands/preflight.ts')).registerPreflight,
  queue: async () => (await import('./commands/queue-commands.ts')).registerQueueCommands,
  runDir: async () => (await import('./commands/run-dir-commands.ts')).registerRunDirCommands,
  report: async () => (await import('./commands/report.ts')).registerReport,
  compare: async () => (await import('./commands/compare.ts')).registerCompare,
  import: async () => (await import('./commands/import.ts')).registerImport,
  profiles: async () => (await import('./commands/profiles.ts')).registerProfiles,
  lab: async () => (await import('./commands/lab.ts')).registerLab,
  // completion lists every command: it is handed the builder, not an import back to this file
  completion: async () => {
    const { registerCompletion } = await import('./commands/completion.ts');
    return (program: Command) => registerCompletion(program, () => buildProgram([]));
  },
} satisfies Record<string, () => Promise<Register>>;

export type CommandModule = keyof typeof MODULES;

/** Command name → the module that registers it. */
export const COMMANDS: Readonly<Record<string, CommandModule>> = {
  validate: 'config',
  plan: 'config',
  schema: 'config',
  run: 'run',
  preflight: 'preflight',
  submit: 'queue',
  worker: 'queue',
  results: 'runDir',
  status: 'runDir',
  cleanup: 'runDir',
  report: 'report',
  compare: 'compare',
  import: 'import',
  profiles: 'profiles',
  lab: 'lab',
  completion: 'completion',
  __complete: 'completion',
};

/** Global options that take a value: their value is not the command's name. */
const GLOBAL_VALUE_OPTIONS = new Set(['--max-input-size', '--color']);

/** The command argv names (its first word that is no option), or undefined. */
export function commandName(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1];
    if (GLOBAL_VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/** The modules the arguments need: the named command's, none for `--version`, else all. */
export function modulesFor(args: readonly string[]): CommandModule[] {
  const name = commandName(args);
  const own = name === undefined ? undefined : COMMANDS[name];
  if (own) return [own];
  if (name === undefined && (args.includes('--version') || args.includes('-V'))) return [];
  return Object.keys(MODULES) as CommandModule[];
}

/**
 * argv as commander is to parse it. `storsweep lab up --version 7.0` means the lab's release, as
 * `npm run lab -- up --version 7.0` does (commander would take a --version anywhere as the
 * program's): after `lab`, it is read as --lab-version.
 */
export function programArgv(argv: readonly string[]): string[] {
  const args = argv.slice(2);
  if (commandName(args) !== 'lab') return [...argv];
  const at = args.indexOf('lab');
  const rest = args.slice(at + 1).map((a) => (a === '--version' ? '--lab-version' : a.startsWith('--version=') ? `--lab-version=${a.slice('--version='.length)}` : a));
  return [...argv.slice(0, 2), ...args.slice(0, at + 1), ...rest];
}

function inputSizeOption(text: string): number {
  let n: number;
  try {
    n = parseSize(text);
  } catch {
    n = NaN;
  }
  if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 31 - 1) throw new UsageError(`--max-input-size / STORSWEEP_MAX_INPUT_SIZE: expected a size from 1 byte to 2 GiB like 8m or 64m; got "${visible(text)}"`);
  return n;
}

/**
 * STORSWEEP_INVENTORY, STORSWEEP_STORE, STORSWEEP_OUT: the options people set once per shell, for
 * every command that has them (shown in its --help as "env: …"). The command line wins; an empty
 * variable counts as unset.
 */
function addEnvDefaults(cmd: Command): void {
  for (const opt of cmd.options) {
    const envVar = opt.long ? ENV_OPTIONS[opt.long] : undefined;
    if (!envVar || opt.envVar) continue;
    opt.envVar = envVar;
    cmd.on(`optionEnv:${opt.name()}`, (value: string) => {
      if (value !== '') cmd.setOptionValueWithSource(opt.attributeName(), value, 'env');
    });
  }
}

function addExample(cmd: Command): void {
  const example = COMMAND_EXAMPLES[cmd.name()];
  if (example) cmd.addHelpText('after', `\nExample:\n${example.map((l) => `  $ ${l}`).join('\n')}\n`);
}

/** `--color WHEN` as given (read before commander parses: help is written while it parses). */
function colorFlag(args: readonly string[]): string | undefined {
  let flag: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') break;
    if (args[i] === '--color') flag = args[++i];
    else if (args[i]!.startsWith('--color=')) flag = args[i]!.slice('--color='.length);
    else if (args[i] === '--no-color') flag = 'never';
  }
  return flag;
}

/**
 * `help WORD` where WORD is no command: refused, naming the nearest command (commander would print
 * the whole help as an error, without saying why), as `storsweep valdate` is.
 */
async function checkHelpTopic(args: readonly string[]): Promise<void> {
  if (commandName(args) !== 'help') return;
  const topic = args.slice(args.indexOf('help') + 1).find((a) => !a.startsWith('-'));
  const topics = [...Object.keys(COMMANDS).filter((c) => !c.startsWith('__')), 'help', 'exit-codes'];
  if (topic === undefined || topics.includes(topic)) return;
  const { didYouMean } = await import('../config/load.ts');
  const near = didYouMean(topic, topics);
  throw new UsageError(`help: no command "${visible(topic)}"${near ? ` (did you mean "${near}"?)` : ''}; \`storsweep --help\` lists the commands`);
}

/** The program with the commands `args` (argv without node and the script) need. */
export async function buildProgram(args: readonly string[] = []): Promise<Command> {
  await checkHelpTopic(args);
  const color = colorWanted(colorFlag(args));
  const program = new Command('storsweep')
    .description('Declarative storage benchmark sweeps for vSphere, ESXi and Hyper-V labs')
    .version(modulesFor(args).length === 0 ? versionText() : VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (text) => writeHelp(text, color), writeErr: terminal.stderr, getOutHasColors: () => color, getErrHasColors: () => false })
    .configureHelp({ styleTitle: boldTitle })
    .addOption(new Option('--color <when>', 'colour in the help: auto (on a terminal, unless NO_COLOR is set), always, never').choices(['auto', 'always', 'never']).default('auto'))
    .option('--no-color', 'no colour: as --color never')
    .addOption(new Option('--max-input-size <size>', `largest input file read, e.g. 8m (default: ${formatBytes(DEFAULT_INPUT_LIMITS.config)} for playbooks and inventories, ${formatBytes(DEFAULT_INPUT_LIMITS.import)} for imported results, ${formatBytes(DEFAULT_INPUT_LIMITS.results)} for results .jsonl)`).env('STORSWEEP_MAX_INPUT_SIZE'))
    .option('-q, --quiet', 'no progress lines from run and worker (the run\'s log.jsonl keeps them); results, warnings and errors stay')
    .option('-v, --verbose', 'every progress event of run and worker on a line of its own, also on a terminal')
    .hook('preAction', (cmd, action) => {
      const o = cmd.opts<{ quiet?: boolean; verbose?: boolean }>();
      if (o.quiet && o.verbose) throw new UsageError('--quiet and --verbose: give one of them');
      setOutputLevel(o.quiet ? 'quiet' : o.verbose ? 'verbose' : 'normal');
      const given = cmd.opts<{ maxInputSize?: string }>().maxInputSize;
      setInputLimitOverride(given === undefined || given === '' ? null : inputSizeOption(given));
      // the action receives processedArgs after this hook: a shipped playbook's path goes in its place
      const playbook: unknown = action.processedArgs[0];
      if (PLAYBOOK_COMMANDS.has(action.name()) && typeof playbook === 'string') {
        const { file, note } = shippedPlaybook(playbook);
        if (note) terminal.stderr(note);
        action.processedArgs[0] = file;
      }
    });
  const wanted = new Set(modulesFor(args));
  for (const [name, load] of Object.entries(MODULES)) {
    if (wanted.has(name as CommandModule)) (await load())(program);
  }
  if (wanted.size > 1) program.addHelpText('after', await GLOBAL_HELP());
  for (const c of program.commands) {
    c.exitOverride();
    addEnvDefaults(c);
    addExample(c);
  }
  return program;
}

// The composition root: the only place that reads argv and sets the exit code.
import { Command, CommanderError } from 'commander';
import { registerConfigCommands } from './commands/config-commands.ts';
import { registerCompare } from './commands/compare.ts';
import { registerImport } from './commands/import.ts';
import { IOMETER_SPEC_HELP, registerProfiles } from './commands/profiles.ts';
import { registerQueueCommands } from './commands/queue-commands.ts';
import { registerReport } from './commands/report.ts';
import { registerRun } from './commands/run.ts';
import { registerPreflight } from './commands/preflight.ts';
import { registerRunDirCommands } from './commands/run-dir-commands.ts';
import { EXIT, reportError } from './exit.ts';
import { exitQuietlyOnClosedPipe, terminal } from './output.ts';
import { DEFAULT_INPUT_LIMITS, formatBytes, setInputLimitOverride } from '../input/read-input.ts';
import { parseSize } from '../config/size.ts';
import { UsageError } from '../errors.ts';
import { visible } from '../text/visible.ts';
import { VERSION } from '../version.ts';

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

export function buildProgram(): Command {
  const program = new Command('storsweep')
    .description('Declarative storage benchmark sweeps for vSphere, ESXi and Hyper-V labs')
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: terminal.stdout, writeErr: terminal.stderr })
    .option('--max-input-size <size>', `largest input file read, e.g. 8m (default: ${formatBytes(DEFAULT_INPUT_LIMITS.config)} for playbooks and inventories, ${formatBytes(DEFAULT_INPUT_LIMITS.import)} for imported results, ${formatBytes(DEFAULT_INPUT_LIMITS.results)} for results .jsonl; env STORSWEEP_MAX_INPUT_SIZE)`)
    .hook('preAction', (cmd) => {
      const given = cmd.opts<{ maxInputSize?: string }>().maxInputSize ?? process.env.STORSWEEP_MAX_INPUT_SIZE;
      setInputLimitOverride(given === undefined || given === '' ? null : inputSizeOption(given));
    });
  registerConfigCommands(program);
  registerRun(program);
  registerPreflight(program);
  registerQueueCommands(program);
  registerRunDirCommands(program);
  registerReport(program);
  registerCompare(program);
  registerImport(program);
  registerProfiles(program);
  program.addHelpText('after', `\nWorkloads: \`storsweep profiles\` lists the presets and their tests.\n${IOMETER_SPEC_HELP}\n`);
  for (const c of program.commands) c.exitOverride();
  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version "errors" are successes; commander already printed the message
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    return reportError(err);
  }
}

exitQuietlyOnClosedPipe();
const code = await main(process.argv);
process.exitCode = code;

// The composition root: the only place that reads argv and sets the exit code.
import { Command, CommanderError } from 'commander';
import { registerConfigCommands } from './commands/config-commands.ts';
import { registerCompare } from './commands/compare.ts';
import { registerImport } from './commands/import.ts';
import { registerReport } from './commands/report.ts';
import { registerRun } from './commands/run.ts';
import { registerRunDirCommands } from './commands/run-dir-commands.ts';
import { EXIT, reportError } from './exit.ts';
import { exitQuietlyOnClosedPipe, terminal } from './output.ts';

export function buildProgram(): Command {
  const program = new Command('storsweep')
    .description('Declarative storage benchmark sweeps for vSphere, ESXi and Hyper-V labs')
    .version('0.1.0')
    .exitOverride()
    .configureOutput({ writeOut: terminal.stdout, writeErr: terminal.stderr });
  registerConfigCommands(program);
  registerRun(program);
  registerRunDirCommands(program);
  registerReport(program);
  registerCompare(program);
  registerImport(program);
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

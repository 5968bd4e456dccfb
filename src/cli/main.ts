// The composition root: the only place that reads argv and sets the exit code. It imports little:
// `--version` answers from package.json and the build's record; a command's module is imported
// when that command runs (src/cli/program.ts), and the error mapper only when there is an error.
import { EXIT } from './exit-codes.ts';
import { exitQuietlyOnClosedPipe, terminal } from './output.ts';

/** What main answers without commander: `--version`, `help exit-codes`. Null: not one of these. */
async function answerAtOnce(args: readonly string[]): Promise<number | null> {
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    const { versionText } = await import('../version.ts');
    terminal.stdout(`${versionText()}\n`);
    return EXIT.ok;
  }
  if (args.length === 2 && args[0] === 'help' && args[1] === 'exit-codes') {
    const { exitCodesHelp } = await import('./exit-codes.ts');
    terminal.stdout(exitCodesHelp());
    return EXIT.ok;
  }
  return null;
}

export async function main(argv: string[]): Promise<number> {
  const args = argv.slice(2);
  try {
    const now = await answerAtOnce(args);
    if (now !== null) return now;
    const { buildProgram, programArgv } = await import('./program.ts');
    await (await buildProgram(args)).parseAsync(programArgv(argv));
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    const { CommanderError } = await import('commander');
    if (err instanceof CommanderError) {
      // help and version "errors" are successes; commander already printed the message
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const { reportError } = await import('./exit.ts');
    return reportError(err);
  }
}

exitQuietlyOnClosedPipe();
const code = await main(process.argv);
process.exitCode = code;

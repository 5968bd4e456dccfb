import { RemoteCommandFailed } from '../errors.ts';
import type { CommandResult, CommandRunner, RunOptions } from './command-runner.ts';

/** Run and require exit code 0; the error names the target, the command, the code and stderr. */
export async function runChecked(runner: CommandRunner, command: string, options?: RunOptions): Promise<CommandResult> {
  const r = await runner.run(command, options);
  if (r.exitCode !== 0) {
    const tail = r.stderr.trim().split('\n').slice(-5).join('\n');
    throw new RemoteCommandFailed(`${runner.target}: command failed with exit code ${r.exitCode}: ${command}${tail ? `\n${tail}` : ''}`, {
      host: runner.target,
      command,
      exitCode: r.exitCode,
      stderr: r.stderr,
      reason: 'exit',
    });
  }
  return r;
}

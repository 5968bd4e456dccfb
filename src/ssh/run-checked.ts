import { RemoteCommandFailed } from '../errors.ts';
import type { CommandResult, CommandRunner, RunOptions } from './command-runner.ts';

/** Run and require exit code 0; the error (src/errors.ts remoteFailureMessage) names the target, the command, the code and stderr's tail. */
export async function runChecked(runner: CommandRunner, command: string, options?: RunOptions & { what?: string }): Promise<CommandResult> {
  const { what, ...runOptions } = options ?? {};
  const r = await runner.run(command, runOptions);
  if (r.exitCode !== 0) {
    throw new RemoteCommandFailed({ host: runner.target, what, command, exitCode: r.exitCode, stderr: r.stderr, reason: 'exit' });
  }
  return r;
}

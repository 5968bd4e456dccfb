// A piece of work on a session of its own: opened for it, closed after it, whatever the work did.
// The preflights of the SSH providers ask each question so (a check that fails leaves no session
// open for the next). Shared provider code: src/preflight imports the providers, so a helper the
// providers call cannot live there (test/architecture/layers.ts).
import type { CommandRunner } from '../ssh/command-runner.ts';

/** `fn` on a fresh session from `connect`; the session closed after it (a failed close is ignored: the work is done). */
export async function withFreshSession<X>(connect: () => Promise<CommandRunner>, fn: (runner: CommandRunner) => Promise<X>): Promise<X> {
  const runner = await connect();
  try {
    return await fn(runner);
  } finally {
    await runner.close().catch(() => undefined);
  }
}

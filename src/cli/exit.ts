// Errors → exit codes and short messages. The CLI never prints a stack trace for a condition we
// know; an unknown error prints its message and a hint to the log.
import { ConfigError, InputTooLarge, NotARegularFile, errorMessage, OutputRefused, RunStoreDamaged, RunStoreInaccessible, RunLockUnusable, ResumeMismatch, RunDirLocked, SecretNotFound, StorsweepError, UnsafeOperation, UsageError, InvalidArgument, StoreLost, StoreSchemaTooNew } from '../errors.ts';
import { visible } from '../text/visible.ts';
import { redact } from '../input/secrets.ts';
import { isDamagedDatabase } from '../results/store.ts';
import { terminal } from './output.ts';

import { EXIT } from './exit-codes.ts';

export { EXIT } from './exit-codes.ts';

export function exitCodeFor(err: unknown): number {
  if (err instanceof ConfigError || err instanceof UsageError || err instanceof SecretNotFound || err instanceof InvalidArgument || err instanceof OutputRefused || err instanceof InputTooLarge || err instanceof NotARegularFile || err instanceof RunStoreDamaged || err instanceof RunStoreInaccessible || err instanceof RunLockUnusable || isDamagedDatabase(err)) return EXIT.usage;
  // Refused before anything was done: a run directory another process holds, a resume that would
  // mix configurations. Same code as bad input: the command as given cannot proceed.
  if (err instanceof RunDirLocked || err instanceof ResumeMismatch || err instanceof StoreSchemaTooNew) return EXIT.usage;
  return EXIT.failure;
}

export function shortMessage(err: unknown): string {
  if (err instanceof ConfigError) return err.message;
  if (err instanceof UnsafeOperation || err instanceof RunDirLocked || err instanceof ResumeMismatch) return `refused: ${err.message}`;
  if (err instanceof OutputRefused) return err.details.reason === 'bad-path' ? err.message : `refused: ${err.message}`;
  // the store failed under a command (its message is the failure's own): say which store
  if (err instanceof StoreLost) return `${visible(err.details.store)}: store lost: ${err.message}`;
  // every other named condition (InternalError says itself that it is a bug)
  if (err instanceof StorsweepError) return err.message;
  if (isUnbuiltNativeModule(err)) return UNBUILT_NATIVE;
  // damage SQLite finds only later, in a page the open did not read
  if (isDamagedDatabase(err)) return `a run directory's run.sqlite is damaged (SQLite: ${errorMessage(err)}); keep a copy, then try \`sqlite3 run.sqlite .recover | sqlite3 recovered.sqlite\` and put recovered.sqlite in its place`;
  if (err instanceof Error) return `${err.name === 'Error' ? 'error' : err.name}: ${err.message}`;
  return String(err);
}

// better-sqlite3 loads its compiled module through the `bindings` package, which throws this when
// no build exists: its install script did not run (`npm install --ignore-scripts`, or npm 12, which
// runs a dependency's install script only when allowed: npm/rfcs#868, npm/cli#9360).
const UNBUILT_NATIVE =
  "better-sqlite3's native module is not built: its install script did not run (npm 12 runs install scripts only when allowed). " +
  'Reinstall with them allowed: npm install -g --allow-scripts=better-sqlite3,ssh2,cpu-features storsweep (or the tarball in place of storsweep)';

function isUnbuiltNativeModule(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('Could not locate the bindings file') && err.message.includes('better_sqlite3.node');
}

export function reportError(err: unknown): number {
  terminal.stderr(redact(shortMessage(err)) + '\n');
  return exitCodeFor(err);
}

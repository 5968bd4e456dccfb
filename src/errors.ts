// Error classes named after the condition a caller may handle. Each keeps `cause`, carries the
// context fields a message needs in `details`, and the CLI maps them to exit codes (src/cli/exit.ts).

import { excerpt, shortenLongRuns } from './text/excerpt.ts';
import { visible } from './text/visible.ts';

/**
 * The one shape every error here has: a message, the context fields a caller or the log needs
 * (`details`), the underlying `cause`. Its name is its class's name. A condition with nothing to
 * add is a one-line subclass.
 */
export class StorsweepError<D = Record<string, never>> extends Error {
  constructor(
    message: string,
    readonly details: D,
    options?: { cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }
}

/**
 * A broken invariant: storsweep's own code got into a state it never should (a plan without the
 * profile it names, a step without its provider). Not the user's doing; the message says so.
 */
export class InternalError extends StorsweepError<Record<string, unknown>> {
  constructor(message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(`internal error (a bug in storsweep, please report it): ${message}`, details, options);
  }
}

export interface Diagnostic {
  file: string;
  line: number;
  column: number;
  /** key path like `matrix.disk.format[2]`, '' for the document root */
  path: string;
  message: string;
  /**
   * A value given on the command line rather than in the file (`--set settings.fileSize=1x`): the
   * problem is shown at that argument, not at a line (`file` holds the same text; line and column 0).
   */
  argument?: string;
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = d.argument ?? `${d.file}:${d.line}:${d.column}`;
  const message = shortenLongRuns(d.message);
  return d.path ? `${where}: ${d.path}: ${message}` : `${where}: ${message}`;
}

/** Diagnostics shown in a message; the rest are counted (100,000 unknown keys are not 100,000 lines). */
export const MAX_DIAGNOSTICS_SHOWN = 50;

/** `uncollected`: problems found but not built into diagnostics (see config/load.ts). */
export function formatDiagnostics(diagnostics: readonly Diagnostic[], uncollected = 0): string {
  const lines = diagnostics.slice(0, MAX_DIAGNOSTICS_SHOWN).map(formatDiagnostic);
  const more = Math.max(0, diagnostics.length - MAX_DIAGNOSTICS_SHOWN) + uncollected;
  if (more > 0) lines.push(`… and ${more} more problem${more === 1 ? '' : 's'} (fix these first)`);
  return lines.join('\n');
}

/** Bad playbook or inventory: every problem found, each with file:line:col and key path. */
export class ConfigError extends StorsweepError<{ more: number }> {
  constructor(
    readonly diagnostics: Diagnostic[],
    options?: { cause?: unknown; more?: number },
  ) {
    super(formatDiagnostics(diagnostics, options?.more ?? 0), { more: options?.more ?? 0 }, options);
  }
  /** problems beyond `diagnostics` that were only counted (a file with 100,000 of them) */
  get more(): number {
    return this.details.more;
  }
}

/** A secret reference (`${env:X}`, `${file:p}`) that could not be resolved. */
export class SecretNotFound extends StorsweepError<{ reference: string }> {
  constructor(
    readonly reference: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, { reference }, options);
  }
}

/** Wrong arguments on the command line (not in a file). */
export class UsageError extends StorsweepError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, {}, options);
  }
}

/**
 * A path given as a run directory that is not one: no run.sqlite (or results.jsonl, for commands
 * that read an exported run), or a run.sqlite without a run in it. A usage error (exit 2) in every
 * command that takes a run directory.
 */
export class NotARunDirectory extends UsageError {
  constructor(
    readonly dir: string,
    why: string,
    options?: { cause?: unknown },
  ) {
    super(`${visible(dir)}: not a run directory (${why})`, options);
  }
}

/**
 * How a remote (or local) command failed: 'exit' non-zero, 'timeout', 'connection' lost (or never
 * made), 'spawn' (could not be started), 'output' (it exited 0 but its output reports a failure).
 */
export type RemoteFailureReason = 'exit' | 'timeout' | 'connection' | 'spawn' | 'output';

export interface RemoteFailure {
  /** the target as its runner names it (`user@host:22`, `local`) */
  host: string;
  /** the whole command line as sent ('' when none was: the connection failed first) */
  command: string;
  exitCode: number | null;
  stderr: string;
  reason: RemoteFailureReason;
  /** what the command was for, e.g. `fio`, `vmkfstools -U`, `Set-Disk` (default: the command itself, cut) */
  what?: string;
  /** what the exit code does not say, worded to follow `what`: `timed out after 5000 ms`, `was killed by SIGKILL` */
  detail?: string;
}

/** Lines of stderr the short form quotes, and the long form. */
const SHORT_TAIL_LINES = 3;
const LONG_TAIL_LINES = 40;

function stderrTail(stderr: string, lines: number): string[] {
  return stderr
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '')
    .slice(-lines);
}

function remoteFailurePhrase(d: RemoteFailure): string {
  switch (d.reason) {
    case 'exit':
      return d.exitCode === null ? 'failed' : `failed with exit code ${d.exitCode}`;
    case 'timeout':
      return 'timed out';
    case 'connection':
      return d.command === '' ? 'could not connect' : 'lost its connection';
    case 'spawn':
      return 'could not be started';
    case 'output':
      return `reported a failure (exit code ${d.exitCode ?? 'none'})`;
  }
}

/**
 * The one wording of a failed command. 'short' (the terminal, a permutation's reason): host, what,
 * how it failed, the last lines of stderr on one line. 'long' (log.jsonl): the whole command, the
 * exit code, the reason and the last 40 lines of stderr, one field per line.
 */
export function remoteFailureMessage(d: RemoteFailure, form: 'short' | 'long'): string {
  const what = d.what ?? (d.command === '' ? 'connection' : `\`${excerpt(d.command, 160)}\``);
  // a non-zero exit always says its code; otherwise the caller's words (if any) say what happened
  const how = d.reason === 'exit' ? `${remoteFailurePhrase(d)}${d.detail ? ` (${d.detail})` : ''}` : (d.detail ?? remoteFailurePhrase(d));
  const head = `${d.host}: ${what} ${how}`;
  if (form === 'short') {
    const tail = stderrTail(d.stderr, SHORT_TAIL_LINES).map((l) => excerpt(l.trim(), 300));
    return tail.length ? `${head}: ${tail.join(' | ')}` : head;
  }
  const all = stderrTail(d.stderr, Number.MAX_SAFE_INTEGER);
  const tail = all.slice(-LONG_TAIL_LINES);
  return [
    head,
    `host: ${d.host}`,
    `command: ${d.command === '' ? '(none sent)' : d.command}`,
    `exit code: ${d.exitCode ?? 'none'}`,
    `reason: ${d.reason}`,
    ...(tail.length ? [`stderr (last ${tail.length} of ${all.length} lines):`, ...tail.map((l) => `  ${l}`)] : ['stderr: (empty)']),
  ].join('\n');
}

/** A remote or local command exited non-zero, timed out, lost its connection or reported a failure. */
export class RemoteCommandFailed extends StorsweepError<RemoteFailure> {
  constructor(details: RemoteFailure, options?: { cause?: unknown }) {
    super(remoteFailureMessage(details, 'short'), details, options);
  }
  /** The long form, for log.jsonl. */
  get longMessage(): string {
    return remoteFailureMessage(this.details, 'long');
  }
}

/** SSH host key or TLS certificate did not match what the inventory trusts. */
export class HostVerificationFailed extends StorsweepError<{ host: string }> {
  constructor(
    message: string,
    readonly host: string,
    options?: { cause?: unknown },
  ) {
    super(message, { host }, options);
  }
}

/** A destructive step refused by a guard: device not allowed, in use, or not confirmed. */
export class UnsafeOperation extends StorsweepError<{ operation: string; target: string; identity?: DiskIdentityMismatch }> {}

/**
 * The disk a step attached did not appear in the guest by its identity (`<byIdDir>/wwn-0x<wwn>`)
 * before the step's deadline, or the guest cannot reach raw devices: nothing is measured.
 */
export class GuestDiskNotFound extends StorsweepError<{ host: string; wwn: string; byIdDir: string; seen?: string[]; identity?: DiskIdentityMismatch }> {}

/** A test file that does not fit the volume it goes on (Get-Volume's SizeRemaining): nothing was created. */
export class NoRoomForTestFile extends StorsweepError<{ volume: string; needBytes: number; freeBytes: number }> {}

/**
 * A disk the guest did not show under the identity expected, as fields a script can act on
 * (`preflight --json`): the object attached, the identity expected, and what a disk of its size shows
 * instead. `name`: the by-id link; `wwn`: its hex when the link is a `wwn-0x…` one.
 */
/** The identity mismatch a refusal carries (a disk not found under the identity expected), if any. */
export function identityMismatchOf(err: unknown): DiskIdentityMismatch | undefined {
  return err instanceof GuestDiskNotFound || err instanceof UnsafeOperation ? err.details.identity : undefined;
}

export interface DiskIdentityMismatch {
  object: string;
  sizeBytes: number;
  expected: { wwn: string; name: string };
  seen: Array<{ name: string; wwn?: string; device: string }>;
}

/**
 * What the host provisioned is not what the permutation's axes name (e.g. a thick disk that came
 * back thin on NFS): the permutation fails before anything is measured, naming both.
 */
export class ProvisionedStateMismatch extends StorsweepError<{ axis: string; asked: string; got: string; object: string }> {}

/** A benchmark tool's output could not be read. `line` is 1-based when known. */
export class ParseError extends StorsweepError<{ source: string; line?: number; expected?: string }> {}

/**
 * `report -o` would overwrite a file that is not one of our reports (without --force), a run's own
 * files, or one of the report's inputs (never allowed), or the path cannot be written.
 */
export class OutputRefused extends StorsweepError<{ path: string; reason: 'not-a-report' | 'not-a-regular-file' | 'run-directory' | 'input' | 'bad-path' }> {}

/**
 * A value that would be placed into a remote command line failed validation. `inventoryField`: the
 * target's inventory key the refusal is also about (validate reports it there too).
 */
export class InvalidArgument extends StorsweepError<{ name: string; value: string; inventoryField?: string }> {}

/** The run directory is held by another live process (`run`, `run --resume`, `cleanup`). */
export class RunDirLocked extends StorsweepError<{ runDir: string; holder: { pid: number; host: string; since: string; command: string } | null }> {
  constructor(
    readonly runDir: string,
    readonly holder: { pid: number; host: string; since: string; command: string } | null,
    options?: { cause?: unknown; note?: string; who?: string },
  ) {
    const who = options?.who ?? (holder ? `pid ${holder.pid} on host ${holder.host} (storsweep ${holder.command}, since ${holder.since})` : 'another process (its pid could not be read)');
    // `who`: several holders (workers sharing a run); the note then says what to do
    const tail = options?.who !== undefined ? '' : '; one process at a time may change a run directory: wait for it to end, or stop it first';
    super(`${runDir} is in use by ${who}${options?.note ? `; ${options.note}` : ''}${tail}`, { runDir, holder }, options);
  }
}

/** `run --resume` with a playbook or inventory that differs from the one the run started with. */
export class ResumeMismatch extends StorsweepError<{ differences: Array<{ key: string; was: string; now: string }> }> {
  constructor(
    message: string,
    readonly differences: Array<{ key: string; was: string; now: string }>,
    options?: { cause?: unknown },
  ) {
    super(message, { differences }, options);
  }
}

/** An input file larger than the limit for its kind (see src/input/read-input.ts). */
export class InputTooLarge extends StorsweepError<{ file: string; size: number | null; limit: number; reason: string }> {}

/** An input path that is a device, FIFO, socket or directory: never read (it may never end). */
export class NotARegularFile extends StorsweepError<{ file: string; type: string; reason: string }> {}

/**
 * A run directory's `run.lock` that is not the lock file storsweep creates: a symbolic link (never
 * followed: it could point anywhere), a device or FIFO, or a file that is not a lock database.
 */
export class RunLockUnusable extends StorsweepError<{ file: string }> {
  constructor(
    readonly file: string,
    what: string,
    options?: { cause?: unknown },
  ) {
    super(`${visible(file)} ${what}, not the lock file storsweep creates there; nothing was changed. Remove it (removing a link leaves what it points to alone) and retry`, { file }, options);
  }
}

/** A run directory's `run.sqlite` that SQLite cannot read (overwritten, truncated, disk error). */
export class RunStoreDamaged extends StorsweepError<{ file: string }> {
  constructor(
    readonly file: string,
    sqliteMessage: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${visible(file)}: the run's database is damaged (SQLite: ${sqliteMessage}). Keep a copy, then try to salvage it with \`sqlite3 run.sqlite .recover | sqlite3 recovered.sqlite\` and put recovered.sqlite in its place; the results of a finished run are also in results.jsonl next to it, which report and compare read once run.sqlite is moved aside`,
      { file },
      options,
    );
  }
}

/** A run's database that is intact but cannot be used where it is (e.g. in a read-only directory). */
export class RunStoreInaccessible extends StorsweepError<{ file: string }> {
  constructor(
    readonly file: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${visible(file)}: ${reason}`, { file }, options);
  }
}

/** A run id that the store (PostgreSQL) does not hold: a usage error, like a path that is not a run directory. */
export class RunNotFound extends UsageError {
  constructor(
    readonly runId: string,
    readonly store: string,
  ) {
    super(`run ${visible(runId)} not found in ${visible(store)}; \`storsweep status --store URL\` lists the runs it holds`);
  }
}

/**
 * A store database whose schema is newer than this storsweep (a newer version migrated it): refused
 * before anything is read or written, since this code cannot know what the newer schema means.
 */
export class StoreSchemaTooNew extends StorsweepError<{ store: string; version: number; known: number }> {
  constructor(store: string, version: number, known: number) {
    super(`${visible(store)}: its storsweep schema is version ${version}, newer than this storsweep knows (${known}); nothing was changed. Use the storsweep version that migrated it, or a newer one`, { store, version, known });
  }
}

/** The store (PostgreSQL) cannot be reached or refused the login; the message names it without a password. */
/**
 * The run's store can take no more writes: the disk under the run directory is full, over quota or
 * read-only, run.sqlite hit an I/O error, the PostgreSQL server is gone, refused the connection or
 * stopped answering. Only the store adapters (results/sqlite-store.ts, results/pg-store.ts) and the
 * raw output writer (results/raw.ts) throw it, wrapping what failed, so the executor stops the sweep
 * on this class alone: the same ECONNREFUSED from an SSH or vSphere connection is that target's
 * failure. Its message is the failure's own (what the run records as the reason).
 */
export class StoreLost extends StorsweepError<{ store: string }> {
  constructor(store: string, cause: unknown) {
    super(errorMessage(cause), { store }, { cause });
  }
}

/**
 * The worker's lease on its target group is gone (its session ended, or its heartbeat was not
 * confirmed in time): another worker may hold the group now. Whatever it guards must touch nothing
 * more: no provider call, no store write, no job call (run/executor.ts LeaseGuard, run/worker.ts).
 */
export class LeaseLost extends StorsweepError<{ reason: string }> {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`lease lost: ${reason}`, { reason }, options);
  }
}

export class StoreUnavailable extends StorsweepError<{ store: string }> {
  constructor(store: string, reason: string, options?: { cause?: unknown }) {
    super(`${visible(store)}: cannot use the store: ${reason}`, { store }, options);
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * The long form for log.jsonl of a failed command behind `err` (itself or a cause, e.g. under a
 * retry's "…; retrying failed: …"), or undefined when there is none.
 */
export function errorLongForm(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof RemoteCommandFailed) return e.longMessage;
  }
  return undefined;
}

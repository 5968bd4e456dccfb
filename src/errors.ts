// Error classes named after the condition a caller may handle. Each keeps `cause`, carries the
// context fields a message needs, and the CLI maps them to exit codes (see src/cli/exit.ts).

import { shortenLongRuns } from './text/excerpt.ts';
import { visible } from './text/visible.ts';

export interface Diagnostic {
  file: string;
  line: number;
  column: number;
  /** key path like `matrix.disk.format[2]`, '' for the document root */
  path: string;
  message: string;
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = `${d.file}:${d.line}:${d.column}`;
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
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** problems beyond `diagnostics` that were only counted (a file with 100,000 of them) */
  readonly more: number;
  constructor(
    readonly diagnostics: Diagnostic[],
    options?: { cause?: unknown; more?: number },
  ) {
    super(formatDiagnostics(diagnostics, options?.more ?? 0), options);
    this.more = options?.more ?? 0;
  }
}

/** A secret reference (`${env:X}`, `${file:p}`) that could not be resolved. */
export class SecretNotFound extends Error {
  override readonly name = 'SecretNotFound';
  constructor(
    readonly reference: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Wrong arguments on the command line (not in a file). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A remote or local command exited non-zero, timed out or lost its connection. */
export class RemoteCommandFailed extends Error {
  override readonly name = 'RemoteCommandFailed';
  constructor(
    message: string,
    readonly details: {
      host: string;
      command: string;
      exitCode: number | null;
      stderr: string;
      /** 'exit' | 'timeout' | 'connection' | 'spawn' */
      reason: 'exit' | 'timeout' | 'connection' | 'spawn';
    },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** SSH host key or TLS certificate did not match what the inventory trusts. */
export class HostVerificationFailed extends Error {
  override readonly name = 'HostVerificationFailed';
  constructor(
    message: string,
    readonly host: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A destructive step refused by a guard: device not allowed, in use, or not confirmed. */
export class UnsafeOperation extends Error {
  override readonly name = 'UnsafeOperation';
  constructor(
    message: string,
    readonly details: { operation: string; target: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * What the host provisioned is not what the permutation's axes name (e.g. a thick disk that came
 * back thin on NFS): the permutation fails before anything is measured, naming both.
 */
export class ProvisionedStateMismatch extends Error {
  override readonly name = 'ProvisionedStateMismatch';
  constructor(
    message: string,
    readonly details: { axis: string; asked: string; got: string; object: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A benchmark tool's output could not be read. `line` is 1-based when known. */
export class ParseError extends Error {
  override readonly name = 'ParseError';
  constructor(
    message: string,
    readonly details: { source: string; line?: number; expected?: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A value that would be placed into a remote command line failed validation. */
/**
 * `report -o` would overwrite a file that is not one of our reports (without --force), a run's own
 * files, or one of the report's inputs (never allowed), or the path cannot be written.
 */
export class OutputRefused extends Error {
  override readonly name = 'OutputRefused';
  constructor(
    message: string,
    readonly details: { path: string; reason: 'not-a-report' | 'not-a-regular-file' | 'run-directory' | 'input' | 'bad-path' },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class InvalidArgument extends Error {
  override readonly name = 'InvalidArgument';
  constructor(
    message: string,
    /** `inventoryField`: the target's inventory key the refusal is also about (validate reports it there too) */
    readonly details: { name: string; value: string; inventoryField?: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The run directory is held by another live process (`run`, `run --resume`, `cleanup`). */
export class RunDirLocked extends Error {
  override readonly name = 'RunDirLocked';
  constructor(
    readonly runDir: string,
    readonly holder: { pid: number; host: string; since: string; command: string } | null,
    options?: { cause?: unknown; note?: string },
  ) {
    const who = holder ? `pid ${holder.pid} on host ${holder.host} (storsweep ${holder.command}, since ${holder.since})` : 'another process (its pid could not be read)';
    super(`${runDir} is in use by ${who}${options?.note ? `; ${options.note}` : ''}; one process at a time may change a run directory: wait for it to end, or stop it first`, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** `run --resume` with a playbook or inventory that differs from the one the run started with. */
export class ResumeMismatch extends Error {
  override readonly name = 'ResumeMismatch';
  constructor(
    message: string,
    readonly differences: Array<{ key: string; was: string; now: string }>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An input file larger than the limit for its kind (see src/input/read-input.ts). */
export class InputTooLarge extends Error {
  override readonly name = 'InputTooLarge';
  constructor(
    message: string,
    readonly details: { file: string; size: number | null; limit: number; reason: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An input path that is a device, FIFO, socket or directory: never read (it may never end). */
export class NotARegularFile extends Error {
  override readonly name = 'NotARegularFile';
  constructor(
    message: string,
    readonly details: { file: string; type: string; reason: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A run directory's `run.lock` that is not the lock file storsweep creates: a symbolic link (never
 * followed: it could point anywhere), a device or FIFO, or a file that is not a lock database.
 */
export class RunLockUnusable extends Error {
  override readonly name = 'RunLockUnusable';
  constructor(
    readonly file: string,
    what: string,
    options?: { cause?: unknown },
  ) {
    super(`${visible(file)} ${what}, not the lock file storsweep creates there; nothing was changed. Remove it (removing a link leaves what it points to alone) and retry`, options);
  }
}

/** A run directory's `run.sqlite` that SQLite cannot read (overwritten, truncated, disk error). */
export class RunStoreDamaged extends Error {
  override readonly name = 'RunStoreDamaged';
  constructor(
    readonly file: string,
    sqliteMessage: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${visible(file)}: the run's database is damaged (SQLite: ${sqliteMessage}). Keep a copy, then try to salvage it with \`sqlite3 run.sqlite .recover | sqlite3 recovered.sqlite\` and put recovered.sqlite in its place; the results of a finished run are also in results.jsonl next to it, which report and compare read once run.sqlite is moved aside`,
      options,
    );
  }
}

/** A run's database that is intact but cannot be used where it is (e.g. in a read-only directory). */
export class RunStoreInaccessible extends Error {
  override readonly name = 'RunStoreInaccessible';
  constructor(
    readonly file: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${visible(file)}: ${reason}`, options);
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

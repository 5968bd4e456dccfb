import { describe, expect, it } from 'vitest';
import {
  errorLongForm,
  InternalError,
  InvalidArgument,
  NotARunDirectory,
  RemoteCommandFailed,
  remoteFailureMessage,
  StorsweepError,
  UnsafeOperation,
  UsageError,
  type RemoteFailure,
} from '../../src/errors.ts';
import { exitCodeFor, shortMessage } from '../../src/cli/exit.ts';

const stderr = Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
const fio: RemoteFailure = { host: 'root@guest:22', what: 'fio', command: "fio --name=seq --filename=/dev/sdb --rw=read --size=1g --output-format=json", exitCode: 1, stderr, reason: 'exit' };

describe('remote command failures: one wording', () => {
  it('short form: host, what, exit code, the last 3 lines of stderr on one line', () => {
    expect(remoteFailureMessage(fio, 'short')).toBe('root@guest:22: fio failed with exit code 1: line 58 | line 59 | line 60');
    expect(new RemoteCommandFailed(fio).message).toBe(remoteFailureMessage(fio, 'short'));
  });

  it('long form: the whole command, exit code, reason and the last 40 lines of stderr, for log.jsonl', () => {
    const long = new RemoteCommandFailed(fio).longMessage;
    const lines = long.split('\n');
    expect(lines.slice(0, 6)).toEqual([
      'root@guest:22: fio failed with exit code 1',
      'host: root@guest:22',
      `command: ${fio.command}`,
      'exit code: 1',
      'reason: exit',
      'stderr (last 40 of 60 lines):',
    ]);
    expect(lines.slice(6)).toEqual(Array.from({ length: 40 }, (_, i) => `  line ${i + 21}`));
  });

  it('without `what`, the command is quoted (cut); timeouts, lost connections and output failures say so', () => {
    const long = 'x'.repeat(500);
    expect(remoteFailureMessage({ host: 'local', command: long, exitCode: null, stderr: '', reason: 'timeout', detail: 'timed out after 5000 ms' }, 'short')).toBe(`local: \`${'x'.repeat(160)}… (340 more)\` timed out after 5000 ms`);
    expect(remoteFailureMessage({ host: 'h', what: 'SSH connection', command: '', exitCode: null, stderr: '', reason: 'connection', detail: 'failed: connect ECONNREFUSED' }, 'short')).toBe('h: SSH connection failed: connect ECONNREFUSED');
    expect(remoteFailureMessage({ host: 'h', command: 'true', exitCode: null, stderr: '', reason: 'connection' }, 'short')).toBe('h: `true` lost its connection');
    expect(remoteFailureMessage({ host: 'h', what: 'fio', command: 'fio', exitCode: 0, stderr: '', reason: 'output', detail: 'reported error 28 (ENOSPC) for x' }, 'short')).toBe('h: fio reported error 28 (ENOSPC) for x');
    expect(remoteFailureMessage({ host: 'h', what: 'vmkfstools -U', command: 'vmkfstools -U x', exitCode: 255, stderr: '', reason: 'exit' }, 'long')).toContain('stderr: (empty)');
  });

  it('the long form is found behind a retry wrapper (cause chain); other errors have none', () => {
    const inner = new RemoteCommandFailed(fio);
    const wrapped = new Error(`first; retrying failed: ${inner.message}`, { cause: inner });
    expect(errorLongForm(wrapped)).toBe(inner.longMessage);
    expect(errorLongForm(new Error('plain'))).toBeUndefined();
    expect(errorLongForm('a string')).toBeUndefined();
  });
});

describe('one base for every named error', () => {
  it('name is the class name, details and cause are kept', () => {
    const cause = new Error('root');
    const e = new UnsafeOperation('refusing', { operation: 'format', target: 'naa.1' }, { cause });
    expect(e).toBeInstanceOf(StorsweepError);
    expect(e).toMatchObject({ name: 'UnsafeOperation', message: 'refusing', details: { operation: 'format', target: 'naa.1' }, cause });
    expect(new InvalidArgument('bad', { name: 'x', value: 'y' }).name).toBe('InvalidArgument');
    expect('cause' in new InvalidArgument('bad', { name: 'x', value: 'y' })).toBe(false);
  });

  it('InternalError says it is a bug and exits 1; NotARunDirectory is a usage error (exit 2)', () => {
    const internal = new InternalError('plan has no profile "p"');
    expect(shortMessage(internal)).toBe('internal error (a bug in storsweep, please report it): plan has no profile "p"');
    expect(exitCodeFor(internal)).toBe(1);
    const notRun = new NotARunDirectory('/tmp/x', 'no run.sqlite');
    expect(notRun).toBeInstanceOf(UsageError);
    expect(notRun.message).toBe('/tmp/x: not a run directory (no run.sqlite)');
    expect(exitCodeFor(notRun)).toBe(2);
  });

  it("better-sqlite3 without its native build: one line naming the install flag, not the list of paths tried", () => {
    // the `bindings` package's own message, as an install with --ignore-scripts gives it
    const err = new Error('Could not locate the bindings file. Tried:\n → /p/node_modules/better-sqlite3/build/better_sqlite3.node\n → /p/node_modules/better-sqlite3/build/Release/better_sqlite3.node');
    const msg = shortMessage(err);
    expect(msg).toContain('--allow-scripts=better-sqlite3');
    expect(msg).not.toContain('\n');
    expect(msg).not.toContain('/p/node_modules');
    expect(exitCodeFor(err)).toBe(1);
  });
});

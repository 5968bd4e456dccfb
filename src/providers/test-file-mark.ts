// The mark that makes a fio guest's test file ours (local and ssh targets): a one-line file beside
// it, `<testFile>.storsweep-mark`, naming the permutation's owned name (which carries the run id)
// and the test file's path. It is written before the test file is created (the pre-fill creates
// it), read back on the guest before anything is written there and again at teardown and cleanup,
// and removed with the file. A file at the path without that mark beside it is not ours: it is
// overwritten only when `--confirm-destroy` names its path (docs/decisions.md, "A test file is
// ours by a mark beside it"). Pure: sh command lines and their output's parser.
import { shQuote } from '../ssh/quote.ts';

/** What a test file's mark is called: the test file's path with this added. */
export const MARK_SUFFIX = '.storsweep-mark';

/** The ledger kind of a test file, and the plan step that marks it. */
export const TEST_FILE_KIND = 'test-file';
export const MARK_OPERATION = 'mark test file';

/** Bytes of a mark that are read: a mark is one short line; anything longer is not ours. */
const MARK_READ_BYTES = 1024;

export function markPathOf(testFile: string): string {
  return `${testFile}${MARK_SUFFIX}`;
}

/** The mark's one line: the owner (`ss-<runId>-<permutationId>-testfile`) and the test file's path. */
export function markLine(owner: string, testFile: string): string {
  return `storsweep test file ${owner} ${testFile}`;
}

/** A mark's owner, when `text` is a mark storsweep wrote for `testFile`; else null. */
export function markOwner(text: string, testFile: string): string | null {
  const m = /^storsweep test file (ss-[A-Za-z0-9-]+) (\/.*)$/.exec(text.replace(/\n$/, ''));
  return m && m[2] === testFile ? m[1]! : null;
}

/** What is at a test file's path now, as the guest shows it. */
export type TestFileSeen =
  | { kind: 'absent' }
  | { kind: 'ours'; owner: string }
  | { kind: 'foreign'; found: string };

/**
 * One read-only command: what is at `testFile` (a regular file and its size, a link, anything
 * else, nothing) and, when the mark beside it is a regular file, its first bytes. `test -L` first:
 * a link is never followed to decide.
 */
export function lookCommand(testFile: string): string {
  const f = shQuote(testFile, 'testFile');
  const m = shQuote(markPathOf(testFile), 'mark');
  return [
    `f=${f}; m=${m}`,
    'if [ -L "$f" ]; then echo link; elif [ -f "$f" ]; then echo "file $(stat -c %s -- "$f" 2>/dev/null)"; elif [ -e "$f" ]; then echo other; else echo absent; fi',
    `if [ -f "$m" ] && [ ! -L "$m" ]; then head -c ${MARK_READ_BYTES} -- "$m"; fi`,
  ].join('\n');
}

/** lookCommand's output → what is there. */
export function parseLook(stdout: string, testFile: string): TestFileSeen {
  const nl = stdout.indexOf('\n');
  const first = (nl < 0 ? stdout : stdout.slice(0, nl)).trim();
  const mark = nl < 0 ? '' : stdout.slice(nl + 1);
  if (first === 'absent') return { kind: 'absent' };
  if (first === 'link') return { kind: 'foreign', found: 'a symbolic link (storsweep never makes one there)' };
  if (first === 'other') return { kind: 'foreign', found: 'not a regular file (a directory, device, FIFO or socket)' };
  const size = /^file (\d+)$/.exec(first)?.[1];
  if (!first.startsWith('file')) return { kind: 'foreign', found: `something the guest describes as ${JSON.stringify(first.slice(0, 40))}` };
  const owner = markOwner(mark, testFile);
  if (owner) return { kind: 'ours', owner };
  const what = `a regular file${size !== undefined ? ` of ${size} bytes` : ''}`;
  return { kind: 'foreign', found: mark ? `${what} whose ${MARK_SUFFIX} beside it is not one storsweep wrote for this path` : `${what} with no ${MARK_SUFFIX} beside it` };
}

/**
 * Writes the mark (a new file, renamed over the old mark: a link at the mark's path is replaced,
 * never written through), after checking that what `seen` found is still there: nothing at the
 * path, or the same mark. Exit 3 when it changed meanwhile (nothing written).
 */
export function claimCommand(testFile: string, line: string, seen: TestFileSeen): string {
  const f = shQuote(testFile, 'testFile');
  const m = shQuote(markPathOf(testFile), 'mark');
  const still =
    seen.kind === 'absent'
      ? 'if [ -e "$f" ] || [ -L "$f" ]; then echo changed; exit 3; fi'
      : seen.kind === 'ours'
        ? `if [ -L "$f" ] || [ ! -f "$f" ] || [ -L "$m" ] || [ "$(head -c ${MARK_READ_BYTES} -- "$m" 2>/dev/null)" != ${shQuote(markLine(seen.owner, testFile), 'mark')} ]; then echo changed; exit 3; fi`
        : ':';
  return [
    `f=${f}; m=${m}`,
    still,
    // its directory, as fio would make it for the file (fio makes the directories of a filename)
    'd=$(dirname -- "$f") && mkdir -p -- "$d" || exit 1',
    // a new file of its own (mktemp: O_EXCL), never written through something already there
    't=$(mktemp -- "$m.XXXXXX") || exit 1',
    `printf '%s\\n' ${shQuote(line, 'mark')} > "$t" || { rm -f -- "$t"; exit 1; }`,
    'mv -f -- "$t" "$m" || { rm -f -- "$t"; exit 1; }',
    'echo marked',
  ].join('\n');
}

/** What removeCommand found and did. */
export type RemoveOutcome =
  | { kind: 'removed' }
  | { kind: 'mark-only' }
  | { kind: 'no-mark' }
  | { kind: 'other-mark'; mark: string }
  | { kind: 'not-a-file' };

/**
 * Removes the test file and its mark only while the mark beside it is exactly `line` (this
 * permutation's, read now): no mark, another mark, or a link or non-file at the path leave the
 * path alone (a mark of ours beside a non-file goes: it marks nothing we made).
 */
export function removeCommand(testFile: string, line: string): string {
  const f = shQuote(testFile, 'testFile');
  const m = shQuote(markPathOf(testFile), 'mark');
  return [
    `f=${f}; m=${m}`,
    'if [ ! -f "$m" ] || [ -L "$m" ]; then echo no-mark; exit 0; fi',
    `got=$(head -c ${MARK_READ_BYTES} -- "$m")`,
    `if [ "$got" != ${shQuote(line, 'mark')} ]; then echo other-mark; printf '%s\\n' "$got"; exit 0; fi`,
    'if [ -L "$f" ] || { [ -e "$f" ] && [ ! -f "$f" ]; }; then rm -f -- "$m"; echo not-a-file; exit 0; fi',
    'if [ -f "$f" ]; then rm -f -- "$f" || exit 1; rm -f -- "$m"; echo removed; else rm -f -- "$m"; echo mark-only; fi',
  ].join('\n');
}

export function parseRemove(stdout: string): RemoveOutcome | null {
  const [first = '', ...rest] = stdout.split('\n');
  switch (first.trim()) {
    case 'removed':
      return { kind: 'removed' };
    case 'mark-only':
      return { kind: 'mark-only' };
    case 'no-mark':
      return { kind: 'no-mark' };
    case 'not-a-file':
      return { kind: 'not-a-file' };
    case 'other-mark':
      return { kind: 'other-mark', mark: rest.join('\n').trim() };
    default:
      return null;
  }
}

// Where `report -o FILE` may write. Never touch what we did not create:
//  - a run directory (it holds run.sqlite or results.jsonl) takes only report.md/.html/.csv/.json
//    directly inside it, whatever --force says: its database, raw output and logs are the record;
//  - one of the report's own inputs is never overwritten, not even with --force;
//  - an existing file is replaced only when it is a report of ours (recognised by the marker each
//    format carries, below) or with --force;
//  - only a regular file is ever replaced: a device node, FIFO or socket at FILE (`-o /dev/null`
//    as root would replace the system's /dev/null), or a symlink to one, is refused even with
//    --force; a symlink to a regular file (or to nothing) is not ours, so it is replaced (the link,
//    never what it points to) only with --force;
//  - the file is written to a temporary name beside it and renamed over, so a failed write leaves
//    the old file whole, and a symlink or hard link at FILE is replaced, never written through.
// A path that cannot be written gets a sentence naming the path and the reason, not an errno.
import fs from 'node:fs';
import path from 'node:path';
import { OutputRefused } from '../errors.ts';
import { fileKind } from '../input/file-kind.ts';
import { writeFileAtomic } from '../results/raw.ts';
import { isOurReport } from '../report/marker.ts';
import { DB_FILE } from '../results/store.ts';

/** The only names `report -o` writes inside a run directory (the run itself writes .md and .html). */
export const RUN_DIR_REPORT_NAMES = ['report.md', 'report.html', 'report.csv', 'report-summary.csv', 'report.json'] as const;

const HEAD_BYTES = 64 * 1024;

function readHead(file: string): string {
  // never follow a link or block on a FIFO swapped in since the check
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = fs.readSync(fd, buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The run directory that holds `dir` (itself or an ancestor), if any. `dir` itself counts with
 * run.sqlite or results.jsonl (what `report` reads as a run); an ancestor only with run.sqlite, so a
 * stray results.jsonl in a home directory does not fence off everything below it.
 */
function enclosingRunDir(dir: string): string | null {
  if (fs.existsSync(path.join(dir, 'results.jsonl'))) return dir;
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, DB_FILE))) return d;
    if (path.dirname(d) === d) return null;
  }
}

function sameFile(a: fs.Stats, b: fs.Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function notRegular(out: string, what: string): OutputRefused {
  return new OutputRefused(`${out} is ${what}, not a regular file; report -o replaces only regular files (not even with --force)`, { path: out, reason: 'not-a-regular-file' });
}

function badPath(out: string, why: string, cause?: unknown): OutputRefused {
  return new OutputRefused(`--output ${out}: ${why}`, { path: out, reason: 'bad-path' }, cause === undefined ? undefined : { cause });
}

/** Throws OutputRefused unless `report -o out` may write there; see the top of this file. */
export function checkReportOutput(out: string, inputs: readonly string[], force: boolean): void {
  if (out === '' || out.endsWith('/') || out.endsWith(path.sep)) throw badPath(out, 'name a file, e.g. report.md');
  const parent = path.dirname(path.resolve(out));
  let parentReal: string;
  try {
    parentReal = fs.realpathSync(parent);
  } catch (err) {
    throw badPath(out, `the directory ${parent} does not exist`, err);
  }
  if (!fs.statSync(parentReal).isDirectory()) throw badPath(out, `${parent} is not a directory`);
  const runDir = enclosingRunDir(parentReal);
  const name = path.basename(out);
  if (runDir && (runDir !== parentReal || !(RUN_DIR_REPORT_NAMES as readonly string[]).includes(name))) {
    throw new OutputRefused(
      `${out} is inside the run directory ${runDir}; only ${RUN_DIR_REPORT_NAMES.join(', ')} may be written there (not even with --force)`,
      { path: out, reason: 'run-directory' },
    );
  }
  let existing: fs.Stats | null = null;
  try {
    existing = fs.lstatSync(out);
  } catch {
    existing = null; // nothing there
  }
  if (!existing) return;
  if (existing.isSymbolicLink()) {
    const to = JSON.stringify(fs.readlinkSync(out));
    let target: fs.Stats | null = null;
    try {
      target = fs.statSync(out);
    } catch {
      target = null; // a dangling link: nothing behind it
    }
    if (target?.isDirectory()) throw badPath(out, `is a link to a directory (${to}); name a file in it, e.g. ${path.join(out, 'report.md')}`);
    if (target && !target.isFile()) throw notRegular(out, `a symbolic link to ${fileKind(target)} (${to})`);
    if (target) checkNotInput(out, target, inputs);
    if (!force) {
      throw new OutputRefused(`${out} is a symbolic link (to ${to}), which storsweep never writes; add --force to replace the link itself (what it points to is left as it is)`, { path: out, reason: 'not-a-report' });
    }
    return;
  }
  if (existing.isDirectory()) throw badPath(out, `is a directory; name a file in it, e.g. ${path.join(out, 'report.md')}`);
  if (!existing.isFile()) throw notRegular(out, fileKind(existing));
  checkNotInput(out, existing, inputs);
  if (force) return;
  // A Markdown report from before the marker existed is recognised only where such a run wrote it.
  const legacyMarkdown = runDir === parentReal && name === 'report.md';
  let ours = false;
  try {
    ours = isOurReport(readHead(out), { legacyMarkdown });
  } catch {
    ours = false;
  }
  if (!ours) {
    throw new OutputRefused(`${out} exists and is not a storsweep report; add --force to overwrite it`, { path: out, reason: 'not-a-report' });
  }
}

function checkNotInput(out: string, existing: fs.Stats, inputs: readonly string[]): void {
  for (const input of inputs) {
    let st: fs.Stats;
    try {
      st = fs.statSync(input);
    } catch {
      continue;
    }
    if (st.isFile() && sameFile(st, existing)) {
      throw new OutputRefused(`${out} is one of the report's inputs (${input}); not even --force overwrites it`, { path: out, reason: 'input' });
    }
  }
}

/** Checks, then writes `text` to `out` exactly (temporary file beside it, renamed over). */
export function writeReportFile(out: string, text: string, inputs: readonly string[], force: boolean): void {
  checkReportOutput(out, inputs, force);
  try {
    writeFileAtomic(out, text);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EACCES' || code === 'EPERM' ? 'permission denied'
      : code === 'ENOSPC' ? 'no space left on the device'
      : code === 'EROFS' ? 'the file system is read-only'
      : code === 'EISDIR' ? 'is a directory'
      : `cannot be written (${code ?? (err as Error).message})`;
    throw badPath(out, why, err);
  }
}

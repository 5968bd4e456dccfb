// Reading an input file (playbook, inventory, secret file, result file to import) without letting
// the file decide how much we read or whether we block: only regular files are read, and at most
// `limit + 1` bytes of them. `/dev/zero`, `/dev/stdin`, a FIFO, a socket or a directory are refused
// before a byte is read. A FIFO is opened with O_NONBLOCK (a blocking open would wait for a writer
// forever), and the type is checked twice: stat before the open (so a device whose open has side
// effects is never opened) and fstat after it (the path may have been swapped in between).
import { constants as bufferConstants } from 'node:buffer';
import fs from 'node:fs';
import { InputTooLarge, NotARegularFile } from '../errors.ts';
import { visible } from '../text/visible.ts';
import { fileKind } from './file-kind.ts';

export type InputKind = 'config' | 'import' | 'secret' | 'results';

const MiB = 1024 * 1024;

/** Default limits per kind of input (see README "Limits"); `--max-input-size` raises all of them. */
export const DEFAULT_INPUT_LIMITS: Readonly<Record<InputKind, number>> = {
  config: 1 * MiB,
  import: 8 * MiB,
  secret: 64 * 1024,
  // results.jsonl is read line by line (readInputLines), so memory follows the records, not the
  // file; the cap bounds the time a huge (e.g. sparse) file can take
  results: 1024 * MiB,
};

const KIND_NAME: Record<InputKind, string> = { config: 'playbooks and inventories', import: 'imported result files', secret: 'secret files', results: 'result files (.jsonl)' };

let override: number | null = null;

/** Set by the CLI from `--max-input-size` / STORSWEEP_MAX_INPUT_SIZE: one limit for every kind. */
export function setInputLimitOverride(bytes: number | null): void {
  override = bytes;
}

export function inputLimit(kind: InputKind): number {
  return override ?? DEFAULT_INPUT_LIMITS[kind];
}

/** 1048576 → "1 MiB", 65536 → "64 KiB", 1500 → "1500 bytes". */
export function formatBytes(n: number): string {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', MiB], ['KiB', 1024]] as const) {
    if (n >= size) {
      const v = n / size;
      return `${Number.isInteger(v) ? v : v.toFixed(1)} ${unit}`;
    }
  }
  return `${n} bytes`;
}

function fileType(st: fs.Stats): string | null {
  return st.isFile() ? null : fileKind(st);
}

function refuseType(file: string, kind: InputKind, st: fs.Stats): void {
  const type = fileType(st);
  if (!type) return;
  const reason = `it is ${type}, not a regular file; storsweep reads ${KIND_NAME[kind]} only from regular files`;
  throw new NotARegularFile(`${visible(file)}: ${reason}`, { file, type, reason });
}

/**
 * The largest file read whole (readInputFile): every caller turns it into one string, and V8 holds
 * no string longer than this (buffer.constants.MAX_STRING_LENGTH, 2^29 - 24 characters: 512 MiB);
 * past it decoding fails with an error that names no file. `--max-input-size` goes up to 2 GiB for
 * files read line by line (readInputLines).
 */
export const MAX_WHOLE_FILE_BYTES = bufferConstants.MAX_STRING_LENGTH;

function tooLargeWhole(file: string, size: number | null): InputTooLarge {
  const what = size === null ? 'grew past' : `is ${formatBytes(size)}, over`;
  const reason = `the file ${what} ${Math.round(MAX_WHOLE_FILE_BYTES / MiB)} MiB, the most storsweep reads in one piece (the longest text Node.js can hold)`;
  return new InputTooLarge(`${visible(file)}: ${reason}`, { file, size, limit: MAX_WHOLE_FILE_BYTES, reason });
}

function tooLarge(file: string, size: number | null, limit: number, kind: InputKind): InputTooLarge {
  const what = size === null ? `grew past` : `is ${formatBytes(size)}, over`;
  const reason = `the file ${what} the ${formatBytes(limit)} limit for ${KIND_NAME[kind]}; if it is meant to be this big, raise the limit with --max-input-size <size> or STORSWEEP_MAX_INPUT_SIZE`;
  return new InputTooLarge(`${visible(file)}: ${reason}`, { file, size, limit, reason });
}

/** Opens a regular file for reading, never blocking and never opening anything else; its fd and size. */
function openRegular(file: string, kind: InputKind): { fd: number; size: number } {
  refuseType(file, kind, fs.statSync(file));
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0));
  try {
    const st = fs.fstatSync(fd);
    refuseType(file, kind, st);
    return { fd, size: st.size };
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/**
 * The bytes of a regular file of at most `inputLimit(kind)` bytes (and MAX_WHOLE_FILE_BYTES, for they
 * become one string); InputTooLarge / NotARegularFile otherwise, naming the file.
 */
export function readInputFile(file: string, kind: InputKind): Buffer {
  const given = inputLimit(kind);
  const limit = Math.min(given, MAX_WHOLE_FILE_BYTES);
  const over = (size: number | null) => (limit < given ? tooLargeWhole(file, size) : tooLarge(file, size, limit, kind));
  const { fd, size } = openRegular(file, kind);
  try {
    if (size > limit) throw over(size);
    // The size is a hint (the file may grow while we read): read to the end, but never past limit+1.
    let buf = Buffer.allocUnsafe(Math.min(size, limit) + 1);
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        if (buf.length > limit) break;
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, limit + 1));
        buf.copy(bigger, 0, 0, total);
        buf = bigger;
      }
      const n = fs.readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
    }
    if (total > limit) throw over(null);
    return buf.subarray(0, total);
  } finally {
    fs.closeSync(fd);
  }
}

/** A line longer than this is refused by readInputLines (a result record is a few KB). */
export const MAX_LINE_BYTES = 1 * MiB;

/**
 * The lines of a regular file of at most `inputLimit(kind)` bytes, one at a time (UTF-8, without
 * the `\n`), so that memory follows what the caller keeps, not the file's size. The last element
 * is the text after the last `\n` ('' when the file ends with one). A line over `maxLine` bytes
 * throws InputTooLarge naming its 1-based number before it is held whole.
 */
export function* readInputLines(file: string, kind: InputKind, maxLine = MAX_LINE_BYTES): Generator<string> {
  const limit = inputLimit(kind);
  const { fd, size } = openRegular(file, kind);
  try {
    if (size > limit) throw tooLarge(file, size, limit, kind);
    const chunk = Buffer.allocUnsafe(1 * MiB);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let total = 0;
    let line = 1;
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > limit) throw tooLarge(file, null, limit, kind);
      let start = 0;
      for (let nl = chunk.indexOf(10, 0); nl !== -1 && nl < n; nl = chunk.indexOf(10, start)) {
        if (pendingBytes + nl - start > maxLine) throw lineTooLong(file, line, maxLine);
        const piece = chunk.subarray(start, nl);
        yield pendingBytes ? Buffer.concat([...pending, piece]).toString('utf8') : piece.toString('utf8');
        pending = [];
        pendingBytes = 0;
        line++;
        start = nl + 1;
      }
      if (start < n) {
        pendingBytes += n - start;
        if (pendingBytes > maxLine) throw lineTooLong(file, line, maxLine);
        pending.push(Buffer.from(chunk.subarray(start, n)));
      }
    }
    yield Buffer.concat(pending).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

function lineTooLong(file: string, line: number, maxLine: number): InputTooLarge {
  const reason = `line ${line} is over ${formatBytes(maxLine)}; a result record is one JSON object of a few KB per line`;
  return new InputTooLarge(`${visible(file)}:${line}: ${reason}`, { file, size: null, limit: maxLine, reason });
}

// IOMeter-style access specifications written the way storage papers name them:
//   "32k 100% read 0% random", "4k 50% read 100% random", optionally followed by "q32" (outstanding
//   I/Os per worker) and "t4" (workers). Defaults: q1 t1.
//
// Random% is 0 (sequential) or 100 (random) only. IOMeter also allows values in between, which it
// implements by mixing seek and sequential transfers inside one worker; fio (percentage_random) and
// diskspd (-rs) each mix differently, so the numbers would not be comparable and the canonical id
// has no room for it. We refuse rather than silently round.
import { InvalidArgument } from '../errors.ts';
import { MAX_BLOCK_SIZE_BYTES } from '../limits.ts';
import type { Pattern } from '../results/record.ts';
import { makeTest } from './profiles.ts';
import type { WorkloadTest } from './spec.ts';

const GRAMMAR = '"<size> <read>% read <random>% random [q<depth>] [t<workers>]", e.g. "4k 50% read 100% random q32"';

/** `512`, `512b`, `4k`, `4K`, `4KB`, `4KiB`, `1m`, `1MiB` → bytes. IOMeter sizes are binary (1 KB = 1024 B). */
export function parseBinarySize(text: string): number | null {
  const m = /^(\d+)\s*(b|k|kb|kib|m|mb|mib)?$/i.exec(text.trim());
  if (!m) return null;
  const n = Number(m[1]);
  const unit = (m[2] ?? 'b').toLowerCase();
  const mult = unit.startsWith('k') ? 1024 : unit.startsWith('m') ? 1024 * 1024 : 1;
  const bytes = n * mult;
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : null;
}

function fail(spec: string, why: string): never {
  throw new InvalidArgument(`IOMeter access spec "${spec}": ${why}; expected ${GRAMMAR}`, { name: 'iometer', value: spec });
}

function percent(spec: string, token: string | undefined, what: string): number {
  const m = token === undefined ? null : /^(\d{1,3})%$/.exec(token);
  if (!m) fail(spec, `${what} must be a whole percentage like "50%", got ${token === undefined ? 'nothing' : `"${token}"`}`);
  const v = Number(m[1]);
  if (v > 100) fail(spec, `${what} ${v}% is above 100%`);
  return v;
}

function word(spec: string, token: string | undefined, expected: string[], after: string): void {
  if (token === undefined || !expected.includes(token.toLowerCase())) {
    fail(spec, `after ${after} expected "${expected[0]}", got ${token === undefined ? 'nothing' : `"${token}"`}`);
  }
}

/** Parses one access specification into a test with a canonical id. Throws InvalidArgument. */
export function iometerSpec(spec: string): WorkloadTest {
  const tokens = spec.trim().split(/\s+/).filter((t) => t !== '');
  // "32 k" is a common way of writing sizes; join a lone unit onto its number.
  if (tokens.length > 1 && /^\d+$/.test(tokens[0] ?? '') && /^(b|k|kb|kib|m|mb|mib)$/i.test(tokens[1] ?? '')) {
    tokens.splice(0, 2, `${tokens[0]}${tokens[1]}`);
  }
  if (tokens.length === 0) fail(spec, 'it is empty');
  const size = parseBinarySize(tokens[0] ?? '');
  if (size === null) fail(spec, `block size "${tokens[0]}" is not a size like 512, 4k, 64KiB or 1m`);
  // the cap every block size shares (fio bs, diskspd -b: src/limits.ts): a spec runs as fio or
  // diskspd, which allocate block × queue depth of buffers per worker
  if (size > MAX_BLOCK_SIZE_BYTES) fail(spec, `block size "${tokens[0]}" is over the block size cap: expected 1 byte to ${MAX_BLOCK_SIZE_BYTES / 1024 ** 2}m (${MAX_BLOCK_SIZE_BYTES} bytes)`);
  const readPct = percent(spec, tokens[1], 'the read share');
  word(spec, tokens[2], ['read', 'reads'], `"${tokens[1]}"`);
  const randomPct = percent(spec, tokens[3], 'the random share');
  word(spec, tokens[4], ['random'], `"${tokens[3]}"`);
  if (randomPct !== 0 && randomPct !== 100) {
    fail(spec, `random ${randomPct}% is not supported: use 0% (sequential) or 100% (random), because fio and diskspd mix partly-random I/O differently`);
  }
  let queueDepth: number | undefined;
  let threads: number | undefined;
  for (const extra of tokens.slice(5)) {
    const m = /^([qt])(\d+)$/i.exec(extra);
    const v = m ? Number(m[2]) : 0;
    if (!m || v < 1 || v > 1024) fail(spec, `unexpected "${extra}" (only q<1..1024> and t<1..1024> may follow)`);
    if ((m[1] ?? '').toLowerCase() === 'q') {
      if (queueDepth !== undefined) fail(spec, 'q<depth> given twice');
      queueDepth = v;
    } else {
      if (threads !== undefined) fail(spec, 't<workers> given twice');
      threads = v;
    }
  }
  const random = randomPct === 100;
  const pattern: Pattern =
    readPct === 100 ? (random ? 'randread' : 'read') : readPct === 0 ? (random ? 'randwrite' : 'write') : random ? 'randrw' : 'rw';
  return makeTest(pattern, size, queueDepth ?? 1, threads ?? 1, readPct);
}

/** True when the text looks like an access spec rather than a profile name (starts with a size and has a %). */
export function looksLikeIometerSpec(text: string): boolean {
  return /^\s*\d+\s*[a-z]*\s+\d+%/i.test(text);
}

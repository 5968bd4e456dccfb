// What data the writes carry, per tool, and the playbook's choice of it (`settings.writeData`).
//
// Storage that deduplicates or compresses measures data, not only I/O: a write of a block the array
// already holds, or of zeros, costs less than a write of new random bytes. The tools differ here:
//   - fio with `refill_buffers` (every job storsweep builds, the fill too) writes fresh random data
//     per I/O [fio HOWTO.rst `refill_buffers`].
//   - diskspd `-Z<size>` copies each write from a random buffer of that size, at a random offset that
//     leaves one block (512-byte aligned with -S) [diskspd Common.cpp `Target::GetRandomDataWriteBuffer`:
//     `Rand32() % (cbBuffer - (cbBlock - 1))`]. With a buffer of one block (`-Z<block>`, what
//     CrystalDiskMark 5–8 pass) the offset is always 0: every write is the same block. Its 1 MiB fill
//     buffer is repeated the same way. `-Zr` fills every I/O anew; `-Z` writes zeros; no `-Z` writes
//     the repeating 0, 1, …, 255 pattern [diskspd CmdLineParser.cpp usage "Write buffers"].
// `writeData: cdm` (the default) keeps CrystalDiskMark's way; `unique` gives diskspd a large random
// buffer (uniqueBufferBytes), for its tests and its fill, so diskspd and fio write data that neither
// compresses nor deduplicates much. Pure: builders and descriptions only.
import { diskspdSize } from './diskspd-size.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';

export const WRITE_DATA_MODES = ['cdm', 'unique'] as const;
export type WriteDataMode = (typeof WRITE_DATA_MODES)[number];

/**
 * The largest unique-mode buffer: 1 GiB. diskspd commits the whole buffer in the guest's memory per
 * target and fills it with random bytes before the run (Common.cpp `AllocateAndFillRandomDataWriteBuffer`:
 * VirtualAlloc MEM_COMMIT, then `RandBuffer(…, (UINT32)cb, …)`, so more than 4 GiB would not even be
 * filled). 1 GiB covers CrystalDiskMark's default 1 GiB test file whole and fits a small VM.
 */
export const UNIQUE_BUFFER_MAX_BYTES = 1024 ** 3;

/**
 * The unique-mode buffer for writes of `blockBytes`: as large as the test region (at most 1 GiB),
 * never smaller than one block (diskspd refuses a buffer smaller than the block: Common.cpp
 * "custom write buffer (-Z) is smaller than the block size"). Why the region's size: a write starts
 * at one of about buffer ÷ 512 offsets, so a 4 KiB chunk of the region repeats another chunk's data
 * only by chance — about 1 in 8 chunks when the buffer is as large as the region — where `-Z<block>`
 * makes every chunk of a block the same as every other write's.
 */
export function uniqueBufferBytes(profile: Pick<WorkloadProfile, 'fileSizeBytes'>, blockBytes: number): number {
  return Math.max(blockBytes, Math.min(profile.fileSizeBytes, UNIQUE_BUFFER_MAX_BYTES));
}

/** The `-Z` flag storsweep gives a diskspd write of `blockBytes` (a measured pass or a fill pass). */
export function diskspdWriteFlag(profile: Pick<WorkloadProfile, 'fileSizeBytes' | 'writeData'>, blockBytes: number): string {
  return `-Z${diskspdSize(profile.writeData === 'unique' ? uniqueBufferBytes(profile, blockBytes) : blockBytes)}`;
}

/**
 * What was written, as a class two sources are compared by: `unique` (fresh or near-unique random
 * data: nothing much to compress or deduplicate), `repeated` (one random buffer written again and
 * again: deduplicates), `zeros`, `pattern` (diskspd's 0…255 bytes: compresses), `custom` (a fio
 * option that shapes the data), `mixed` (tests differ), `none` (nothing written).
 */
export type DataClass = 'unique' | 'repeated' | 'zeros' | 'pattern' | 'custom' | 'mixed' | 'none';

export interface DataPattern {
  class: DataClass;
  /** the flags and what they write, for the report */
  detail: string;
}

const SIZE_RE = /^(\d+)([KMGTb]?)$/i;

/** bytes of a diskspd size token (`4K`, `1G`, `8b` = 8 blocks), or null. */
function tokenBytes(token: string, blockBytes: number): number | null {
  const m = SIZE_RE.exec(token);
  if (!m) return null;
  const unit = m[2]!;
  const mult = unit === '' ? 1 : unit === 'b' || unit === 'B' ? blockBytes : 1024 ** ('KMGT'.indexOf(unit.toUpperCase()) + 1);
  return Number(m[1]) * mult;
}

/** What a diskspd write with this `-Z…` flag (undefined: none given) writes. */
export function diskspdDataPattern(flag: string | undefined, blockBytes: number): DataPattern {
  if (flag === undefined) return { class: 'pattern', detail: 'diskspd default: the repeating bytes 0, 1, …, 255' };
  if (flag === '-Z') return { class: 'zeros', detail: 'diskspd -Z: zeros' };
  if (flag === '-Zr') return { class: 'unique', detail: 'diskspd -Zr: fresh random data per write' };
  const [size, file] = flag.slice(2).split(',');
  const bytes = tokenBytes(size ?? '', blockBytes);
  if (file !== undefined) return { class: 'custom', detail: `diskspd ${flag}: a buffer read from a file` };
  if (bytes === null) return { class: 'custom', detail: `diskspd ${flag}` };
  if (bytes <= blockBytes) return { class: 'repeated', detail: `diskspd ${flag}: one random ${diskspdSize(bytes)} buffer, the same data in every write` };
  return { class: 'unique', detail: `diskspd ${flag}: each write from a random ${diskspdSize(bytes)} buffer at a random offset (near-unique)` };
}

/** fio options that shape the data a job writes [fio HOWTO.rst "Buffers and memory"]. */
const FIO_DATA_OPTIONS = ['zero_buffers', 'buffer_compress_percentage', 'dedupe_percentage', 'buffer_pattern', 'refill_buffers', 'scramble_buffers'];

/** What a fio job storsweep builds (always `--refill_buffers`) writes, given a custom test's options. */
export function fioDataPattern(options: Readonly<Record<string, string>> | undefined): DataPattern {
  const set = Object.entries(options ?? {}).filter(([k]) => FIO_DATA_OPTIONS.includes(k));
  if (set.length === 0) return { class: 'unique', detail: 'fio refill_buffers: fresh random data per write' };
  const text = set.map(([k, v]) => (v === '' ? k : `${k}=${v}`)).join(' ');
  const zero = options?.['zero_buffers'];
  if (set.length === 1 && zero !== undefined && zero !== '0') return { class: 'zeros', detail: `fio ${text}: zeros` };
  return { class: 'custom', detail: `fio ${text}` };
}

/** One test's write data with `tool`, as the runner builds its command line. */
export function testDataPattern(tool: string, test: WorkloadTest, profile: Pick<WorkloadProfile, 'fileSizeBytes' | 'writeData'>): DataPattern {
  if (tool === 'diskspd') {
    const own = (test.diskspdOptions ?? []).find((o) => /^-Z/.test(o));
    return diskspdDataPattern(own ?? diskspdWriteFlag(profile, test.blockSizeBytes), test.blockSizeBytes);
  }
  return fioDataPattern(test.fioOptions);
}

/** The permutation's write data over its tests that write: one class, or `mixed` naming each. */
export function profileDataPattern(tool: string, profile: WorkloadProfile): DataPattern {
  const seen = new Map<string, DataPattern>();
  for (const t of profile.tests) {
    if (t.readPercent >= 100) continue;
    const p = testDataPattern(tool, t, profile);
    seen.set(p.detail, p);
  }
  const list = [...seen.values()];
  if (list.length === 0) return { class: 'none', detail: 'no test writes' };
  const classes = new Set(list.map((p) => p.class));
  const detail = list.map((p) => p.detail).join('; ');
  return { class: classes.size === 1 ? list[0]!.class : 'mixed', detail };
}

/** The fill's write data (workloads/prefill.ts: fio refill_buffers; diskspd 1 MiB writes with diskspdWriteFlag). */
export function fillDataPattern(tool: string, profile: Pick<WorkloadProfile, 'fileSizeBytes' | 'writeData'>, fillBlockBytes: number): DataPattern {
  return tool === 'diskspd' ? diskspdDataPattern(diskspdWriteFlag(profile, fillBlockBytes), fillBlockBytes) : fioDataPattern(undefined);
}

/**
 * What every record of a permutation says about its data (report/conditions.ts prints it and warns
 * when compared sources differ): the tests' write data, and the fill's when the region was filled.
 */
export function writeDataFacts(tool: string, profile: WorkloadProfile, filled: boolean, fillBlockBytes: number): Record<string, string> {
  const tests = profileDataPattern(tool, profile);
  const facts: Record<string, string> = { dataPattern: tests.class, dataPatternDetail: tests.detail };
  if (filled) {
    const fill = fillDataPattern(tool, profile, fillBlockBytes);
    facts['prefillData'] = fill.class;
    facts['prefillDataDetail'] = fill.detail;
  }
  return facts;
}

// The pre-fill: once per permutation, before the first pass, the test region is written end to end
// with incompressible data, as CrystalDiskMark fills its test file before its first test (DiskBench.cpp
// `Init()`: CREATE_ALWAYS, then `WriteFile(hFile, buf, BufSize, …)` over the whole size with
// `buf[i] = (char)(rand() % 256)`). Without it the reads measure nothing: fio never lays out a block
// device (fio filesetup.c: only regular files are laid out), and `diskspd -c` re-creates its file with
// SetFileValidData and writes no data (diskspd IORequestGenerator.cpp `_CreateFile`) — so a read of a
// never-written block of a thin, lazy-zeroed or dynamic disk returns zeros without touching the array.
//
// fio: one sequential write job over the test size (1 MiB blocks, refill_buffers: fresh random data per
// I/O, buffer_compress_percentage=0), not time based, so it ends when the region is written once.
// diskspd has no "write N bytes and stop", so the fill is sequential write passes of `FILL_SLICE_SEC`
// seconds with a random 1 MiB source buffer (`-Z1M`, CDM's own buffer size, written again and again;
// with `writeData: unique` a buffer as large as the region: write-data.ts), each starting where the
// last one ended (`-B<offset>`), until the region is covered; only the first carries `-c<size>` (for
// a file target: diskspd creates it), and no measured pass does. Pure builders plus one loop.
import { ParseError } from '../errors.ts';
import { diskspdSize, parseDiskspdXml } from './diskspd.ts';
import { checkIoengine, fioFilenameArg } from './tool-settings.ts';
import { rawTestTarget } from './test-target.ts';
import { diskspdWriteFlag } from './write-data.ts';
import type { PrefillOutcome, WorkloadProfile } from './spec.ts';

export type { PrefillOutcome } from './spec.ts';

export const FILL_BLOCK_BYTES = 1024 * 1024;

/** fio's fill job: the profile's region of `filename`, written once sequentially with random data. */
export function fioFillArgs(profile: WorkloadProfile, opts: { filename: string; ioengine?: string }): string[] {
  const ioengine = checkIoengine(opts.ioengine ?? 'libaio');
  return [
    '--name=storsweep-prefill',
    `--filename=${fioFilenameArg(opts.filename)}`,
    `--size=${profile.fileSizeBytes}`,
    '--rw=write',
    `--bs=${FILL_BLOCK_BYTES}`,
    '--iodepth=8',
    `--ioengine=${ioengine}`,
    `--direct=${profile.direct ? 1 : 0}`,
    '--refill_buffers',
    '--buffer_compress_percentage=0',
    '--end_fsync=1',
    '--output-format=json',
  ];
}

export const FIO_FILL_METHOD = 'fio sequential write, 1 MiB blocks, refill_buffers (random data per I/O), whole region once';

/** Seconds per diskspd fill pass; the loop runs as many as the region needs. */
export const FILL_SLICE_SEC = 10;

/**
 * One diskspd fill pass: sequential writes of 1 MiB from `baseBytes`, a random source buffer (1 MiB, or large: write-data.ts),
 * the profile's cache flag (`-S` when direct). `create` adds `-c<size>` for a file target (diskspd
 * re-creates the file with every `-c`: IORequestGenerator.cpp "check if user wanted to create a file"
 * calls _CreateFile for each run; it skips `#N` and `X:` targets). A raw target is bounded to the test
 * region with `-f<size>`, like its measured passes.
 */
export function diskspdFillArgs(profile: WorkloadProfile, opts: { target: string; baseBytes: number; create: boolean }): string[] {
  const raw = rawTestTarget(opts.target, 'diskspd') !== undefined;
  const args = [`-b${diskspdSize(FILL_BLOCK_BYTES)}`, '-o8', '-t1', '-s', '-w100', `-d${FILL_SLICE_SEC}`, '-W0'];
  if (profile.direct) args.push('-S');
  args.push(diskspdWriteFlag(profile, FILL_BLOCK_BYTES));
  if (opts.baseBytes > 0) args.push(`-B${opts.baseBytes}`);
  if (raw) args.push(`-f${diskspdSize(profile.fileSizeBytes)}`);
  else if (opts.create) args.push(`-c${diskspdSize(profile.fileSizeBytes)}`);
  args.push('-Rxml', opts.target);
  return args;
}

/** How diskspd fills the region of `profile`, in a few words (PrefillOutcome.method). */
export function diskspdFillMethod(profile: Pick<WorkloadProfile, 'fileSizeBytes' | 'writeData'>): string {
  const flag = diskspdWriteFlag(profile, FILL_BLOCK_BYTES);
  const buffer = flag === `-Z${diskspdSize(FILL_BLOCK_BYTES)}` ? 'random 1 MiB source buffer' : 'large random source buffer';
  return `diskspd sequential write, 1 MiB blocks, ${buffer} (${flag}), passes from where the last ended until the region is covered`;
}

/** Most diskspd fill passes: 10,000 × 10 s is more than a day, far beyond any test region. */
const MAX_FILL_PASSES = 10_000;

/**
 * Runs diskspd fill passes through `runPass` (one diskspd invocation → its -Rxml output) until the
 * test region is written once. Throws when a pass writes nothing (the loop would never end).
 */
export async function runDiskspdFill(
  profile: WorkloadProfile,
  target: string,
  runPass: (argv: string[]) => Promise<string>,
  now: () => number = Date.now,
): Promise<PrefillOutcome> {
  const started = now();
  const size = profile.fileSizeBytes;
  let base = 0;
  let passes = 0;
  let writtenBytes = 0;
  let writeSec = 0;
  while (base < size) {
    if (passes >= MAX_FILL_PASSES) throw new ParseError(`diskspd fill of ${target}: not done after ${MAX_FILL_PASSES} passes`, { source: target });
    const argv = diskspdFillArgs(profile, { target, baseBytes: base, create: passes === 0 });
    const xml = await runPass(argv);
    passes++;
    const span = parseDiskspdXml(xml, `${target} diskspd fill`).timeSpans[0];
    const written = span?.write.bytes ?? 0;
    if (written <= 0) throw new ParseError(`${target}: a diskspd fill pass from offset ${base} wrote nothing`, { source: target, expected: 'WriteBytes > 0' });
    writtenBytes += written;
    writeSec += span?.testTimeSeconds ?? 0;
    // a sequential pass wraps to its base at the end of the region: what is new ends there
    base = Math.min(size, base + written - (written % FILL_BLOCK_BYTES));
  }
  const seconds = (now() - started) / 1000;
  return { filled: true, bytes: size, seconds, ...(writeSec > 0 ? { bytesPerSecond: writtenBytes / writeSec } : {}), passes, method: diskspdFillMethod(profile) };
}

/**
 * With `prefill: false` a diskspd file target must still exist before its first pass (no measured
 * pass carries `-c`): one 1-second read pass with `-c<size>` creates it, data unwritten — what diskspd
 * itself does with `-c`. A raw target needs nothing.
 */
export function diskspdCreateOnlyArgs(profile: WorkloadProfile, target: string): string[] | null {
  if (rawTestTarget(target, 'diskspd') !== undefined) return null;
  return [`-b${diskspdSize(FILL_BLOCK_BYTES)}`, '-o1', '-t1', '-w0', '-d1', '-W0', ...(profile.direct ? ['-S'] : []), `-c${diskspdSize(profile.fileSizeBytes)}`, '-Rxml', target];
}

/**
 * The write throughput the plan's estimate assumes for the pre-fill when the playbook states none
 * (`settings.prefillMBps`): a conservative figure (a spinning disk, a busy array, a lab VM), so a
 * plan errs long. It only estimates: the fill itself writes as fast as the disk takes it.
 */
export const ASSUMED_FILL_MB_PER_SEC = 100;

/**
 * Seconds the pre-fill of `profile` takes at `bytesPerSec`, by the method each tool uses: fio
 * writes the region once; diskspd writes in whole FILL_SLICE_SEC passes until the region is covered
 * (so at least one). 0 when the profile does not pre-fill.
 */
export function prefillSec(profile: WorkloadProfile, tool: 'fio' | 'diskspd', bytesPerSec: number): number {
  if (profile.prefill === false) return 0;
  const sec = profile.fileSizeBytes / bytesPerSec;
  return tool === 'diskspd' ? Math.max(1, Math.ceil(sec / FILL_SLICE_SEC)) * FILL_SLICE_SEC : sec;
}

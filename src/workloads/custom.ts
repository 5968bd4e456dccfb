// Custom workloads: fio options and diskspd parameters written in a playbook, validated before they
// get anywhere near a command line, and the one resolver that turns a playbook `workload:` value
// (preset name, IOMeter access spec, or inline custom job) into a WorkloadProfile.
//
// Both validators are allow-lists. A value must match the option's own pattern, and no value may carry
// shell metacharacters: the runner quotes every argument, but a value that needs quoting is never a
// legitimate fio/diskspd value, so refusing it keeps one more layer between a playbook and a shell.
import { InvalidArgument } from '../errors.ts';
import { MAX_BLOCK_SIZE_BYTES, MAX_FILE_SIZE_BYTES, MAX_FIO_UINT, MAX_PASS_SEC, MAX_QUEUE_DEPTH, MAX_THREADS } from '../limits.ts';
import type { Pattern } from '../results/record.ts';
import { iometerSpec, looksLikeIometerSpec } from './iometer-spec.ts';
import { getProfile, makeTest, profileNames, PROFILES } from './profiles.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';
import { FIO_IOENGINE_PATTERN, FIO_IOENGINES } from './tool-settings.ts';
import { UNIQUE_BUFFER_MAX_BYTES } from './write-data.ts';

const SHELL_META = /[\s;&|`$<>\\'"(){}[\]*?!#~^]/;

const INT = /^\d+$/;
const PCT = /^(100|\d{1,2})$/;
const BOOL = /^(0|1|true|false)$/;
const SIZE = /^\d+(\.\d+)?([kmgtp](i?b)?|b)?$/i;
const SIZE_OR_PCT = /^(\d+(\.\d+)?([kmgtp](i?b)?|b)?|\d{1,3}%)$/i;
const TIME = /^\d+(us|ms|s|m|h|d)?$/;
const RATE = /^\d+[kmg]?(,\d+[kmg]?)?$/i;

/** fio options a custom job may set, with the value each accepts (fio 3.x `--cmdhelp` names). */
export const FIO_OPTIONS: Readonly<Record<string, RegExp>> = {
  rw: /^(read|write|randread|randwrite|rw|readwrite|randrw)$/,
  readwrite: /^(read|write|randread|randwrite|rw|readwrite|randrw)$/,
  bs: SIZE,
  blocksize: SIZE,
  iodepth: INT,
  numjobs: INT,
  rwmixread: PCT,
  rwmixwrite: PCT,
  ioengine: FIO_IOENGINE_PATTERN,
  direct: BOOL,
  buffered: BOOL,
  time_based: BOOL,
  norandommap: BOOL,
  randrepeat: BOOL,
  refill_buffers: BOOL,
  zero_buffers: BOOL,
  scramble_buffers: BOOL,
  end_fsync: BOOL,
  fsync_on_close: BOOL,
  invalidate: BOOL,
  thread: BOOL,
  sync: /^(0|1|none|sync|dsync)$/,
  hipri: BOOL,
  fixedbufs: BOOL,
  registerfiles: BOOL,
  sqthread_poll: BOOL,
  lat_percentiles: BOOL,
  clat_percentiles: BOOL,
  gtod_reduce: BOOL,
  percentile_list: /^\d+(\.\d+)?(:\d+(\.\d+)?)*$/,
  runtime: TIME,
  ramp_time: TIME,
  startdelay: TIME,
  thinktime: TIME,
  size: SIZE_OR_PCT,
  io_size: SIZE_OR_PCT,
  io_limit: SIZE_OR_PCT,
  offset: SIZE_OR_PCT,
  offset_increment: SIZE_OR_PCT,
  blockalign: SIZE,
  ba: SIZE,
  buffer_compress_percentage: PCT,
  buffer_compress_chunk: SIZE,
  dedupe_percentage: PCT,
  percentage_random: PCT,
  random_distribution: /^(random|zipf:\d+(\.\d+)?|pareto:\d+(\.\d+)?|normal:\d+(\.\d+)?)$/,
  random_generator: /^(tausworthe|lfsr|tausworthe64)$/,
  iodepth_batch_submit: INT,
  iodepth_batch: INT,
  iodepth_batch_complete_min: INT,
  iodepth_batch_complete_max: INT,
  iodepth_low: INT,
  rate: RATE,
  rate_iops: /^\d+(,\d+)?$/,
  rate_min: RATE,
  fsync: INT,
  fdatasync: INT,
  fallocate: /^(none|posix|keep|native|truncate|0|1)$/,
  cpus_allowed: /^\d+(-\d+)?(,\d+(-\d+)?)*$/,
  group_reporting: BOOL,
};

// Options the runner owns, or that let a playbook write files or run programs on the guest.
const FIO_FORBIDDEN: Readonly<Record<string, string>> = {
  filename: 'the runner sets the target from the inventory',
  filename_format: 'the runner sets the target from the inventory',
  directory: 'the runner sets the target from the inventory',
  name: 'the runner names each job after its canonical test id',
  output: 'the runner reads fio output from stdout',
  'output-format': 'the runner always asks for json',
  exec_prerun: 'running programs on the guest is not allowed',
  exec_postrun: 'running programs on the guest is not allowed',
  write_bw_log: 'fio logs are files on the guest the runner does not collect',
  write_lat_log: 'fio logs are files on the guest the runner does not collect',
  write_iops_log: 'fio logs are files on the guest the runner does not collect',
  write_hist_log: 'fio logs are files on the guest the runner does not collect',
  ioscheduler: 'changes the guest system configuration',
  // fio takes the last of a repeated option, and custom options follow the runner's own: these
  // would replace what settings and the inventory decide (a `size: 1p` would lay out a 1 PiB file)
  filesize: 'the runner sets the test file size from settings.fileSize',
  nrfiles: 'the runner measures the one test file the inventory names',
};

// Numeric caps of the options the allow-list lets through (src/limits.ts), in bytes for sizes.
// A percentage (`10%`, of the test file or device) is at most 100%.
const FIO_BYTES_CAP: Readonly<Record<string, [number, string]>> = {
  bs: [MAX_BLOCK_SIZE_BYTES, 'the block size cap'],
  blocksize: [MAX_BLOCK_SIZE_BYTES, 'the block size cap'],
  blockalign: [MAX_BLOCK_SIZE_BYTES, 'the block size cap'],
  ba: [MAX_BLOCK_SIZE_BYTES, 'the block size cap'],
  buffer_compress_chunk: [MAX_BLOCK_SIZE_BYTES, 'the block size cap'],
  io_size: [MAX_FILE_SIZE_BYTES, 'the test file size cap'],
  io_limit: [MAX_FILE_SIZE_BYTES, 'the test file size cap'],
  offset: [MAX_FILE_SIZE_BYTES, 'the test file size cap'],
  offset_increment: [MAX_FILE_SIZE_BYTES, 'the test file size cap'],
};
const FIO_COUNT_CAP: Readonly<Record<string, [number, string]>> = {
  iodepth_batch: [MAX_QUEUE_DEPTH, "the queue depth cap (io_uring's limit of entries)"],
  iodepth_batch_submit: [MAX_QUEUE_DEPTH, "the queue depth cap (io_uring's limit of entries)"],
  iodepth_batch_complete_min: [MAX_QUEUE_DEPTH, "the queue depth cap (io_uring's limit of entries)"],
  iodepth_batch_complete_max: [MAX_QUEUE_DEPTH, "the queue depth cap (io_uring's limit of entries)"],
  iodepth_low: [MAX_QUEUE_DEPTH, "the queue depth cap (io_uring's limit of entries)"],
  fsync: [MAX_FIO_UINT, "fio's unsigned int"],
  fdatasync: [MAX_FIO_UINT, "fio's unsigned int"],
  rate_iops: [MAX_FIO_UINT, "fio's unsigned int"],
  rate: [Number.MAX_SAFE_INTEGER, 'the largest whole number read exactly'],
  rate_min: [Number.MAX_SAFE_INTEGER, 'the largest whole number read exactly'],
};

const FIO_UNIT_EXP: Record<string, number> = { '': 0, k: 1, m: 2, g: 3, t: 4, p: 5 };

/**
 * fio size text → bytes, at most: fio's default kb_base=1024 reads k/m/g/t/p as powers of 1024
 * (KB as 1000 only with kb_base=1000), so 1024 is the upper bound a cap needs. Null for a percentage.
 */
function fioSizeUpperBytes(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)([kmgtp])?(?:i?b)?$/i.exec(text);
  return m ? Number(m[1]) * 1024 ** FIO_UNIT_EXP[(m[2] ?? '').toLowerCase()]! : null;
}

const BYTES = (n: number) => (n >= 1024 ** 4 && n % 1024 ** 4 === 0 ? `${n / 1024 ** 4} TiB` : n >= 1024 ** 2 && n % 1024 ** 2 === 0 ? `${n / 1024 ** 2} MiB` : `${n} bytes`);

/** Why a numeric value of `key` is out of range, or null. */
function fioRangeProblem(key: string, value: string): string | null {
  const pct = /^(\d+)%$/.exec(value);
  if (pct) return Number(pct[1]) > 100 ? 'a percentage of the test file is at most 100%' : null;
  if (key === 'size') return 'an absolute size would replace settings.fileSize (fio takes the last --size): set settings.fileSize, or give a share of the test file like 50%';
  const bytesCap = FIO_BYTES_CAP[key];
  if (bytesCap) {
    const bytes = fioSizeUpperBytes(value);
    if (bytes !== null && bytes > bytesCap[0]) return `expected at most ${BYTES(bytesCap[0])} (${bytesCap[1]})`;
  }
  const countCap = FIO_COUNT_CAP[key];
  if (countCap) {
    // rate and rate_iops may give read,write; each number counts (k/m/g = powers of 1024 at most)
    for (const part of value.split(',')) {
      const n = fioSizeUpperBytes(part) ?? Number(part);
      if (n > countCap[0]) return `expected at most ${countCap[0]} (${countCap[1]})`;
    }
  }
  if (key === 'percentile_list' && value.split(':').some((p) => Number(p) > 100)) return 'a percentile is at most 100';
  return null;
}

function bad(what: string, name: string, value: string, why: string): never {
  throw new InvalidArgument(`${what} ${name}=${JSON.stringify(value)}: ${why}`, { name, value });
}

// fio's time units (HOWTO "Parameter types: time"); a bare number is seconds, except thinktime's µs.
const TIME_UNIT_SEC: Record<string, number> = { us: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600, d: 86400 };
const DEFAULT_TIME_UNIT: Record<string, string> = { runtime: 's', ramp_time: 's', startdelay: 's', thinktime: 'us' };

/** A time-valued fio option in seconds (null for other options). */
function fioTimeSeconds(key: string, value: string): number | null {
  const unit = DEFAULT_TIME_UNIT[key];
  const m = unit === undefined ? null : /^(\d+)(us|ms|s|m|h|d)?$/.exec(value);
  return m ? Number(m[1]) * TIME_UNIT_SEC[m[2] ?? unit!]! : null;
}

/** Validated copy of custom fio options, keys without leading `--`, values as strings. Throws InvalidArgument. */
export function validateFioOptions(options: Record<string, string | number | boolean>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawKey, rawValue] of Object.entries(options)) {
    const key = rawKey.replace(/^--/, '');
    const value = typeof rawValue === 'boolean' ? (rawValue ? '1' : '0') : String(rawValue);
    const forbidden = FIO_FORBIDDEN[key] ?? (key.startsWith('exec_') ? 'running programs on the guest is not allowed' : undefined);
    if (forbidden !== undefined) bad('fio option', key, value, `may not be set in a playbook (${forbidden})`);
    const pattern = Object.hasOwn(FIO_OPTIONS, key) ? FIO_OPTIONS[key] : undefined;
    if (pattern === undefined) bad('fio option', key, value, `is not one storsweep accepts; allowed: ${Object.keys(FIO_OPTIONS).join(', ')}`);
    if (SHELL_META.test(value)) bad('fio option', key, value, 'value contains whitespace or a shell metacharacter');
    if (key === 'ioengine' && !pattern.test(value)) bad('fio option', key, value, `is not an allowed engine; allowed: ${FIO_IOENGINES.join(', ')}`);
    if (!pattern.test(value)) bad('fio option', key, value, `value does not match ${pattern.source}`);
    const range = fioRangeProblem(key, value);
    if (range !== null) bad('fio option', key, value, range);
    const seconds = fioTimeSeconds(key, value);
    if (seconds !== null && seconds > MAX_PASS_SEC) bad('fio option', key, value, `expected at most ${MAX_PASS_SEC} s (a day per pass at most)`);
    out[key] = value;
  }
  return out;
}

/** fio size text → bytes, fio's default convention (k/m/g binary). */
function fioSizeBytes(text: string): number | null {
  const m = /^(\d+)([kmgt])?(i?b)?$/i.exec(text);
  if (!m) return null;
  const exp = { '': 0, k: 1, m: 2, g: 3, t: 4 }[(m[2] ?? '').toLowerCase()] ?? 0;
  return Number(m[1]) * 1024 ** exp;
}

const IDENTITY_KEYS = new Set(['rw', 'readwrite', 'bs', 'blocksize', 'iodepth', 'numjobs', 'rwmixread', 'rwmixwrite']);

/** A custom fio job as a test: identity from rw/bs/iodepth/numjobs/rwmix*, the rest kept in `fioOptions`. */
export function customFioTest(options: Record<string, string | number | boolean>): WorkloadTest {
  const o = validateFioOptions(options);
  const rwText = o['rw'] ?? o['readwrite'] ?? 'read';
  const pattern = (rwText === 'readwrite' ? 'rw' : rwText) as Pattern;
  const bsText = o['bs'] ?? o['blocksize'] ?? '4k';
  const bs = fioSizeBytes(bsText);
  if (bs === null || bs === 0) bad('fio option', 'bs', bsText, 'must be a single whole block size like 4k or 1m');
  const qd = Number(o['iodepth'] ?? '1');
  const jobs = Number(o['numjobs'] ?? '1');
  if (qd < 1 || qd > MAX_QUEUE_DEPTH) bad('fio option', 'iodepth', String(qd), `expected a whole number from 1 to ${MAX_QUEUE_DEPTH} (io_uring's limit of entries)`);
  if (jobs < 1 || jobs > MAX_THREADS) bad('fio option', 'numjobs', String(jobs), `expected a whole number from 1 to ${MAX_THREADS} (fio's maximum number of jobs)`);
  // each job starts at offset + job number × offset_increment, and lays out its file from there
  const offset = fioSizeUpperBytes(o['offset'] ?? '0') ?? 0;
  const increment = fioSizeUpperBytes(o['offset_increment'] ?? '0') ?? 0;
  if (offset + increment * (jobs - 1) > MAX_FILE_SIZE_BYTES) {
    bad('fio option', 'offset_increment', o['offset_increment'] ?? '0', `the last of ${jobs} jobs would start at offset + ${jobs - 1} × offset_increment, beyond ${BYTES(MAX_FILE_SIZE_BYTES)} (the test file size cap)`);
  }
  let readPercent: number | undefined;
  if (o['rwmixread'] !== undefined) readPercent = Number(o['rwmixread']);
  else if (o['rwmixwrite'] !== undefined) readPercent = 100 - Number(o['rwmixwrite']);
  const test = makeTest(pattern, bs, qd, jobs, pattern === 'rw' || pattern === 'randrw' ? readPercent : undefined);
  const extra = Object.fromEntries(Object.entries(o).filter(([k]) => !IDENTITY_KEYS.has(k)));
  return Object.keys(extra).length > 0 ? { ...test, fioOptions: extra } : test;
}

// diskspd flags a custom job may pass, each with the grammar of its value (CmdLineParser.cpp).
// Timing (-d -W -C), file creation (-c), output (-R -L) and targets belong to the profile and runner.
const DISKSPD_FLAGS: ReadonlyArray<[RegExp, string]> = [
  [/^-b\d+[KMG]?$/i, '-b<size>: block size'],
  [/^-o\d+$/, '-o<n>: outstanding I/Os per thread per target'],
  [/^-t\d+$/, '-t<n>: threads per target'],
  [/^-F\d+$/, '-F<n>: total threads'],
  [/^-O\d+$/, '-O<n>: outstanding I/Os per thread'],
  [/^-w\d{1,3}$/, '-w<percent>: write share'],
  [/^-r(\d+[KMG]?)?$/i, '-r[<align>]: random'],
  [/^-rs\d{1,3}$/, '-rs<percent>: random share'],
  [/^-s(i)?(\d+[KMG]?)?$/i, '-s[i][<size>]: sequential stride'],
  [/^-S[bhmruw]*$/, '-S[bhmruw]: caching'],
  [/^-h$/, '-h: no caching, write-through (old spelling of -Sh)'],
  [/^-Z(r|\d+[KMGTb]?)?$/i, '-Z | -Zr | -Z<size>: write buffer content (no source file)'],
  [/^-z\d*$/, '-z[<seed>]: random seed'],
  [/^-a(g)?(\d+(,\d+)*)?$/, '-a[g][<cpu>,…]: affinity'],
  [/^-n$/, '-n: no affinity'],
  [/^-D\d*$/, '-D[<ms>]: IOPS statistics interval'],
  [/^-g\d+[KMGi]?$/i, '-g<bytes/ms>: throughput limit'],
  [/^-i\d+$/, '-i<count>: I/Os per burst'],
  [/^-j\d+$/, '-j<ms>: think time'],
  [/^-B\d+[KMGb]?$/i, '-B<offset>: base file offset'],
  [/^-f\d+[KMGb]?$/i, '-f<size>: max file size used'],
  [/^-T\d+[KMGb]?$/i, '-T<offset>: stride between threads'],
  [/^-I[123]$/, '-I<1|2|3>: I/O priority'],
  [/^-p$/, '-p: parallel async I/O'],
  [/^-x$/, '-x: completion routines'],
  [/^-l$/, '-l: large pages'],
  [/^-v$/, '-v: verbose'],
];

const DISKSPD_OWNED: ReadonlyArray<[RegExp, string]> = [
  [/^-d/, 'the profile sets the duration (runtimeSec)'],
  [/^-W/, 'the profile sets the warm-up (rampSec)'],
  [/^-C/, 'cool-down is not measured'],
  [/^-c/, 'the profile sets the test file size (fileSizeBytes)'],
  [/^-R/, 'the runner always asks for -Rxml'],
  [/^-L$/, 'the runner always passes -L'],
  [/^-X/, 'XML profiles are files on the guest'],
  [/^-P/, 'progress output would corrupt the XML'],
  [/^-e/, 'ETW tracing is not supported'],
];

/** Splits and validates custom diskspd parameters. Throws InvalidArgument naming the flag and the grammar. */
export function validateDiskspdParams(params: string | string[]): string[] {
  const list = typeof params === 'string' ? params.trim().split(/\s+/).filter((p) => p !== '') : params;
  for (const p of list) {
    if (!p.startsWith('-')) bad('diskspd parameter', p, p, 'is not a flag; the target comes from the inventory, not the playbook');
    if (SHELL_META.test(p)) bad('diskspd parameter', p, p, 'contains whitespace or a shell metacharacter');
    const owned = DISKSPD_OWNED.find(([re]) => re.test(p));
    if (owned) bad('diskspd parameter', p, p, `may not be set in a playbook (${owned[1]})`);
    if (!DISKSPD_FLAGS.some(([re]) => re.test(p))) {
      bad('diskspd parameter', p, p, `is not a flag storsweep accepts; allowed: ${DISKSPD_FLAGS.map(([, d]) => d).join('; ')}`);
    }
  }
  return [...list];
}

function diskspdBytes(text: string): number {
  const m = /^(\d+)([KMG])?$/i.exec(text);
  const exp = { '': 0, k: 1, m: 2, g: 3 }[(m?.[2] ?? '').toLowerCase()] ?? 0;
  return Number(m?.[1] ?? '0') * 1024 ** exp;
}

/**
 * A `-Z<size>` buffer diskspd takes: more than 0 bytes (CmdLineParser.cpp "invalid size passed to -Z"),
 * at least one block (Common.cpp "custom write buffer (-Z) is smaller than the block size"), and at
 * most UNIQUE_BUFFER_MAX_BYTES (the guest commits and fills all of it: write-data.ts).
 */
function checkWriteBuffer(list: readonly string[], block: number): void {
  for (const p of list) {
    const m = /^-Z(\d+)([KMGTb])?$/i.exec(p);
    if (!m) continue;
    const unit = m[2] === undefined ? 1 : m[2].toLowerCase() === 'b' ? block : 1024 ** ('kmgt'.indexOf(m[2].toLowerCase()) + 1);
    const bytes = Number(m[1]) * unit;
    if (bytes <= 0) bad('diskspd parameter', p, p, 'is a write buffer of 0 bytes; diskspd refuses it ("invalid size passed to -Z")');
    if (bytes < block) bad('diskspd parameter', p, p, `is a write buffer smaller than the block (${BYTES(block)}); diskspd refuses it`);
    if (bytes > UNIQUE_BUFFER_MAX_BYTES) bad('diskspd parameter', p, p, `expected a write buffer of at most ${BYTES(UNIQUE_BUFFER_MAX_BYTES)} (the guest commits and fills all of it)`);
  }
}

/** Custom diskspd parameters as a test: identity from -b -o -t -w -r, the rest kept in `diskspdOptions`. */
export function customDiskspdTest(params: string | string[]): WorkloadTest {
  const list = validateDiskspdParams(params);
  let block = 64 * 1024; // diskspd's default
  let qd = 2;
  let threads = 1;
  let writePct = 0;
  let random = false;
  const extra: string[] = [];
  for (const p of list) {
    if (/^-b/.test(p)) block = diskspdBytes(p.slice(2));
    else if (/^-o/.test(p)) qd = Number(p.slice(2));
    else if (/^-t/.test(p)) threads = Number(p.slice(2));
    else if (/^-w/.test(p)) writePct = Number(p.slice(2));
    else if (/^-r(\d+[KMG]?)?$/i.test(p)) random = true;
    else extra.push(p);
  }
  if (writePct > 100) bad('diskspd parameter', `-w${writePct}`, `-w${writePct}`, 'write share must be 0..100');
  if (block < 1 || qd < 1 || threads < 1) bad('diskspd parameter', list.join(' '), list.join(' '), '-b, -o and -t must be at least 1');
  // diskspd itself only needs these > 0 (CmdLineParser.cpp, atoi into an int); the caps are fio's (src/limits.ts).
  for (const p of list) {
    const m = /^-([oOtF])(\d+)$/.exec(p);
    if (!m) continue;
    const [max, what] = m[1] === 'o' || m[1] === 'O' ? [MAX_QUEUE_DEPTH, 'outstanding I/Os'] : [MAX_THREADS, 'threads'];
    const n = Number(m[2]);
    if (n < 1 || n > max) bad('diskspd parameter', p, p, `expected ${what} from 1 to ${max}`);
  }
  // Sizes: diskspd reads K/M/G as powers of 1024 and b as blocks of -b (CmdLineParser.cpp
  // _GetSizeInBytes); the caps are the settings' (src/limits.ts).
  if (block > MAX_BLOCK_SIZE_BYTES) bad('diskspd parameter', list.find((p) => /^-b/.test(p)) ?? '-b', String(block), `expected a block size of at most ${BYTES(MAX_BLOCK_SIZE_BYTES)} (the block size cap)`);
  for (const p of list) {
    const m = /^-([BfT])(\d+)([KMGb])?$/i.exec(p);
    if (!m || (m[1] !== 'B' && m[1] !== 'f' && m[1] !== 'T')) continue;
    const unit = m[3] === undefined ? 1 : m[3] === 'b' || m[3] === 'B' ? block : 1024 ** ({ k: 1, m: 2, g: 3 }[m[3].toLowerCase()] ?? 0);
    if (Number(m[2]) * unit > MAX_FILE_SIZE_BYTES) bad('diskspd parameter', p, p, `expected an offset or size of at most ${BYTES(MAX_FILE_SIZE_BYTES)} (the test file size cap)`);
  }
  checkWriteBuffer(list, block);
  const readPercent = 100 - writePct;
  const pattern: Pattern = readPercent === 100 ? (random ? 'randread' : 'read') : readPercent === 0 ? (random ? 'randwrite' : 'write') : random ? 'randrw' : 'rw';
  const test = makeTest(pattern, block, qd, threads, readPercent);
  return extra.length > 0 ? { ...test, diskspdOptions: extra } : test;
}

/** What a playbook may write as `workload:`. */
export type WorkloadInput =
  | string
  | {
      /** name used in reports; defaults to a name built from the tests */
      name?: string;
      /** preset whose timing (file size, runtime, passes, interval, aggregation) applies; default `cdm8-default` */
      base?: string;
      iometer?: string | string[];
      fio?: Record<string, string | number | boolean> | Array<Record<string, string | number | boolean>>;
      diskspd?: string | string[] | string[][];
    };

function unknownName(name: string): never {
  throw new InvalidArgument(
    `workload "${name}" is neither a preset (${profileNames().join(', ')}) nor an IOMeter access spec like "4k 50% read 100% random"`,
    { name: 'workload', value: name },
  );
}

/**
 * A preset name (`cdm8-default`), an IOMeter access spec (`32k 100% read 0% random`), or an inline
 * object `{iometer | fio | diskspd, base?, name?}` → a WorkloadProfile. Throws InvalidArgument.
 */
export function resolveWorkload(input: WorkloadInput): WorkloadProfile {
  if (typeof input === 'string') {
    const preset = getProfile(input.trim());
    if (preset) return preset;
    if (!looksLikeIometerSpec(input)) unknownName(input);
    const test = iometerSpec(input);
    return { ...iometerTiming(), name: `iometer ${input.trim()}`, description: `IOMeter access spec "${input.trim()}" with the timing of cdm8-default, no warm-up pass`, tests: [test] };
  }
  const baseName = input.base ?? 'cdm8-default';
  const base = getProfile(baseName) ?? unknownName(baseName);
  const kinds = (['iometer', 'fio', 'diskspd'] as const).filter((k) => input[k] !== undefined);
  if (kinds.length !== 1) {
    throw new InvalidArgument(`inline workload needs exactly one of iometer, fio, diskspd (got ${kinds.length === 0 ? 'none' : kinds.join(', ')})`, {
      name: 'workload',
      value: JSON.stringify(input),
    });
  }
  let tests: WorkloadTest[];
  if (input.iometer !== undefined) tests = (Array.isArray(input.iometer) ? input.iometer : [input.iometer]).map(iometerSpec);
  else if (input.fio !== undefined) tests = (Array.isArray(input.fio) ? input.fio : [input.fio]).map(customFioTest);
  else {
    const d = input.diskspd ?? [];
    const jobs: Array<string | string[]> = typeof d === 'string' ? [d] : d.every((x) => typeof x === 'string') ? [d] : d;
    tests = jobs.map(customDiskspdTest);
  }
  const kind = kinds[0] ?? 'custom';
  return {
    ...base,
    // the unscored pass 0 is CrystalDiskMark's, not the base's timing: a custom test gets it only by
    // `settings.warmupPass: true`
    warmupPass: false,
    name: input.name ?? `${kind}:${tests.map((t) => t.id).join('+')}`,
    description: `custom ${kind} workload (${tests.map((t) => t.id).join(', ')}) with the timing of ${base.name}, no warm-up pass; aggregate = ${base.aggregate} of passes`,
    tests,
  };
}

// IOMeter itself runs one long timed test per spec, with no unscored pass (its "Ramp Up Time" is
// part of a run, which rampSec models); we keep CrystalDiskMark 8's passes and file size so that a
// spec written bare in a playbook sits next to CDM numbers measured the same way, but not its pass 0,
// which is CrystalDiskMark's own ("Preparing…"). `settings.warmupPass: true` adds it.
function iometerTiming(): Omit<WorkloadProfile, 'name' | 'description' | 'tests'> {
  const { name: _n, description: _d, tests: _t, ...timing } = PROFILES['cdm8-default'] as WorkloadProfile;
  return { ...timing, warmupPass: false };
}

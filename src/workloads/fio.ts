// fio: a WorkloadTest becomes an fio argument vector; fio's JSON output becomes measurements.
// Both are pure. Units: fio's bw is KiB/s, bw_bytes is B/s (we store B/s); lat_ns is ns (we store µs).
// Latency is issue→completion (lat_ns), the span diskspd and CrystalDiskMark report: fio-latency.ts.
import { ParseError } from '../errors.ts';
import type { LatencyUs } from '../results/record.ts';
import { checkFioShape } from './fio-json-shape.ts';
import { latencyDistribution, mergeDistributions, toLatencyUs, type LatencyDistribution } from './fio-latency.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';
import { checkIoengine, fioFilenameArg } from './tool-settings.ts';

export interface FioOptions {
  /** test file or device on the target */
  filename: string;
  /** default libaio (Linux); windowsaio on Windows */
  ioengine?: string;
  /** override the measured seconds (profile.runtimeSec) — used for unmeasured warm-up passes */
  runtimeSec?: number;
}

/** Percentiles we ask fio for: exactly the ones the normalized record keeps. */
export const FIO_PERCENTILES = '50:95:99:99.9';

export function fioArgs(test: WorkloadTest, profile: WorkloadProfile, opts: FioOptions): string[] {
  // Defence in depth: the inventory and playbook schemas refuse these first, at file:line:col.
  const ioengine = checkIoengine(opts.ioengine ?? 'libaio');
  if (test.fioOptions?.ioengine !== undefined) checkIoengine(test.fioOptions.ioengine);
  const args = [
    `--name=${test.id}`,
    `--filename=${fioFilenameArg(opts.filename)}`,
    `--size=${profile.fileSizeBytes}`,
    `--rw=${test.pattern}`,
    `--bs=${test.blockSizeBytes}`,
    `--iodepth=${test.queueDepth}`,
    `--numjobs=${test.threads}`,
    '--group_reporting',
    `--ioengine=${ioengine}`,
    `--direct=${profile.direct ? 1 : 0}`,
    `--runtime=${opts.runtimeSec ?? profile.runtimeSec}`,
    '--time_based',
    '--randrepeat=0',
    '--refill_buffers',
    '--norandommap',
    `--percentile_list=${FIO_PERCENTILES}`,
    // percentiles of lat (issue→completion), not only of clat; json+ adds the histograms that merge exactly
    '--lat_percentiles=1',
    '--output-format=json+',
  ];
  if (profile.rampSec > 0) args.push(`--ramp_time=${profile.rampSec}`);
  if (test.pattern === 'rw' || test.pattern === 'randrw') args.push(`--rwmixread=${test.readPercent}`);
  for (const [k, v] of Object.entries(test.fioOptions ?? {})) args.push(v === '' ? `--${k}` : `--${k}=${v}`);
  return args;
}

export interface DirectionStats {
  iops: number;
  bytesPerSecond: number;
  ioBytes: number;
  totalIos: number;
  runtimeMs: number;
  latencyUs: LatencyUs;
  /** the issue→completion distribution behind latencyUs (what clones and directions are merged from) */
  latency: LatencyDistribution;
}

export interface FioJob {
  jobname: string;
  groupid: number;
  error: number;
  iops: number;
  bytesPerSecond: number;
  latencyUs: LatencyUs;
  cpuPercent: number | null;
  read: DirectionStats;
  write: DirectionStats;
  /** the job's `job options` as fio echoed them (clones of one job echo the same) */
  options: Record<string, string>;
  /** how many fio job entries this is: numjobs clones without group_reporting are merged into one */
  clones: number;
  /** how latency was obtained where it is not fio's own lat_ns as printed (see fio-latency.ts) */
  notes: string[];
  /** the job's issue→completion distribution (reads and writes together) behind latencyUs: its json+ bins are what merges */
  latency: LatencyDistribution;
}

export interface FioResult {
  version: string | null;
  jobs: FioJob[];
  /** the document's `global options` (as the job options: strings) */
  globalOptions: Record<string, string>;
  /** fio's `time` (when the run ended), if it printed one */
  time: string | null;
}

type Json = Record<string, unknown>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null);

function obj(v: unknown): Json | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
}

function direction(v: unknown): DirectionStats {
  const d = obj(v) ?? {};
  const bw = num(d.bw_bytes) ?? ((num(d.bw) ?? 0) * 1024);
  const latency = latencyDistribution(d);
  return {
    iops: num(d.iops) ?? 0,
    bytesPerSecond: bw,
    ioBytes: num(d.io_bytes) ?? (num(d.io_kbytes) ?? 0) * 1024,
    totalIos: num(d.total_ios) ?? 0,
    runtimeMs: num(d.runtime) ?? 0,
    latencyUs: toLatencyUs(latency),
    latency,
  };
}

/** Both directions of a job as one distribution (a mixed test's latency is that of all its I/Os). */
function jobLatency(read: DirectionStats, write: DirectionStats): LatencyDistribution {
  if (read.totalIos === 0 && write.totalIos > 0) return write.latency;
  if (write.totalIos === 0) return read.latency;
  return mergeDistributions([read.latency, write.latency], 'reads and writes together');
}

function sumDirections(parts: DirectionStats[], what: string): DirectionStats {
  const latency = mergeDistributions(parts.map((p) => p.latency), what);
  return {
    iops: parts.reduce((a, p) => a + p.iops, 0),
    bytesPerSecond: parts.reduce((a, p) => a + p.bytesPerSecond, 0),
    ioBytes: parts.reduce((a, p) => a + p.ioBytes, 0),
    totalIos: parts.reduce((a, p) => a + p.totalIos, 0),
    runtimeMs: Math.max(0, ...parts.map((p) => p.runtimeMs)),
    latencyUs: toLatencyUs(latency),
    latency,
  };
}

function finishJob(j: Omit<FioJob, 'iops' | 'bytesPerSecond' | 'latencyUs' | 'notes' | 'latency'>): FioJob {
  const lat = jobLatency(j.read, j.write);
  return {
    ...j,
    latency: lat,
    iops: j.read.iops + j.write.iops,
    bytesPerSecond: j.read.bytesPerSecond + j.write.bytesPerSecond,
    latencyUs: toLatencyUs(lat),
    notes: [...new Set([...j.read.latency.notes, ...j.write.latency.notes, ...lat.notes])],
  };
}

/** Same job name, group and options: the clones fio prints one by one for numjobs=N without group_reporting. */
function cloneKey(j: FioJob): string {
  return JSON.stringify([j.jobname, j.groupid, j.options]);
}

/**
 * numjobs=N without group_reporting prints each clone as its own job (fio HOWTO `numjobs`,
 * `group_reporting`); they are one test. Consecutive clones become one job: IOPS and bytes summed,
 * runtime the longest, latency from their merged distribution (fio-latency.ts mergeDistributions),
 * CPU their run-time-weighted mean, as fio's group_reporting computes it. A job with group_reporting is already one entry and stays so.
 */
export function mergeClones(jobs: FioJob[]): FioJob[] {
  const out: FioJob[] = [];
  let run: FioJob[] = [];
  const flush = () => {
    if (run.length === 1) out.push(run[0]!);
    else if (run.length > 1) {
      const first = run[0]!;
      const what = `${run.length} clones of job "${first.jobname}"`;
      // fio's own group (group_reporting) divides the summed CPU time by the summed run time: the
      // clones' CPU shares averaged, weighted by how long each ran (fio stat.c sum_thread_stats)
      const timed = run.filter((c) => c.cpuPercent !== null).map((c) => ({ cpu: c.cpuPercent!, ms: Math.max(c.read.runtimeMs, c.write.runtimeMs, 1) }));
      const totalMs = timed.reduce((a, c) => a + c.ms, 0);
      out.push(
        finishJob({
          jobname: first.jobname,
          groupid: first.groupid,
          error: run.find((c) => c.error !== 0)?.error ?? 0,
          cpuPercent: timed.length === 0 ? null : timed.reduce((a, c) => a + c.cpu * c.ms, 0) / totalMs,
          read: sumDirections(run.map((c) => c.read), `the reads of ${what}`),
          write: sumDirections(run.map((c) => c.write), `the writes of ${what}`),
          options: first.options,
          clones: run.reduce((a, c) => a + c.clones, 0),
        }),
      );
    }
    run = [];
  };
  for (const j of jobs) {
    if (run.length > 0 && cloneKey(run[0]!) !== cloneKey(j)) flush();
    run.push(j);
  }
  flush();
  return out;
}

/** Extract the JSON document: fio may print notes ("fio: ...") around it. */
function jsonText(text: string): string {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return '';
  return text.slice(start, end + 1);
}

/** The 1-based line of `offset` in `text`, without splitting it. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** fio nests ~6 deep (jobs → job → read → clat_ns → percentile); far deeper is not fio's output. */
const MAX_JSON_DEPTH = 64;
/**
 * fio's strings are a version, job names and option values: a longer one is not its output, and
 * every layer after the parse (excerpts, tables, the record's metadata) would carry it (issue 26).
 */
export const MAX_JSON_STRING_CHARS = 64 * 1024;

/**
 * Where brackets nest deeper than MAX_JSON_DEPTH or a string is longer than MAX_JSON_STRING_CHARS,
 * found before JSON.parse builds anything (one linear pass), or null.
 */
function jsonBeyondLimits(body: string): { offset: number; what: string } | null {
  let depth = 0;
  let stringStart = -1;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (stringStart >= 0) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) stringStart = -1;
      else if (i - stringStart > MAX_JSON_STRING_CHARS) return { offset: stringStart, what: `a JSON string longer than ${MAX_JSON_STRING_CHARS.toLocaleString('en-US')} characters` };
    } else if (c === 0x22) stringStart = i;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) return { offset: i, what: `JSON nested more than ${MAX_JSON_DEPTH} levels deep` };
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return null;
}

export function parseFioJson(text: string, source: string): FioResult {
  const body = jsonText(text);
  if (!body) throw new ParseError(`${source}: no fio JSON found (expected the output of fio --output-format=json)`, { source, expected: 'fio JSON' });
  const shape = jsonBeyondLimits(body);
  if (shape) {
    const line = lineOf(text, text.indexOf('{') + shape.offset);
    throw new ParseError(`${source}:${line}: ${shape.what}: not fio's output`, { source, line, expected: 'fio JSON' });
  }
  let doc: Json;
  try {
    doc = JSON.parse(body) as Json;
  } catch (err) {
    const m = /position (\d+)/.exec((err as Error).message);
    const line = m ? body.slice(0, Number(m[1])).split('\n').length + text.slice(0, text.indexOf('{')).split('\n').length - 1 : undefined;
    throw new ParseError(`${source}${line ? `:${line}` : ''}: fio JSON is malformed or truncated (${(err as Error).message})`, { source, line, expected: 'fio JSON' }, { cause: err });
  }
  const jobs = doc.jobs;
  if (!Array.isArray(jobs)) throw new ParseError(`${source}: fio JSON has no "jobs" array`, { source, expected: 'fio JSON with jobs[]' });
  checkFioShape(doc, source);
  const version = typeof doc['fio version'] === 'string' ? doc['fio version'] : null;
  return {
    version,
    globalOptions: stringOptions(doc['global options']),
    time: typeof doc['time'] === 'string' ? doc['time'] : null,
    jobs: jobs.map((j: unknown, i) => {
      const job = obj(j) ?? {};
      const usr = num(job.usr_cpu);
      const sys = num(job.sys_cpu);
      const options = stringOptions(job['job options']);
      return finishJob({
        jobname: typeof job.jobname === 'string' ? job.jobname : `job${i}`,
        groupid: num(job.groupid) ?? 0,
        error: num(job.error) ?? 0,
        cpuPercent: usr === null && sys === null ? null : (usr ?? 0) + (sys ?? 0),
        read: direction(job.read),
        write: direction(job.write),
        options,
        clones: 1,
      });
    }),
  };
}

/** An options object (`job options`, `global options`) as strings; other values are not options fio printed. */
function stringOptions(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj(v) ?? {})) if (typeof x === 'string' || typeof x === 'number') out[k] = String(x);
  return out;
}

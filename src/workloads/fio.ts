// fio: a WorkloadTest becomes an fio argument vector; fio's JSON output becomes measurements.
// Both are pure. Units: fio's bw is KiB/s, bw_bytes is B/s (we store B/s); clat_ns is ns (we store µs).
import { ParseError } from '../errors.ts';
import type { LatencyUs } from '../results/record.ts';
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
    '--output-format=json',
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
}

export interface FioJob {
  jobname: string;
  error: number;
  iops: number;
  bytesPerSecond: number;
  latencyUs: LatencyUs;
  cpuPercent: number | null;
  read: DirectionStats;
  write: DirectionStats;
}

export interface FioResult {
  version: string | null;
  jobs: FioJob[];
}

type Json = Record<string, unknown>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null);

function obj(v: unknown): Json | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
}

/** fio percentile keys are fixed-decimal strings ("99.900000"); match them numerically. */
function percentile(p: Json | null, want: number): number | null {
  if (!p) return null;
  for (const [k, v] of Object.entries(p)) if (Math.abs(Number(k) - want) < 1e-9) return num(v);
  return null;
}

function latency(dir: Json): LatencyUs {
  // fio ≥ 3.0 reports clat_ns; 2.x reported clat in µs. Completion latency is what
  // CrystalDiskMark-style tools show; total latency (lat_ns) adds the submission time.
  const ns = obj(dir.clat_ns);
  const us = ns ? null : obj(dir.clat);
  const src = ns ?? us;
  if (!src) return { mean: null, p50: null, p95: null, p99: null, p999: null };
  const scale = ns ? 1 / 1000 : 1;
  const pct = obj(src.percentile);
  const f = (v: number | null) => (v === null ? null : v * scale);
  const total = num(dir.total_ios) ?? 0;
  return {
    mean: total > 0 || num(dir.iops) ? f(num(src.mean)) : null,
    p50: f(percentile(pct, 50)),
    p95: f(percentile(pct, 95)),
    p99: f(percentile(pct, 99)),
    p999: f(percentile(pct, 99.9)),
  };
}

function direction(v: unknown): DirectionStats {
  const d = obj(v) ?? {};
  const bw = num(d.bw_bytes) ?? ((num(d.bw) ?? 0) * 1024);
  return {
    iops: num(d.iops) ?? 0,
    bytesPerSecond: bw,
    ioBytes: num(d.io_bytes) ?? (num(d.io_kbytes) ?? 0) * 1024,
    totalIos: num(d.total_ios) ?? 0,
    runtimeMs: num(d.runtime) ?? 0,
    latencyUs: latency(d),
  };
}

function combineLatency(r: DirectionStats, w: DirectionStats): LatencyUs {
  if (r.totalIos === 0 && w.totalIos > 0) return w.latencyUs;
  if (w.totalIos === 0) return r.latencyUs;
  // Mixed workloads: the mean is exact when weighted by I/O counts; percentiles of a union cannot be
  // derived from the parts, so we report the direction that did most of the I/O.
  const mean = r.latencyUs.mean !== null && w.latencyUs.mean !== null ? (r.latencyUs.mean * r.totalIos + w.latencyUs.mean * w.totalIos) / (r.totalIos + w.totalIos) : null;
  const major = r.totalIos >= w.totalIos ? r.latencyUs : w.latencyUs;
  return { ...major, mean };
}

/** Extract the JSON document: fio may print notes ("fio: ...") around it. */
function jsonText(text: string): string {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return '';
  return text.slice(start, end + 1);
}

/** fio nests ~6 deep (jobs → job → read → clat_ns → percentile); far deeper is not fio's output. */
const MAX_JSON_DEPTH = 64;

/** True when brackets nest deeper than `max` (outside strings). Linear, before JSON.parse builds it. */
function nestsDeeperThan(body: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

export function parseFioJson(text: string, source: string): FioResult {
  const body = jsonText(text);
  if (!body) throw new ParseError(`${source}: no fio JSON found (expected the output of fio --output-format=json)`, { source, expected: 'fio JSON' });
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) throw new ParseError(`${source}: JSON nested more than ${MAX_JSON_DEPTH} levels deep: not fio's output`, { source, expected: 'fio JSON' });
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
  const version = typeof doc['fio version'] === 'string' ? doc['fio version'] : null;
  return {
    version,
    jobs: jobs.map((j: unknown, i) => {
      const job = obj(j) ?? {};
      const read = direction(job.read);
      const write = direction(job.write);
      const usr = num(job.usr_cpu);
      const sys = num(job.sys_cpu);
      return {
        jobname: typeof job.jobname === 'string' ? job.jobname : `job${i}`,
        error: num(job.error) ?? 0,
        iops: read.iops + write.iops,
        bytesPerSecond: read.bytesPerSecond + write.bytesPerSecond,
        latencyUs: combineLatency(read, write),
        cpuPercent: usr === null && sys === null ? null : (usr ?? 0) + (sys ?? 0),
        read,
        write,
      };
    }),
  };
}

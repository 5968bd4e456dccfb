// fio JSON (`--output-format=json` and `json+`, fio ≥ 3.0) → one record per test: per job group with
// --group_reporting, and per job without it — numjobs clones, which fio then prints one by one, are
// summed into one record (workloads/fio.ts mergeClones). Numbers come from workloads/fio.ts
// parseFioJson, the same reader the runner uses; latency is issue→completion (lat_ns,
// workloads/fio-latency.ts); the test identity comes from each job's options, falling back to the
// `global options`, with sizes read under the job's kb_base.
import { ParseError } from '../errors.ts';
import { testIdentity, type Pattern, type TestIdentity } from '../results/record.ts';
import { mergeClones, parseFioJson } from '../workloads/fio.ts';
import { LATENCY_SPAN } from '../workloads/fio-latency.ts';
import { halfFacts, isMixed, mixHalves } from '../results/mix-halves.ts';
import { importedRecord, type ImportResult } from './import-result.ts';

export const FIO_FORMAT = 'fio-json';

export function looksLikeFioJson(text: string): boolean {
  return /"fio version"\s*:/.test(text.slice(0, 2000)) || (/^\s*\{/.test(text) && /"jobs"\s*:\s*\[/.test(text) && /"jobname"\s*:/.test(text));
}

type Options = Record<string, string>;

/**
 * A size option as fio reads it. fio's units depend on `kb_base` (fio HOWTO `kb_base`, checked with
 * fio 3.33): with the default 1024, `k`/`kB`/`KB` are 1024 and the IEC `KiB` is 1000 ("for
 * compatibility"); with kb_base=1000, `k`/`kB` are 1000 and `KiB` is 1024. A bare number is bytes.
 */
export function fioBytes(text: string | undefined, kbBase: 1000 | 1024 = 1024): number | null {
  const m = /^(\d+)(?:([kmgtp])(i?)(b?)|b)?$/i.exec((text ?? '').trim());
  if (!m) return null;
  const power = { '': 0, k: 1, m: 2, g: 3, t: 4, p: 5 }[(m[2] ?? '').toLowerCase()] ?? 0;
  const iec = (m[3] ?? '') !== '';
  const base = iec ? (kbBase === 1024 ? 1000 : 1024) : kbBase;
  return Number(m[1]) * base ** power;
}

/**
 * The kb_base in force when fio parsed option `key`: options are parsed in order, so a job's own
 * kb_base counts only for the options after it; else the global one; else 1024.
 */
function kbBaseFor(key: string, opts: Options, global: Options): 1000 | 1024 {
  const keys = Object.keys(opts);
  const own = keys.indexOf('kb_base');
  const at = keys.indexOf(key);
  const text = own >= 0 && (at < 0 || own < at) ? opts['kb_base'] : global['kb_base'];
  return text === '1000' ? 1000 : 1024;
}

const RW: Record<string, Pattern> = { read: 'read', write: 'write', randread: 'randread', randwrite: 'randwrite', rw: 'rw', readwrite: 'rw', randrw: 'randrw' };

function identity(opts: Options, global: Options): TestIdentity | string {
  const get = (k: string) => opts[k] ?? global[k];
  const rwText = (get('rw') ?? get('readwrite') ?? 'read').split(':')[0] ?? 'read';
  const pattern = RW[rwText];
  if (!pattern) return `rw=${rwText} is not a pattern storsweep records`;
  const bsKey = get('bs') !== undefined ? 'bs' : 'blocksize';
  const bsText = get(bsKey) ?? '4k';
  const bs = fioBytes(bsText, kbBaseFor(bsKey, opts, global));
  if (bs === null || bs === 0) return `bs=${bsText} is not one block size`;
  const mixRead = get('rwmixread');
  const mixWrite = get('rwmixwrite');
  const readPercent =
    pattern === 'read' || pattern === 'randread' ? 100 : pattern === 'write' || pattern === 'randwrite' ? 0 : mixRead !== undefined ? Number(mixRead) : mixWrite !== undefined ? 100 - Number(mixWrite) : 50;
  return testIdentity({ pattern, blockSizeBytes: bs, queueDepth: Number(get('iodepth') ?? '1'), threads: Number(get('numjobs') ?? '1'), readPercent });
}

export function importFioJson(text: string, source: string): ImportResult {
  // one parse: numbers, each job's options and the global ones (a second JSON.parse doubled the memory)
  const parsed = parseFioJson(text, source);
  const global = parsed.globalOptions;
  const warnings: string[] = [];
  // numjobs=N without group_reporting: N entries, one test (summed, latency merged)
  const jobs = mergeClones(parsed.jobs);
  let entry = 0;
  const records = jobs.flatMap((job) => {
    const first = entry + 1;
    entry += job.clones;
    const where = job.clones > 1 ? `jobs ${first}–${entry} (${job.clones} clones of "${job.jobname}", summed)` : `job ${first} "${job.jobname}"`;
    const id = identity(job.options, global);
    if (typeof id === 'string') {
      warnings.push(`${source}: ${where}: ${id}, skipped`);
      return [];
    }
    if (job.error !== 0) warnings.push(`${source}: ${where} reported error ${job.error}`);
    for (const n of job.notes) warnings.push(`${source}: ${where}: ${n}`);
    const total = importedRecord(source, { name: 'fio', version: parsed.version }, {
        test: id,
        iops: job.iops,
        bytesPerSecond: job.bytesPerSecond,
        latencyUs: job.latencyUs,
        cpuPercent: job.cpuPercent,
        metadata: {
          format: FIO_FORMAT,
          jobname: job.jobname,
          job: first,
          ...(job.clones > 1 ? { clones: job.clones } : {}),
          latencySpan: LATENCY_SPAN,
          ...(job.notes.length > 0 ? { latencyNote: job.notes.join('; ') } : {}),
          ...(parsed.time !== null ? { time: parsed.time } : {}),
          ...(isMixed(id) ? halfFacts(job.read, job.write) : {}),
        },
      });
    // a mixed job's read and write halves beside its total (results/mix-halves.ts)
    return [total, ...mixHalves(total)];
  });
  if (records.length === 0) throw new ParseError(`${source}: fio JSON has no job storsweep can record`, { source, expected: 'fio jobs with rw/bs options' });
  return { format: FIO_FORMAT, records, warnings };
}

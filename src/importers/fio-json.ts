// fio JSON (`--output-format=json` and `json+`, fio ≥ 3.0) → one record per job (one per job group
// with --group_reporting). Numbers come from workloads/fio.ts parseFioJson, the same reader the runner
// uses; the test identity comes from each job's options, falling back to the `global options`.
import { ParseError } from '../errors.ts';
import { testIdentity, type Pattern, type TestIdentity } from '../results/record.ts';
import { parseFioJson } from '../workloads/fio.ts';
import { importedRecord, type ImportResult } from './import-result.ts';

export const FIO_FORMAT = 'fio-json';

export function looksLikeFioJson(text: string): boolean {
  return /"fio version"\s*:/.test(text.slice(0, 2000)) || (/^\s*\{/.test(text) && /"jobs"\s*:\s*\[/.test(text) && /"jobname"\s*:/.test(text));
}

type Json = Record<string, unknown>;

function fioBytes(text: string | undefined): number | null {
  // fio's default kb_base=1024: k/m/g are binary; a bare number is bytes
  const m = /^(\d+)([kmgt])?(i?b)?$/i.exec((text ?? '').trim());
  if (!m) return null;
  return Number(m[1]) * 1024 ** ({ '': 0, k: 1, m: 2, g: 3, t: 4 }[(m[2] ?? '').toLowerCase()] ?? 0);
}

const RW: Record<string, Pattern> = { read: 'read', write: 'write', randread: 'randread', randwrite: 'randwrite', rw: 'rw', readwrite: 'rw', randrw: 'randrw' };

function identity(opts: Json, global: Json): TestIdentity | string {
  const get = (k: string) => {
    const v = opts[k] ?? global[k];
    return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
  };
  const rwText = (get('rw') ?? get('readwrite') ?? 'read').split(':')[0] ?? 'read';
  const pattern = RW[rwText];
  if (!pattern) return `rw=${rwText} is not a pattern storsweep records`;
  const bsText = get('bs') ?? get('blocksize') ?? '4k';
  const bs = fioBytes(bsText);
  if (bs === null || bs === 0) return `bs=${bsText} is not one block size`;
  const mixRead = get('rwmixread');
  const mixWrite = get('rwmixwrite');
  const readPercent =
    pattern === 'read' || pattern === 'randread' ? 100 : pattern === 'write' || pattern === 'randwrite' ? 0 : mixRead !== undefined ? Number(mixRead) : mixWrite !== undefined ? 100 - Number(mixWrite) : 50;
  return testIdentity({ pattern, blockSizeBytes: bs, queueDepth: Number(get('iodepth') ?? '1'), threads: Number(get('numjobs') ?? '1'), readPercent });
}

export function importFioJson(text: string, source: string): ImportResult {
  const parsed = parseFioJson(text, source);
  // parseFioJson gives numbers; the options that name the test are read here from the same document
  const doc = JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) as Json;
  const rawJobs = Array.isArray(doc['jobs']) ? (doc['jobs'] as Json[]) : [];
  const global = (doc['global options'] ?? {}) as Json;
  const warnings: string[] = [];
  const records = parsed.jobs.flatMap((job, i) => {
    const raw = rawJobs[i] ?? {};
    const id = identity((raw['job options'] ?? {}) as Json, global);
    if (typeof id === 'string') {
      warnings.push(`${source}: job ${i + 1} "${job.jobname}": ${id}, skipped`);
      return [];
    }
    if (job.error !== 0) warnings.push(`${source}: job ${i + 1} "${job.jobname}" reported error ${job.error}`);
    return [
      importedRecord(source, { name: 'fio', version: parsed.version }, {
        test: id,
        iops: job.iops,
        bytesPerSecond: job.bytesPerSecond,
        latencyUs: job.latencyUs,
        cpuPercent: job.cpuPercent,
        metadata: { format: FIO_FORMAT, jobname: job.jobname, job: i + 1, ...(typeof doc['time'] === 'string' ? { time: doc['time'] } : {}) },
      }),
    ];
  });
  if (records.length === 0) throw new ParseError(`${source}: fio JSON has no job storsweep can record`, { source, expected: 'fio jobs with rw/bs options' });
  return { format: FIO_FORMAT, records, warnings };
}

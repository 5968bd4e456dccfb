// The fields of fio's JSON that storsweep reads, checked for their type before any is read: a field
// that is there with another type (`"iops": {…}`, `"jobname": 7`) is not fio's output, and reading
// it leniently would record a made-up measurement (0 IOPS under a test id from defaults). A field
// that is absent stays allowed where fio leaves it out (fio 2.x has no *_ns blocks, no bins without
// json+, no `job options` for a job without options). Pure.
import { ParseError } from '../errors.ts';
import { excerpt } from '../text/excerpt.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
/** What fio.ts `num` reads: a finite number, or a string holding one. */
const isNumeric = (v: unknown) => (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)));

const JOB_NUMBERS = ['groupid', 'error', 'usr_cpu', 'sys_cpu'] as const;
const DIRECTION_NUMBERS = ['iops', 'bw', 'bw_bytes', 'io_bytes', 'io_kbytes', 'total_ios', 'runtime'] as const;
const LATENCY_BLOCKS = ['lat_ns', 'lat', 'clat_ns', 'clat', 'slat_ns', 'slat'] as const;

function typeName(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return 'a string that is no number';
  return `a ${typeof v}`;
}

/** The first field of `doc` (fio's JSON, its `jobs` already a list) whose type is not fio's: ParseError naming the file and the field. */
export function checkFioShape(doc: Json, source: string): void {
  function fail(field: string, what: string, expected: string): never {
    throw new ParseError(`${source}: ${field}: ${what}; not fio's JSON output`, { source, expected: `fio JSON (${field}: ${expected})` });
  }
  function refuse(field: string, expected: string, got: unknown): never {
    fail(field, `expected ${expected}, got ${typeName(got)}`, expected);
  }
  const numbers = (o: Json, keys: readonly string[], at: string) => {
    for (const k of keys) if (o[k] !== undefined && !isNumeric(o[k])) refuse(`${at}.${k}`, 'a number', o[k]);
  };
  const numberMap = (v: unknown, at: string) => {
    if (v === undefined) return;
    if (!isObject(v)) refuse(at, 'an object of numbers', v);
    for (const [k, x] of Object.entries(v)) if (!isNumeric(x)) refuse(`${at}[${excerpt(JSON.stringify(k))}]`, 'a number', x);
  };
  const jobs = doc['jobs'] as unknown[];
  jobs.forEach((job, i) => {
    const at = `jobs[${i}]`;
    if (!isObject(job)) return refuse(at, 'an object', job);
    if (typeof job['jobname'] !== 'string') refuse(`${at}.jobname`, 'a string', job['jobname']);
    numbers(job, JOB_NUMBERS, at);
    const options = job['job options'];
    if (options !== undefined) {
      if (!isObject(options)) refuse(`${at}["job options"]`, 'an object', options);
      // fio prints each value as a string; a list or object in its place would be skipped, and the test id made from defaults
      for (const [k, v] of Object.entries(options)) if (v !== null && typeof v === 'object') refuse(`${at}["job options"][${excerpt(JSON.stringify(k))}]`, 'a string', v);
    }
    if (job['read'] === undefined && job['write'] === undefined) fail(at, 'has neither read nor write statistics', 'read and write objects');
    for (const dir of ['read', 'write'] as const) {
      const d = job[dir];
      if (d === undefined) continue;
      if (!isObject(d)) refuse(`${at}.${dir}`, 'an object', d);
      numbers(d, DIRECTION_NUMBERS, `${at}.${dir}`);
      for (const b of LATENCY_BLOCKS) {
        const l = d[b];
        if (l === undefined) continue;
        if (!isObject(l)) refuse(`${at}.${dir}.${b}`, 'an object', l);
        numbers(l, ['mean', 'N'], `${at}.${dir}.${b}`);
        numberMap(l['percentile'], `${at}.${dir}.${b}.percentile`);
        numberMap(l['bins'], `${at}.${dir}.${b}.bins`);
      }
    }
  });
}

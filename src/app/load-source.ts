// Loading what a report reads: a run directory (its results store, or the results.jsonl mirror
// beside it), a results .jsonl file, or a benchmark export an importer recognises (CrystalDiskMark
// text, fio JSON, …). The records are handed to report/ (report/source.ts), which reads no file and
// calls no importer itself.
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { errorMessage, NotARunDirectory, ParseError, UsageError } from '../errors.ts';
import { importFile } from '../importers/index.ts';
import { readInputFile, readInputLines } from '../input/read-input.ts';
import { latencyHistogramSchema } from '../results/latency-histogram.ts';
import { hostRecordSchema, vmShareSchema, type ResultRecord } from '../results/record.ts';
import { DB_FILE, openResults } from '../results/store.ts';
import type { RunInfo } from '../report/model.ts';
import { asSourceRecord, runReader, type SourceLoader } from '../report/source.ts';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks the fields reports rely on; a wrong line is reported by number, not as a stack trace. */
function checkRecord(v: unknown, file: string, line: number): ResultRecord {
  const fail = (key: string, expected: string): never => {
    throw new ParseError(`${file}:${line}: ${key}: expected ${expected}`, { source: file, line, expected });
  };
  if (!isObject(v)) return fail('(record)', 'a JSON object');
  if (typeof v.runId !== 'string') fail('runId', 'a string');
  if (typeof v.permutationId !== 'string') fail('permutationId', 'a string');
  if (!isObject(v.axes)) fail('axes', 'an object');
  if (typeof v.repetition !== 'number') fail('repetition', 'a number');
  if (!isObject(v.test) || typeof v.test.id !== 'string') fail('test.id', 'a string');
  for (const k of ['iops', 'bytesPerSecond'] as const) if (v[k] !== null && typeof v[k] !== 'number') fail(k, 'a number or null');
  if (!isObject(v.latencyUs)) fail('latencyUs', 'an object');
  if (!isObject(v.tool)) fail('tool', 'an object');
  // `host` (what the hypervisor saw), `vm` (a vm.count pass's share) and `latencyHistogram` came
  // later: a record without them reads as before
  checkOptional(v.host, 'host', 'the host figures storsweep writes', (x) => hostRecordSchema(x).safeParse(x), fail);
  checkOptional(v.vm, 'vm', 'the vm.count share storsweep writes', (x) => vmShareSchema().safeParse(x), fail);
  checkOptional(v.latencyHistogram, 'latencyHistogram', "fio's latency histogram as storsweep keeps it", (x) => latencyHistogramSchema().safeParse(x), fail);
  return v as unknown as ResultRecord;
}

type Checked = { success: true } | { success: false; error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> } };

/** An optional field checked by its schema; a refusal names the field's path in the record and what is wrong. */
function checkOptional(value: unknown, key: string, what: string, check: (v: unknown) => Checked, fail: (key: string, expected: string) => never): void {
  if (value === undefined) return;
  const c = check(value);
  if (c.success) return;
  const issue = c.error.issues[0];
  const where = issue?.path.length ? `${key}.${issue.path.map(String).join('.')}` : key;
  fail(where, `${what} (${issue?.message ?? 'invalid'})`);
}

/**
 * One ResultRecord per line, read line by line through the bounded reader (a regular file only,
 * never a FIFO or device; at most the results limit; no line over 1 MiB). A last line without `\n`
 * is a write cut short and is skipped. Records of one permutation share their axes, test and tool
 * objects, as the store's records do, so memory follows the records, not the file's text.
 */
export async function readRecordsJsonl(file: string): Promise<{ records: ResultRecord[]; warnings: string[] }> {
  const warnings: string[] = [];
  const records: ResultRecord[] = [];
  const intern = interner();
  let line = 0;
  let previous: string | undefined;
  for (const raw of readInputLines(file, 'results')) {
    // `previous` is a complete line (a `\n` followed it); the generator's last element is not
    if (previous !== undefined) records.push(...parseLine(previous, file, line, intern));
    previous = raw;
    line++;
  }
  if (previous !== undefined && previous.trim() !== '') warnings.push(`${file}:${line}: incomplete last line skipped`);
  return { records, warnings };
}

function parseLine(raw: string, file: string, line: number, intern: ReturnType<typeof interner>): ResultRecord[] {
  if (raw.trim() === '') return [];
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (err) {
    throw new ParseError(`${file}:${line}: not valid JSON (${errorMessage(err)})`, { source: file, line, expected: 'one ResultRecord JSON object per line' }, { cause: err });
  }
  const r = checkRecord(v, file, line);
  r.axes = intern(`a:${r.permutationId}:${JSON.stringify(r.axes)}`, r.axes);
  const t = r.test;
  r.test = intern(`t:${t.id}:${t.pattern}:${t.blockSizeBytes}:${t.queueDepth}:${t.threads}:${t.readPercent}:${Object.keys(t).length}`, t);
  r.tool = intern(`o:${JSON.stringify(r.tool)}`, r.tool);
  if (r.metadata) r.metadata = intern(`m:${JSON.stringify(r.metadata)}`, r.metadata);
  return [r];
}

/** Shares equal objects between records (read-only by contract). */
function interner(): <T>(key: string, v: T) => T {
  const shared = new Map<string, unknown>();
  return <T>(key: string, v: T): T => {
    const hit = shared.get(key);
    if (hit !== undefined) return hit as T;
    shared.set(key, v);
    return v;
  };
}

async function readRunInfo(dir: string, records: readonly ResultRecord[]): Promise<RunInfo> {
  const file = join(dir, 'run.json');
  const fallback: RunInfo = { runId: records[0]?.runId ?? basename(dir) };
  if (!existsSync(file)) return fallback;
  const text = readInputFile(file, 'config').toString('utf8');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new ParseError(`${file}: not valid JSON (${errorMessage(err)})`, { source: file, expected: 'run information object' }, { cause: err });
  }
  if (!isObject(v)) throw new ParseError(`${file}: expected a JSON object`, { source: file, expected: 'run information object' });
  return { ...fallback, ...(v as Partial<RunInfo>), runId: typeof v.runId === 'string' ? v.runId : fallback.runId };
}

function asSource(records: ResultRecord[], info: RunInfo): ResultRecord[] {
  const f = asSourceRecord(info);
  for (const r of records) f(r);
  return records;
}

/** Loads a run directory, a results .jsonl file, or any file an importer recognises. */
export const loadSource: SourceLoader = async (path) => {
  let st;
  try {
    st = await stat(path);
  } catch (err) {
    throw new UsageError(`${path}: no such run directory or result file`, { cause: err });
  }
  if (st.isDirectory()) {
    // The store is authoritative (it also holds the run facts); results.jsonl is its plain-text
    // mirror, readable without SQLite.
    if (existsSync(join(path, DB_FILE))) {
      const handle = openResults(path);
      let info: RunInfo;
      try {
        info = handle.runInfo();
      } finally {
        handle.close();
      }
      // read when the report asks, record by record (opened again then): never all in memory
      const records = runReader(info, (visit) => {
        const h = openResults(path);
        try {
          h.eachRecord(visit);
        } finally {
          h.close();
        }
      });
      return { path, kind: 'run', records, info, warnings: [] };
    }
    const jsonl = join(path, 'results.jsonl');
    if (existsSync(jsonl)) {
      const { records, warnings } = await readRecordsJsonl(jsonl);
      const info = await readRunInfo(path, records);
      return { path, kind: 'run', records: asSource(records, info), info, warnings };
    }
    throw new NotARunDirectory(path, `no ${DB_FILE} or results.jsonl`);
  }
  if (path.endsWith('.jsonl')) {
    const { records, warnings } = await readRecordsJsonl(path);
    const info: RunInfo = { runId: records[0]?.runId ?? basename(path) };
    return { path, kind: 'jsonl', records: asSource(records, info), info, warnings };
  }
  const result = await importFile(path);
  return {
    path,
    kind: 'import',
    records: result.records,
    // a published table does not say whether its repetitions were re-provisioned
    info: { runId: result.records[0]?.runId ?? `import:${basename(path)}`, replication: 'unknown' },
    warnings: result.warnings.map((w) => (w.startsWith(path) ? w : `${path}: ${w}`)),
  };
};

// Where report and compare get their input: a run directory (the results store, or its
// results.jsonl mirror) or an imported benchmark export (CrystalDiskMark text, fio JSON, …).
// This is the only file under report/ that touches the filesystem.
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { errorMessage, NotARunDirectory, ParseError, UsageError } from '../errors.ts';
import { importFile } from '../importers/index.ts';
import { readInputFile, readInputLines } from '../input/read-input.ts';
import { hostRecordSchema, type ResultRecord } from '../results/record.ts';
import { DB_FILE, openResults } from '../results/store.ts';
import { runInfoOf, type RunStore } from '../results/port.ts';
import type { Axes } from '../contract/axis.ts';
import { SOURCE_AXIS, sourceOf, type RunInfo } from './model.ts';

/**
 * Records read again at each call, each handed to `visit` as it is read and kept by nobody: a run's
 * store is read this way, so a report of 100,000 records never holds them (report/model.ts
 * ReportRecords). Resolves once every record was handed over.
 */
export type RecordReader = (visit: (r: ResultRecord) => void) => Promise<void>;

/** A source's records: in memory (a file read whole, an import), or read on demand (a run's store). */
export type Records = ResultRecord[] | RecordReader;

/** Hands every record to `visit`, in order. */
export async function eachRecord(records: Records, visit: (r: ResultRecord) => void): Promise<void> {
  if (Array.isArray(records)) for (const r of records) visit(r);
  else await records(visit);
}

/** The records in memory (CSV, compare): read once from a reader. */
export async function collectRecords(records: Records): Promise<ResultRecord[]> {
  if (Array.isArray(records)) return records;
  const out: ResultRecord[] = [];
  await records((r) => out.push(r));
  return out;
}

export interface Source {
  /** the path as given */
  path: string;
  kind: 'run' | 'jsonl' | 'import';
  records: Records;
  info: RunInfo;
  /** importer warnings (skipped lines…), each naming the file */
  warnings: string[];
}

export type SourceLoader = (pathOrRunDir: string) => Promise<Source>;

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
  // `host` (what the hypervisor saw) came later: a record without it reads as before
  if (v.host !== undefined) {
    const h = hostRecordSchema(v.host).safeParse(v.host);
    if (!h.success) {
      const issue = h.error.issues[0];
      const where = issue?.path.length ? `host.${issue.path.join('.')}` : 'host';
      fail(where, `the host figures storsweep writes (${issue?.message ?? 'invalid'})`);
    }
  }
  return v as unknown as ResultRecord;
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

/**
 * The records with their axes rewritten by `f`, each distinct axes object once (records of one
 * permutation share theirs). The records are copied, never changed: a caller may hold them.
 */
export function mapAxes(records: readonly ResultRecord[], f: (axes: Axes, r: ResultRecord) => Axes): ResultRecord[] {
  return records.map(axesMapper(f));
}

/** mapAxes for one record at a time (one mapper per pass over the records). */
function axesMapper(f: (axes: Axes, r: ResultRecord) => Axes): (r: ResultRecord) => ResultRecord {
  const done = new Map<Axes, Axes>();
  return (r) => {
    let axes = done.get(r.axes);
    if (axes === undefined) done.set(r.axes, (axes = f(r.axes, r)));
    return axes === r.axes ? r : { ...r, axes };
  };
}

/**
 * A run's records as a report sees them: each names its source (the run id) and, when the playbook
 * names one target, that target, so two runs that differ only by target stay two permutations.
 * The records are this load's own (just read): their axes are replaced in place (a 100,000-record
 * run is not copied), each distinct axes object once. One function per read of the records.
 */
function asSourceRecord(info: RunInfo): (r: ResultRecord) => ResultRecord {
  const target = info.target !== undefined && !info.target.includes(', ') ? info.target : undefined;
  const done = new Map<Axes, Axes>();
  return (r) => {
    let axes = done.get(r.axes);
    if (axes === undefined) {
      const addSource = !(SOURCE_AXIS in r.axes);
      const addTarget = target !== undefined && !('target' in r.axes);
      axes = addSource || addTarget ? { ...(addTarget ? { target } : {}), ...r.axes, ...(addSource ? { [SOURCE_AXIS]: r.runId } : {}) } : r.axes;
      done.set(r.axes, axes);
    }
    r.axes = axes;
    return r;
  };
}

function asSource(records: ResultRecord[], info: RunInfo): ResultRecord[] {
  const f = asSourceRecord(info);
  for (const r of records) f(r);
  return records;
}

/** A run's records read from its store at each call, as asSource sees them. */
function runReader(info: RunInfo, read: (visit: (r: ResultRecord) => void) => Promise<void> | void): RecordReader {
  return async (visit) => {
    const f = asSourceRecord(info);
    await read((r) => visit(f(r)));
  };
}

/**
 * A run read through the run store port (a PostgreSQL store: the CLI opens it, report/ never sees a
 * connection or a secret), as a source like a run directory's. Its records are read when the report
 * asks for them, through `reopen` (the store is opened again and closed after), record by record.
 */
export async function runSourceFrom(
  path: string,
  store: Pick<RunStore, 'meta' | 'planBaseline' | 'permutations'>,
  reopen: () => Promise<{ store: Pick<RunStore, 'eachRecord'>; close(): Promise<void> }>,
): Promise<Source> {
  const info: RunInfo = runInfoOf(await store.meta(), await store.planBaseline(), await store.permutations());
  const records = runReader(info, async (visit) => {
    const opened = await reopen();
    try {
      await opened.store.eachRecord(visit);
    } finally {
      await opened.close();
    }
  });
  return { path, kind: 'run', records, info, warnings: [] };
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

/**
 * Several inputs in one report: records concatenated, run facts merged. Each input keeps its own
 * source names; two inputs that would share one (two files named alike in different directories)
 * are told apart by the path as given, and the same input given twice is refused.
 */
export function mergeSources(sources: ReadonlyArray<Source & { records: ResultRecord[] }>): { records: ResultRecord[]; info: RunInfo; warnings: string[] };
export function mergeSources(sources: readonly Source[]): { records: Records; info: RunInfo; warnings: string[] };
export function mergeSources(sources: readonly Source[]): { records: Records; info: RunInfo; warnings: string[] } {
  if (sources.length === 1) return { records: sources[0]!.records, info: sources[0]!.info, warnings: sources[0]!.warnings };
  const seenPaths = new Map<string, string>();
  for (const s of sources) {
    const abs = resolve(s.path);
    const before = seenPaths.get(abs);
    if (before !== undefined) throw new UsageError(`${s.path}: given twice (also as ${before}); each run or file is one source, and its records would be counted twice`);
    seenPaths.set(abs, s.path);
  }
  // Each source's names, renamed where an earlier source took them (`taken`, in source order).
  const renaming = (taken: Set<string>, s: Source, names: ReadonlySet<string>): ((r: ResultRecord) => ResultRecord) | null => {
    const rename = new Map<string, string>();
    for (const name of names) {
      let unique = name;
      if (taken.has(unique)) unique = name === basename(s.path) || name.startsWith(`${basename(s.path)}#`) ? s.path + name.slice(basename(s.path).length) : `${name} (${s.path})`;
      for (let k = 2; taken.has(unique); k++) unique = `${name} (${k})`;
      if (unique !== name) rename.set(name, unique);
    }
    for (const name of names) taken.add(rename.get(name) ?? name);
    return rename.size === 0 ? null : axesMapper((axes, r) => ({ ...axes, [SOURCE_AXIS]: rename.get(sourceOf(r)) ?? sourceOf(r) }));
  };
  let records: Records;
  if (sources.every((s) => Array.isArray(s.records))) {
    const taken = new Set<string>();
    const all: ResultRecord[] = [];
    for (const s of sources) {
      const own = s.records as ResultRecord[];
      const f = renaming(taken, s, new Set(own.map(sourceOf)));
      // no push(...records): a spread of 100,000 arguments overflows the stack
      for (const r of own) all.push(f ? f(r) : r);
    }
    records = all;
  } else {
    // A source read from its store is read twice: its names first, then its records.
    records = async (visit) => {
      const taken = new Set<string>();
      for (const s of sources) {
        const names = new Set<string>();
        await eachRecord(s.records, (r) => names.add(sourceOf(r)));
        const f = renaming(taken, s, names);
        await eachRecord(s.records, f ? (r) => visit(f(r)) : visit);
      }
    };
  }
  const info: RunInfo = { runId: [...new Set(sources.map((s) => s.info.runId))].join(' + ') };
  const targets = [...new Set(sources.flatMap((s) => (s.info.target !== undefined ? [s.info.target] : [])))];
  if (targets.length > 0) info.target = targets.join(', ');
  // The first source's baseline (the run listed first) wins for an axis several name.
  const baseline: NonNullable<RunInfo['baseline']> = {};
  for (const s of sources) for (const [k, v] of Object.entries(s.info.baseline ?? {})) if (!(k in baseline)) baseline[k] = v;
  if (Object.keys(baseline).length > 0) info.baseline = baseline;
  const insecure = [...new Set(sources.flatMap((s) => s.info.insecureEndpoints ?? []))];
  if (insecure.length > 0) info.insecureEndpoints = insecure;
  const failures = sources.flatMap((s) => s.info.failures ?? []);
  if (failures.length > 0) info.failures = failures;
  const unfinished = sources.flatMap((s) => s.info.unfinished ?? []);
  if (unfinished.length > 0) info.unfinished = unfinished;
  const units = new Set(sources.map((s) => s.info.replication ?? 'within-provisioning'));
  info.replication = units.size === 1 ? [...units][0]! : 'mixed';
  // each run's own unit, for the conditions each source is shown with (report/conditions.ts)
  info.replicationOf = Object.fromEntries(sources.map((s) => [s.info.runId, s.info.replication ?? 'within-provisioning']));
  // What each run's playbook states and what was measured on its hosts: under the run's id when
  // more than one source has some, so two setups are never shown as one.
  for (const field of ['environment', 'fingerprint'] as const) {
    const having = sources.filter((s) => Object.keys(s.info[field] ?? {}).length > 0);
    if (having.length === 0) continue;
    const merged: Record<string, string> = {};
    for (const s of having) for (const [k, v] of Object.entries(s.info[field]!)) merged[having.length > 1 ? `${s.info.runId}/${k}` : k] = v;
    info[field] = merged;
  }
  return { records, info, warnings: sources.flatMap((s) => s.warnings) };
}

// What report and compare are given: each source's records (in memory, or read record by record
// from a run's store through the results port), the run's facts, and several sources merged into
// one. Report/ reads no file and calls no importer: loading a run directory, a results.jsonl or an
// imported export is app/load-source.ts's, which hands the records here.
import { basename, resolve } from 'node:path';
import { UsageError } from '../errors.ts';
import type { ResultRecord } from '../results/record.ts';
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
export function asSourceRecord(info: RunInfo): (r: ResultRecord) => ResultRecord {
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

/** A run's records read from its store at each call, as asSource sees them. */
export function runReader(info: RunInfo, read: (visit: (r: ResultRecord) => void) => Promise<void> | void): RecordReader {
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

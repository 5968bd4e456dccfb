// What an import is tagged with, so that it lines up with a run's permutation: `import FILE --set
// datastore.blockSizeMb=1` (repeatable), `--export N` to take one export of a file holding several,
// and the axis columns of a results table. Keys and values are checked against the axes a playbook
// takes (src/config/axis-values.ts); a refusal names the argument, or the file and line.
import { checkAxisValue } from '../config/axis-values.ts';
import type { Axes } from '../contract/axis.ts';
import { ParseError, UsageError } from '../errors.ts';
import { sourceOf } from '../report/model.ts';
import { mapAxes } from '../report/source.ts';
import type { ResultRecord } from '../results/record.ts';
import { TABLE_FORMAT } from '../importers/table-csv.ts';

/** `--set axis=value` arguments as axes; a bad one is a UsageError naming it and what is allowed. */
export function parseSetOptions(sets: readonly string[]): Axes {
  const out: Axes = {};
  for (const arg of sets) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set ${arg}: expected axis=value (e.g. --set datastore.blockSizeMb=1)`);
    const name = arg.slice(0, eq).trim();
    const check = checkAxisValue(name, arg.slice(eq + 1).trim());
    if (!check.ok) throw new UsageError(`--set ${arg}: ${check.problem}`);
    if (name in out && String(out[name]) !== String(check.value)) throw new UsageError(`--set ${arg}: ${name} is already set to ${String(out[name])}`);
    out[name] = check.value;
  }
  return out;
}

/**
 * Checks the axes an imported file gave its records (a results table's axis columns) as `--set`
 * values are checked, and stores each as the axis's own type (1, not "1"). A bad one is a
 * ParseError at the row's line.
 */
export function checkImportedAxes(records: readonly ResultRecord[], file: string): ResultRecord[] {
  // only a table's axes come from the user's hand; the other importers set just `source`
  if (!records.some((r) => r.metadata?.['format'] === TABLE_FORMAT)) return [...records];
  return mapAxes(records, (axes, r) => {
    if (r.metadata?.['format'] !== TABLE_FORMAT) return axes;
    const out: Axes = {};
    for (const [name, v] of Object.entries(axes)) {
      if (name === 'source') {
        out[name] = v;
        continue;
      }
      const check = checkAxisValue(name, String(v));
      if (!check.ok) {
        const line = typeof r.metadata?.['line'] === 'number' ? r.metadata['line'] : null;
        throw new ParseError(`${file}${line === null ? '' : `:${line}`}: column ${name}: ${check.problem}`, { source: file, ...(line === null ? {} : { line }), expected: 'an axis value a playbook takes' });
      }
      out[name] = check.value;
    }
    return out;
  });
}

export interface ImportTags {
  /** 1-based: keep only this export of a file that holds several (`file#N`) */
  exportNumber?: number;
  set?: Axes;
}

/** The sources of an import in file order. */
function sourcesOf(records: readonly ResultRecord[]): string[] {
  return [...new Set(records.map(sourceOf))];
}

/** Applies `--export` and `--set` to one file's records. */
export function tagImport(records: readonly ResultRecord[], file: string, tags: ImportTags): ResultRecord[] {
  let out = records;
  if (tags.exportNumber !== undefined) {
    const sources = sourcesOf(records);
    const wanted = sources[tags.exportNumber - 1];
    if (wanted === undefined) {
      throw new UsageError(`--export ${tags.exportNumber}: ${file} holds ${sources.length} export${sources.length === 1 ? '' : 's'} (${sources.join(', ')})`);
    }
    out = records.filter((r) => sourceOf(r) === wanted);
  }
  const set = tags.set ?? {};
  if (Object.keys(set).length === 0) return [...out];
  if ('source' in set) {
    const sources = sourcesOf(out);
    if (sources.length > 1) {
      throw new UsageError(`--set source=${String(set['source'])}: ${file} holds ${sources.length} exports (${sources.join(', ')}); name one with --export N, or they would become one source`);
    }
  }
  return mapAxes(out, (axes, r) => {
    for (const [k, v] of Object.entries(set)) {
      if (k !== 'source' && k in axes && String(axes[k]) !== String(v)) {
        const line = typeof r.metadata?.['line'] === 'number' ? `:${r.metadata['line']}` : '';
        throw new UsageError(`--set ${k}=${String(v)}: ${file}${line} already says ${k}=${String(axes[k])}`);
      }
    }
    return { ...axes, ...set };
  });
}

/** `--export` as a number from 1. */
export function parseExportOption(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < 1) throw new UsageError(`--export: expected an export number from 1, got "${raw}"`);
  return n;
}

// `import --tag '#2:datastore.blockSizeMb=2'`: tags one export of a file that holds several, so that
// one call imports a paper's appendix with each export lined up with its configuration. The exports
// a tag names become one source (the file, or the `source=` a tag gives): their differences are the
// paper's own comparison, which four sources would never pair (report/compare.ts pairs within a source).
//
//   --tag '#1:datastore.blockSizeMb=1'                 export 1 of every file imported
//   --tag 'appendix.txt#3:datastore.blockSizeMb=4,source=paper'   export 3 of appendix.txt only
//
// This file reads the syntax; the CLI checks each `axis=value` as it checks `--set`.
import { basename } from 'node:path';
import type { Axes } from '../contract/axis.ts';
import { InputTooLarge, NotARegularFile, UsageError } from '../errors.ts';
import { readInputFile } from '../input/read-input.ts';
import { decodeText } from './import-result.ts';
import type { ResultRecord } from '../results/record.ts';
import { visible } from '../text/visible.ts';

export interface ExportTag {
  /** the argument as given, for messages */
  arg: string;
  /** the file (its path or base name) the tag is for; null: every file */
  file: string | null;
  /** 1-based */
  exportNumber: number;
  /** the `axis=value` parts, unchecked */
  sets: string[];
}

const TAG = /^(.*)#(\d+):(.+)$/s;

/** One `--tag [FILE]#N:axis=value[,axis=value…]` argument; a malformed one is a UsageError naming it. */
export function parseExportTag(arg: string): ExportTag {
  const m = TAG.exec(arg.trim());
  const n = m ? Number(m[2]) : 0;
  if (!m || n < 1) throw new UsageError(`--tag ${visible(arg)}: expected [FILE]#N:axis=value[,axis=value…] with N from 1 (e.g. --tag '#2:datastore.blockSizeMb=2')`);
  const sets = m[3]!.split(',').map((s) => s.trim()).filter((s) => s !== '');
  return { arg, file: m[1]!.trim() === '' ? null : m[1]!.trim(), exportNumber: n, sets };
}

/** A tag whose `axis=value` parts the caller has checked. */
export interface CheckedExportTag extends ExportTag {
  axes: Axes;
}

function tagIsFor(tag: ExportTag, file: string): boolean {
  return tag.file === null || tag.file === file || tag.file === basename(file);
}

/** An imported record's source (every importer sets `axes.source`). */
const sourceOf = (r: ResultRecord): string => String(r.axes['source'] ?? r.runId);

/** The sources of one file's records in file order: export N is the N-th. */
function exportsOf(records: readonly ResultRecord[]): string[] {
  return [...new Set(records.map(sourceOf))];
}

/**
 * Applies the tags meant for `file` to its exports. A tagged export keeps its permutation id
 * (`stem#N`) but joins the file's one source (`file.txt`, or the tag's `source=`). An axis the
 * file already states with another value is refused, as `--set` refuses it.
 */
export function applyExportTags(records: readonly ResultRecord[], file: string, tags: readonly CheckedExportTag[]): ResultRecord[] {
  const mine = tags.filter((t) => tagIsFor(t, file));
  if (mine.length === 0) return [...records];
  const exports = exportsOf(records);
  const byExport = new Map<string, Axes>();
  for (const t of mine) {
    const source = exports[t.exportNumber - 1];
    if (source === undefined) {
      if (t.file === null) continue; // `#N:` is for the files that have an N-th export; checkTagsUsed names one no file has
      throw new UsageError(`--tag ${visible(t.arg)}: ${visible(file)} holds ${exports.length} export${exports.length === 1 ? '' : 's'} (${exports.map(visible).join(', ')})`);
    }
    const axes = { ...(byExport.get(source) ?? {}) };
    for (const [k, v] of Object.entries(t.axes)) {
      if (k in axes && String(axes[k]) !== String(v)) throw new UsageError(`--tag ${visible(t.arg)}: export ${t.exportNumber} of ${visible(file)} is already tagged ${k}=${String(axes[k])}`);
      axes[k] = v;
    }
    byExport.set(source, axes);
  }
  return records.map((r) => {
    const tag = byExport.get(sourceOf(r));
    if (!tag) return r;
    for (const [k, v] of Object.entries(tag)) {
      if (k !== 'source' && k in r.axes && String(r.axes[k]) !== String(v)) {
        throw new UsageError(`--tag ${k}=${String(v)}: ${visible(file)} already says ${k}=${String(r.axes[k])} for ${visible(sourceOf(r))}`);
      }
    }
    return { ...r, axes: { ...r.axes, ...tag, source: tag['source'] ?? basename(file) } };
  });
}

/** A tag no imported file could take (its export number beyond every file's, or its file not imported). */
export function checkTagsUsed(tags: readonly ExportTag[], exportCounts: ReadonlyMap<string, number>): void {
  for (const t of tags) {
    const files = [...exportCounts.entries()].filter(([f]) => tagIsFor(t, f));
    if (files.length === 0) throw new UsageError(`--tag ${visible(t.arg)}: ${visible(t.file ?? '')} is not among the imported files`);
    if (!files.some(([, n]) => n >= t.exportNumber)) {
      const most = Math.max(...files.map(([, n]) => n));
      throw new UsageError(`--tag ${visible(t.arg)}: no imported file holds export ${t.exportNumber} (at most ${most})`);
    }
  }
}

/** How many exports (sources) a file's records hold, before tagging. */
export function exportCount(records: readonly ResultRecord[]): number {
  return exportsOf(records).length;
}

/**
 * A tags file (`import --tags FILE`): one `[FILE]#N:axis=value,…` per line, as `--tag` takes it.
 * Blank lines and comments (`#` not followed by a digit, e.g. `# the 1 MB export`) are skipped;
 * any other line is refused at file:line.
 */
export function parseTagsFile(text: string, file: string): ExportTag[] {
  const out: ExportTag[] = [];
  text.split(/\r\n|\n|\r/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || /^#(?!\d)/.test(line)) return;
    if (!/^\S*#\d+:/.test(line)) throw new UsageError(`--tags ${visible(file)}:${i + 1}: expected [FILE]#N:axis=value[,axis=value…], got "${visible(line.slice(0, 80))}"`);
    out.push({ ...parseExportTag(line), arg: `${line} (${file}:${i + 1})` });
  });
  return out;
}

/** Reads and parses `--tags FILE` (bounded like an imported file); a file that cannot be read is a UsageError naming it. */
export function readTagsFile(file: string): ExportTag[] {
  let bytes: Uint8Array;
  try {
    bytes = readInputFile(file, 'import');
  } catch (err) {
    if (err instanceof InputTooLarge || err instanceof NotARegularFile) throw err;
    throw new UsageError(`--tags ${visible(file)}: cannot read file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
  }
  return parseTagsFile(decodeText(bytes), file);
}

// `storsweep import <file...> [--json|--csv] [--export N] [--set axis=value…]`: read existing
// CrystalDiskMark / fio / diskspd / IOMeter results or a typed-in results table into normalized
// records and print them (a table by default; --json: JSON Lines, one record per line, the same as
// `results --json`, so the output is a results .jsonl that `report` and `compare` read).
import type { Command } from 'commander';
import { errorMessage, UsageError } from '../../errors.ts';
import { importFile, type ImportResult } from '../../importers/index.ts';
import { renderCsv } from '../../report/csv.ts';
import { EXIT, exitCodeFor } from '../exit.ts';
import { shortenLongRuns } from '../../text/excerpt.ts';
import { visible } from '../../text/visible.ts';
import type { ResultRecord } from '../../results/record.ts';
import { jsonText, terminal } from '../output.ts';
import { checkImportedAxes, parseExportOption, parseSetOptions, tagImport } from '../import-tags.ts';
import { applyExportTags, checkTagsUsed, exportCount, parseExportTag, readTagsFile } from '../../importers/export-tags.ts';

export interface ImportIo {
  importFile(path: string): Promise<ImportResult>;
  stdout(text: string): void;
  stderr(text: string): void;
}

const defaultIo: ImportIo = {
  importFile,
  ...terminal,
};

export interface ImportCommandOptions {
  json?: boolean;
  csv?: boolean;
  /** `--set axis=value`, repeatable: tag the records so they line up with a run's permutation */
  set?: string[];
  /** `--export N`: only the N-th export of a file holding several */
  export?: string;
  /** `--tag [FILE]#N:axis=value,…`, repeatable: tag one export of a file holding several */
  tag?: string[];
  /** `--tags FILE`: the same tags, one per line */
  tags?: string;
}

/** A file of 100,000 unreadable lines would otherwise print 100,000 warnings. */
const MAX_WARNINGS_PER_FILE = 20;

const fixed = (v: number | null, digits: number) => (v === null ? '' : v.toFixed(digits));

export function renderImportTable(records: readonly ResultRecord[]): string {
  const tagged = records.some((r) => Object.keys(r.axes).some((k) => k !== 'source'));
  const head = ['source', ...(tagged ? ['axes'] : []), 'test', 'MB/s', 'IOPS', 'lat µs', 'tool'];
  const rows = records.map((r) => [
    String(r.axes['source'] ?? r.permutationId),
    ...(tagged
      ? [
          Object.entries(r.axes)
            .filter(([k]) => k !== 'source')
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(', '),
        ]
      : []),
    r.test.id,
    fixed(r.bytesPerSecond === null ? null : r.bytesPerSecond / 1e6, 3),
    fixed(r.iops, 1),
    fixed(r.latencyUs.mean, 2),
    `${r.tool.name}${r.tool.version ? ` ${r.tool.version}` : ''}`,
  ]);
  const widths = head.map((h, i) => rows.reduce((w, r) => Math.max(w, (r[i] ?? '').length), h.length));
  const numeric = new Set(tagged ? [3, 4, 5] : [2, 3, 4]);
  const line = (cells: string[]) => cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

/** Imports every file; a file that fails is reported on stderr and the others still print. Returns the exit code. */
export async function runImport(files: readonly string[], opts: ImportCommandOptions, io: ImportIo = defaultIo): Promise<number> {
  if (opts.json && opts.csv) throw new UsageError('import: choose one of --json and --csv');
  if (files.length === 0) throw new UsageError('import: name at least one file');
  const tags = { set: parseSetOptions(opts.set ?? []), ...(opts.export !== undefined ? { exportNumber: parseExportOption(opts.export) } : {}) };
  if ((opts.tag?.length || opts.tags) && opts.export !== undefined) throw new UsageError('import: choose one of --export and --tag/--tags');
  const exportTags = [...(opts.tag ?? []).map(parseExportTag), ...(opts.tags ? readTagsFile(opts.tags) : [])].map((t) => ({ ...t, axes: parseSetOptions(t.sets) }));
  const exportCounts = new Map<string, number>();
  const records: ResultRecord[] = [];
  // 1 when a file could not be imported; 2 when one was refused outright (too large, not a file).
  let code = 0;
  for (const file of files) {
    try {
      const result = await io.importFile(file);
      for (const w of result.warnings.slice(0, MAX_WARNINGS_PER_FILE)) io.stderr(`warning: ${shortenLongRuns(w)}\n`);
      const more = result.warnings.length - MAX_WARNINGS_PER_FILE;
      if (more > 0) io.stderr(`warning: ${visible(file)}: … and ${more} more warning${more === 1 ? '' : 's'}\n`);
      // no push(...records): a spread of 100,000 arguments overflows the stack
      exportCounts.set(file, exportCount(result.records));
      const tagged = applyExportTags(checkImportedAxes(result.records, file), file, exportTags);
      for (const r of tagImport(tagged, file, tags)) records.push(r);
    } catch (err) {
      code = Math.max(code, exitCodeFor(err) === EXIT.usage ? EXIT.usage : EXIT.failure);
      // every error names its file: ours do, anything else is given it here
      const message = errorMessage(err);
      io.stderr(`error: ${message.includes(file) || message.includes(visible(file)) ? '' : `${visible(file)}: `}${shortenLongRuns(message)}\n`);
    }
  }
  if (code === 0) checkTagsUsed(exportTags, exportCounts);
  // JSON Lines, as `results --json` prints them: a .jsonl that report and compare read back
  if (opts.json) io.stdout(records.map((r) => jsonText(r) + '\n').join(''));
  else if (opts.csv) io.stdout(renderCsv(records));
  else if (records.length > 0) io.stdout(renderImportTable(records));
  return code;
}

export function registerImport(program: Command): Command {
  return program
    .command('import')
    .description('read CrystalDiskMark text exports, fio JSON, diskspd XML, IOMeter CSV or a results table (CSV) into normalized results; each file (each export of a file holding several) is one source')
    .argument('<file...>', 'result files; the format is detected from the content')
    .option('--set <axis=value>', 'tag the records with an axis value so they line up with a run\'s permutation (e.g. datastore.blockSizeMb=1); repeatable', (v: string, prev: string[] = []) => [...prev, v])
    .option('--tag <[file]#n:axis=value>', 'tag the n-th export of a file holding several (e.g. \'#2:datastore.blockSizeMb=2\'); tagged exports of a file are one source; repeatable', (v: string, prev: string[] = []) => [...prev, v])
    .option('--tags <file>', 'a file of --tag values, one per line (# comments)')
    .option('--export <n>', 'only the n-th export of a file that holds several (file#n)')
    .option('--json', 'print the normalized records as JSON Lines (one per line, as `results --json`; report and compare read them as .jsonl)')
    .option('--csv', 'print the normalized records as CSV (the columns of `report -f csv`)')
    .action(async (files: string[], opts: ImportCommandOptions) => {
      process.exitCode = await runImport(files, opts);
    });
}

// `storsweep import <file...> [--json|--csv]`: read existing CrystalDiskMark / fio / diskspd / IOMeter
// results into normalized records and print them (a table by default).
import type { Command } from 'commander';
import { errorMessage, UsageError } from '../../errors.ts';
import { importFile, type ImportResult } from '../../importers/index.ts';
import { renderCsv } from '../../report/csv.ts';
import { EXIT, exitCodeFor } from '../exit.ts';
import { shortenLongRuns } from '../../text/excerpt.ts';
import { visible } from '../../text/visible.ts';
import type { ResultRecord } from '../../results/record.ts';
import { jsonText, terminal } from '../output.ts';

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
}

/** A file of 100,000 unreadable lines would otherwise print 100,000 warnings. */
const MAX_WARNINGS_PER_FILE = 20;

const fixed = (v: number | null, digits: number) => (v === null ? '' : v.toFixed(digits));

export function renderImportTable(records: readonly ResultRecord[]): string {
  const head = ['source', 'test', 'MB/s', 'IOPS', 'lat µs', 'tool'];
  const rows = records.map((r) => [
    String(r.axes['source'] ?? r.permutationId),
    r.test.id,
    fixed(r.bytesPerSecond === null ? null : r.bytesPerSecond / 1e6, 3),
    fixed(r.iops, 1),
    fixed(r.latencyUs.mean, 2),
    `${r.tool.name}${r.tool.version ? ` ${r.tool.version}` : ''}`,
  ]);
  const widths = head.map((h, i) => rows.reduce((w, r) => Math.max(w, (r[i] ?? '').length), h.length));
  const numeric = new Set([2, 3, 4]);
  const line = (cells: string[]) => cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

/** Imports every file; a file that fails is reported on stderr and the others still print. Returns the exit code. */
export async function runImport(files: readonly string[], opts: ImportCommandOptions, io: ImportIo = defaultIo): Promise<number> {
  if (opts.json && opts.csv) throw new UsageError('import: choose one of --json and --csv');
  if (files.length === 0) throw new UsageError('import: name at least one file');
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
      for (const r of result.records) records.push(r);
    } catch (err) {
      code = Math.max(code, exitCodeFor(err) === EXIT.usage ? EXIT.usage : EXIT.failure);
      io.stderr(`error: ${shortenLongRuns(errorMessage(err))}\n`);
    }
  }
  if (opts.json) io.stdout(jsonText(records, 2) + '\n');
  else if (opts.csv) io.stdout(renderCsv(records));
  else if (records.length > 0) io.stdout(renderImportTable(records));
  return code;
}

export function registerImport(program: Command): Command {
  return program
    .command('import')
    .description('read CrystalDiskMark text exports, fio JSON, diskspd XML or IOMeter CSV into normalized results')
    .argument('<file...>', 'result files; the format is detected from the content')
    .option('--json', 'print the normalized records as JSON')
    .option('--csv', 'print the normalized records as CSV (the columns of `report -f csv`)')
    .action(async (files: string[], opts: ImportCommandOptions) => {
      process.exitCode = await runImport(files, opts);
    });
}

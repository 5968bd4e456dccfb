// The one entry point for importing existing results: read a file, detect its format, normalize.
import { errorMessage, InputTooLarge, NotARegularFile, ParseError, StorsweepError } from '../errors.ts';
import { readInputFile } from '../input/read-input.ts';
import { parseCrystalDiskMarkText } from './crystaldiskmark-text.ts';
import { detectFormat, EXPECTED_FORMATS, type ImportFormat } from './detect.ts';
import { importDiskspdXml } from './diskspd-xml.ts';
import { importFioJson, looksLikeFioJson } from './fio-json.ts';
import { decodeText, MAX_IMPORT_RECORDS, tooManyRecords, type ImportResult } from './import-result.ts';
import { importIometerCsv } from './iometer-csv.ts';
import { importTableCsv } from './table-csv.ts';

export type { ImportResult } from './import-result.ts';
export { detectFormat, EXPECTED_FORMATS, IMPORT_FORMATS, type ImportFormat } from './detect.ts';

const IMPORTERS: Record<ImportFormat, (text: string, source: string) => ImportResult> = {
  'crystaldiskmark-text': parseCrystalDiskMarkText,
  'fio-json': importFioJson,
  'diskspd-xml': importDiskspdXml,
  'iometer-csv': importIometerCsv,
  'table-csv': importTableCsv,
};

/**
 * Longest line of an imported text (CrystalDiskMark, diskspd XML, IOMeter and table CSV: their
 * lines are a few KB): diskspd XML or a table with one 50 MB field took 1.8 GB and 30–40 s to
 * parse (issue 26). fio JSON may come on one line: its strings are capped instead (workloads/fio.ts).
 */
export const MAX_IMPORT_LINE_CHARS = 1024 * 1024;

/** The first line longer than `max` characters: its 1-based number and length, or null. */
function lineLongerThan(text: string, max: number): { line: number; length: number } | null {
  let line = 1;
  for (let start = 0; start <= text.length; line++) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    if (end - start > max) return { line, length: end - start };
    if (nl < 0) return null;
    start = nl + 1;
  }
  return null;
}

/** Imports already-decoded text; `source` names the file in records and messages. */
export function importText(text: string, source: string, format?: ImportFormat): ImportResult {
  if (format !== 'fio-json' && !(format === undefined && looksLikeFioJson(text))) {
    const long = lineLongerThan(text, MAX_IMPORT_LINE_CHARS);
    if (long) {
      throw new ParseError(`${source}:${long.line}: line ${long.line} is ${long.length.toLocaleString('en-US')} characters long; a results file's lines are far shorter (at most ${MAX_IMPORT_LINE_CHARS.toLocaleString('en-US')} are read)`, { source, line: long.line });
    }
  }
  const fmt = format ?? detectFormat(text);
  if (fmt === null) {
    throw new ParseError(`${source}: not a results file storsweep can import; expected ${EXPECTED_FORMATS}`, { source, line: 1, expected: EXPECTED_FORMATS });
  }
  const result = IMPORTERS[fmt](text, source);
  if (result.records.length > MAX_IMPORT_RECORDS) throw tooManyRecords(source, null, 'records');
  return result;
}

/** Reads, decodes (UTF-8 / UTF-16 with BOM), detects and imports one file. Throws ParseError. */
export async function importFile(path: string, format?: ImportFormat): Promise<ImportResult> {
  let bytes: Uint8Array;
  try {
    bytes = readInputFile(path, 'import');
  } catch (err) {
    if (err instanceof InputTooLarge || err instanceof NotARegularFile) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ParseError(`${path}: cannot read file (${code ?? (err as Error).message})`, { source: path }, { cause: err });
  }
  if (bytes.length === 0) throw new ParseError(`${path}: file is empty; expected ${EXPECTED_FORMATS}`, { source: path, line: 1, expected: EXPECTED_FORMATS });
  try {
    return importText(decodeText(bytes), path, format);
  } catch (err) {
    // ours name the file; anything else (out of memory for a string, a bug) is said with it
    if (err instanceof StorsweepError) throw err;
    throw new ParseError(`${path}: cannot import: ${errorMessage(err)}`, { source: path }, { cause: err });
  }
}

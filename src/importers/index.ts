// The one entry point for importing existing results: read a file, detect its format, normalize.
import { InputTooLarge, NotARegularFile, ParseError } from '../errors.ts';
import { readInputFile } from '../input/read-input.ts';
import { parseCrystalDiskMarkText } from './crystaldiskmark-text.ts';
import { detectFormat, EXPECTED_FORMATS, type ImportFormat } from './detect.ts';
import { importDiskspdXml } from './diskspd-xml.ts';
import { importFioJson } from './fio-json.ts';
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

/** Imports already-decoded text; `source` names the file in records and messages. */
export function importText(text: string, source: string, format?: ImportFormat): ImportResult {
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
  return importText(decodeText(bytes), path, format);
}

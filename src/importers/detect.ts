// Which importer reads a file: decided from the content (the first bytes), never from the extension
// alone, because exports get renamed (.txt → .log, .csv → .txt) when passed around.
import { looksLikeCrystalDiskMark } from './crystaldiskmark-text.ts';
import { looksLikeDiskspdXml } from './diskspd-xml.ts';
import { looksLikeFioJson } from './fio-json.ts';
import { looksLikeIometerCsv } from './iometer-csv.ts';
import { looksLikeTableCsv } from './table-csv.ts';

export type ImportFormat = 'crystaldiskmark-text' | 'fio-json' | 'diskspd-xml' | 'iometer-csv' | 'table-csv';

export const IMPORT_FORMATS: readonly ImportFormat[] = ['crystaldiskmark-text', 'fio-json', 'diskspd-xml', 'iometer-csv', 'table-csv'];

export const EXPECTED_FORMATS =
  'a CrystalDiskMark 3.x–8.x text export (anywhere in the file), fio JSON (--output-format=json or json+), diskspd XML (-Rxml), an IOMeter results CSV, ' +
  'or a results table (CSV or a Markdown pipe table with a header row naming "test" and metric columns such as "read MB/s"; see docs/guide/importing.md)';

export function detectFormat(text: string): ImportFormat | null {
  if (looksLikeFioJson(text)) return 'fio-json';
  if (looksLikeDiskspdXml(text)) return 'diskspd-xml';
  if (looksLikeIometerCsv(text)) return 'iometer-csv';
  if (looksLikeTableCsv(text)) return 'table-csv';
  if (looksLikeCrystalDiskMark(text)) return 'crystaldiskmark-text';
  return null;
}

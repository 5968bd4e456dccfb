// What every importer returns, and the identity every imported record carries: runId
// `import:<basename>`, permutationId = basename without extension, axes `{source: basename}`; the
// N-th of several exports in one file is `<stem>#N` / `{source: <basename>#N}`.
import { basename, extname } from 'node:path';
import { InputTooLarge } from '../errors.ts';
import { visible } from '../text/visible.ts';
import { NULL_LATENCY, type LatencyUs, type ResultRecord, type TestIdentity } from '../results/record.ts';

export interface ImportResult {
  /** `crystaldiskmark-text`, `fio-json`, `diskspd-xml`, `iometer-csv` */
  format: string;
  records: ResultRecord[];
  /** problems that did not stop the import (truncated file, skipped row…), each naming the line */
  warnings: string[];
}

/**
 * Most records one imported file may yield. Real exports hold a few dozen (CrystalDiskMark: ≤ 30
 * rows; an IOMeter or fio file: one per test or job); 10,000 keeps a hostile file from filling memory
 * with records (each is ~2 KB in memory, more once printed as JSON).
 */
export const MAX_IMPORT_RECORDS = 10_000;

export function tooManyRecords(source: string, line: number | null, what: string): InputTooLarge {
  const reason = `more than ${MAX_IMPORT_RECORDS.toLocaleString('en-US')} ${what} in one file; a results export holds a few dozen, so this is not one (split it if it really is)`;
  return new InputTooLarge(`${visible(source)}${line === null ? '' : `:${line}`}: ${reason}`, { file: source, size: null, limit: MAX_IMPORT_RECORDS, reason });
}

export interface ImportedMeasurement {
  test: TestIdentity;
  iops: number | null;
  bytesPerSecond: number | null;
  latencyUs?: LatencyUs;
  cpuPercent?: number | null;
  metadata?: ResultRecord['metadata'];
}

/** The source name of an imported file, or of its N-th export when it holds several. */
export function importSourceName(file: string, part?: number): string {
  return part === undefined ? basename(file) : `${basename(file)}#${part}`;
}

/** Builds the record for one measured line of an imported file (`part`: which of its several exports). */
export function importedRecord(source: string, tool: ResultRecord['tool'], m: ImportedMeasurement, part?: number): ResultRecord {
  const base = basename(source);
  const stem = base.slice(0, base.length - extname(base).length) || base;
  return {
    runId: `import:${base}`,
    permutationId: part === undefined ? stem : `${stem}#${part}`,
    axes: { source: importSourceName(source, part) },
    repetition: 1,
    test: m.test,
    iops: m.iops,
    bytesPerSecond: m.bytesPerSecond,
    latencyUs: m.latencyUs ?? { ...NULL_LATENCY },
    cpuPercent: m.cpuPercent ?? null,
    tool,
    rawPath: source,
    ...(m.metadata ? { metadata: m.metadata } : {}),
  };
}

/**
 * Bytes of a text export → string. UTF-16LE/BE with BOM (CrystalDiskMark can save UTF-16), UTF-8 with
 * or without BOM; BOM-less UTF-16LE is recognised by its NUL high bytes.
 */
export function decodeText(buf: Uint8Array): string {
  if (buf[0] === 0xff && buf[1] === 0xfe) return new TextDecoder('utf-16le').decode(buf.subarray(2));
  if (buf[0] === 0xfe && buf[1] === 0xff) return new TextDecoder('utf-16be').decode(buf.subarray(2));
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) return new TextDecoder('utf-8').decode(buf.subarray(3));
  const probe = buf.subarray(0, 200);
  let oddNuls = 0;
  for (let i = 1; i < probe.length; i += 2) if (probe[i] === 0) oddNuls++;
  if (probe.length >= 8 && oddNuls >= probe.length / 4) return new TextDecoder('utf-16le').decode(buf);
  return new TextDecoder('utf-8').decode(buf);
}

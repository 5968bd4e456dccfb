// CrystalDiskMark text exports (File → Save text / Copy), versions 2.x/3.x, 5.x, 6.x, 7.x and 8.x,
// including Shizuku Edition and store (UWP) builds whose header carries extra words. Layouts:
// the text-export printf formats in CrystalDiskMark's source per version, checked against public exports.
//
// Which test a row is follows from its label: 3.x "Sequential" is 1 MiB QD1; 5.x/6.x rows print no
// block size, and their sequential Q32 test is 128 KiB while "(T= 1)" alone is 1 MiB QD1; 7.x/8.x
// print block, Q and T, with the direction given by the [Read]/[Write]/[Mix] section above the row.
// MB/s is decimal in every version; IOPS is taken as printed, or derived as bytes/s ÷ block size.
import { ParseError } from '../errors.ts';
import { excerpt } from '../text/excerpt.ts';
import { testIdentity, type Pattern, type ResultRecord, type TestIdentity } from '../results/record.ts';
import { importedRecord, MAX_IMPORT_RECORDS, tooManyRecords, type ImportResult } from './import-result.ts';

export const CDM_FORMAT = 'crystaldiskmark-text';

const KiB = 1024;
const MiB = 1024 * 1024;
const NUM = String.raw`(\d+(?:\.\d+)?)`;
const TAIL = String.raw`\s*:\s*${NUM}\s*MB\/s(?:\s*\[\s*${NUM}\s*IOPS\s*\])?(?:\s*<\s*${NUM}\s*us\s*>)?\s*$`;

const HEADER = /^\s*CrystalDiskMark\s+(\d+(?:\.\d+)*)\s*(.*?)\s*(?:\(C\).*)?$/i;
const ROW_V3 = new RegExp(String.raw`^(Sequential|Random)\s+(Read|Write)(?:\s+(\d+)\s*(KB|KiB))?(?:\s*\(QD=\s*(\d+)\s*\))?` + TAIL, 'i');
const ROW_V5 = new RegExp(String.raw`^(Sequential|Random)\s+(Read|Write)(?:\s+(\d+)\s*(KiB|MiB|KB|MB))?\s*\((?:Q=\s*(\d+)\s*,\s*)?T=\s*(\d+)\s*\)` + TAIL, 'i');
const ROW_V7 = new RegExp(String.raw`^(SEQ|RND|Sequential|Random)\s+(\d+)\s*(KiB|MiB)\s*\(Q=\s*(\d+)\s*,\s*T=\s*(\d+)\s*\)` + TAIL, 'i');
const ROW_START = /^(SEQ|RND|Sequential|Random)\b/i;
const SECTION = /^\[(Read|Write)\]$|^\[Mix\]\s*Read\s*(\d+)%\s*\/\s*Write\s*(\d+)%$/i;
const FOOTER = /^(Profile|Test|Mode|Time|Date|OS|Comment)\s*:\s*(.*)$/i;

/**
 * A header line, or two result rows, anywhere in the text: an export pasted into notes, a forum
 * post or a study's appendix starts wherever the text before it ends.
 */
export function looksLikeCrystalDiskMark(text: string): boolean {
  let rows = 0;
  for (const l of normalize(text)) {
    if (HEADER.test(l)) return true;
    if ((ROW_V3.test(l) || ROW_V5.test(l) || ROW_V7.test(l)) && ++rows >= 2) return true;
  }
  return false;
}

// Exports re-posted from forums carry no-break spaces (U+00A0) or ideographic spaces as padding.
function normalize(text: string): string[] {
  return text.replace(/^\uFEFF/, '').replace(/[\u00A0\u3000\t]/g, ' ').split(/\r\n|\n|\r/).map((l) => l.trim());
}

/** "828.041" → 828041000 exactly (MB/s is printed with ≤ 3 decimals; float multiply would drift). */
export function mbpsToBytesPerSecond(text: string): number {
  const [int = '0', frac = ''] = text.split('.');
  return Number(int) * 1e6 + Number((frac + '000000').slice(0, 6));
}

function pattern(seq: boolean, dir: 'read' | 'write' | 'mix'): Pattern {
  if (dir === 'mix') return seq ? 'rw' : 'randrw';
  return seq ? dir : dir === 'read' ? 'randread' : 'randwrite';
}

function unitBytes(n: number, unit: string): number {
  return /^M/i.test(unit) ? n * MiB : n * KiB;
}

interface Row {
  test: TestIdentity;
  mbps: string;
  iops: string | undefined;
  latUs: string | undefined;
}

type Section = { dir: 'read' | 'write' | 'mix'; readPercent: number } | null;

function readRow(line: string, section: Section): Row | null {
  let m = ROW_V7.exec(line);
  if (m && section) {
    const seq = /^S/i.test(m[1] ?? '');
    const block = unitBytes(Number(m[2]), m[3] ?? 'KiB');
    const test = testIdentity({ pattern: pattern(seq, section.dir), blockSizeBytes: block, queueDepth: Number(m[4]), threads: Number(m[5]), readPercent: section.readPercent });
    return { test, mbps: m[6] ?? '', iops: m[7], latUs: m[8] };
  }
  m = ROW_V5.exec(line);
  if (m) {
    const seq = /^S/i.test(m[1] ?? '');
    const dir = (m[2] ?? '').toLowerCase() === 'read' ? 'read' : 'write';
    const q = m[5] === undefined ? 1 : Number(m[5]);
    const block = m[3] !== undefined ? unitBytes(Number(m[3]), m[4] ?? 'KiB') : seq ? (q > 1 ? 128 * KiB : MiB) : 4 * KiB;
    const test = testIdentity({ pattern: pattern(seq, dir), blockSizeBytes: block, queueDepth: q, threads: Number(m[6]), readPercent: dir === 'read' ? 100 : 0 });
    return { test, mbps: m[7] ?? '', iops: m[8], latUs: m[9] };
  }
  m = ROW_V3.exec(line);
  if (m) {
    const seq = /^S/i.test(m[1] ?? '');
    const dir = (m[2] ?? '').toLowerCase() === 'read' ? 'read' : 'write';
    const block = m[3] !== undefined ? Number(m[3]) * KiB : seq ? MiB : 4 * KiB;
    const q = m[5] === undefined ? 1 : Number(m[5]);
    const test = testIdentity({ pattern: pattern(seq, dir), blockSizeBytes: block, queueDepth: q, threads: 1, readPercent: dir === 'read' ? 100 : 0 });
    return { test, mbps: m[6] ?? '', iops: m[7], latUs: m[8] };
  }
  return null;
}

/**
 * The test a CrystalDiskMark row label names ("Random Read 4KB (QD=32)", "SEQ 1MiB (Q= 8, T= 1)"),
 * `dir` standing for the [Read]/[Write] section of 7.x/8.x labels; null when it is no row label.
 */
export function cdmTestFromLabel(label: string, dir: 'read' | 'write'): TestIdentity | null {
  const clean = label.replace(/[\u00A0\u3000\t]/g, ' ').trim();
  return readRow(`${clean} : 1 MB/s`, { dir, readPercent: dir === 'read' ? 100 : 0 })?.test ?? null;
}

type Meta = NonNullable<ResultRecord['metadata']>;

function readFooter(key: string, value: string, meta: Meta): void {
  switch (key.toLowerCase()) {
    case 'test': {
      // one \s* between the size and "(x5)" whether or not "[drive]" is there: two adjacent \s* around
      // an optional group backtrack quadratically over a long run of spaces
      const m = /^(\d+(?:\.\d+)?\s*(?:MB|MiB|GB|GiB))\s*(?:\[([^\]]*)\]\s*)?\(x(\d+)\)\s*(.*)$/i.exec(value);
      if (!m) {
        meta['test'] = value;
        return;
      }
      meta['testSize'] = (m[1] ?? '').replace(/\s+/g, ' ');
      if (m[2] !== undefined) meta['drive'] = m[2];
      meta['passes'] = Number(m[3]);
      const interval = /Interval\s*[=:]\s*(\d+)\s*sec/i.exec(m[4] ?? '');
      if (interval) meta['intervalSec'] = Number(interval[1]);
      let rest = (m[4] ?? '').replace(/\[\s*Interval\s*[=:][^\]]*\]/i, '').trim();
      // 8.x moved the drive after the pass count: "1 GiB (x5) [C: 4% (79/1862GiB)]"
      const drive = /^\[(.*?\))\]/.exec(rest) ?? /^\[([^\]]*)\]/.exec(rest);
      if (drive && meta['drive'] === undefined) {
        meta['drive'] = drive[1] ?? '';
        rest = rest.slice(drive[0].length).trim();
      }
      if (rest) meta['testOptions'] = rest;
      return;
    }
    case 'time': {
      const m = /Measure\s+(\d+)\s*sec\s*\/\s*Interval\s+(\d+)\s*sec/i.exec(value);
      if (m) {
        meta['measureSec'] = Number(m[1]);
        meta['intervalSec'] = Number(m[2]);
      } else meta['time'] = value;
      return;
    }
    case 'os':
      meta['os'] = value.replace(/\s{2,}/g, ' ');
      return;
    default:
      meta[key.toLowerCase()] = value;
  }
}

interface Export {
  meta: Meta;
  version: string | null;
  rows: Array<Row & { line: number }>;
  footerSeen: boolean;
  firstLine: number;
  lastLine: number;
}

/**
 * Reads every export in the text. A file may hold several, one after another (a study's appendix:
 * one per configuration); each is one source, `file#1`, `file#2`, …, never one pooled sample. An
 * export starts at a "CrystalDiskMark <version>" header, or at result rows after the previous
 * export's footer. Text around the exports (notes, a blog post) is skipped, one warning per stretch.
 */
export function parseCrystalDiskMarkText(text: string, source: string): ImportResult {
  const lines = normalize(text);
  const warnings: string[] = [];
  const exports: Export[] = [];
  let cur: Export | null = null;
  let section: Section = null;
  let firstBad: number | null = null;
  let total = 0;
  // lines outside any export: [first, last] of the current stretch
  let outside: [number, number] | null = null;
  const flushOutside = () => {
    if (outside) warnings.push(otherText(source, outside));
    outside = null;
  };
  const start = (n: number): Export => {
    flushOutside();
    section = null;
    cur = { meta: { format: CDM_FORMAT, aggregate: 'max' }, version: null, rows: [], footerSeen: false, firstLine: n, lastLine: n };
    exports.push(cur);
    return cur;
  };
  // after a footer, a line that belongs to no export ends it (the next one needs a header or rows)
  let ended = true;

  lines.forEach((line, i) => {
    const n = i + 1;
    // the header comes first: 7.x puts "Crystal Dew World" on the same line as the version
    const header = HEADER.exec(line);
    if (header) {
      const e = cur && cur.version === null && cur.rows.length === 0 && !cur.footerSeen ? cur : start(n);
      ended = false;
      applyHeader(e, header, n);
      return;
    }
    if (line === '' || /^-{5,}$/.test(line) || line.startsWith('*') || /Crystal Dew World/i.test(line)) return;
    const sec = SECTION.exec(line);
    const row = sec ? null : readRow(line, section);
    const footer = sec || row ? null : FOOTER.exec(line);
    if ((sec || row) && (ended || cur?.footerSeen)) start(n);
    if (sec || row || footer) ended = false;
    const e: Export | null = cur;
    if (sec && e) {
      section = sectionOf(sec);
      e.lastLine = n;
      return;
    }
    if (row && e) {
      if (++total > MAX_IMPORT_RECORDS) throw tooManyRecords(source, n, 'CrystalDiskMark result rows');
      e.rows.push({ ...row, line: n });
      e.lastLine = n;
      return;
    }
    if (footer && e && !ended) {
      e.footerSeen = true;
      readFooter(footer[1] ?? '', (footer[2] ?? '').trim(), e.meta);
      e.lastLine = n;
      return;
    }
    if (e && !ended && !e.footerSeen && ROW_START.test(line)) {
      firstBad ??= n;
      e.lastLine = n;
      warnings.push(`${source}:${n}: unreadable result row (truncated?): "${excerpt(line)}"`);
      return;
    }
    if (e && !ended && !e.footerSeen && e.rows.length > 0) {
      warnings.push(`${source}:${n}: line not recognised, ignored: "${excerpt(line)}"`);
      return;
    }
    // before the first export, between two, or after the last one's footer
    ended = e === null || e.footerSeen || e.rows.length === 0 ? true : ended;
    if (outside) outside[1] = n;
    else outside = [n, n];
  });
  flushOutside();

  const withRows = exports.filter((e) => e.rows.length > 0);
  if (withRows.length === 0) throw noResultRows(source, firstBad ?? lines.length);
  return { format: CDM_FORMAT, records: exportRecords(withRows, source, warnings), warnings };
}

/** The warning for a stretch of lines [first, last] outside any export. */
function otherText(source: string, [a, b]: [number, number]): string {
  return `${source}:${a === b ? a : `${a}-${b}`}: ${b - a + 1} line${a === b ? '' : 's'} of other text (not a CrystalDiskMark export) ignored`;
}

/** A "CrystalDiskMark <version> [edition]" header: the export's version and edition. */
function applyHeader(e: Export, header: RegExpExecArray, n: number): void {
  e.version = header[1] ?? null;
  e.meta['cdmVersion'] = e.version;
  const edition = (header[2] ?? '').trim();
  if (edition) e.meta['edition'] = edition;
  e.lastLine = n;
}

/** A section line ("[Read]", "[Write]", "[Mix] Read 70%/Write 30%"): the direction of the rows under it. */
function sectionOf(sec: RegExpExecArray): Section {
  if (sec[1] !== undefined) return { dir: sec[1].toLowerCase() === 'read' ? 'read' : 'write', readPercent: sec[1].toLowerCase() === 'read' ? 100 : 0 };
  return { dir: 'mix', readPercent: Number(sec[2]) };
}

function noResultRows(source: string, line: number): ParseError {
  return new ParseError(
    `${source}:${line}: no CrystalDiskMark result rows found (expected a "CrystalDiskMark <version>" header followed by rows like "Sequential Read : 828.041 MB/s" or "SEQ 1MiB (Q= 8, T= 1): 384.064 MB/s")`,
    { source, line, expected: 'CrystalDiskMark 3.x–8.x text export' },
  );
}

/** Each export's rows as records (several exports: each its own source, `file#k`); a missing header or footer is warned about. */
function exportRecords(withRows: readonly Export[], source: string, warnings: string[]): ResultRecord[] {
  const several = withRows.length > 1;
  const records: ResultRecord[] = [];
  withRows.forEach((e, k) => {
    const which = several ? ` (export #${k + 1}, lines ${e.firstLine}-${e.lastLine})` : '';
    if (e.version === null) warnings.push(`${source}:${e.firstLine}: no "CrystalDiskMark <version>" header line${which}; test identities inferred from the row labels`);
    if (!e.footerSeen) {
      warnings.push(`${source}:${e.lastLine}: ${several ? `export #${k + 1} (lines ${e.firstLine}-${e.lastLine})` : 'file'} ends without the footer (Test:/Date:/OS:) — truncated? ${e.rows.length} result rows read`);
    }
    const tool = { name: 'crystaldiskmark', version: e.version };
    for (const r of e.rows) {
      const bytesPerSecond = mbpsToBytesPerSecond(r.mbps);
      const iops = r.iops !== undefined ? Number(r.iops) : bytesPerSecond / r.test.blockSizeBytes;
      records.push(
        importedRecord(
          source,
          tool,
          {
            test: r.test,
            iops,
            bytesPerSecond,
            latencyUs: { mean: r.latUs !== undefined ? Number(r.latUs) : null, p50: null, p95: null, p99: null, p999: null },
            metadata: { ...e.meta, ...(several ? { export: k + 1 } : {}), line: r.line, iopsDerived: r.iops === undefined },
          },
          several ? k + 1 : undefined,
        ),
      );
    }
  });
  return records;
}

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

/** A header line or any result row in the first 40 lines. */
export function looksLikeCrystalDiskMark(text: string): boolean {
  const lines = normalize(text).slice(0, 40);
  return lines.some((l) => HEADER.test(l)) || lines.filter((l) => ROW_V3.test(l) || ROW_V5.test(l) || ROW_V7.test(l)).length >= 2;
}

// Exports re-posted from forums carry no-break spaces (U+00A0) or ideographic spaces as padding.
function normalize(text: string): string[] {
  return text.replace(/^\uFEFF/, '').replace(/[\u00A0\u3000\t]/g, ' ').split(/\r\n|\n|\r/).map((l) => l.trim());
}

/** "828.041" → 828041000 exactly (MB/s is printed with ≤ 3 decimals; float multiply would drift). */
function mbpsToBytesPerSecond(text: string): number {
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

export function parseCrystalDiskMarkText(text: string, source: string): ImportResult {
  const lines = normalize(text);
  const warnings: string[] = [];
  const rows: Array<Row & { line: number }> = [];
  const meta: Meta = { format: CDM_FORMAT, aggregate: 'max' };
  let version: string | null = null;
  let section: Section = null;
  let firstBad: number | null = null;
  let footerSeen = false;

  lines.forEach((line, i) => {
    const n = i + 1;
    // the header comes first: 7.x puts "Crystal Dew World" on the same line as the version
    const header = HEADER.exec(line);
    if (header && version === null) {
      version = header[1] ?? null;
      meta['cdmVersion'] = version;
      const edition = (header[2] ?? '').trim();
      if (edition) meta['edition'] = edition;
      return;
    }
    if (line === '' || /^-{5,}$/.test(line) || line.startsWith('*') || /Crystal Dew World/i.test(line)) return;
    const sec = SECTION.exec(line);
    if (sec) {
      if (sec[1] !== undefined) section = { dir: sec[1].toLowerCase() === 'read' ? 'read' : 'write', readPercent: sec[1].toLowerCase() === 'read' ? 100 : 0 };
      else section = { dir: 'mix', readPercent: Number(sec[2]) };
      return;
    }
    const row = readRow(line, section);
    if (row) {
      if (rows.length === MAX_IMPORT_RECORDS) throw tooManyRecords(source, n, 'CrystalDiskMark result rows');
      rows.push({ ...row, line: n });
      return;
    }
    const footer = FOOTER.exec(line);
    if (footer) {
      footerSeen = true;
      readFooter(footer[1] ?? '', (footer[2] ?? '').trim(), meta);
      return;
    }
    if (ROW_START.test(line)) {
      firstBad ??= n;
      warnings.push(`${source}:${n}: unreadable result row (truncated?): "${excerpt(line)}"`);
      return;
    }
    warnings.push(`${source}:${n}: line not recognised, ignored: "${excerpt(line)}"`);
  });

  if (rows.length === 0) {
    const line = firstBad ?? lines.length;
    throw new ParseError(
      `${source}:${line}: no CrystalDiskMark result rows found (expected rows like "Sequential Read : 828.041 MB/s" or "SEQ 1MiB (Q= 8, T= 1): 384.064 MB/s")`,
      { source, line, expected: 'CrystalDiskMark 3.x–8.x text export' },
    );
  }
  if (version === null) warnings.push(`${source}:1: no "CrystalDiskMark <version>" header line; test identities inferred from the row labels`);
  if (!footerSeen) {
    warnings.push(`${source}:${lines.length}: file ends without the footer (Test:/Date:/OS:) — truncated? ${rows.length} result rows read`);
  }
  const tool = { name: 'crystaldiskmark', version };
  const records = rows.map((r) => {
    const bytesPerSecond = mbpsToBytesPerSecond(r.mbps);
    const iops = r.iops !== undefined ? Number(r.iops) : bytesPerSecond / r.test.blockSizeBytes;
    return importedRecord(source, tool, {
      test: r.test,
      iops,
      bytesPerSecond,
      latencyUs: { mean: r.latUs !== undefined ? Number(r.latUs) : null, p50: null, p95: null, p99: null, p999: null },
      metadata: { ...meta, line: r.line, iopsDerived: r.iops === undefined },
    });
  });
  return { format: CDM_FORMAT, records, warnings };
}

// A plain results table, typed in by hand from a paper, a blog post or a vendor sheet, so that its
// numbers can be put beside measured ones. CSV (`,` or `;`), one header row of named columns, lines
// starting with `#` are comments. The format is documented in README.md ("Importing results").
//
//   test,read MB/s,write MB/s,read IOPS,write IOPS,datastore.blockSizeMb
//   SEQ1M Q1T1,828.041,746.229,,,1
//   RND4K Q32T1,19.970,27.872,4875.6,6804.8,1
//
// A test is named by its label (CrystalDiskMark's `SEQ1M Q8T1`, `RND4K Q32T16`, the text export's
// `SEQ 1MiB (Q= 8, T= 1)` or `Random Read 4KB (QD=32)`, or storsweep's id `rnd-4k-q32t1-read`), or
// by the columns block, qd, threads and pattern. Metric columns name their direction (`read MB/s`)
// or not (`MB/s`, when the test gives it). Other columns are axes: `source`, `target`, or a name
// with a dot (`datastore.blockSizeMb`); the CLI checks them as it checks `import --set`.
import { ParseError } from '../errors.ts';
import { excerpt } from '../text/excerpt.ts';
import { testIdentity, type Pattern, type ResultRecord, type TestIdentity } from '../results/record.ts';
import { cdmTestFromLabel, mbpsToBytesPerSecond } from './crystaldiskmark-text.ts';
import { importedRecord, importSourceName, MAX_IMPORT_RECORDS, tooManyRecords, type ImportResult } from './import-result.ts';
import { markdownTableAsCsv } from './table-markdown.ts';
import { iometerLabel, throughputWarning } from './table-units.ts';

export const TABLE_FORMAT = 'table-csv';

const KiB = 1024;
const MiB = 1024 * 1024;

type Dir = 'read' | 'write';
type MetricName = 'mbps' | 'mibps' | 'iops' | 'latUs' | 'latMs' | 'cpu';

/** The fixed columns, by normalized name (lower case, one space, no brackets). */
const ID_COLUMNS: Record<string, 'test' | 'block' | 'qd' | 'threads' | 'pattern' | 'readPercent' | 'tool' | 'samples'> = {
  test: 'test',
  label: 'test',
  block: 'block',
  'block size': 'block',
  bs: 'block',
  qd: 'qd',
  q: 'qd',
  'queue depth': 'qd',
  iodepth: 'qd',
  threads: 'threads',
  t: 'threads',
  numjobs: 'threads',
  pattern: 'pattern',
  'read %': 'readPercent',
  'read percent': 'readPercent',
  rwmixread: 'readPercent',
  tool: 'tool',
  // how many runs a published value is the mean of; kept with the record (metadata.samples)
  samples: 'samples',
  n: 'samples',
};

const METRIC = /^(?:(read|write) )?(mib\/s|mibps|mb\/s|mbps|mb per s|iops|lat(?:ency)?(?: mean)? ?(us|µs|ms)|cpu ?%?)$/;

/** The documented column names, for messages. */
export const TABLE_COLUMNS =
  'test (or block, qd, threads, pattern), read MB/s|MiB/s, write MB/s|MiB/s, read IOPS, write IOPS, read latency us|µs|ms, write latency us|µs|ms (or MB/s, MiB/s, IOPS, latency us when the test gives the direction), cpu %, samples (or n), tool, and axes: source, target or a name with a dot (datastore.blockSizeMb)';

function normalizeName(raw: string): string {
  return raw.trim().toLowerCase().replace(/[()[\]]/g, ' ').replace(/[_\s]+/g, ' ').trim();
}

/** Splits one CSV line (RFC 4180 quotes, no line break inside a field). Null when a quote is left open. */
function splitLine(line: string, sep: string): string[] | null {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"' && cur.trim() === '') {
      quoted = true;
      cur = '';
    } else if (c === sep) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  if (quoted) return null;
  out.push(cur.trim());
  return out;
}

function lines(text: string): string[] {
  return text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
}

function headerLine(text: string): { index: number; cells: string[]; sep: string } | null {
  const all = lines(text);
  for (let i = 0; i < all.length && i < 200; i++) {
    const l = all[i]!.trim();
    if (l === '' || l.startsWith('#')) continue;
    const sep = l.includes(',') || !l.includes(';') ? ',' : ';';
    const cells = splitLine(l, sep);
    return cells ? { index: i, cells, sep } : null;
  }
  return null;
}

/** A header row with a test (or block and pattern) column and at least one metric column. */
export function looksLikeTableCsv(text: string): boolean {
  const h = headerLine(markdownTableAsCsv(text) ?? text);
  if (!h) return false;
  const names = h.cells.map(normalizeName);
  const has = (k: string) => names.some((n) => ID_COLUMNS[n] === k);
  return (has('test') || (has('block') && has('pattern'))) && names.some((n) => METRIC.test(n));
}

/** `4k`, `4 KiB`, `4KB` (CrystalDiskMark's KB is KiB), `1m`, `1MiB`, `4096` (bytes). */
function parseBlock(raw: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib)?$/i.exec(raw.trim());
  if (!m) return null;
  const n = Number(m[1]);
  const unit = (m[2] ?? 'b').toLowerCase();
  const bytes = unit === 'b' ? n : unit.startsWith('k') ? n * KiB : n * MiB;
  return Number.isInteger(bytes) && bytes > 0 ? bytes : null;
}

interface Shape {
  random: boolean;
  blockSizeBytes: number;
  queueDepth: number;
  threads: number;
  /** set when the label names it */
  direction?: Dir | { mix: number };
}

const CANONICAL = /^(seq|rnd)-(\d+)([bkm])-q(\d+)t(\d+)-(read|write|mix(\d+))$/i;
const COMPACT = /^(SEQ|RND)\s*(\d+)\s*(K|M|KB|MB|KiB|MiB)\s*Q\s*(\d+)\s*T\s*(\d+)(?:\s+(read|write))?$/i;
// The row labels of CrystalDiskMark's window (3.x: "Seq", "512K", "4K", "4K QD32"; 5.x/6.x: "Seq Q32T1",
// "4K Q32T1", "4KiB Q8T8"): a bare block size is a random test; "Seq" alone is 1 MiB QD1, with a
// queue depth it is 128 KiB (5.x/6.x "Seq Q32T1").
const WINDOW = /^(?:(Seq)|(\d+)\s*(K|KB|KiB|M|MB|MiB))(?:\s+QD?\s*(\d+)(?:\s*T\s*(\d+))?)?$/i;

/** A test label as a paper or CrystalDiskMark prints it; null when it is none of the known forms. */
function parseLabel(label: string): Shape | null {
  let m = CANONICAL.exec(label);
  if (m) {
    const block = parseBlock(`${m[2]}${m[3]}`);
    if (block === null) return null;
    const direction: Shape['direction'] = m[7] !== undefined ? { mix: Number(m[7]) } : (m[6]!.toLowerCase() as Dir);
    return { random: m[1]!.toLowerCase() === 'rnd', blockSizeBytes: block, queueDepth: Number(m[4]), threads: Number(m[5]), direction };
  }
  m = COMPACT.exec(label);
  if (m) {
    const block = parseBlock(`${m[2]}${m[3]}`);
    if (block === null) return null;
    return {
      random: m[1]!.toUpperCase() === 'RND',
      blockSizeBytes: block,
      queueDepth: Number(m[4]),
      threads: Number(m[5]),
      ...(m[6] ? { direction: m[6].toLowerCase() as Dir } : {}),
    };
  }
  m = WINDOW.exec(label);
  if (m) {
    const seq = m[1] !== undefined;
    const q = m[4] !== undefined ? Number(m[4]) : 1;
    const block = seq ? (m[4] !== undefined ? 128 * KiB : MiB) : parseBlock(`${m[2]}${m[3]}`);
    if (block === null) return null;
    return { random: !seq, blockSizeBytes: block, queueDepth: q, threads: m[5] !== undefined ? Number(m[5]) : 1 };
  }
  // the text export's own labels: with the direction (3.x–6.x), without it (7.x/8.x, whose
  // direction is the [Read]/[Write] section, here the column), or a 3.x label with the direction
  // left out ("Random 4KB (QD=32)", the way a paper's table heads its read and write columns)
  const withDir = /^(Sequential|Random)(?!\s+(?:Read|Write)\b)/i.test(label) ? label.replace(/^(Sequential|Random)/i, '$1 Read') : null;
  for (const dir of ['read', 'write'] as const) {
    if (withDir !== null) {
      const t = cdmTestFromLabel(withDir, dir);
      if (t) return { random: t.pattern.startsWith('rand'), blockSizeBytes: t.blockSizeBytes, queueDepth: t.queueDepth, threads: t.threads };
    }
    const t = cdmTestFromLabel(label, dir);
    if (!t) continue;
    const own = cdmTestFromLabel(label, dir === 'read' ? 'write' : 'read');
    const direction = own && own.pattern === t.pattern ? (t.readPercent === 100 ? 'read' : 'write') : undefined;
    return { random: t.pattern.startsWith('rand'), blockSizeBytes: t.blockSizeBytes, queueDepth: t.queueDepth, threads: t.threads, ...(direction ? { direction } : {}) };
  }
  return iometerLabel(label);
}

function testOf(shape: Shape, dir: Dir | { mix: number }): TestIdentity {
  const mix = typeof dir === 'object';
  const pattern: Pattern = mix ? (shape.random ? 'randrw' : 'rw') : shape.random ? (dir === 'read' ? 'randread' : 'randwrite') : dir;
  return testIdentity({ pattern, blockSizeBytes: shape.blockSizeBytes, queueDepth: shape.queueDepth, threads: shape.threads, readPercent: mix ? dir.mix : dir === 'read' ? 100 : 0 });
}

type Column =
  | { kind: 'id'; id: (typeof ID_COLUMNS)[string] }
  | { kind: 'metric'; dir: Dir | null; metric: MetricName }
  | { kind: 'axis'; name: string };

function columnOf(raw: string): Column | null {
  const n = normalizeName(raw);
  const id = ID_COLUMNS[n];
  if (id) return { kind: 'id', id };
  const m = METRIC.exec(n);
  if (m) {
    const metric: MetricName = m[2]!.startsWith('mib') ? 'mibps' : m[2]!.startsWith('mb') ? 'mbps' : m[2] === 'iops' ? 'iops' : m[2]!.startsWith('cpu') ? 'cpu' : m[3] === 'ms' ? 'latMs' : 'latUs';
    return { kind: 'metric', dir: (m[1] as Dir | undefined) ?? null, metric };
  }
  const name = raw.trim();
  if (name === 'source' || name === 'target' || /^[A-Za-z][\w-]*(\.[A-Za-z][\w-]*)+$/.test(name)) return { kind: 'axis', name };
  return null;
}

const NUMBER = /^\d+(?:\.\d+)?$/;

export function importTableCsv(input: string, source: string): ImportResult {
  const text = markdownTableAsCsv(input) ?? input;
  const h = headerLine(text);
  const fail = (line: number, msg: string, expected: string): never => {
    throw new ParseError(`${source}:${line}: ${msg}`, { source, line, expected });
  };
  if (!h) return fail(1, `no header row (expected the columns ${TABLE_COLUMNS})`, 'a results table header');
  const columns = h.cells.map((raw, i) => {
    const c = columnOf(raw);
    if (!c) fail(h.index + 1, `column ${i + 1} "${excerpt(raw)}" is not one of: ${TABLE_COLUMNS}`, TABLE_COLUMNS);
    return c!;
  });
  const seen = new Set<string>();
  columns.forEach((c, i) => {
    const key = c.kind === 'id' ? c.id : c.kind === 'axis' ? `axis:${c.name}` : `${c.dir ?? ''}:${c.metric}`;
    if (seen.has(key)) fail(h.index + 1, `column ${i + 1} "${excerpt(h.cells[i]!)}" repeats an earlier column`, TABLE_COLUMNS);
    seen.add(key);
  });
  const idx = (id: string) => columns.findIndex((c) => c.kind === 'id' && c.id === id);
  const testCol = idx('test');
  if (testCol < 0 && (idx('block') < 0 || idx('pattern') < 0)) fail(h.index + 1, 'the table names no test: give a "test" column, or "block" and "pattern" (with "qd" and "threads")', TABLE_COLUMNS);

  const warnings: string[] = [];
  const records: ResultRecord[] = [];
  const perms = new Map<string, number>();
  const reps = new Map<string, number>();
  const pending: Array<{ record: ResultRecord; perm: string; sourceName: string | undefined }> = [];
  const all = lines(text);
  for (let i = h.index + 1; i < all.length; i++) {
    const n = i + 1;
    const line = all[i]!;
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const cells = splitLine(line, h.sep);
    if (!cells) fail(n, 'a quoted field is not closed on this line', 'one row per line');
    if (cells!.length > columns.length) fail(n, `${cells!.length} fields, but the header has ${columns.length} columns`, `${columns.length} fields`);
    const cell = (j: number) => (j >= 0 ? (cells![j] ?? '') : '');
    const num = (j: number, what: string): number | null => {
      const v = cell(j);
      if (v === '') return null;
      if (!NUMBER.test(v)) fail(n, `${what} "${excerpt(v)}" is not a number (digits, "." for decimals, no thousands separator)`, 'a number');
      // 309 digits and more read as Infinity: no measurement
      if (!Number.isFinite(Number(v))) fail(n, `${what} "${excerpt(v)}" is too large to be a measurement`, 'a number');
      return Number(v);
    };
    let shape: Shape | null;
    if (testCol >= 0 && cell(testCol) !== '') {
      shape = parseLabel(cell(testCol));
      if (!shape) {
        fail(n, `test "${excerpt(cell(testCol))}" is not a test label (expected e.g. "SEQ1M Q8T1", "RND4K Q32T16", "SEQ 1MiB (Q= 8, T= 1)", "Random Read 4KB (QD=32)" or "rnd-4k-q32t1-read")`, 'a test label');
      }
    } else {
      const blockText = cell(idx('block'));
      const block = parseBlock(blockText);
      if (block === null) fail(n, `block "${excerpt(blockText)}" is not a block size (expected e.g. 4k, 128KiB, 1m, 4096)`, 'a block size');
      const p = cell(idx('pattern')).toLowerCase();
      const random = /^(rnd|random|randread|randwrite|randrw)$/.test(p);
      if (!random && !/^(seq|sequential|read|write|rw|readwrite)$/.test(p)) fail(n, `pattern "${excerpt(p)}" is not one of seq, rnd, read, write, randread, randwrite, rw, randrw`, 'a pattern');
      const qd = num(idx('qd'), 'qd') ?? 1;
      const threads = num(idx('threads'), 'threads') ?? 1;
      const readPct = num(idx('readPercent'), 'read %');
      const direction: Shape['direction'] =
        /^(rw|readwrite|randrw)$/.test(p) ? { mix: readPct ?? 50 } : /read$/.test(p) ? 'read' : /write$/.test(p) ? 'write' : undefined;
      shape = { random, blockSizeBytes: block!, queueDepth: qd, threads, ...(direction ? { direction } : {}) };
    }
    const axes: Record<string, string | number> = {};
    let sourceName: string | undefined;
    columns.forEach((c, j) => {
      if (c.kind !== 'axis' || cell(j) === '') return;
      if (c.name === 'source') sourceName = cell(j);
      else axes[c.name] = NUMBER.test(cell(j)) ? Number(cell(j)) : cell(j);
    });
    const toolText = cell(idx('tool'));
    const tm = /^(.*?)\s+v?(\d[\w.-]*)$/.exec(toolText);
    const tool = toolText === '' ? { name: 'table', version: null } : tm ? { name: tm[1]!, version: tm[2]! } : { name: toolText, version: null };
    // one record per direction the row gives numbers for
    const dirs: Array<Dir | { mix: number }> = shape!.direction ? [shape!.direction] : ['read', 'write'];
    if (!shape!.direction && columns.some((c, j) => c.kind === 'metric' && c.dir === null && c.metric !== 'cpu' && cell(j) !== '')) {
      fail(n, `test "${excerpt(cell(testCol >= 0 ? testCol : idx('pattern')))}" does not say read or write, so its numbers go in read/write columns ("read MB/s", "write IOPS")`, 'read/write columns');
    }
    let made = 0;
    for (const d of dirs) {
      const dirName = typeof d === 'string' ? d : null;
      const metricCol = (metric: MetricName) => columns.findIndex((c) => c.kind === 'metric' && c.metric === metric && (c.dir === dirName || c.dir === null));
      const mibCol = metricCol('mibps');
      const mbps = mibCol >= 0 && cell(mibCol) !== '' ? cell(mibCol) : cell(metricCol('mbps'));
      const binary = mibCol >= 0 && cell(mibCol) !== '';
      const iops = num(metricCol('iops'), `${dirName ?? ''} IOPS`.trim());
      const latUs = num(metricCol('latUs'), 'latency');
      const latMs = num(metricCol('latMs'), 'latency');
      const cpu = num(metricCol('cpu'), 'cpu %');
      if (mbps !== '' && !NUMBER.test(mbps)) fail(n, `MB/s "${excerpt(mbps)}" is not a number (digits, "." for decimals, no thousands separator)`, 'a number');
      if (mbps === '' && iops === null) continue;
      const test = testOf(shape!, d);
      // MiB/s (IOMeter's "MBps (Binary)", fio's MiB/s) is 1,048,576 bytes/s; MB/s is 10^6 (CrystalDiskMark)
      const bytesPerSecond = mbps === '' ? iops! * test.blockSizeBytes : binary ? Number(mbps) * 1048576 : mbpsToBytesPerSecond(mbps);
      const disagree = mbps !== '' && iops !== null ? throughputWarning(bytesPerSecond, iops, test.blockSizeBytes, binary) : null;
      if (disagree) warnings.push(`${source}:${n}: ${disagree}`);
      const samples = num(idx('samples'), 'samples');
      if (!Number.isFinite(bytesPerSecond)) fail(n, `${mbps !== '' ? `MB/s "${excerpt(mbps)}"` : `IOPS ${iops} × ${test.blockSizeBytes} bytes`} is too large to be a measurement`, 'a number');
      const record = importedRecord(source, tool, {
        test,
        iops: iops ?? bytesPerSecond / test.blockSizeBytes,
        bytesPerSecond,
        latencyUs: { mean: latUs ?? (latMs === null ? null : latMs * 1000), p50: null, p95: null, p99: null, p999: null },
        cpuPercent: cpu,
        metadata: { format: TABLE_FORMAT, line: n, iopsDerived: iops === null, bytesPerSecondDerived: mbps === '', ...(samples !== null ? { samples } : {}) },
      });
      if (records.length + pending.length >= MAX_IMPORT_RECORDS) throw tooManyRecords(source, n, 'table rows');
      record.axes = { ...axes, ...record.axes };
      const perm = JSON.stringify([sourceName ?? null, Object.entries(axes).sort()]);
      if (!perms.has(perm)) perms.set(perm, perms.size + 1);
      pending.push({ record, perm, sourceName });
      made++;
    }
    if (made === 0) warnings.push(`${source}:${n}: row has no MB/s or IOPS value, ignored`);
  }
  if (pending.length === 0) fail(all.length, `the table has no row with an MB/s or IOPS value (columns: ${TABLE_COLUMNS})`, 'at least one result row');

  // one permutation per source and combination of axis values; a repeated test is a repetition
  const several = perms.size > 1;
  const shared = new Map<string, ResultRecord['axes']>();
  for (const { record, perm, sourceName } of pending) {
    const k = perms.get(perm)!;
    const src = sourceName ?? importSourceName(source);
    const axesKey = `${perm}`;
    let axes = shared.get(axesKey);
    if (!axes) shared.set(axesKey, (axes = { ...record.axes, source: src }));
    const permutationId = several ? `${record.permutationId}#${k}` : record.permutationId;
    const repKey = `${permutationId}\u0000${record.test.id}`;
    const repetition = (reps.get(repKey) ?? 0) + 1;
    reps.set(repKey, repetition);
    records.push({ ...record, axes, permutationId, repetition });
  }
  return { format: TABLE_FORMAT, records, warnings };
}

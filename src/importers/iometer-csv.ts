// IOMeter results CSV (1.1.x layout, and the older single "MBps" layout) → one record per test, from
// the row whose Target Type is ALL. Columns are found by header name, never by position, because the
// throughput columns differ between IOMeter builds (§8.8 of the reference).
//
// The test identity comes from the access specification block above the results: size, % reads,
// % random (a partly random spec becomes an `rnd<pct>-…` test), align (kept in the record's metadata:
// IOMeter aligns I/O to that many bytes, 0 = sector boundaries); queue depth from the DISK row's
// "Queue Depth", threads from the ALL row's "# Workers".
import { ParseError } from '../errors.ts';
import { testIdentity, type Pattern } from '../results/record.ts';
import { importedRecord, MAX_IMPORT_RECORDS, tooManyRecords, type ImportResult } from './import-result.ts';

export const IOMETER_FORMAT = 'iometer-csv';

export function looksLikeIometerCsv(text: string): boolean {
  return /^'Target Type,Target Name,Access Specification Name/m.test(text) || /^'Test Type,Test Description/m.test(text.slice(0, 500));
}

interface SubSpec {
  size: number;
  reads: number;
  random: number;
  /** bytes; 0 = sector boundaries (IOMeter AccessDialog.cpp) */
  align: number;
}

// IOMeter writes plain comma-separated values; a test description may itself contain commas, which
// is why that line is never split.
const split = (line: string) => line.split(',').map((c) => c.trim());

export function importIometerCsv(text: string, source: string): ImportResult {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  const warnings: string[] = [];
  const specs = new Map<string, SubSpec[]>();
  const records: ImportResult['records'] = [];
  let version: string | null = null;
  let timeStamp: string | null = null;
  let description: string | null = null;
  let header: string[] | null = null;
  let headerSeen = false;
  let currentSpec: string | null = null;
  let pendingAll: Array<{ cells: string[]; line: number }> = [];
  const queueDepth = new Map<string, number>();

  const col = (cells: string[], name: string): string | undefined => {
    const i = header?.indexOf(name) ?? -1;
    return i >= 0 ? cells[i] : undefined;
  };
  const numCol = (cells: string[], name: string): number | null => {
    const v = col(cells, name);
    return v === undefined || v === '' || !Number.isFinite(Number(v)) ? null : Number(v);
  };

  const flush = () => {
    for (const { cells, line } of pendingAll) {
      const name = col(cells, 'Access Specification Name') ?? '';
      const sub = specs.get(name);
      if (!sub || sub.length === 0) {
        warnings.push(`${source}:${line}: no access specification "${name}" above the results, row skipped`);
        continue;
      }
      if (sub.length > 1) warnings.push(`${source}:${line}: access specification "${name}" has ${sub.length} lines; using the first`);
      const s = sub[0] as SubSpec;
      // a partly random spec (IOMeter mixes seeks into a sequential stream) is its own test: rnd<pct>-…
      const rnd = s.random > 0;
      const partly = s.random > 0 && s.random < 100 ? { randomPercent: s.random } : {};
      const pattern: Pattern = s.reads === 100 ? (rnd ? 'randread' : 'read') : s.reads === 0 ? (rnd ? 'randwrite' : 'write') : rnd ? 'randrw' : 'rw';
      const test = testIdentity({
        pattern,
        blockSizeBytes: s.size,
        queueDepth: queueDepth.get(name) ?? 1,
        threads: numCol(cells, '# Workers') ?? 1,
        readPercent: s.reads,
        ...partly,
      });
      const decimal = numCol(cells, 'MBps (Decimal)');
      const binary = numCol(cells, 'MiBps (Binary)') ?? numCol(cells, 'MBps (Binary)') ?? numCol(cells, 'MBps');
      const bytesPerSecond = decimal !== null ? Math.round(decimal * 1e6) : binary !== null ? Math.round(binary * 1048576) : null;
      const respMs = numCol(cells, 'Average Response Time');
      if (!queueDepth.has(name)) warnings.push(`${source}:${line}: no DISK row with a Queue Depth for "${name}"; assuming 1`);
      if (records.length === MAX_IMPORT_RECORDS) throw tooManyRecords(source, line, 'IOMeter result rows');
      records.push(
        importedRecord(source, { name: 'iometer', version }, {
          test,
          iops: numCol(cells, 'IOps'),
          bytesPerSecond,
          latencyUs: { mean: respMs === null ? null : Math.round(respMs * 1e6) / 1e3, p50: null, p95: null, p99: null, p999: null },
          cpuPercent: numCol(cells, '% CPU Utilization'),
          metadata: { format: IOMETER_FORMAT, accessSpecification: name, line, timeStamp, description, alignBytes: s.align, ...(s.align === 0 ? { align: 'sector boundaries' } : {}) },
        }),
      );
    }
    pendingAll = [];
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const n = i + 1;
    const next = (lines[i + 1] ?? '').trim();
    if (line.startsWith("'")) {
      const tag = line.slice(1).trim();
      if (tag === 'Version') version = next || null;
      else if (tag === 'Time Stamp') timeStamp = next || null;
      else if (tag === 'Test Type,Test Description') description = next.replace(/^\d+,/, '') || null;
      else if (tag === 'Access specification name,default assignment') currentSpec = split(next)[0] ?? null;
      else if (tag.startsWith('Target Type,')) {
        header = split(tag);
        headerSeen = true;
        for (const required of ['Access Specification Name', 'IOps']) {
          if (!header.includes(required)) throw new ParseError(`${source}:${n}: IOMeter results header has no "${required}" column`, { source, line: n, expected: required });
        }
      } else if (tag === 'Results') flush();
      else if (tag === 'End Test' || tag === 'Access specifications') {
        // a file holds one block per test; the next block starts with its own access specifications
        flush();
        header = null;
      }
      continue;
    }
    const cells = split(line);
    if (currentSpec !== null && /^\d+$/.test(cells[0] ?? '') && cells.length >= 4 && header === null) {
      // 'size,% of size,% reads,% random,delay,burst,align,reply (IOMeter AccessSpecList.cpp)
      const [size, , reads, random, , , align] = cells.map(Number);
      const list = specs.get(currentSpec) ?? [];
      list.push({ size: size ?? 0, reads: reads ?? 0, random: random ?? 0, align: Number.isFinite(align) ? align! : 0 });
      specs.set(currentSpec, list);
      continue;
    }
    if (header === null || line.trim() === '') continue;
    if (cells.length < Math.min(header.length, 10)) {
      warnings.push(`${source}:${n}: results row has ${cells.length} of ${header.length} columns (truncated?), ignored`);
      continue;
    }
    const type = cells[0];
    const spec = col(cells, 'Access Specification Name') ?? '';
    if (type === 'ALL') pendingAll.push({ cells, line: n });
    else if (type === 'DISK' && !queueDepth.has(spec)) {
      const qd = numCol(cells, 'Queue Depth');
      if (qd !== null && qd > 0) queueDepth.set(spec, qd);
    }
  }
  flush();
  if (!headerSeen) {
    throw new ParseError(`${source}: no IOMeter results header ("'Target Type,Target Name,Access Specification Name,…") found`, {
      source,
      expected: 'IOMeter results CSV',
    });
  }
  if (records.length === 0) {
    throw new ParseError(`${source}:${lines.length}: IOMeter results have no ALL row that could be read`, { source, line: lines.length, expected: 'a row with Target Type ALL' });
  }
  return { format: IOMETER_FORMAT, records, warnings };
}

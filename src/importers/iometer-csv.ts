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
  const p = new IometerFile(source);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const next = (lines[i + 1] ?? '').trim();
    if (line.startsWith("'")) p.tagLine(line.slice(1).trim(), next, i + 1);
    else p.dataLine(line, i + 1);
  }
  p.flush();
  if (!p.headerSeen) {
    throw new ParseError(`${source}: no IOMeter results header ("'Target Type,Target Name,Access Specification Name,…") found`, {
      source,
      expected: 'IOMeter results CSV',
    });
  }
  if (p.records.length === 0) {
    throw new ParseError(`${source}:${lines.length}: IOMeter results have no ALL row that could be read`, { source, line: lines.length, expected: 'a row with Target Type ALL' });
  }
  return { format: IOMETER_FORMAT, records: p.records, warnings: p.warnings };
}

/** An IOMeter results file as it is read, line by line: its access specifications, its current results header, its records. */
class IometerFile {
  readonly warnings: string[] = [];
  readonly records: ImportResult['records'] = [];
  headerSeen = false;
  private readonly specs = new Map<string, SubSpec[]>();
  private version: string | null = null;
  private timeStamp: string | null = null;
  private description: string | null = null;
  private header: string[] | null = null;
  private currentSpec: string | null = null;
  private pendingAll: Array<{ cells: string[]; line: number }> = [];
  private readonly queueDepth = new Map<string, number>();

  constructor(private readonly source: string) {}

  private col(cells: string[], name: string): string | undefined {
    const i = this.header?.indexOf(name) ?? -1;
    return i >= 0 ? cells[i] : undefined;
  }

  private numCol(cells: string[], name: string): number | null {
    const v = this.col(cells, name);
    return v === undefined || v === '' || !Number.isFinite(Number(v)) ? null : Number(v);
  }

  /** A line starting with ' names what the next line holds. */
  tagLine(tag: string, next: string, n: number): void {
    if (tag === 'Version') this.version = next || null;
    else if (tag === 'Time Stamp') this.timeStamp = next || null;
    else if (tag === 'Test Type,Test Description') this.description = next.replace(/^\d+,/, '') || null;
    else if (tag === 'Access specification name,default assignment') this.currentSpec = split(next)[0] ?? null;
    else if (tag.startsWith('Target Type,')) {
      this.header = split(tag);
      this.headerSeen = true;
      for (const required of ['Access Specification Name', 'IOps']) {
        if (!this.header.includes(required)) throw new ParseError(`${this.source}:${n}: IOMeter results header has no "${required}" column`, { source: this.source, line: n, expected: required });
      }
    } else if (tag === 'Results') this.flush();
    else if (tag === 'End Test' || tag === 'Access specifications') {
      // a file holds one block per test; the next block starts with its own access specifications
      this.flush();
      this.header = null;
    }
  }

  /** An access specification line, or a results row (ALL rows kept for the next flush; DISK rows give the queue depth). */
  dataLine(line: string, n: number): void {
    const { header } = this;
    const cells = split(line);
    if (this.currentSpec !== null && /^\d+$/.test(cells[0] ?? '') && cells.length >= 4 && header === null) {
      // 'size,% of size,% reads,% random,delay,burst,align,reply (IOMeter AccessSpecList.cpp)
      const [size, , reads, random, , , align] = cells.map(Number);
      const list = this.specs.get(this.currentSpec) ?? [];
      list.push({ size: size ?? 0, reads: reads ?? 0, random: random ?? 0, align: Number.isFinite(align) ? align! : 0 });
      this.specs.set(this.currentSpec, list);
      return;
    }
    if (header === null || line.trim() === '') return;
    if (cells.length < Math.min(header.length, 10)) {
      this.warnings.push(`${this.source}:${n}: results row has ${cells.length} of ${header.length} columns (truncated?), ignored`);
      return;
    }
    const type = cells[0];
    const spec = this.col(cells, 'Access Specification Name') ?? '';
    if (type === 'ALL') this.pendingAll.push({ cells, line: n });
    else if (type === 'DISK' && !this.queueDepth.has(spec)) {
      const qd = this.numCol(cells, 'Queue Depth');
      if (qd !== null && qd > 0) this.queueDepth.set(spec, qd);
    }
  }

  /** The ALL rows read since the last flush become records, each with its access specification. */
  flush(): void {
    const { source } = this;
    for (const { cells, line } of this.pendingAll) {
      const name = this.col(cells, 'Access Specification Name') ?? '';
      const sub = this.specs.get(name);
      if (!sub || sub.length === 0) {
        this.warnings.push(`${source}:${line}: no access specification "${name}" above the results, row skipped`);
        continue;
      }
      if (sub.length > 1) this.warnings.push(`${source}:${line}: access specification "${name}" has ${sub.length} lines; using the first`);
      if (!this.queueDepth.has(name)) this.warnings.push(`${source}:${line}: no DISK row with a Queue Depth for "${name}"; assuming 1`);
      if (this.records.length === MAX_IMPORT_RECORDS) throw tooManyRecords(source, line, 'IOMeter result rows');
      this.records.push(this.recordOf(cells, line, name, sub[0] as SubSpec));
    }
    this.pendingAll = [];
  }

  private recordOf(cells: string[], line: number, name: string, s: SubSpec): ImportResult['records'][number] {
    // a partly random spec (IOMeter mixes seeks into a sequential stream) is its own test: rnd<pct>-…
    const rnd = s.random > 0;
    const partly = s.random > 0 && s.random < 100 ? { randomPercent: s.random } : {};
    const pattern: Pattern = s.reads === 100 ? (rnd ? 'randread' : 'read') : s.reads === 0 ? (rnd ? 'randwrite' : 'write') : rnd ? 'randrw' : 'rw';
    const test = testIdentity({
      pattern,
      blockSizeBytes: s.size,
      queueDepth: this.queueDepth.get(name) ?? 1,
      threads: this.numCol(cells, '# Workers') ?? 1,
      readPercent: s.reads,
      ...partly,
    });
    const decimal = this.numCol(cells, 'MBps (Decimal)');
    const binary = this.numCol(cells, 'MiBps (Binary)') ?? this.numCol(cells, 'MBps (Binary)') ?? this.numCol(cells, 'MBps');
    const bytesPerSecond = decimal !== null ? Math.round(decimal * 1e6) : binary !== null ? Math.round(binary * 1048576) : null;
    const respMs = this.numCol(cells, 'Average Response Time');
    return importedRecord(this.source, { name: 'iometer', version: this.version }, {
      test,
      iops: this.numCol(cells, 'IOps'),
      bytesPerSecond,
      latencyUs: { mean: respMs === null ? null : Math.round(respMs * 1e6) / 1e3, p50: null, p95: null, p99: null, p999: null },
      cpuPercent: this.numCol(cells, '% CPU Utilization'),
      metadata: { format: IOMETER_FORMAT, accessSpecification: name, line, timeStamp: this.timeStamp, description: this.description, alignBytes: s.align, ...(s.align === 0 ? { align: 'sector boundaries' } : {}) },
    });
  }
}

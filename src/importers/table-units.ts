// What a typed-in results table may say beyond CrystalDiskMark's labels (issue 30): an IOMeter access
// spec as the test label (`32k 100% read 0% random`), and a check that its MB/s and IOPS agree.
//
// Units. CrystalDiskMark's MB/s is decimal (10^6 bytes/s; real-product-rules.md §7, "MB/s = 1,000,000
// byte/s" in its own text export). IOMeter prints both: its results CSV has the columns
// `MBps (Binary)` (2^20 bytes/s) and `MBps (Decimal)`, and IOMeter before 1.1 printed one `MBps`
// that is binary (IOMeter 1.1.0 results CSV header, test/fixtures/iometer/iometer-1.1.0-results.csv;
// src/importers/iometer-csv.ts). A paper that copies IOMeter's number under a "MB/s" heading is off by
// 4.9 %, which IOPS × block size shows.
import { iometerSpec, looksLikeIometerSpec } from '../workloads/iometer-spec.ts';

/** A test's shape as the table reads it (table-csv.ts `Shape`). */
export interface LabelShape {
  random: boolean;
  blockSizeBytes: number;
  queueDepth: number;
  threads: number;
  direction?: 'read' | 'write' | { mix: number };
}

/** An IOMeter access spec as a test label, or null when the label is none. */
export function iometerLabel(label: string): LabelShape | null {
  if (!looksLikeIometerSpec(label)) return null;
  let t;
  try {
    t = iometerSpec(label);
  } catch {
    return null;
  }
  const direction: LabelShape['direction'] = t.readPercent === 100 ? 'read' : t.readPercent === 0 ? 'write' : { mix: t.readPercent };
  return { random: t.pattern.startsWith('rand'), blockSizeBytes: t.blockSizeBytes, queueDepth: t.queueDepth, threads: t.threads, direction };
}

/** Beyond this the MB/s and IOPS of one row are not the same measurement read in one unit. */
export const THROUGHPUT_TOLERANCE_PCT = 2;

const BINARY = 1048576 / 1e6;

/**
 * A warning when a row's bytes/s and IOPS × block size disagree by more than 2 %, naming the
 * likely cause when the ratio is the one between binary and decimal megabytes.
 */
export function throughputWarning(bytesPerSecond: number, iops: number, blockSizeBytes: number, binary: boolean): string | null {
  const fromIops = iops * blockSizeBytes;
  if (fromIops <= 0 || bytesPerSecond <= 0) return null;
  const ratio = fromIops / bytesPerSecond;
  const pct = (ratio - 1) * 100;
  if (Math.abs(pct) <= THROUGHPUT_TOLERANCE_PCT) return null;
  const said = `${binary ? 'MiB/s' : 'MB/s'} ${(bytesPerSecond / (binary ? 1048576 : 1e6)).toFixed(3)} and IOPS ${iops} × ${blockSizeBytes} bytes disagree by ${pct > 0 ? '+' : ''}${pct.toFixed(1)} %`;
  if (!binary && Math.abs(ratio - BINARY) < 0.01) return `${said}: the MB/s looks binary (IOMeter's "MBps (Binary)", 1,048,576 bytes/s); if so, head the column "MiB/s"`;
  if (binary && Math.abs(ratio - 1 / BINARY) < 0.01) return `${said}: the MiB/s looks decimal (10^6 bytes/s); if so, head the column "MB/s"`;
  return `${said} (more than ${THROUGHPUT_TOLERANCE_PCT} %); the MB/s is kept`;
}

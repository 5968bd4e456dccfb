// diskspd `-Rxml` output → one record per result <TimeSpan>. The test identity comes from the
// profile echo in the same file (block size, -o, threads, write ratio, random), so imported runs line
// up with storsweep's own canonical ids.
import { ParseError } from '../errors.ts';
import { LATENCY_SPAN } from '../results/record.ts';
import { parseDiskspdXml } from '../workloads/diskspd.ts';
import { importedRecord, type ImportResult } from './import-result.ts';
import { halfFacts, isMixed, mixHalves } from '../results/mix-halves.ts';

export const DISKSPD_FORMAT = 'diskspd-xml';

export function looksLikeDiskspdXml(text: string): boolean {
  const head = text.slice(0, 4000);
  return /<Results>/.test(head) && /<(System|Profile|TimeSpan)>/.test(head);
}

export function importDiskspdXml(text: string, source: string): ImportResult {
  const result = parseDiskspdXml(text, source);
  const warnings: string[] = [];
  const records = result.timeSpans.flatMap((span, i) => {
    if (span.test === null) {
      warnings.push(`${source}: result TimeSpan ${i + 1} has no matching <Profile> target (block size, queue depth), skipped`);
      return [];
    }
    const total = importedRecord(source, { name: 'diskspd', version: result.version }, {
        test: span.test,
        iops: span.total.iops,
        bytesPerSecond: span.total.bytesPerSecond,
        latencyUs: span.total.latencyUs,
        cpuPercent: span.cpuPercent,
        metadata: {
          format: DISKSPD_FORMAT,
          timeSpan: i + 1,
          testTimeSeconds: span.testTimeSeconds,
          threadCount: span.threadCount,
          bytes: span.total.bytes,
          ios: span.total.ios,
          computerName: result.computerName,
          runTime: result.runTime,
          latencySpan: LATENCY_SPAN,
          ...(isMixed(span.test) ? halfFacts(span.read, span.write) : {}),
        },
      });
    // -w<pct>: the job's reads and writes beside its total (results/mix-halves.ts)
    return [total, ...mixHalves(total)];
  });
  if (records.length === 0) {
    throw new ParseError(`${source}: diskspd XML has results but no profile to name the test`, { source, expected: '<Profile><TimeSpans><TimeSpan><Targets><Target>' });
  }
  return { format: DISKSPD_FORMAT, records, warnings };
}

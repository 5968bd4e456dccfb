// DiskSpd (Windows guests): the command line CrystalDiskMark 5–8 builds, and the reader for its
// `-Rxml` output. Flag grammar and XML layout: microsoft/diskspd CmdLineParser.cpp and
// XmlResultParser.cpp.
import { xmlParser } from '../input/xml-parser.ts';
import { InvalidArgument, ParseError } from '../errors.ts';
import { testIdentity, type LatencyUs, type Pattern, type TestIdentity } from '../results/record.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';
import { rawTestTarget } from './test-target.ts';
import { diskspdSize } from './diskspd-size.ts';
import { diskspdWriteFlag } from './write-data.ts';

export { diskspdSize } from './diskspd-size.ts';

// Targets diskspd accepts: a path, `#<disk number>`, or `<drive letter>:`. Anything that could be read
// as a flag, or that carries control characters, is refused before it reaches a command line.
/** Why diskspd would misread `target`, or null when it is a target diskspd takes as one. */
export function diskspdTargetProblem(target: string): string | null {
  // diskspd reads arguments starting with '-' or '/' as flags
  if (target === '' || target.startsWith('-') || target.startsWith('/')) return 'must be a file path, #<disk number> or <drive letter>:';
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f-\x9f"]/.test(target)) return 'must not contain a control character or quote';
  return null;
}

function checkTarget(target: string): void {
  const problem = diskspdTargetProblem(target);
  if (problem) throw new InvalidArgument(`diskspd target ${JSON.stringify(target)} ${problem}`, { name: 'target', value: target });
}

/**
 * One pass of one test as a diskspd argument vector (without the program name), e.g.
 * `-b4K -o32 -t1 -r -w0 -d5 -W0 -S -L -Rxml D:\bench\cdm.dat`.
 * `-S` as CrystalDiskMark 5–8 pass it (`-W0 -S -w0`, DiskBench.cpp `DiskSpd()`): no OS cache
 * (FILE_FLAG_NO_BUFFERING), no forced write-through — `-Sh` would add FILE_FLAG_WRITE_THROUGH and make
 * writes incomparable with fio's direct=1 (diskspd CmdLineParser.cpp usage: `-S` = `-Su`, `-Sh` = `-Suw`).
 * Writes get `-Z<block>` (a random source buffer of one block, as CrystalDiskMark 8 passes) so that
 * storage that compresses is not measured on diskspd's default repeating byte pattern; with
 * `writeData: unique` a large random buffer instead (write-data.ts diskspdWriteFlag). A test's own
 * `-Z…` wins.
 */
export function diskspdArgs(test: WorkloadTest, profile: WorkloadProfile, opts: { target: string }): string[] {
  checkTarget(opts.target);
  const extra = test.diskspdOptions ?? [];
  const has = (re: RegExp) => extra.some((o) => re.test(o));
  const random = test.pattern === 'randread' || test.pattern === 'randwrite' || test.pattern === 'randrw';
  const writePct = 100 - test.readPercent;
  const args = [`-b${diskspdSize(test.blockSizeBytes)}`, `-o${test.queueDepth}`, `-t${test.threads}`];
  if (random) args.push('-r');
  // several threads on one sequential target would each start at offset 0; -si shares one offset
  else if (test.threads > 1 && !has(/^-s/)) args.push('-si');
  args.push(`-w${writePct}`, `-d${profile.runtimeSec}`, `-W${profile.rampSec}`);
  if (profile.direct && !has(/^-(S|h$)/)) args.push('-S');
  if (writePct > 0 && !has(/^-Z/)) args.push(diskspdWriteFlag(profile, test.blockSizeBytes));
  // thread affinity as the CrystalDiskMark version passes it (WorkloadProfile.diskspdAffinity)
  if (profile.diskspdAffinity && !has(/^-(n|a)/)) args.push(profile.diskspdAffinity === 'none' ? '-n' : '-ag');
  // No -c: diskspd re-creates a file with every -c (SetFileValidData, no data written), which would
  // undo the fill before each pass; the file is created and filled once by the pre-fill step
  // (prefill.ts). A raw target (#N, X:) is bounded to the test region the fill wrote with -f.
  if (rawTestTarget(opts.target, 'diskspd') !== undefined && !has(/^-f\d/)) args.push(`-f${diskspdSize(profile.fileSizeBytes)}`);
  args.push(...extra, '-L', '-Rxml', opts.target);
  return args;
}

export interface DiskspdDirection {
  bytes: number;
  ios: number;
  bytesPerSecond: number;
  iops: number;
  latencyUs: LatencyUs;
}

export interface DiskspdTimeSpan {
  /** what the profile echo says was run (block, -o, -t, -w, -r); null when the echo is missing */
  test: TestIdentity | null;
  testTimeSeconds: number;
  threadCount: number;
  total: DiskspdDirection;
  read: DiskspdDirection;
  write: DiskspdDirection;
  /** average over all processors, `<CpuUtilization><Average><UsagePercent>` */
  cpuPercent: number | null;
}

export interface DiskspdResult {
  version: string | null;
  computerName: string | null;
  runTime: string | null;
  timeSpans: DiskspdTimeSpan[];
}

type Node = Record<string, unknown>;

const ARRAYS = new Set(['Results.TimeSpan', 'Results.TimeSpan.Thread', 'Results.TimeSpan.Thread.Target', 'Results.TimeSpan.Latency.Bucket',
  'Results.Profile.TimeSpans.TimeSpan', 'Results.Profile.TimeSpans.TimeSpan.Targets.Target']);

function child(n: unknown, key: string): unknown {
  return n !== null && typeof n === 'object' ? (n as Node)[key] : undefined;
}
function text(n: unknown): string | null {
  if (typeof n === 'string') return n.trim();
  const t = child(n, '#text');
  return typeof t === 'string' ? t.trim() : null;
}
function list(n: unknown): unknown[] {
  return Array.isArray(n) ? n : n === undefined ? [] : [n];
}

function num(n: unknown, what: string, source: string, required: true): number;
function num(n: unknown, what: string, source: string, required: false): number | null;
function num(n: unknown, what: string, source: string, required: boolean): number | null {
  const t = text(n);
  if (t === null || t === '') {
    if (required) throw new ParseError(`${source}: diskspd XML has no <${what}>`, { source, expected: `<${what}>` });
    return null;
  }
  const v = Number(t);
  if (!Number.isFinite(v)) throw new ParseError(`${source}: diskspd XML <${what}> is "${t}", not a number`, { source, expected: 'a number' });
  return v;
}

// ms with 3 decimals → µs without binary-float noise (0.123 ms → 123, not 123.00000000000001)
const msToUs = (ms: number | null) => (ms === null ? null : Math.round(ms * 1e6) / 1e3);

function latencyFrom(lat: unknown, kind: 'Read' | 'Write' | 'Total', source: string): LatencyUs {
  const byPct = new Map<string, number>();
  for (const b of list(child(lat, 'Bucket'))) {
    const p = text(child(b, 'Percentile'));
    const v = num(child(b, `${kind}Milliseconds`), `${kind}Milliseconds`, source, false);
    if (p !== null && v !== null) byPct.set(String(Number(p)), v);
  }
  const meanKey = kind === 'Total' ? 'AverageTotalMilliseconds' : `Average${kind}Milliseconds`;
  const pick = (p: string) => msToUs(byPct.get(p) ?? null);
  return { mean: msToUs(num(child(lat, meanKey), meanKey, source, false)), p50: pick('50'), p95: pick('95'), p99: pick('99'), p999: pick('99.9') };
}

function identityFromProfile(profileSpan: unknown, resultThreads: number): TestIdentity | null {
  const target = list(child(child(profileSpan, 'Targets'), 'Target'))[0];
  if (target === undefined) return null;
  const block = Number(text(child(target, 'BlockSize')));
  const qd = Number(text(child(target, 'RequestCount')));
  const writeRatio = Number(text(child(target, 'WriteRatio')) ?? '0');
  const perFile = Number(text(child(target, 'ThreadsPerFile')) ?? '0');
  const spanThreads = Number(text(child(profileSpan, 'ThreadCount')) ?? '0');
  const threads = spanThreads > 0 ? spanThreads : perFile > 0 ? perFile : resultThreads;
  if (!(block > 0) || !(qd > 0) || !(threads > 0) || !(writeRatio >= 0 && writeRatio <= 100)) return null;
  const random = child(target, 'Random') !== undefined;
  // -rs<pct> (1–99) writes <RandomRatio> next to <Random>; -r alone (100%) writes no <RandomRatio>
  // (diskspd Common.cpp Target::GetXml: "100% random is <Random> alone").
  const ratioText = text(child(target, 'RandomRatio'));
  const ratio = ratioText === null ? null : Number(ratioText);
  const partly = random && ratio !== null && Number.isInteger(ratio) && ratio > 0 && ratio < 100 ? ratio : undefined;
  const readPercent = 100 - writeRatio;
  const pattern: Pattern = readPercent === 100 ? (random ? 'randread' : 'read') : readPercent === 0 ? (random ? 'randwrite' : 'write') : random ? 'randrw' : 'rw';
  return testIdentity({ pattern, blockSizeBytes: block, queueDepth: qd, threads, readPercent, ...(partly !== undefined ? { randomPercent: partly } : {}) });
}

/**
 * Reads `diskspd -Rxml` output. Per-thread targets are summed; bytes/s = bytes / TestTimeSeconds (decimal,
 * as diskspd prints no MB/s of its own); latency percentiles come from `<Latency><Bucket>` (needs -L).
 */
export function parseDiskspdXml(xml: string, source: string): DiskspdResult {
  const start = xml.indexOf('<Results');
  if (start < 0) {
    throw new ParseError(`${source}: not diskspd XML output (no <Results> element)`, { source, expected: 'diskspd -Rxml output' });
  }
  if (!/<\/Results>\s*$/.test(xml)) {
    const line = xml.split('\n').length;
    throw new ParseError(`${source}:${line}: diskspd XML ends before </Results> (truncated?)`, { source, line, expected: '</Results>' });
  }
  const parser = xmlParser({
    processEntities: false,
    parseTagValue: false,
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    isArray: (_name, jpath) => ARRAYS.has(String(jpath)),
  });
  let doc: Node;
  try {
    doc = parser.parse(xml.slice(start)) as Node;
  } catch (err) {
    throw new ParseError(`${source}: diskspd XML is not well-formed: ${(err as Error).message}`, { source, expected: 'well-formed XML' }, { cause: err });
  }
  const results = doc['Results'];
  const system = child(results, 'System');
  const profileSpans = list(child(child(child(results, 'Profile'), 'TimeSpans'), 'TimeSpan'));
  const timeSpans: DiskspdTimeSpan[] = [];
  const errors: string[] = [];
  list(child(results, 'TimeSpan')).forEach((span, i) => {
    const err = text(child(span, 'Error'));
    if (err !== null) {
      errors.push(err);
      return;
    }
    const secs = num(child(span, 'TestTimeSeconds'), 'TestTimeSeconds', source, true);
    const threadCount = num(child(span, 'ThreadCount'), 'ThreadCount', source, false) ?? 0;
    let readBytes = 0, writeBytes = 0, readIos = 0, writeIos = 0;
    for (const thread of list(child(span, 'Thread'))) {
      for (const target of list(child(thread, 'Target'))) {
        readBytes += num(child(target, 'ReadBytes'), 'ReadBytes', source, true);
        writeBytes += num(child(target, 'WriteBytes'), 'WriteBytes', source, true);
        readIos += num(child(target, 'ReadCount'), 'ReadCount', source, true);
        writeIos += num(child(target, 'WriteCount'), 'WriteCount', source, true);
      }
    }
    const lat = child(span, 'Latency');
    const dir = (bytes: number, ios: number, kind: 'Read' | 'Write' | 'Total'): DiskspdDirection => ({
      bytes,
      ios,
      bytesPerSecond: secs > 0 ? bytes / secs : 0,
      iops: secs > 0 ? ios / secs : 0,
      latencyUs: latencyFrom(lat, kind, source),
    });
    timeSpans.push({
      test: identityFromProfile(profileSpans[i], threadCount),
      testTimeSeconds: secs,
      threadCount,
      total: dir(readBytes + writeBytes, readIos + writeIos, 'Total'),
      read: dir(readBytes, readIos, 'Read'),
      write: dir(writeBytes, writeIos, 'Write'),
      cpuPercent: num(child(child(child(span, 'CpuUtilization'), 'Average'), 'UsagePercent'), 'UsagePercent', source, false),
    });
  });
  if (timeSpans.length === 0) {
    const why = errors.length > 0 ? `diskspd reported: ${errors.join('; ')}` : 'it has no result <TimeSpan>';
    throw new ParseError(`${source}: no measurements in diskspd XML: ${why}`, { source, expected: '<TimeSpan> with <TestTimeSeconds>' });
  }
  return {
    version: text(child(child(system, 'Tool'), 'Version')),
    computerName: text(child(system, 'ComputerName')),
    runTime: text(child(system, 'RunTime')),
    timeSpans,
  };
}

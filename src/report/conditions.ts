// The conditions each source was measured under, as its records say them: file size, passes and
// their length, warm-up, how passes combine, pre-fill, tool and version, the data the writes and the
// fill carried (workloads/write-data.ts), every `--set` the run was
// given, the replication unit, and for an import what its header says (CrystalDiskMark's
// "Test: 2000 MB (x5)", OS, date). A 16 MiB, one-second lab run and a 1 GiB × 5-pass study must not
// look alike in a report: comparing sources measured differently is a warning at the comparison,
// naming each difference. Pure: reads record metadata (run/executor.ts conditionFacts and
// prefillFacts; the importers' metadata), never a file.
import type { ResultRecord } from '../results/record.ts';
import type { RunInfo } from './run-info.ts';

type Metadata = NonNullable<ResultRecord['metadata']>;
type Unit = NonNullable<RunInfo['replication']>;

/** How one permutation was measured; null where its records do not say. */
export interface Conditions {
  kind: 'run' | 'import';
  fileSize: string | null;
  /** the size in bytes where known, to tell 16 MiB from 16m and 1 GiB from 1024 MiB */
  fileSizeBytes: number | null;
  passes: string | null;
  warmup: string | null;
  prefill: string | null;
  prefillDone: boolean | null;
  /** the fills' throughput, bytes/s (the first write: first-write.ts) */
  fills: readonly number[];
  tool: string | null;
  /** what the writes carried (workloads/write-data.ts DataClass), and the fill's; null where not stated */
  dataPattern: string | null;
  prefillData: string | null;
  /** the same, in words: flags and what they write */
  writeData: string | null;
  /** `--set key=value` as the run was given them (a run's records only) */
  overrides: string[];
  replication: string;
  /** an import's header lines (CrystalDiskMark: Test, Time, OS, Date, …) */
  header: string[];
}

/** What the report keeps of a permutation to say its conditions. */
export interface ConditionInput {
  metadata: Metadata | undefined;
  tool: ResultRecord['tool'];
  /** its fills' throughput, bytes/s (first-write.ts), one per fill */
  fills: readonly number[];
  /** tests whose first measured pass started on never-written space (metadata.unwrittenAtStart) */
  unwritten: readonly string[];
  replication: Unit;
}

const num = (m: Metadata, k: string): number | null => (typeof m[k] === 'number' && Number.isFinite(m[k]) ? m[k] : null);
const text = (m: Metadata, k: string): string | null => (typeof m[k] === 'string' && m[k] !== '' ? m[k] : null);

/** 16777216 → 16 MiB, 1073741824 → 1 GiB, 1536 KiB → 1.5 MiB. */
export function binaryBytes(n: number): string {
  for (const [unit, size] of [['TiB', 1024 ** 4], ['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (n >= size) return `${Number((n / size).toFixed(2))} ${unit}`;
  }
  return `${n} bytes`;
}

/**
 * A size as an export prints it (`2000 MB`, `1024 MiB`, `1 GiB`) in bytes, binary: CrystalDiskMark
 * 2.2's "1000 MB" is MiB-based (thesnow Code/CPP/CrystalDiskMark/DiskBench.cpp; 3.0 unverified), 5.x on
 * print MiB/GiB. Only used to tell two sizes apart.
 */
export function exportSizeBytes(s: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(K|M|G|T)i?B$/i.exec(s.trim());
  if (!m) return null;
  return Number(m[1]) * 1024 ** ({ K: 1, M: 2, G: 3, T: 4 }[m[2]!.toUpperCase() as 'K' | 'M' | 'G' | 'T']);
}

const COMBINE: Record<string, string> = { max: 'best of', mean: 'mean of', median: 'median of', last: 'last of' };

/** `1 × 1 s`, `5 × 5 s, best of 5`, `5 passes, best of 5` (length not stated). */
export function passesText(count: number | null, sec: number | null, aggregate: string | null): string | null {
  if (count === null) return null;
  const head = sec !== null ? `${count} × ${sec} s` : `${count} pass${count === 1 ? '' : 'es'}`;
  if (count === 1) return head;
  return `${head}, ${aggregate !== null ? `${COMBINE[aggregate] ?? aggregate} ${count}` : 'combined as not stated'}`;
}

const UNIT_TEXT: Record<Unit, string> = {
  'within-provisioning': 'within one provisioning (repetitions back to back on the same datastore and disk)',
  'between-provisionings': 'between provisionings (each repetition on freshly provisioned objects)',
  mixed: 'mixed',
  unknown: 'not stated',
};

/** The fills' throughput: `812.3 MB/s`, or `612.5–812.3 MB/s over 6 fills`. */
function mbps(xs: readonly number[]): string {
  const v = xs.map((x) => x / 1e6);
  const fmt = (x: number) => Number(x.toPrecision(4)).toString();
  if (v.length === 1) return `${fmt(v[0]!)} MB/s`;
  return `${fmt(Math.min(...v))}–${fmt(Math.max(...v))} MB/s over ${v.length} fills`;
}

/** `fio-3.33` (fio names itself), `diskspd 2.1`. */
function toolText(t: ResultRecord['tool']): string {
  if (!t.version) return t.name;
  return t.version.toLowerCase().startsWith(t.name.toLowerCase()) ? t.version : `${t.name} ${t.version}`;
}

/**
 * What the writes carried, as the records say (run/executor.ts from workloads/write-data.ts): the
 * tests' class and the fill's, and both in words. An export does not say (CrystalDiskMark's buffer
 * is its own business): null, no difference.
 */
function dataConditions(m: Metadata): Pick<Conditions, 'dataPattern' | 'prefillData' | 'writeData'> {
  const tests = text(m, 'dataPatternDetail');
  const fill = text(m, 'prefillDataDetail');
  const parts = [...(tests !== null ? [`tests: ${tests}`] : []), ...(fill !== null ? [`fill: ${fill}`] : [])];
  return { dataPattern: text(m, 'dataPattern'), prefillData: text(m, 'prefillData'), writeData: parts.length > 0 ? parts.join('; ') : null };
}

function runConditions(m: Metadata, c: ConditionInput): Conditions {
  const size = num(m, 'fileSizeBytes');
  const warmSec = num(m, 'warmupPassSec');
  const warm = m['warmupPass'] === true ? `one unscored${warmSec !== null ? ` ${warmSec} s` : ''} pass before each test` : m['warmupPass'] === false ? 'none' : null;
  const ramp = num(m, 'rampSec');
  const done = typeof m['prefill'] === 'boolean' ? m['prefill'] : null;
  const bytes = num(m, 'prefillBytes');
  let prefill: string | null = null;
  if (done === true) prefill = `done: ${bytes !== null ? binaryBytes(bytes) : 'the region'} written once before the first pass`;
  else if (done === false) prefill = `not done${c.unwritten.length > 0 ? `; first pass on never-written space: ${c.unwritten.join(', ')}` : ''}`;
  return {
    kind: 'run',
    fileSize: size !== null ? binaryBytes(size) : null,
    fileSizeBytes: size,
    passes: passesText(num(m, 'passes'), num(m, 'passSec'), text(m, 'aggregate')),
    warmup: warm === null ? null : ramp !== null && ramp > 0 ? `${warm}; ${ramp} s ramp per pass` : warm,
    prefill,
    prefillDone: done,
    fills: c.fills,
    tool: toolText(c.tool),
    ...dataConditions(m),
    overrides: Object.keys(m)
      .filter((k) => k.startsWith('set:'))
      .map((k) => `${k.slice(4)}=${String(m[k])}`),
    replication: UNIT_TEXT[c.replication],
    header: [],
  };
}

/** An export's header as it printed it: CrystalDiskMark's Test/Time/OS/Date/Profile/Comment, fio's time, diskspd's computer and run time. */
function headerLines(m: Metadata): string[] {
  const out: string[] = [];
  const size = text(m, 'testSize');
  const passes = num(m, 'passes');
  if (size !== null) out.push(`Test: ${size}${passes !== null ? ` (x${passes})` : ''}`);
  const measure = num(m, 'measureSec');
  const interval = num(m, 'intervalSec');
  if (measure !== null || interval !== null) out.push(`Time: ${measure !== null ? `measure ${measure} s` : ''}${measure !== null && interval !== null ? ' / ' : ''}${interval !== null ? `interval ${interval} s` : ''}`);
  for (const [key, name] of [['profile', 'Profile'], ['os', 'OS'], ['date', 'Date'], ['comment', 'Comment'], ['time', 'Time'], ['computerName', 'Computer'], ['runTime', 'Run time'], ['timeStamp', 'Time stamp']] as const) {
    const v = text(m, key);
    if (v !== null) out.push(`${name}: ${v}`);
  }
  return out;
}

function importConditions(m: Metadata, c: ConditionInput): Conditions {
  const size = text(m, 'testSize');
  const edition = text(m, 'edition');
  const version = c.tool.version ?? text(m, 'cdmVersion');
  return {
    kind: 'import',
    fileSize: size,
    fileSizeBytes: size !== null ? exportSizeBytes(size) : null,
    passes: passesText(num(m, 'passes') ?? (num(m, 'testTimeSeconds') !== null ? 1 : null), num(m, 'measureSec') ?? num(m, 'testTimeSeconds'), text(m, 'aggregate')),
    warmup: null,
    prefill: null,
    prefillDone: null,
    fills: [],
    tool: `${c.tool.name}${version ? ` ${version}` : ''}${edition ? ` (${edition})` : ''}`,
    ...dataConditions(m),
    overrides: [],
    replication: UNIT_TEXT[c.replication],
    header: headerLines(m),
  };
}

/** A permutation's conditions: a run's records say how storsweep measured; an importer's records (metadata.format) what the export says. */
export function conditionsOf(c: ConditionInput): Conditions {
  const m = c.metadata ?? {};
  return typeof m['format'] === 'string' ? importConditions(m, c) : runConditions(m, c);
}

const DATA_WORDS: Record<string, string> = {
  unique: 'unique random', repeated: 'one buffer repeated', zeros: 'zeros', pattern: 'a repeating byte pattern', custom: 'custom', mixed: 'mixed',
};
const dataWords = (c: string) => DATA_WORDS[c] ?? c;

/** The conditions two compared permutations differ in, each `name A vs B`; what one side does not state is no difference. */
export function conditionDifferences(a: Conditions, b: Conditions): string[] {
  const out: string[] = [];
  const sizesDiffer = a.fileSizeBytes !== null && b.fileSizeBytes !== null ? a.fileSizeBytes !== b.fileSizeBytes : a.fileSize !== b.fileSize;
  if (a.fileSize !== null && b.fileSize !== null && sizesDiffer) out.push(`file size ${a.fileSize} vs ${b.fileSize}`);
  if (a.passes !== null && b.passes !== null && a.passes !== b.passes) out.push(`passes ${a.passes} vs ${b.passes}`);
  if (a.warmup !== null && b.warmup !== null && a.warmup !== b.warmup) out.push(`warm-up ${a.warmup} vs ${b.warmup}`);
  if (a.prefillDone !== null && b.prefillDone !== null && a.prefillDone !== b.prefillDone) out.push(`pre-fill ${a.prefillDone ? 'done' : 'not done'} vs ${b.prefillDone ? 'done' : 'not done'}`);
  if (a.tool !== null && b.tool !== null && a.tool !== b.tool) out.push(`tool ${a.tool} vs ${b.tool}`);
  // storage that deduplicates or compresses measures the data too (workloads/write-data.ts)
  const data = (x: string | null, y: string | null) => x !== null && y !== null && x !== 'none' && y !== 'none' && x !== y;
  if (data(a.dataPattern, b.dataPattern)) out.push(`write data ${dataWords(a.dataPattern!)} vs ${dataWords(b.dataPattern!)}`);
  if (data(a.prefillData, b.prefillData)) out.push(`fill data ${dataWords(a.prefillData!)} vs ${dataWords(b.prefillData!)}`);
  return out;
}

/** The warning a comparison of sources measured under different conditions prints. */
export function conditionWarning(source: string, baseSource: string, differences: readonly string[]): string {
  return `${source} vs ${baseSource}: measured under different conditions — ${differences.join('; ')}; the difference mixes the configuration with how it was measured`;
}

export interface SourceConditions {
  source: string;
  /** name → value, in the order reports print them; a value that varies by permutation lists each */
  facts: Array<{ name: string; value: string }>;
}

/** One source's conditions over its permutations: each fact once, or every value it takes. */
export function sourceConditions(source: string, perms: readonly Conditions[]): SourceConditions {
  const pick = (f: (c: Conditions) => string | null, none: string): string => {
    const values = [...new Set(perms.map((c) => f(c) ?? none))];
    return values.length === 1 ? values[0]! : `varies by permutation: ${values.join(' | ')}`;
  };
  const kind = perms.every((c) => c.kind === 'import') ? 'import' : 'run';
  const fills = perms.flatMap((c) => c.fills);
  const facts: SourceConditions['facts'] = [
    { name: 'file size', value: pick((c) => c.fileSize, 'not stated') },
    { name: 'passes', value: pick((c) => c.passes, 'not stated') },
    { name: 'warm-up', value: pick((c) => c.warmup, 'not stated') },
    { name: 'pre-fill', value: pick((c) => c.prefill, 'not stated') + (fills.length > 0 ? `; first write ${mbps(fills)}` : '') },
    { name: 'tool', value: pick((c) => c.tool, 'not stated') },
    { name: 'write data', value: pick((c) => c.writeData, 'not stated') },
  ];
  if (kind === 'run') facts.push({ name: '--set', value: pick((c) => (c.overrides.length > 0 ? c.overrides.join(', ') : null), 'none') });
  facts.push({ name: 'replication unit', value: pick((c) => c.replication, 'not stated') });
  const header = [...new Set(perms.flatMap((c) => c.header))];
  if (header.length > 0) facts.push({ name: 'header', value: header.join('; ') });
  return { source, facts };
}

// The host's view of a test on the ESXi shell: `esxtop -b` (batch mode, perfmon CSV) captured over the
// test's span, and the LUN's per-command latencies read from it — DAVG (Average Driver MilliSec/Command),
// KAVG (Kernel), GAVG (Guest = DAVG + KAVG), QAVG (Queue, part of KAVG) — with the LUN's reads and
// writes per second. Column names and the
// CSV shape: see the stand-in's header (src/lab/harness/esxi/esxtop) for the public captures they
// follow. Pure builders and parsers first, then the observer that runs them over SSH.
import type { EsxtopLatencies, HostMetrics, HostObservation, HostObserver } from '../../contract/host-metrics.ts';
import type { CreatedObject, ProviderContext } from '../../contract/provider.ts';
import { ParseError } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { runChecked } from '../../ssh/run-checked.ts';
import { shJoin } from '../../ssh/quote.ts';
import { checkEsxi } from './validate.ts';
import type { HostProcessStop } from '../../contract/host-process.ts';
import { startMonitor, stopOwnedProcesses, type MonitorSpec } from './host-process.ts';

/** esxtop's minimum delay between updates (vSphere Monitoring and Performance, esxtop options: "-d … minimum two seconds"). */
export const ESXTOP_DELAY_SEC = 2;
/** iterations bound the capture if storsweep never stops it (a crash): 2 h at the minimum delay */
export const ESXTOP_MAX_ITERATIONS = 3600;

export const ESXTOP_LATENCY_SPAN = 'esxtop GAVG/cmd of the LUN under test: DAVG (device and driver) + KAVG (VMkernel, QAVG queueing included), ms per command over 2 s updates';

export const esxtopArgv = (delaySec = ESXTOP_DELAY_SEC, iterations = ESXTOP_MAX_ITERATIONS): string[] => ['esxtop', '-b', '-d', String(delaySec), '-n', String(iterations)];

export interface EsxtopColumn {
  host: string;
  object: string;
  instance: string;
  counter: string;
}

export interface EsxtopCsv {
  columns: EsxtopColumn[];
  /** one per complete row: the host's clock (UTC, ms) and the values by column (null: not a number) */
  rows: Array<{ at: number; values: Array<number | null> }>;
}

/** Splits one CSV line of double-quoted fields (perfmon CSV quotes every field; "" is a quote). */
function fields(line: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  while (i < line.length) {
    if (line[i] !== '"') return null;
    let v = '';
    i++;
    for (;;) {
      if (i >= line.length) return null;
      if (line[i] === '"') {
        if (line[i + 1] === '"') {
          v += '"';
          i += 2;
          continue;
        }
        i++;
        break;
      }
      v += line[i++];
    }
    out.push(v);
    if (i < line.length) {
      if (line[i] !== ',') return null;
      i++;
    }
  }
  return out;
}

/** `\\host\Object(instance)\Counter` → parts; the instance may itself hold parentheses (a VM name). */
export function parseColumn(name: string): EsxtopColumn | null {
  const m = /^\\\\([^\\]*)\\(.+?)(?:\((.*)\))?\\([^\\]+)$/.exec(name);
  if (!m) return null;
  return { host: m[1]!, object: m[2]!, instance: m[3] ?? '', counter: m[4]! };
}

/** `MM/DD/YYYY HH:MM:SS` (UTC, per the header's "(UTC)") → ms */
function timeOf(s: string): number | null {
  const m = /^(\d{2})\/(\d{2})\/(\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(s);
  if (!m) return null;
  return Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2]), Number(m[4]), Number(m[5]), Number(m[6]));
}

/**
 * Parses `esxtop -b` output. The header must be perfmon CSV ("(PDH-CSV 4.0) (UTC)(0)" first); a row
 * cut short (the capture was stopped mid-write) or with another field count is left out.
 */
export function parseEsxtopCsv(text: string, source = 'esxtop -b'): EsxtopCsv {
  const lines = text.split(/\r?\n/);
  const head = fields(lines[0] ?? '');
  if (!head || !/^\(PDH-CSV 4\.0\) \(UTC\)\(\d+\)$/.test(head[0] ?? '')) {
    throw new ParseError(`${source}: not esxtop batch output (first field should be "(PDH-CSV 4.0) (UTC)(0)")`, { source, expected: 'esxtop -b perfmon CSV' });
  }
  const columns = head.slice(1).map((h) => parseColumn(h) ?? { host: '', object: '', instance: '', counter: h });
  const rows: EsxtopCsv['rows'] = [];
  for (const line of lines.slice(1)) {
    const f = fields(line);
    if (!f || f.length !== head.length) continue;
    const at = timeOf(f[0]!);
    if (at === null) continue;
    rows.push({ at, values: f.slice(1).map((v) => (v.trim() === '' || !Number.isFinite(Number(v)) ? null : Number(v))) });
  }
  return { columns, rows };
}

/**
 * The LUN's latencies over the rows that overlap [fromMs, toMs] (those wholly inside when any: a row
 * stamped t averages (t − delay, t]). Null when the device has no column.
 */
export function summariseEsxtop(csv: EsxtopCsv, device: string, span: { fromMs: number; toMs: number }, delaySec: number): { figures: EsxtopLatencies; rows: number; inside: number } | null {
  const col = (object: string, instance: string, counter: string) => csv.columns.findIndex((c) => c.object === object && c.instance === instance && c.counter === counter);
  const dev = (counter: string) => col('Physical Disk SCSI Device', device, counter);
  if (dev('Average Guest MilliSec/Command') < 0) return null;
  const d = delaySec * 1000;
  const overlapping = csv.rows.filter((r) => r.at > span.fromMs && r.at - d < span.toMs);
  const inside = overlapping.filter((r) => r.at - d >= span.fromMs && r.at <= span.toMs);
  const kept = inside.length ? inside : overlapping;
  const mean = (i: number): number | null => {
    if (i < 0) return null;
    const xs = kept.map((r) => r.values[i]).filter((x): x is number => typeof x === 'number');
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
  };
  // latencies per command, weighted by each row's commands
  const weighted = (i: number): number | null => {
    const n = dev('Commands/sec');
    if (i < 0) return null;
    let s = 0;
    let w = 0;
    for (const r of kept) {
      const x = r.values[i];
      const k = n >= 0 ? r.values[n] : null;
      if (typeof x !== 'number') continue;
      if (typeof k !== 'number') return mean(i);
      s += x * k;
      w += k;
    }
    return w > 0 ? s / w : mean(i);
  };
  return {
    figures: {
      device,
      davgMs: weighted(dev('Average Driver MilliSec/Command')),
      kavgMs: weighted(dev('Average Kernel MilliSec/Command')),
      gavgMs: weighted(dev('Average Guest MilliSec/Command')),
      qavgMs: weighted(dev('Average Queue MilliSec/Command')),
      readIops: mean(dev('Reads/sec')),
      writeIops: mean(dev('Writes/sec')),
    },
    rows: kept.length,
    inside: inside.length,
  };
}

/** The LUN the permutation's steps put under test: the VMFS partition's or datastore's device, or the RDM's. */
export function deviceUnderTest(provisioned: readonly CreatedObject[]): string | null {
  for (const kind of ['rdm', 'datastore', 'vmfs-partition']) {
    const o = provisioned.find((p) => p.kind === kind && typeof p.data.device === 'string');
    if (o) return o.data.device as string;
  }
  return null;
}

/** esxtop's files on the host: /tmp, `storsweep-esxtop-<owner>-<nonce>.pid` / `.csv` (host-process.ts). */
export const ESXTOP_MONITOR: MonitorSpec = { kind: 'esxtop', ext: 'csv', dir: '/tmp' };

/**
 * Stops every esxtop a run left on the host for a target (owner = toolOwner(runId, target)): only
 * those the host still shows as ours (host-process.ts), and removes their files.
 */
export function stopEsxtopLeftovers(runner: CommandRunner, owner: string): Promise<HostProcessStop> {
  return stopOwnedProcesses(runner, ESXTOP_MONITOR, owner);
}

/** What the record says about how the capture's esxtop was stopped, when not plainly. */
function stopNote(stop: HostProcessStop): string | null {
  const p = stop.processes[0];
  if (!p) return `esxtop's pidfile was gone when it was stopped${stop.detail ? ` (${stop.detail})` : ''}`;
  if (p.outcome === 'stopped') return null;
  if (p.outcome === 'ended') return `esxtop (pid ${p.pid}) had ended before the test did`;
  if (p.outcome === 'left-alone') return `esxtop had ended before the test did; its pid ${p.pid} now runs another program, left alone`;
  return `could not confirm that esxtop (pid ${p.pid ?? '?'}) stopped: ${p.outcome}${p.detail ? ` (${p.detail})` : ''}`;
}

/**
 * Captures esxtop on the host for each test: started in the background under a wrapper that the
 * host can prove ours (host-process.ts: its output, pidfile and command line carry the run's
 * target owner, a nonce and its start time), stopped when the test ends only while the host shows
 * it so, read, its files removed. `ctx.owner` is the permutation's toolOwner(runId, target): a
 * later process of the run finds what a dead one left (stopEsxtopLeftovers).
 */
export function esxtopObserver(runner: CommandRunner, provisioned: readonly CreatedObject[], ctx: Pick<ProviderContext, 'runId' | 'owner'>): HostObserver | null {
  const device = deviceUnderTest(provisioned);
  if (!device) return null;
  checkEsxi('device', device);
  const owner = ctx.owner ?? ctx.runId;
  return {
    source: 'esxtop',
    async start(): Promise<HostObservation> {
      // one round trip: started in the background (no descriptor left on the session), its pid, the host's clock
      const started = await startMonitor(runner, ESXTOP_MONITOR, owner, esxtopArgv());
      const file = started.out;
      const fromMs = started.startSec * 1000;
      return {
        async stop(): Promise<HostMetrics> {
          // the host's clock, then the output until the update covering the end is written (at most one delay and a half)
          const read = async () => (await runChecked(runner, `date -u +%s; cat ${shJoin([file])}`, { what: 'read esxtop output' })).stdout;
          let out = '';
          let toMs = Date.now();
          let stopped: HostProcessStop | null = null;
          try {
            out = await read();
            toMs = Number(out.slice(0, out.indexOf('\n'))) * 1000;
            await waitForCovering(read, out, fromMs, toMs).then((o) => (out = o));
          } finally {
            // our esxtop (only while the host shows it ours) and its files, whatever happened
            stopped = await stopOwnedProcesses(runner, ESXTOP_MONITOR, owner, { nonce: started.nonce });
          }
          return summarise(out.slice(out.indexOf('\n') + 1), { device, fromMs, toMs, target: runner.target, stopNote: stopNote(stopped) });
        },
      };
    },
  };
}

/** Reads again (every 0.5 s, bounded) until an update covering `toMs` is written; the last output read. */
async function waitForCovering(read: () => Promise<string>, first: string, fromMs: number, toMs: number): Promise<string> {
  let out = first;
  const deadline = Date.now() + ESXTOP_DELAY_SEC * 1500;
  const covered = (t: string) => {
    try {
      return parseEsxtopCsv(t).rows.some((r) => r.at >= toMs);
    } catch {
      return false;
    }
  };
  if (covered(out.slice(out.indexOf('\n') + 1))) return out;
  // updates land every delay from the start: sleep until the one covering the end is due, then read
  const due = fromMs + Math.ceil((toMs - fromMs) / (ESXTOP_DELAY_SEC * 1000) + 1e-9) * ESXTOP_DELAY_SEC * 1000 - toMs + 300;
  await new Promise((r) => setTimeout(r, Math.min(Math.max(due, 0), ESXTOP_DELAY_SEC * 1000)));
  while (Date.now() < deadline) {
    out = await read();
    if (covered(out.slice(out.indexOf('\n') + 1))) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return out;
}

/** The record's host figures from the capture's CSV. */
function summarise(text: string, o: { device: string; fromMs: number; toMs: number; target: string; stopNote: string | null }): HostMetrics {
  // an esxtop that ended (crashed, killed) before its first update wrote nothing: no figures, said so
  const empty = text.trim() === '';
  const csv = empty ? null : parseEsxtopCsv(text, `esxtop -b on ${o.target}`);
  const s = csv ? summariseEsxtop(csv, o.device, { fromMs: o.fromMs, toMs: o.toMs }, ESXTOP_DELAY_SEC) : null;
  const notes: string[] = [];
  if (empty) notes.push('esxtop wrote no batch output (it ended before its first update)');
  else if (!s) notes.push(`esxtop lists no SCSI device ${o.device}`);
  else if (s.rows === 0) notes.push('no esxtop update overlaps the test');
  else if (s.inside === 0) notes.push(`no ${ESXTOP_DELAY_SEC} s esxtop update lies wholly inside the test`);
  if (o.stopNote) notes.push(o.stopNote);
  return {
    source: 'esxtop',
    from: new Date(o.fromMs).toISOString(),
    to: new Date(o.toMs).toISOString(),
    intervalSec: ESXTOP_DELAY_SEC,
    samples: s?.rows ?? 0,
    samplesInside: s?.inside ?? 0,
    ...(s ? { esxtop: s.figures } : {}),
    latencyUs: s?.figures.gavgMs === null || s?.figures.gavgMs === undefined ? null : s.figures.gavgMs * 1000,
    latencySpan: ESXTOP_LATENCY_SPAN,
    // esxtop prints ms per command with two decimals
    latencyResolutionUs: 10,
    ...(notes.length ? { notes } : {}),
  };
}

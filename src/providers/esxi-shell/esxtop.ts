// The host's view of a test on the ESXi shell: `esxtop -b` (batch mode, perfmon CSV) captured over the
// test's span, and the LUN's per-command latencies read from it — DAVG (Average Driver MilliSec/Command),
// KAVG (Kernel), GAVG (Guest = DAVG + KAVG), QAVG (Queue, part of KAVG) — with the LUN's reads and
// writes per second. Column names and the
// CSV shape: see the stand-in's header (src/lab/harness/esxi/esxtop) for the public captures they
// follow. Pure builders and parsers first, then the observer that runs them over SSH.
import type { EsxtopLatencies, HostMetrics, HostObservation, HostObserver } from '../../contract/host-metrics.ts';
import type { CreatedObject } from '../../contract/provider.ts';
import { ParseError } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { runChecked } from '../../ssh/run-checked.ts';
import { shJoin } from '../../ssh/quote.ts';
import { checkEsxi } from './validate.ts';

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

/**
 * Captures esxtop on the host for each test: started in the background (its output to a file of
 * ours under /tmp, its pid recorded), stopped with `kill <that pid>` when the test ends, read, removed.
 */
export function esxtopObserver(runner: CommandRunner, provisioned: readonly CreatedObject[], ids: { runId: string; permutationId: string }): HostObserver | null {
  const device = deviceUnderTest(provisioned);
  if (!device) return null;
  checkEsxi('device', device);
  let n = 0;
  return {
    source: 'esxtop',
    async start(): Promise<HostObservation> {
      const file = `/tmp/storsweep-esxtop-${ids.runId}-${ids.permutationId}-${++n}.csv`;
      // one round trip: started in the background (no descriptor left on the session), its pid, the host's clock
      const started = await runChecked(runner, `${shJoin(esxtopArgv())} < /dev/null > ${shJoin([file])} 2>&1 & echo $!; date -u +%s`, { what: 'esxtop -b' });
      const [pid, now] = started.stdout.trim().split(/\s+/);
      if (!pid || !/^\d+$/.test(pid) || !now || !/^\d+$/.test(now)) throw new ParseError(`esxtop -b: expected its pid and the host's clock, got ${JSON.stringify(started.stdout.slice(0, 80))}`, { source: 'esxtop', expected: 'a pid and seconds since the epoch' });
      const fromMs = Number(now) * 1000;
      return {
        async stop(): Promise<HostMetrics> {
          // the host's clock, then the output until the update covering the end is written (at most one delay and a half)
          const read = async () => (await runChecked(runner, `date -u +%s; cat ${shJoin([file])}`, { what: 'read esxtop output' })).stdout;
          let out = '';
          let toMs = Date.now();
          try {
            out = await read();
            toMs = Number(out.slice(0, out.indexOf('\n'))) * 1000;
          const deadline = Date.now() + ESXTOP_DELAY_SEC * 1500;
          const covered = (t: string) => {
            try {
              return parseEsxtopCsv(t).rows.some((r) => r.at >= toMs);
            } catch {
              return false;
            }
          };
          // updates land every delay from the start: sleep until the one covering the end is due, then read (again every 0.5 s, bounded)
          const due = fromMs + Math.ceil((toMs - fromMs) / (ESXTOP_DELAY_SEC * 1000) + 1e-9) * ESXTOP_DELAY_SEC * 1000 - toMs + 300;
          if (!covered(out.slice(out.indexOf('\n') + 1))) {
            await new Promise((r) => setTimeout(r, Math.min(Math.max(due, 0), ESXTOP_DELAY_SEC * 1000)));
            while (Date.now() < deadline) {
              out = await read();
              if (covered(out.slice(out.indexOf('\n') + 1))) break;
              await new Promise((r) => setTimeout(r, 500));
            }
          }
          } finally {
            // our esxtop (the pid it was started with) and our file, whatever happened
            await runner.run(`kill ${pid} 2>/dev/null; rm -f ${shJoin([file])}`).catch(() => undefined);
          }
          const text = out.slice(out.indexOf('\n') + 1);
          const csv = parseEsxtopCsv(text, `esxtop -b on ${runner.target}`);
          const s = summariseEsxtop(csv, device, { fromMs, toMs }, ESXTOP_DELAY_SEC);
          const notes: string[] = [];
          if (!s) notes.push(`esxtop lists no SCSI device ${device}`);
          else if (s.rows === 0) notes.push('no esxtop update overlaps the test');
          else if (s.inside === 0) notes.push(`no ${ESXTOP_DELAY_SEC} s esxtop update lies wholly inside the test`);
          return {
            source: 'esxtop',
            from: new Date(fromMs).toISOString(),
            to: new Date(toMs).toISOString(),
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
        },
      };
    },
  };
}

// Guest vs host latency per permutation and test: the guest's mean latency (its benchmark tool,
// issue→completion inside the guest) beside what the hypervisor measured for the same I/O from
// below (vSphere's virtualDisk/datastore counters, esxtop's GAVG/KAVG/DAVG/QAVG). The gap is the
// guest's own storage stack and the virtual device's cost (guest block layer, driver, interrupt
// delivery); the host side starts where the VMkernel receives the command. Both renderers show the
// same rows and words (markdown.ts, html.ts).
import type { HostMetrics, ResultRecord } from '../results/record.ts';
import { LATENCY_SPAN } from '../results/record.ts';
import { formatLatency } from './numbers.ts';

export interface HostLatencyRow {
  permutationId: string;
  label: string;
  testId: string;
  /** repetitions with host figures / all repetitions */
  observed: number;
  repetitions: number;
  /** means over the repetitions, µs */
  guestUs: number | null;
  hostUs: number | null;
  /** guest − host, µs: the guest/hypervisor stack's own cost; null when it is below the host counter's resolution */
  gapUs: number | null;
  /** the coarsest resolution of the host latency counters behind hostUs, µs (vSphere: 1 with the µs counters, 1000 with whole ms) */
  resolutionUs: number | null;
  /** the difference is smaller than that resolution: no gap is shown */
  gapBelowResolution: boolean;
  /** virtual disk read / write latency, datastore latency (ms, vSphere) */
  vdiskReadMs: number | null;
  vdiskWriteMs: number | null;
  datastoreMs: number | null;
  /** esxtop per-command latencies (ms) */
  esxtop: { davgMs: number | null; kavgMs: number | null; gavgMs: number | null; qavgMs: number | null } | null;
  /** samples kept / wholly inside the test, summed over repetitions */
  samples: number;
  samplesInside: number;
  intervalSec: number | null;
  /** where the host latency comes from, in words */
  hostSpan: string | null;
  /** every observation watched the scored passes only (HostMetrics.window); false for older records */
  scoredWindow: boolean;
  /** why figures are missing or weak (distinct) */
  notes: string[];
}

export const GUEST_SPAN = `guest: the benchmark tool's ${LATENCY_SPAN}`;
export const GAP_MEANING = 'gap = guest − host: what the guest\u2019s own I/O stack and the virtual device add on top of what the host measured; a difference smaller than the host counter\u2019s resolution (1 ms where vSphere offers only whole-millisecond counters, 1 µs with its µs counters) is not shown: it is the counter\u2019s rounding';

/** Which stretch of time each side covers, in records made before the host watched the scored passes only: they are not the same. */
export const WINDOWS = 'time covered: the guest figure is its scored passes only; the host figure averages the host\u2019s samples (20 s on vSphere) that overlap the whole test — the unscored pass 0, the tool\u2019s start between passes and the scored passes — preferring samples wholly inside it';

/** Which stretch of time each side covers when the host watched the scored passes (HostMetrics.window). */
export const WINDOWS_SCORED = 'time covered: both sides cover the scored passes — the host is watched from right before the first measured pass to right after the last (the fill, the unscored pass 0 and the pause between tests left out; the tool\u2019s start between scored passes lies inside); the host figure averages its samples (20 s on vSphere) that overlap that span, preferring samples wholly inside it';

const mean = (xs: Array<number | null | undefined>): number | null => {
  const v = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
};

/** What the table reads of a record (a ResultRecord is one; the report model passes these, keeping no records). */
export interface HostLatencySample {
  test: { id: string };
  latencyUs: { mean: number | null };
  host?: ResultRecord['host'];
}

/** One row per permutation × test that has host figures in any record; [] when none has. */
export function hostLatencyRows(groups: ReadonlyArray<{ permutationId: string; label: string; records: readonly HostLatencySample[] }>): HostLatencyRow[] {
  const rows: HostLatencyRow[] = [];
  for (const g of groups) {
    const byTest = new Map<string, HostLatencySample[]>();
    for (const r of g.records) {
      if (!r.host) continue;
      const list = byTest.get(r.test.id) ?? [];
      list.push(r);
      byTest.set(r.test.id, list);
    }
    for (const [testId, recs] of byTest) {
      const all = g.records.filter((r) => r.test.id === testId);
      const seen = recs.map((r) => r.host).filter((h): h is HostMetrics => h !== undefined && !('unavailable' in h));
      const notes = new Set<string>();
      for (const r of recs) if (r.host && 'unavailable' in r.host) notes.add(`not observed: ${r.host.unavailable}`);
      for (const h of seen) for (const n of h.notes ?? []) notes.add(n);
      const guestUs = mean(all.map((r) => r.latencyUs.mean));
      const hostUs = mean(seen.map((h) => h.latencyUs));
      const esx = seen.map((h) => h.esxtop).filter((e) => e !== undefined);
      // a record without a stated resolution is from before it was recorded: vSphere's were whole ms
      const resolutions = seen.filter((h) => h.latencyUs !== null).map((h) => h.latencyResolutionUs ?? (h.source === 'vsphere-perf' ? 1000 : 10));
      const resolutionUs = resolutions.length ? Math.max(...resolutions) : null;
      const diff = guestUs !== null && hostUs !== null ? guestUs - hostUs : null;
      const below = diff !== null && resolutionUs !== null && Math.abs(diff) < resolutionUs;
      rows.push({
        permutationId: g.permutationId,
        label: g.label,
        testId,
        observed: seen.length,
        repetitions: all.length,
        guestUs,
        hostUs,
        gapUs: below ? null : diff,
        resolutionUs,
        gapBelowResolution: below,
        vdiskReadMs: mean(seen.map((h) => h.virtualDisk?.readLatencyMs)),
        vdiskWriteMs: mean(seen.map((h) => h.virtualDisk?.writeLatencyMs)),
        datastoreMs: mean(seen.map((h) => h.datastore?.latencyMs)),
        esxtop: esx.length ? { davgMs: mean(esx.map((e) => e.davgMs)), kavgMs: mean(esx.map((e) => e.kavgMs)), gavgMs: mean(esx.map((e) => e.gavgMs)), qavgMs: mean(esx.map((e) => e.qavgMs)) } : null,
        samples: seen.reduce((a, h) => a + h.samples, 0),
        samplesInside: seen.reduce((a, h) => a + h.samplesInside, 0),
        intervalSec: seen[0]?.intervalSec ?? null,
        hostSpan: seen[0]?.latencySpan ?? null,
        scoredWindow: seen.length > 0 && seen.every((h) => h.window === 'scored-passes'),
        notes: [...notes],
      });
    }
  }
  return rows;
}

const ms = (x: number | null): string => (x === null ? '–' : formatLatency(x * 1000));

/** The table both renderers print: header and cells as text. */
export function hostLatencyTable(rows: readonly HostLatencyRow[]): { header: string[]; cells: string[][] } {
  const withEsxtop = rows.some((r) => r.esxtop);
  const withVsphere = rows.some((r) => r.vdiskReadMs !== null || r.vdiskWriteMs !== null || r.datastoreMs !== null);
  const header = ['permutation', 'test', 'guest lat mean', 'host lat mean', 'gap (guest − host)'];
  if (withVsphere) header.push('vdisk read', 'vdisk write', 'datastore');
  if (withEsxtop) header.push('GAVG', 'KAVG', 'QAVG', 'DAVG');
  header.push('samples (inside test)', 'observed reps');
  const cells = rows.map((r) => {
    const gap = r.gapBelowResolution ? `within ±${formatLatency(r.resolutionUs)} (counter resolution)` : r.gapUs === null ? '–' : `${r.gapUs < 0 ? '−' : ''}${formatLatency(Math.abs(r.gapUs))}`;
    const c = [`${r.label} (${r.permutationId})`, r.testId, formatLatency(r.guestUs), formatLatency(r.hostUs), gap];
    if (withVsphere) c.push(ms(r.vdiskReadMs), ms(r.vdiskWriteMs), ms(r.datastoreMs));
    if (withEsxtop) c.push(ms(r.esxtop?.gavgMs ?? null), ms(r.esxtop?.kavgMs ?? null), ms(r.esxtop?.qavgMs ?? null), ms(r.esxtop?.davgMs ?? null));
    c.push(`${r.samples} (${r.samplesInside})${r.intervalSec ? ` × ${r.intervalSec} s` : ''}`, `${r.observed}/${r.repetitions}`);
    return c;
  });
  return { header, cells };
}

/** What each side of the table measures, in words (under the table). */
export function hostLatencyLegend(rows: readonly HostLatencyRow[]): string[] {
  const spans = [...new Set(rows.map((r) => r.hostSpan).filter((s): s is string => s !== null))];
  // each span said once: the scored passes (this version), the whole test (records made before)
  const windows = [...(rows.some((r) => r.scoredWindow) ? [WINDOWS_SCORED] : []), ...(rows.some((r) => !r.scoredWindow) ? [WINDOWS] : [])];
  const out = [GUEST_SPAN, ...spans.map((s) => `host: ${s}`), ...windows, GAP_MEANING];
  if (rows.some((r) => r.esxtop)) out.push('esxtop (ms per command): DAVG device/driver round trip; KAVG time in the VMkernel (QAVG, the time queued there, included); GAVG = DAVG + KAVG');
  // each note once, with the rows it is about (most notes hold for every row: a 20 s sample is
  // longer than every 5 s pass), never repeated per row
  const where = new Map<string, string[]>();
  for (const r of rows) {
    for (const n of r.notes) {
      const list = where.get(n) ?? [];
      list.push(`${r.permutationId} ${r.testId}`);
      where.set(n, list);
    }
  }
  const notes = [...where].map(([n, at]) => {
    if (at.length === rows.length) return rows.length === 1 ? n : `${n} (every row)`;
    return `${n} (${at.length === 1 ? at[0] : `${at.length} rows: ${at.slice(0, 3).join(', ')}${at.length > 3 ? ', …' : ''}`})`;
  });
  return [...out, ...notes.slice(0, 20), ...(notes.length > 20 ? [`… ${notes.length - 20} more notes`] : [])];
}

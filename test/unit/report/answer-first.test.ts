// The first screen answers the question: the overview grid is the first table, one line per axis
// value says what differs beyond noise; numbers keep significant digits, latency its unit by
// magnitude, and an interval wider than the value is said in words.
import { describe, expect, it } from 'vitest';
import { barChart } from '../../../src/report/charts.ts';
import { renderSummaryCsv } from '../../../src/report/csv.ts';
import { renderHtml } from '../../../src/report/html.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { isOurReport } from '../../../src/report/marker.ts';
import { buildReport } from '../../../src/report/model.ts';
import { deltaTooNoisy, formatDelta, formatLatency, formatMeanCi, formatPct, roundSig } from '../../../src/report/numbers.ts';
import { compareSamples, summarize } from '../../../src/report/stats.ts';
import { axisFindings, iometerText, referenceLabel } from '../../../src/report/wording.ts';
import { testIdentity } from '../../../src/results/record.ts';
import { iometerSpec } from '../../../src/workloads/iometer-spec.ts';
import { PROFILES } from '../../../src/workloads/profiles.ts';
import { labRecords, seedRecords } from './helpers.ts';

describe('numbers', () => {
  it('rounds to 4 significant digits, never dropping whole digits', () => {
    expect(roundSig(1.585)).toBe('1.585'); // CrystalDiskMark's 1.585 MB/s is not "1.6"
    expect(roundSig(61.927)).toBe('61.93');
    expect(roundSig(828.041)).toBe('828.0');
    expect(roundSig(3512.884)).toBe('3,513');
    expect(roundSig(149513.7)).toBe('149,514');
    expect(roundSig(9.99961)).toBe('10.00');
    expect(roundSig(0.0012345)).toBe('0.001235');
    expect(roundSig(0)).toBe('0');
    expect(roundSig(-4.5234)).toBe('-4.523');
  });

  it('shows latency in µs below 1 ms and in ms above', () => {
    expect(formatLatency(66.14)).toBe('66.14 µs');
    expect(formatLatency(999.4)).toBe('999.4 µs');
    expect(formatLatency(2387.95)).toBe('2.388 ms');
    expect(formatLatency(12_000_000)).toBe('12.00 s');
    expect(formatLatency(null)).toBe('–');
  });

  it('prints a Δ as whole percents from 10% on, one decimal below, always signed', () => {
    expect(formatPct(38.4)).toBe('+38%');
    expect(formatPct(-4.52)).toBe('-4.5%');
    expect(formatPct(0.04)).toBe('0.0%');
    expect(formatPct(-0.04)).toBe('0.0%');
  });

  it('says "too noisy to tell" for an interval wider than the value, not [-571%, +805%]', () => {
    const wild = compareSamples([50, 400, 5, 300], [10, 90, 40, 60], true);
    expect(wild.delta!.ci === null || wild.delta!.ci.low < -100 || wild.delta!.ci.high - wild.delta!.ci.low > 200).toBe(true);
    expect(deltaTooNoisy(wild)).toBe(true);
    expect(formatDelta(wild)).toMatch(/^too noisy to tell \(\+\d+%\)$/);
    // an unbounded Fieller interval (baseline mean not distinguishable from zero) is the same
    const unbounded = compareSamples([50, 52, 49, 51], [1, 100, 1, 100], true);
    expect(unbounded.delta!.ci).toBeNull();
    expect(formatDelta(unbounded)).toBe('too noisy to tell (0.0%)');
    // a tight one is printed, and n = 1 has no interval at all
    const tight = compareSamples([138, 137, 139, 138], [100, 101, 99, 100], true);
    expect(deltaTooNoisy(tight)).toBe(false);
    expect(formatDelta(tight)).toBe("+38% [+36%, +40%]");
    expect(formatDelta(compareSamples([110], [100], true))).toBe('+10%');
    // a mean whose interval reaches below zero
    const s = summarize([1, 30, 2, 60], 0.95);
    expect(formatMeanCi({ metric: 'iops', summary: s, noisy: true, repetitionsNeeded: null })).toBe('23.25 (too noisy to tell)');
    expect(formatMeanCi({ metric: 'latencyMeanUs', summary: summarize([2000, 2010, 1990]), noisy: false, repetitionsNeeded: null })).toBe('2.000 ± 0.025 ms');
  });
});

describe('reference labels', () => {
  it("names CrystalDiskMark's tests as CrystalDiskMark does", () => {
    const labels = PROFILES['cdm8-nvme']!.tests.map(referenceLabel);
    expect(labels).toEqual([
      'SEQ1M Q8T1 read',
      'SEQ128K Q32T1 read',
      'RND4K Q32T16 read',
      'RND4K Q1T1 read',
      'SEQ1M Q8T1 write',
      'SEQ128K Q32T1 write',
      'RND4K Q32T16 write',
      'RND4K Q1T1 write',
    ]);
    expect(referenceLabel(testIdentity({ pattern: 'randrw', blockSizeBytes: 4096, queueDepth: 1, threads: 1, readPercent: 70 }))).toBe('RND4K Q1T1 mix 70% read');
  });

  it('writes the IOMeter spec that reads back as the same test', () => {
    for (const spec of ['4k 70% read 100% random q32 t4', '32k 100% read 0% random', '1m 0% read 0% random q8']) {
      const t = iometerSpec(spec);
      expect(iometerSpec(iometerText(t)).id).toBe(t.id);
    }
    expect(iometerText(iometerSpec('4k 70% read 100% random q32 t4'))).toBe('4k 70% read 100% random q32 t4');
  });
});

describe('answer first', () => {
  const lab = buildReport(labRecords({ thickFactor: 1.38, relNoise: 0.02 }), { runId: 'lab', environment: { array: 'PowerStore 500T', raid: 'RAID 5' }, fingerprint: { 'esxi.version': '8.0.2' } });

  it('one line per axis value: what differs beyond noise, with Δ and its interval, or that nothing does', () => {
    const lines = axisFindings(lab).map((f) => f.text);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('blockSizeMb 8 vs 1: no test differs beyond noise (4/4)');
    expect(lines[1]).toMatch(/^format eagerzeroedthick vs thin: (SEQ1M Q8T1 read|RND4K Q32T1 write) \(blockSizeMb=\d\) (MB\/s|IOPS) \+3\d% \[\+\d+%, \+\d+%\]; .* \(4 of 4 beyond noise\)$/);
  });

  it('says "cannot tell" when every comparison has a single run a side', () => {
    const lines = axisFindings(buildReport(seedRecords(), { runId: 'seeds' })).map((f) => f.text);
    expect(lines[2]).toBe('blockSizeMb 8 vs 1: cannot tell — all 8 comparisons have fewer than 2 repetitions on a side; largest Δ: SEQ1M Q1T1 read MB/s -3.0%');
  });

  it('Markdown: the overview grid is the first table, right under the axes, before the run facts', () => {
    const md = renderMarkdown(lab);
    const firstTable = md.split('\n').find((l) => l.startsWith('|'));
    // columns ordered by the axes in playbook order (the first one varies slowest)
    expect(firstTable).toBe('| test | blockSizeMb=1, format=thin (baseline) | blockSizeMb=1, format=eagerzeroedthick | blockSizeMb=8, format=thin | blockSizeMb=8, format=eagerzeroedthick |');
    expect(md.indexOf('## Overview')).toBeLessThan(md.indexOf('## Run'));
    expect(md).toMatch(/\| SEQ1M Q8T1 read<br>seq-1m-q8t1-read \| [\d.]+ \[[\d.]+\] \| [\d.,]+ \[[\d.,]+\] ▲ \+3\d% \| [\d.]+ \[[\d.]+\] \| [\d.,]+ \[[\d.,]+\] ▲ \+3\d% \|\n/);
    expect(md).toContain('- blockSizeMb 8 vs 1: no test differs beyond noise (4/4)');
    // the environment the playbook states, beside what was measured
    expect(md).toContain('**Environment (as the playbook states it)**\n\n| key | value |\n| --- | --- |\n| array | PowerStore 500T |\n| raid | RAID 5 |');
    expect(md).toContain('| esxi.version | 8.0.2 |');
    // CPU shown; latency in ms for this queue depth
    expect(md).toMatch(/\| CPU % \|/);
    expect(md).toMatch(/\| 1 \| thin \| 5 \| [\d.]+ ± [\d.]+ \| [\d.]+ ± [\d.]+ \| [\d.]+ ± [\d.]+ ms \|/);
  });

  it('Markdown: noisy cells come last, collapsed', () => {
    const md = renderMarkdown(buildReport(labRecords({ relNoise: 0.4 }), { runId: 'noisy' }));
    const at = md.indexOf('<details>');
    expect(at).toBeGreaterThan(md.indexOf('## Results'));
    expect(md.slice(at)).toMatch(/^<details>\n<summary>Noisy cells \(CV &gt; 10%\): \d+<\/summary>\n\n\| test \| permutation \|/);
    expect(md.trimEnd().endsWith('</details>')).toBe(true);
  });

  it('HTML: the overview grid is the first table; significant cells are coloured, others not', () => {
    const html = renderHtml(lab);
    const first = html.indexOf('<table');
    expect(html.slice(first, first + 30)).toContain('<table class="overview">');
    const grid = html.slice(first, html.indexOf('</table>', first));
    expect(grid.match(/<td class="faster d\d"/g)).toHaveLength(4);
    expect(grid).not.toContain('slower');
    expect(html.indexOf('<details class="noisy">')).toBe(-1);
    expect(html).toContain('<h3>As the playbook states it</h3>');
    expect(html).toContain('<h3>Measured fingerprint</h3>');
  });

  it('a throughput chart starts at 0 and never goes negative; a Δ chart may', () => {
    const svg = barChart({ title: 't', unit: 'MB/s', bars: [{ label: 'a', value: 10, low: -30, high: 50 }] });
    const ticks = [...svg.matchAll(/<text class="tick"[^>]*>([^<]+)<\/text>/g)].map((m) => m[1]);
    expect(ticks[0]).toBe('0');
    expect(ticks.some((t) => t!.startsWith('-'))).toBe(false);
    const delta = barChart({ title: 'd', unit: 'Δ%', signed: true, bars: [{ label: 'a', value: -20, low: -25, high: -15 }] });
    expect(delta).toContain('>-20%<');
  });
});

describe('summary CSV', () => {
  it('one row per permutation × test, axes as columns, Δ and verdict per compared axis', () => {
    const csv = renderSummaryCsv(buildReport(labRecords({ thickFactor: 0.8 }), { runId: 'lab' }));
    const lines = csv.trimEnd().split('\r\n');
    expect(lines).toHaveLength(1 + 4 * 2);
    expect(lines[0]).toBe(
      'permutationId,datastore.blockSizeMb,disk.format,source,testId,referenceLabel,pattern,blockSizeBytes,queueDepth,threads,readPercent,mainMetric,n,mbPerSecond,mbPerSecondCi95,iops,iopsCi95,latencyMeanUs,latencyP99Us,cpuPercent,cvPct,noisy,' +
        'deltaPct vs datastore.blockSizeMb=1,deltaLowPct vs datastore.blockSizeMb=1,deltaHighPct vs datastore.blockSizeMb=1,verdict vs datastore.blockSizeMb=1,' +
        'deltaPct vs disk.format=thin,deltaLowPct vs disk.format=thin,deltaHighPct vs disk.format=thin,verdict vs disk.format=thin',
    );
    expect(lines[1]).toMatch(/^p-thin-1,1,thin,lab-run,seq-1m-q8t1-read,SEQ1M Q8T1 read,read,1048576,8,1,100,MB\/s,5,[\d.]+,[\d.]+,[\d.]+,[\d.]+,[\d.]+,[\d.]+,12\.5,[\d.]+,false,,,,,,,,$/);
    expect(lines[3]).toMatch(/^p-eagerzeroedthick-1,1,eagerzeroedthick,lab-run,seq-1m-q8t1-read,.*,,,,,-\d+\.?\d*,-\d+\.?\d*,-\d+\.?\d*,slower$/);
    // recognised as ours, so `report -o` may rewrite it
    expect(isOurReport(csv)).toBe(true);
  });
});

describe('overview across sources', () => {
  it('puts a published value beside the measured one of the same configuration (source varies fastest)', () => {
    const measured = seedRecords('measured').map((r) => ({ ...r, axes: { ...r.axes, source: 'measured' } }));
    const published = seedRecords('published').map((r) => ({ ...r, permutationId: `pub-${r.permutationId}`, axes: { ...r.axes, source: 'published.csv' } }));
    const md = renderMarkdown(buildReport([...measured, ...published], { runId: 'two' }));
    expect(md.split('\n').find((l) => l.startsWith('|'))).toBe(
      '| test | blockSizeMb=1, source=measured (baseline) | blockSizeMb=1, source=published.csv | blockSizeMb=2, source=measured | blockSizeMb=2, source=published.csv | blockSizeMb=4, source=measured | blockSizeMb=4, source=published.csv | blockSizeMb=8, source=measured | blockSizeMb=8, source=published.csv |',
    );
  });
});

describe('environment across sources', () => {
  it("keeps each run's stated environment and measured fingerprint, under its run id when several have one", async () => {
    const { mergeSources } = await import('../../../src/report/source.ts');
    const a = labRecords({ runId: 'run-a' });
    const b = labRecords({ runId: 'run-b' });
    const merged = mergeSources([
      { path: 'a', kind: 'run', records: a, info: { runId: 'run-a', environment: { array: 'A' }, fingerprint: { 'esxi.version': '8.0.2' } }, warnings: [] },
      { path: 'b', kind: 'run', records: b, info: { runId: 'run-b', environment: { array: 'B' } }, warnings: [] },
    ]);
    expect(merged.info.environment).toEqual({ 'run-a/array': 'A', 'run-b/array': 'B' });
    expect(merged.info.fingerprint).toEqual({ 'esxi.version': '8.0.2' });
    const md = renderMarkdown(buildReport(merged.records, merged.info));
    expect(md).toContain('| run-a/array | A |\n| run-b/array | B |');
  });
});

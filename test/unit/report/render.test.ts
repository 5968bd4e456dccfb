import { describe, expect, it } from 'vitest';
import { barChart, escapeXml, heatmap } from '../../../src/report/charts.ts';
import { csvField, renderCsv } from '../../../src/report/csv.ts';
import { renderHtml } from '../../../src/report/html.ts';
import { renderJson } from '../../../src/report/json.ts';
import { mdCell, renderMarkdown } from '../../../src/report/markdown.ts';
import { buildReport } from '../../../src/report/model.ts';
import { labRecords, seedRecords } from './helpers.ts';

const HOSTILE = '"><script>alert(1)</script>|=cmd';

describe('markdown', () => {
  it('renders the seeds: summary, one table per test, comparison against 1 MB', () => {
    const md = renderMarkdown(buildReport(seedRecords(), { runId: 'seeds' }));
    expect(md).toContain('# storsweep report — seeds');
    expect(md).toContain('- Axes varied: datastore.blockSizeMb (1, 2, 4, 8)');
    expect(md.match(/^### /gm)).toHaveLength(8);
    expect(md).toContain('| 1 | 1 | 828.0 |');
    expect(md).toContain('#### vs datastore.blockSizeMb = 1');
    // 790.583 / 828.041 − 1 = −4.52%
    expect(md).toContain('| datastore.blockSizeMb=4 | MB/s | -4.5% | – | n/a (n too small: p ≥ 1) | insufficient data |');
  });

  it('renders verdicts, Fieller CIs and p-values for a lab run', () => {
    const md = renderMarkdown(buildReport(labRecords({ thickFactor: 0.8 }), { runId: 'lab' }));
    // |Δ| ≥ 10%: whole percents
    expect(md).toMatch(/\| datastore\.blockSizeMb=1, disk\.format=eagerzeroedthick \| MB\/s \| -\d+% \[-\d+%, -\d+%\] \| < 0\.001 \| 0\.00794 \| ▼ slower \|/);
    expect(md).toContain('Δ% CI by Fieller');
  });

  it('escapes untrusted names so they cannot break a table or inject HTML', () => {
    expect(mdCell('a|b\nc<d>*e*')).toBe('a\\|b c&lt;d&gt;\\*e\\*');
    const md = renderMarkdown(buildReport(labRecords({ hostileName: HOSTILE }), { runId: 'x' }));
    expect(md).not.toContain('<script>');
    expect(md).toContain('vm.name = "&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\|=cmd');
  });
});

describe('csv', () => {
  it('writes one row per record with every axis as a column and decimal MB/s', () => {
    const csv = renderCsv(seedRecords());
    const lines = csv.trimEnd().split('\r\n');
    expect(lines).toHaveLength(33);
    expect(lines[0]).toBe(
      'runId,permutationId,datastore.blockSizeMb,repetition,testId,pattern,blockSizeBytes,queueDepth,threads,readPercent,iops,bytesPerSecond,mbPerSecond,latencyMeanUs,latencyP50Us,latencyP95Us,latencyP99Us,latencyP999Us,cpuPercent,' +
        'host.source,host.unavailable,host.latencyUs,host.latencySpan,host.from,host.to,host.intervalSec,host.samples,host.samplesInside,' +
        'host.virtualDisk.instance,host.virtualDisk.readIops,host.virtualDisk.writeIops,host.virtualDisk.readKBps,host.virtualDisk.writeKBps,host.virtualDisk.readLatencyMs,host.virtualDisk.writeLatencyMs,host.virtualDisk.latencyMs,' +
        'host.datastore.instance,host.datastore.readIops,host.datastore.writeIops,host.datastore.readKBps,host.datastore.writeKBps,host.datastore.readLatencyMs,host.datastore.writeLatencyMs,host.datastore.latencyMs,' +
        'host.esxtop.device,host.esxtop.davgMs,host.esxtop.kavgMs,host.esxtop.gavgMs,host.esxtop.qavgMs,host.esxtop.readIops,host.esxtop.writeIops,host.notes,tool,toolVersion',
    );
    expect(lines[1]).toMatch(/^seed-run,p-bs1,1,1,seq-1m-q1t1-read,read,1048576,1,1,100,[\d.]+,828041000,828.041,,,,,,,(,){33}crystaldiskmark,3.0$/); // no host figures: 33 empty host.* cells
  });

  it('quotes per RFC 4180 and defuses spreadsheet formulas in text, not in numbers', () => {
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvField('-2+3')).toBe("'-2+3");
    expect(csvField(-2.5)).toBe('-2.5');
    expect(csvField(null)).toBe('');
    const csv = renderCsv(labRecords({ hostileName: '=cmd|"/c calc"!A1', repetitions: 2 }));
    expect(csv).toContain(`,thin,"'=cmd|""/c calc""!A1",1,`);
    expect(renderCsv(labRecords({ hostileName: HOSTILE, repetitions: 1 }))).toContain(',thin,"""><script>alert(1)</script>|=cmd",1,');
  });
});

describe('json', () => {
  it('is the report model under a version key, with no Infinity', () => {
    const j = JSON.parse(renderJson(buildReport(labRecords(), { runId: 'lab' }))) as Record<string, unknown>;
    expect(j.storsweepReport).toBe(1);
    expect((j.tests as unknown[]).length).toBe(2);
    expect((j.info as { runId: string }).runId).toBe('lab');
    const constant = labRecords({ relNoise: 0 });
    expect(() => JSON.parse(renderJson(buildReport(constant, { runId: 'c' })))).not.toThrow();
  });
});

describe('charts', () => {
  it('draws one bar and one error bar per value, escaping labels', () => {
    const svg = barChart({ title: 'T <x>', unit: 'MB/s', bars: [{ label: HOSTILE, value: 10, low: 9, high: 11 }, { label: 'b', value: 20 }] });
    expect(svg.match(/<rect class="bar /g)).toHaveLength(2);
    expect(svg.match(/<path class="err"/g)).toHaveLength(1);
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('T &lt;x&gt;');
  });
  it('draws a zero line for negative deltas', () => {
    expect(barChart({ title: 'd', unit: '%', signed: true, bars: [{ label: 'a', value: -20, low: -25, high: -15 }] })).toContain('class="zero"');
  });
  it('draws a heatmap cell per combination, empty ones marked', () => {
    const svg = heatmap({ title: 'h', unit: 'IOPS', xName: 'x', yName: 'y', xValues: ['1', '8'], yValues: ['thin', 'thick'], cells: [[1, 2], [3, null]], higherIsBetter: true });
    expect(svg.match(/<rect class="cell"/g)).toHaveLength(3);
    expect(svg.match(/<rect class="cell empty"/g)).toHaveLength(1);
  });
  it('escapes quotes too (attribute context)', () => {
    expect(escapeXml(`a"b'c&`)).toBe('a&quot;b&#39;c&amp;');
  });
});

describe('html', () => {
  it('is self-contained: no script, no external URL, a CSP that forbids fetching', () => {
    const html = renderHtml(buildReport(labRecords({ hostileName: HOSTILE }), { runId: '<run>', insecureEndpoints: ['<vc>'] }));
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<link|<img|@import|url\(/i);
    const urls = html.match(/https?:\/\/[^\s"'<>]+/g) ?? [];
    expect(urls.every((u) => u === 'http://www.w3.org/2000/svg')).toBe(true);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
    expect(html).toContain('storsweep report — &lt;run&gt;');
    expect(html).toContain('&lt;vc&gt;');
  });
  it('has a chart per test, a Δ chart per axis comparison and a heatmap when two axes vary', () => {
    const html = renderHtml(buildReport(labRecords(), { runId: 'lab' }));
    // 2 tests × (1 means chart + 2 axis comparisons) bar charts, 2 heatmaps
    expect(html.match(/<svg class="chart bar-chart"/g)).toHaveLength(6);
    expect(html.match(/<svg class="chart heatmap"/g)).toHaveLength(2);
    const seeds = renderHtml(buildReport(seedRecords(), { runId: 'seeds' }));
    expect(seeds.match(/<svg class="chart bar-chart"/g)).toHaveLength(16);
    expect(seeds).not.toContain('class="chart heatmap"');
  });
});

describe('formatDelta', () => {
  it('says "too noisy to tell" when Fieller cannot bound the ratio, and gives no interval with n = 1', async () => {
    const { compareSamples } = await import('../../../src/report/stats.ts');
    const { formatDelta } = await import('../../../src/report/numbers.ts');
    const noisy = compareSamples([50, 52, 49, 51], [1, 100, 1, 100], true);
    expect(noisy.delta!.ci).toBeNull();
    expect(formatDelta(noisy)).toBe('too noisy to tell (0.0%)');
    expect(formatDelta(compareSamples([110], [100], true))).toBe('+10%');
  });
});

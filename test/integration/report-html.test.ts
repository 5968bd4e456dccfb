// Opens generated HTML reports in real headless Chromium (Debian `chromium`) and checks what a
// reader gets: charts drawn with bars, no console errors, no request besides the file itself, no
// horizontal scrolling on a phone-sized screen, and a printable PDF. Chromium is driven over the
// DevTools protocol on a pipe (test/helpers/chromium.ts).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReport, type CommandIo } from '../../src/cli/commands/report.ts';
import { testIdentity, type ResultRecord } from '../../src/results/record.ts';
import { createLocalRunner } from '../../src/ssh/local-runner.ts';
import { runFioTest } from '../../src/workloads/run-fio.ts';
import type { WorkloadProfile } from '../../src/workloads/spec.ts';
import { renderHtml } from '../../src/report/html.ts';
import { buildReport } from '../../src/report/model.ts';
import { loadSource } from '../../src/app/load-source.ts';
import { deltaTooNoisy, meanTooNoisy } from '../../src/report/numbers.ts';
import { FIXTURES, labRecords, SEED_BLOCK_SIZES } from '../unit/report/helpers.ts';
import { Browser, CHROMIUM, openPage } from '../helpers/chromium.ts';

const FIO = '/usr/bin/fio';

/**
 * A small real sweep on this machine: real fio, 2 tests × 2 ioengines × 3 repetitions of 1 s,
 * written as a run directory's results.jsonl — the shape a lab run leaves behind.
 */
async function realFioRun(dir: string): Promise<string> {
  const profile: WorkloadProfile = {
    name: 'report-test',
    description: 'two 1 s tests on a 16 MiB file',
    tests: [
      testIdentity({ pattern: 'read', blockSizeBytes: 1024 * 1024, queueDepth: 1, threads: 1, readPercent: 100 }),
      testIdentity({ pattern: 'randread', blockSizeBytes: 4096, queueDepth: 1, threads: 1, readPercent: 100 }),
    ],
    fileSizeBytes: 16 * 1024 * 1024,
    runtimeSec: 1,
    rampSec: 0,
    passes: 1,
    warmupPass: false,
    intervalSec: 0,
    direct: false,
    aggregate: 'max',
  };
  const runner = createLocalRunner(process.env);
  const records: ResultRecord[] = [];
  for (const ioengine of ['psync', 'sync']) {
    for (let repetition = 1; repetition <= 3; repetition++) {
      for (const test of profile.tests) {
        const o = await runFioTest(runner, test, profile, { filename: join(dir, 'fio.dat'), fioPath: FIO, ioengine });
        records.push({
          runId: 'local-fio',
          permutationId: `p-${ioengine}`,
          axes: { 'workload.ioengine': ioengine, 'target.name': 'local' },
          repetition,
          test,
          iops: o.iops,
          bytesPerSecond: o.bytesPerSecond,
          latencyUs: o.latencyUs,
          cpuPercent: o.cpuPercent,
          tool: { name: 'fio', version: o.toolVersion },
          rawPath: null,
        });
      }
    }
  }
  const runDir = join(dir, 'run-local-fio');
  mkdirSync(runDir);
  writeFileSync(join(runDir, 'results.jsonl'), records.map((r) => JSON.stringify(r) + '\n').join(''));
  writeFileSync(join(runDir, 'run.json'), JSON.stringify({ runId: 'local-fio', fingerprint: { 'tool.fio': records[0]!.tool.version ?? '?' } }));
  return runDir;
}

interface PageFacts {
  charts: number;
  barCharts: number;
  heatmaps: number;
  bars: number;
  drawnBars: number;
  errorBars: number;
  heatCells: number;
  scripts: number;
  overflowPx: number;
  text: string;
  /** the first <table> in the document: its class and where it is on the first screen */
  firstTable: { className: string; top: number; bottom: number; left: number; right: number; rows: number } | null;
  innerHeight: number;
  innerWidth: number;
}

interface Visit {
  facts: PageFacts;
  requests: string[];
  problems: string[];
  pdfBytes: number;
}

async function visit(browser: Browser, file: string, viewport: { width: number; height: number; mobile: boolean }): Promise<Visit> {
  const page = await openPage(browser, file, viewport);
  const expression = `JSON.stringify({
    charts: document.querySelectorAll('svg.chart').length,
    barCharts: document.querySelectorAll('svg.bar-chart').length,
    heatmaps: document.querySelectorAll('svg.heatmap').length,
    bars: document.querySelectorAll('svg.chart rect.bar').length,
    drawnBars: [...document.querySelectorAll('svg.chart rect.bar')].filter((r) => r.getBoundingClientRect().width > 0 && r.getBoundingClientRect().height > 0).length,
    errorBars: document.querySelectorAll('svg.chart path.err').length,
    heatCells: document.querySelectorAll('svg.heatmap rect.cell:not(.empty)').length,
    scripts: document.scripts.length,
    overflowPx: document.documentElement.scrollWidth - window.innerWidth,
    text: document.body.innerText,
    firstTable: (() => {
      const t = document.querySelector('table');
      if (!t) return null;
      const r = t.getBoundingClientRect();
      return { className: t.className, top: r.top, bottom: r.bottom, left: r.left, right: r.right, rows: t.rows.length };
    })(),
    innerHeight: window.innerHeight,
    innerWidth: window.innerWidth,
  })`;
  const facts = await page.evaluate<PageFacts>(expression);
  const pdf = (await browser.send('Page.printToPDF', { printBackground: true }, page.sessionId)) as { data: string };
  await page.close();
  return { facts, requests: page.requests, problems: page.problems, pdfBytes: Buffer.from(pdf.data, 'base64').length };
}

const HOSTILE = '<img src="http://127.0.0.1:9/x.png"><script>console.error("xss")</script>';

describe.skipIf(!existsSync(CHROMIUM))('HTML report in headless Chromium', () => {
  let dir: string;
  let browser: Browser;
  let labFile: string;
  let seedFile: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'storsweep-html-'));
    browser = Browser.launch(join(dir, 'profile'));
    await browser.send('Browser.getVersion');

    labFile = join(dir, 'lab.html');
    const lab = buildReport(labRecords({ thickFactor: 0.8, relNoise: 0.02, hostileName: HOSTILE }), {
      runId: 'lab-<b>run</b>',
      insecureEndpoints: [HOSTILE],
      fingerprint: { 'esxi.version': '8.0.2', 'guest.os': HOSTILE },
    });
    writeFileSync(labFile, renderHtml(lab));

    // The seeds go the way a user's files go: importer → report command → file.
    seedFile = join(dir, 'seeds.html');
    const io: CommandIo = { loadSource, stdout: () => {}, stderr: () => {} };
    await runReport(
      SEED_BLOCK_SIZES.map((mb) => `${FIXTURES}cdm3-vmfs3-${mb}mb.txt`),
      { format: 'html', output: seedFile },
      io,
    );
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('control: the checks do catch a console error and an outside request', async () => {
    const bad = join(dir, 'bad.html');
    writeFileSync(bad, '<!doctype html><title>bad</title><img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script>');
    const v = await visit(browser, bad, { width: 800, height: 600, mobile: false });
    expect(v.requests).toContain('http://127.0.0.1:9/x.png');
    expect(v.problems.some((p) => p.includes('boom'))).toBe(true);
    expect(v.facts.scripts).toBe(1);
  });

  it('lab run (two axes, 5 repetitions): bars with error bars, Δ charts, heatmaps; nothing fetched, nothing logged', async () => {
    const v = await visit(browser, labFile, { width: 1280, height: 900, mobile: false });
    expect(v.problems).toEqual([]);
    expect(v.requests).toEqual([pathToFileURL(labFile).href]);
    expect(v.facts.scripts).toBe(0);
    // 2 tests × (means chart + one Δ chart per varying axis) + 2 heatmaps
    expect(v.facts.barCharts).toBe(6);
    expect(v.facts.heatmaps).toBe(2);
    // means: 4 permutations per test; Δ: 2 rows per axis comparison → (4 + 2 + 2) × 2
    expect(v.facts.bars).toBe(16);
    expect(v.facts.drawnBars).toBe(16);
    expect(v.facts.errorBars).toBe(16);
    expect(v.facts.heatCells).toBe(8);
    // the untrusted name is shown as text, not run as markup
    expect(v.facts.text).toContain(HOSTILE);
    expect(v.facts.text).toContain('storsweep report — lab-<b>run</b>');
    expect(v.facts.text).toMatch(/slower/);
    expect(v.pdfBytes).toBeGreaterThan(1000);
  });

  it('answers first: the overview grid is the first table, whole on the first screen at 1400×900', async () => {
    for (const file of [labFile, seedFile]) {
      const v = await visit(browser, file, { width: 1400, height: 900, mobile: false });
      expect(v.problems).toEqual([]);
      expect(v.facts.innerHeight).toBe(900);
      const t = v.facts.firstTable!;
      expect(t.className).toBe('overview');
      // one header row plus one row per test (lab: 2 tests, seeds: 8)
      expect(t.rows).toBe(file === labFile ? 3 : 9);
      expect(t.top).toBeGreaterThanOrEqual(0);
      expect(t.bottom).toBeLessThanOrEqual(900);
      expect(t.left).toBeGreaterThanOrEqual(0);
      expect(t.right).toBeLessThanOrEqual(1400);
    }
    // and the answer lines are on that screen too
    const lab = await visit(browser, labFile, { width: 1400, height: 900, mobile: false });
    expect(lab.facts.text).toMatch(/format eagerzeroedthick vs thin: (SEQ1M Q8T1 read|RND4K Q32T1 write) \(blockSizeMb=\d\) (MB\/s|IOPS) -\d+% \[-\d+%, -\d+%\]/);
  });

  it('is readable on a phone: no horizontal page scrolling', async () => {
    const v = await visit(browser, labFile, { width: 390, height: 844, mobile: true });
    expect(v.problems).toEqual([]);
    expect(v.facts.overflowPx).toBeLessThanOrEqual(0);
    expect(v.facts.drawnBars).toBe(16);
  });

  it('CrystalDiskMark seeds (VMFS-3 1/2/4/8 MB): one means chart and one Δ chart per test', async () => {
    const v = await visit(browser, seedFile, { width: 1024, height: 768, mobile: false });
    expect(v.problems).toEqual([]);
    expect(v.requests).toEqual([pathToFileURL(seedFile).href]);
    expect(v.facts.barCharts).toBe(16);
    expect(v.facts.heatmaps).toBe(0);
    // 8 tests × (4 means + 3 deltas); single passes have no error bars
    expect(v.facts.drawnBars).toBe(56);
    expect(v.facts.errorBars).toBe(0);
    expect(v.facts.text).toContain('cdm3-vmfs3-8mb.txt');
  });
});

describe.skipIf(!existsSync(CHROMIUM) || !existsSync(FIO))('report of a real fio run on this machine', () => {
  let dir: string;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('renders markdown and HTML with n = 3, confidence intervals and a comparison of the two ioengines', async () => {
    dir = mkdtempSync(join(tmpdir(), 'storsweep-fio-report-'));
    const runDir = await realFioRun(dir);
    const io: CommandIo = { loadSource, stdout: () => {}, stderr: () => {} };
    const md = join(dir, 'report.md');
    const html = join(dir, 'report.html');
    await runReport([runDir], { format: 'md', output: md }, io);
    await runReport([runDir], { format: 'html', output: html }, io);
    const text = readFileSync(md, 'utf8');
    expect(text).toContain('# storsweep report — local-fio');
    expect(text).toContain('- Axes varied: workload.ioengine (psync, sync)');
    expect(text).toContain('- Fixed: target.name = local');
    expect(text).toMatch(/\| psync \| 3 \| [\d,.]+( ± [\d,.]+| \(too noisy to tell\)) \|/);
    expect(text).toMatch(/#### vs workload\.ioengine = psync\n\n\| permutation .*\n.*\n\| workload\.ioengine=sync \| MB\/s \| ([+-]?[\d.]+% \[[+-]?[\d.]+%, [+-]?[\d.]+%\]|too noisy to tell \([+-]?[\d.]+%\)) \| /);
    // real fio on a shared machine is noisy (page cache, neighbours): whatever the verdict, it must be one
    expect(text).toMatch(/\| (▲ faster|▼ slower|within noise) \|\n/);
    expect(text).toMatch(/### seq-1m-q1t1-read/);
    expect(text).toMatch(/### rnd-4k-q1t1-read/);

    browser = Browser.launch(join(dir, 'profile'));
    const v = await visit(browser, html, { width: 1280, height: 900, mobile: false });
    expect(v.problems).toEqual([]);
    expect(v.requests).toEqual([pathToFileURL(html).href]);
    // 2 tests × (2 means + 1 Δ) bars. A bar has an error bar exactly where its interval says
    // something (the report's own rule: numbers.ts meanTooNoisy / deltaTooNoisy) — real fio on a
    // loaded machine can make a mean at n = 3 too noisy, so the count is read from the report
    expect(v.facts.drawnBars).toBe(6);
    const report = buildReport((await loadSource(runDir)).records as ResultRecord[], { runId: 'local-fio' });
    let expected = 0;
    for (const t of report.tests) {
      for (const r of t.rows) {
        const c = r.cells[t.primaryMetric];
        if (c?.summary.ci && !meanTooNoisy(c.summary)) expected++;
      }
      for (const cmp of t.comparisons) for (const r of cmp.rows) if (r.metric === t.primaryMetric && r.comparison.delta?.ci && !deltaTooNoisy(r.comparison)) expected++;
    }
    expect(v.facts.errorBars).toBe(expected);
    expect(expected).toBeGreaterThan(0);
  });
});

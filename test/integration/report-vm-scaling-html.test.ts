// The scaling section of a vm.count study's HTML report, opened in real headless Chromium
// (test/helpers/chromium.ts) as a reader opens it: the section comes first, each curve has its two
// line charts drawn with their points, the VMs' p99 spread as error bars and the bend marked; nothing
// is fetched, nothing logged, and a phone does not scroll sideways.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderHtml } from '../../src/report/html.ts';
import { buildReport } from '../../src/report/model.ts';
import { Browser, CHROMIUM, openPage } from '../helpers/chromium.ts';
import { BENDS_AT_4, NO_BEND, vmStudyRecords } from '../unit/report/vm-records.ts';

interface ScalingFacts {
  firstSection: string | null;
  sectionTop: number;
  lineCharts: number;
  lines: number;
  drawnLines: number;
  dots: number;
  drawnDots: number;
  spreadBars: number;
  bendMarks: number;
  /** the bending curve's throughput chart: the y of the aggregate's dot at 4 VMs and of the linear line there (SVG y grows downwards) */
  atFour: { aggregate: number; linear: number } | null;
  scripts: number;
  overflowPx: number;
  text: string;
}

const FACTS = `JSON.stringify({
  firstSection: document.querySelector('main section')?.id ?? null,
  sectionTop: document.querySelector('#vm-scaling')?.getBoundingClientRect().top ?? -1,
  lineCharts: document.querySelectorAll('svg.line-chart').length,
  lines: document.querySelectorAll('svg.line-chart polyline.line').length,
  drawnLines: [...document.querySelectorAll('svg.line-chart polyline.line')].filter((l) => l.getBoundingClientRect().width > 0).length,
  dots: document.querySelectorAll('svg.line-chart circle.point').length,
  drawnDots: [...document.querySelectorAll('svg.line-chart circle.point')].filter((c) => c.getBoundingClientRect().width > 0).length,
  spreadBars: document.querySelectorAll('svg.line-chart path.err').length,
  bendMarks: document.querySelectorAll('svg.line-chart line.bend').length,
  atFour: (() => {
    const chart = [...document.querySelectorAll('svg.line-chart')].find((s) => s.querySelector('line.bend'));
    const dots = chart ? [...chart.querySelectorAll('g.s0 circle.point')] : [];
    const linear = chart?.querySelector('g.dashed polyline.line');
    if (!dots.length || !linear) return null;
    const last = linear.getAttribute('points').trim().split(' ').pop().split(',');
    return { aggregate: Number(dots[dots.length - 1].getAttribute('cy')), linear: Number(last[1]) };
  })(),
  scripts: document.scripts.length,
  overflowPx: document.documentElement.scrollWidth - window.innerWidth,
  text: document.body.innerText,
})`;

describe.skipIf(!existsSync(CHROMIUM))('a vm.count study in headless Chromium', () => {
  let dir: string;
  let browser: Browser;
  let file: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'storsweep-vm-html-'));
    browser = Browser.launch(join(dir, 'profile'));
    await browser.send('Browser.getVersion');
    file = join(dir, 'vm.html');
    writeFileSync(file, renderHtml(buildReport(vmStudyRecords({ counts: [1, 2, 4], curves: [BENDS_AT_4, NO_BEND] }), { runId: 'vm-run' })));
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('opens with the scaling section: two line charts per curve, drawn, the bend marked where it is', async () => {
    const page = await openPage(browser, file, { width: 1280, height: 900, mobile: false });
    const f = await page.evaluate<ScalingFacts>(FACTS);
    await page.close();
    expect(page.problems).toEqual([]);
    expect(page.requests).toEqual([pathToFileURL(file).href]);
    expect(f.scripts).toBe(0);
    expect(f.firstSection).toBe('vm-scaling');
    expect(f.sectionTop).toBeGreaterThanOrEqual(0);
    expect(f.sectionTop).toBeLessThan(900);
    // 2 curves × (throughput: aggregate + linear; latency: p99, p50, mean)
    expect(f.lineCharts).toBe(4);
    expect(f.lines).toBe(10);
    expect(f.drawnLines).toBe(10);
    // dots on measured series only: 2 curves × (3 + 3 × 3)
    expect(f.dots).toBe(24);
    expect(f.drawnDots).toBe(24);
    // p99's spread between VMs at every count of both curves
    expect(f.spreadBars).toBe(6);
    expect(f.bendMarks).toBe(2);
    // where it bends, the aggregate lies below linear scaling
    expect(f.atFour!.aggregate).toBeGreaterThan(f.atFour!.linear);
    expect(f.text).toContain('Bends at 4 VMs: going from 2 to 4 VMs added 18% of linear scaling.');
    expect(f.text).toContain('No bend up to 4 VMs.');
  });

  it('is readable on a phone: no horizontal page scrolling', async () => {
    const page = await openPage(browser, file, { width: 390, height: 844, mobile: true });
    const f = await page.evaluate<ScalingFacts>(FACTS);
    await page.close();
    expect(page.problems).toEqual([]);
    expect(f.overflowPx).toBeLessThanOrEqual(0);
    expect(f.drawnDots).toBe(24);
  });
});

// Host-side metrics of a vSphere sweep: every record carries what PerformanceManager reported for
// the disk under test (virtualDisk.*, instance scsi<bus>:<unit>) and its datastore, and the reports
// set the host's latency beside the guest's per permutation.
//
// THE SERIES ARE SYNTHETIC: govmomi's simulator (with our harness's counters, perf.go) returns
// cyclic made-up values with noise. This test proves the plumbing — counters resolved by name from
// perfCounter, the right instances asked for, samples kept for the test's span, stored and
// reported — never that the numbers mean anything.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { NOTHING_LEFT, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';
import type { HostMetrics, ResultRecord } from '../../src/results/record.ts';
import { formatLatency } from '../../src/report/numbers.ts';

let lab: VsphereLab;
beforeAll(async () => {
  lab = await startVsphereLab();
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});

async function records(runDir: string): Promise<ResultRecord[]> {
  const text = await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ResultRecord);
}

/** One CSV line's cells (RFC 4180 quotes; no line break inside a cell in these files). */
function csvCells(line: string): string[] {
  return [...line.matchAll(/(?:^|,)("(?:[^"]|"")*"|[^,]*)/g)].map((m) => (m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!));
}

describe('vSphere: host latency per permutation (synthetic series from the simulator)', () => {
  it('each record carries the virtual disk and datastore figures, and report.html/.md set host beside guest', async () => {
    const runs = await lab.newRunsDir('host');
    const pb = await lab.writePlaybook('host.yaml', sweepPlaybook({ blockSizesMb: [1, 8], formats: ['thin'], repeat: 1 }));
    const args = lab.runArgs(runs).filter((a) => a !== '--no-report');
    const r = await runCli(['run', pb, ...args]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    const runDir = (JSON.parse(lines[lines.length - 1]!) as { runDir: string }).runDir;
    const recs = await records(runDir);
    expect(recs.length).toBe(2);
    const calls = await lab.sim.control.calls();
    for (const rec of recs) {
      const host = rec.host as HostMetrics;
      expect(host, JSON.stringify(rec.host)).toBeDefined();
      expect(host.source).toBe('vsphere-perf');
      // the simulator's real-time refreshRate for a VM, as QueryPerfProviderSummary says
      expect(host.intervalSec).toBe(20);
      expect(host.samples).toBeGreaterThan(0);
      // the disk the permutation attached: its controller's bus and its unit, as ESXi names it
      expect(host.virtualDisk?.instance).toMatch(/^scsi\d+:\d+$/);
      expect(host.virtualDisk?.readLatencyMs).toEqual(expect.any(Number));
      expect(host.virtualDisk?.readIops).toBeGreaterThan(0);
      // the datastore the permutation made, by its VMFS uuid (never the moref value)
      expect(host.datastore?.instance).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(host.latencyUs).toEqual(expect.any(Number));
      expect(host.latencySpan).toMatch(/virtualDisk\.totalReadLatency/);
      expect(Date.parse(host.to)).toBeGreaterThanOrEqual(Date.parse(host.from));
    }
    // asked of the server, by name: perfCounter read, one summary and one availability query per permutation
    expect(calls.QueryPerfProviderSummary).toBe(2);
    expect(calls.QueryAvailablePerfMetric).toBe(2);
    expect(calls.QueryPerf).toBeGreaterThanOrEqual(2);
    const html = await fs.readFile(path.join(runDir, 'report.html'), 'utf8');
    expect(html).toContain('Guest vs host latency');
    // the table itself: one row per permutation and test, the guest's mean, the host's, and the gap
    const at = html.indexOf('<h2>Guest vs host latency</h2>');
    const section = html.slice(at, html.indexOf('</section>', at));
    expect(section).toContain('<th>gap (guest − host)</th>');
    const rows = [...section.matchAll(/<tbody>(.*?)<\/tbody>/gs)].flatMap((m) => m[1]!.split('</tr>').filter(Boolean));
    expect(rows).toHaveLength(recs.length);
    for (const rec of recs) {
      const row = rows.find((r) => r.includes(`(${rec.permutationId})</td><td class="t">${rec.test.id}</td>`));
      expect(row, `no row for ${rec.permutationId} ${rec.test.id}`).toBeDefined();
      const guest = rec.latencyUs.mean!;
      const host = (rec.host as HostMetrics).latencyUs!;
      const gap = guest - host;
      expect(row).toContain(`<td>${formatLatency(guest)}</td><td>${formatLatency(host)}</td><td>${gap < 0 ? '−' : ''}${formatLatency(Math.abs(gap))}</td>`);
    }
    expect(section).toMatch(/virtualDisk\.totalReadLatency/);
    const md = await fs.readFile(path.join(runDir, 'report.md'), 'utf8');
    expect(md).toContain('Guest vs host latency');
    // results --csv: the same host figures, one column each, named by their path in the record
    const csv = await runCli(['results', runDir, '--csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const [header, ...csvRows] = csv.stdout.trimEnd().split('\r\n').map(csvCells);
    expect(csvRows).toHaveLength(2);
    const cell = (row: string[], name: string) => row[header!.indexOf(name)];
    for (const row of csvRows) {
      const rec = recs.find((x) => x.permutationId === cell(row, 'permutationId') && x.test.id === cell(row, 'testId'))!;
      const host = rec.host as HostMetrics;
      expect(cell(row, 'host.source')).toBe('vsphere-perf');
      expect(Number(cell(row, 'host.latencyUs'))).toBe(host.latencyUs);
      expect(Number(cell(row, 'latencyMeanUs'))).toBe(rec.latencyUs.mean);
      expect(cell(row, 'host.virtualDisk.instance')).toBe(host.virtualDisk!.instance);
      expect(Number(cell(row, 'host.virtualDisk.readLatencyMs'))).toBe(host.virtualDisk!.readLatencyMs);
      expect(cell(row, 'host.datastore.instance')).toBe(host.datastore!.instance);
      expect(Number(cell(row, 'host.samplesInside'))).toBe(host.samplesInside);
      expect(cell(row, 'host.latencySpan')).toBe(host.latencySpan);
      expect(cell(row, 'host.esxtop.gavgMs')).toBe('');
    }
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  }, 300_000);
});

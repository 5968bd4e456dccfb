// Host latency from vSphere at the resolution the host offers: where the virtual disk has the
// microsecond counters (virtualDisk.readLatencyUS/writeLatencyUS; the harness offers them from 6.5 on,
// as the counter tables captured from real servers list them: perf.go), the record's host latency
// comes from them and says so (span, 1 µs resolution); where only the whole-millisecond
// totalRead/WriteLatency exist (the 5.5 profile) the record says 1 ms resolution and why, and the
// report shows no guest − host gap smaller than that.
//
// THE SERIES ARE SYNTHETIC (the simulator's cyclic values): the plumbing is tested, not a measurement.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HostMetrics, ResultRecord } from '../../src/results/record.ts';
import { runCli } from '../helpers/cli.ts';
import { diskPlaybook } from '../helpers/disk-playbook.ts';
import { NOTHING_LEFT, runDirOf, sweepPlaybook, useVsphereLab } from '../helpers/vsphere-lab.ts';

async function hostOf(runDir: string): Promise<HostMetrics[]> {
  const text = await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8');
  return text.trim().split('\n').map((l) => (JSON.parse(l) as ResultRecord).host as HostMetrics);
}

describe('8.0: the microsecond counters', () => {
  const lab = useVsphereLab({ version: '8.0' });

  it('records take the virtual disk latency from readLatencyUS/writeLatencyUS, at 1 µs resolution', async () => {
    const pb = await lab.writePlaybook('us.yaml', diskPlaybook({ name: 'us', target: 'lab-vcenter', format: 'thin' }));
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', await lab.newRunsDir('us'), '--no-report', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const hosts = await hostOf(runDirOf(r));
    expect(hosts.length).toBeGreaterThan(0);
    for (const h of hosts) {
      expect(h.source, JSON.stringify(h)).toBe('vsphere-perf');
      expect(h.latencySpan).toMatch(/virtualDisk\.readLatencyUS\/writeLatencyUS/);
      expect(h.latencyResolutionUs).toBe(1);
      expect(h.notes ?? []).not.toContainEqual(expect.stringMatching(/no microsecond latency counters/));
      // the synthetic µs series (perf.go) are not whole milliseconds: the ms counters would have rounded them
      expect(Number.isInteger(h.virtualDisk!.writeLatencyMs)).toBe(false);
      expect(h.latencyUs).toEqual(expect.any(Number));
    }
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  }, 180_000);
});

describe('5.5: whole milliseconds only', () => {
  const lab = useVsphereLab({ version: '5.5' });

  it('records say 1 ms resolution and why; the report shows no gap below it', async () => {
    const runs = await lab.newRunsDir('ms');
    const pb = await lab.writePlaybook('ms.yaml', sweepPlaybook({ blockSizesMb: [1], formats: ['thin'], repeat: 1 }));
    const r = await runCli(['run', pb, ...lab.runArgs(runs).filter((a) => a !== '--no-report')]);
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    const hosts = await hostOf(runDir);
    for (const h of hosts) {
      expect(h.latencySpan).toMatch(/totalReadLatency\/totalWriteLatency: .*whole ms/);
      expect(h.latencyResolutionUs).toBe(1000);
      expect(h.notes).toContainEqual(expect.stringMatching(/offers no microsecond latency counters .* a guest − host difference under 1 ms is the counter’s rounding/));
    }
    const md = await fs.readFile(path.join(runDir, 'report.md'), 'utf8');
    expect(md).toMatch(/a difference smaller than the host counter’s resolution/);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  }, 180_000);
});

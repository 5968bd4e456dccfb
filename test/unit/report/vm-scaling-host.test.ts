// The scaling section's host columns and spread (issue 32): per VM count, each VM's own disk as the
// host saw it (the members' virtualDisk latency: mean, min – max) beside the shared datastore's (the
// aggregates'), the guest's latency in the same row, and the spread between VMs of IOPS and p99.
import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../../src/report/html.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { buildReport } from '../../../src/report/model.ts';
import { formatLatency } from '../../../src/report/numbers.ts';
import { SCALING_HOST_HEADER } from '../../../src/report/vm-scaling-text.ts';
import type { HostMetrics, ResultRecord } from '../../../src/results/record.ts';
import { aggregateVmPass } from '../../../src/results/vm-aggregate.ts';
import { VM_DATASTORE_SPAN } from '../../../src/results/vm-host.ts';
import { BENDS_AT_4, memberRecords, vmStudyRecords } from './vm-records.ts';

const VDISK_SPAN = 'virtualDisk.readLatencyUS/writeLatencyUS: from the VMkernel receiving the guest’s command';

/** A member's host figures: its own disk at `us`, the datastore as it saw it. */
function memberHost(vm: string, us: number): HostMetrics {
  const ds = { instance: 'ds-uuid', readIops: 1000, writeIops: 0, readKBps: 4000, writeKBps: 0, readLatencyMs: us / 1000 + 1, writeLatencyMs: null, latencyMs: us / 1000 + 1 };
  return { source: 'vsphere-perf', from: '2026-12-06T02:00:00Z', to: '2026-12-06T02:00:02Z', entity: vm, window: 'scored-passes', intervalSec: 20, samples: 1, samplesInside: 0, virtualDisk: { ...ds, instance: 'scsi0:1', readLatencyMs: us / 1000, latencyMs: us / 1000 }, datastore: ds, latencyUs: us, latencySpan: VDISK_SPAN, latencyResolutionUs: 1 };
}

/** vm.count 1 and 2, two repetitions; VM k's disk at 100·k + 10·rep µs as the host saw it. */
function studyWithHost(): ResultRecord[] {
  const out: ResultRecord[] = [];
  for (const count of [1, 2]) {
    for (const rep of [1, 2]) {
      const members = memberRecords({ counts: [1, 2], curves: [BENDS_AT_4] }, BENDS_AT_4, count, rep).map((m) => ({ ...m, host: memberHost(m.vm!.name!, 100 * m.vm!.index! + 10 * rep) }));
      out.push(...members, aggregateVmPass(members));
    }
  }
  return out;
}

const cellsOf = (line: string) => line.split('|').slice(1, -1).map((c) => c.trim());

describe('the scaling section with host figures', () => {
  const records = studyWithHost();
  const report = buildReport(records, { runId: 'vm-run' });
  const curve = report.vmScaling!.curves[0]!;

  it('per VM count: the members\' own disk latency (mean, lowest, highest) and the aggregates\' datastore latency', () => {
    expect(curve.host).toBe(true);
    const two = curve.points.find((p) => p.count === 2)!;
    // VM 1: 110, 120 µs; VM 2: 210, 220 µs
    expect(two.hostVdiskMeanUs).toBeCloseTo(165, 9);
    expect(two.hostVdiskMinUs).toBe(110);
    expect(two.hostVdiskMaxUs).toBe(220);
    const aggregates = records.filter((r) => r.vm?.role === 'aggregate' && r.vm.count === 2);
    expect(aggregates.every((a) => (a.host as HostMetrics).latencySpan === VM_DATASTORE_SPAN)).toBe(true);
    expect(two.hostDatastoreUs).toBeCloseTo(aggregates.reduce((s, a) => s + (a.host as HostMetrics).latencyUs!, 0) / 2, 9);
    expect(report.vmScaling!.hostSpans).toEqual({ vdisk: [VDISK_SPAN], datastore: [VM_DATASTORE_SPAN] });
  });

  it('Markdown: the host columns beside the guest\'s latency, and what each covers', () => {
    const md = renderMarkdown(report);
    const section = md.slice(md.indexOf('## Scaling with VM count'), md.indexOf('## Overview'));
    const lines = section.split('\n');
    const header = cellsOf(lines.find((l) => l.startsWith('| VMs'))!);
    expect(header.slice(-2)).toEqual([...SCALING_HOST_HEADER]);
    expect(header).toContain('lat mean');
    const two = cellsOf(lines.find((l) => l.startsWith('| 2 |'))!);
    const p = curve.points.find((q) => q.count === 2)!;
    expect(two[header.indexOf(SCALING_HOST_HEADER[0])]).toBe(`${formatLatency(165)} (${formatLatency(110)} – ${formatLatency(220)})`);
    expect(two[header.indexOf(SCALING_HOST_HEADER[1])]).toBe(formatLatency(p.hostDatastoreUs));
    expect(two[header.indexOf('lat mean')]).toBe(formatLatency(p.latencyMeanUs));
    expect(section).toContain(`- host lat, one VM's disk: ${VDISK_SPAN}`);
    expect(section).toContain(`- host lat, datastore: ${VM_DATASTORE_SPAN}`);
  });

  it('HTML: the same columns and legend', () => {
    const html = renderHtml(report);
    const section = html.slice(html.indexOf('<section id="vm-scaling">'), html.indexOf('</section>', html.indexOf('<section id="vm-scaling">')));
    for (const h of SCALING_HOST_HEADER) expect(section).toContain(h.replace(/'/g, '&#39;'));
    expect(section).toContain('host lat, datastore: datastore.totalReadLatency');
  });
});

describe('the scaling section without host figures', () => {
  it('has no host columns and no host legend', () => {
    const report = buildReport(vmStudyRecords({ counts: [1, 2], curves: [BENDS_AT_4] }), { runId: 'vm-run' });
    expect(report.vmScaling!.curves[0]!.host).toBe(false);
    const md = renderMarkdown(report);
    expect(md).not.toContain(SCALING_HOST_HEADER[1]);
    expect(md).not.toContain('host lat, one VM');
  });
});

describe('the spread between VMs per VM count', () => {
  it('shows the p99 CV beside the IOPS CV, as the mean of the passes\' CVs', () => {
    const records = vmStudyRecords({ counts: [1, 2], curves: [BENDS_AT_4] });
    const report = buildReport(records, { runId: 'vm-run' });
    const two = report.vmScaling!.curves[0]!.points.find((p) => p.count === 2)!;
    const cvs = records.filter((r) => r.vm?.role === 'aggregate' && r.vm.count === 2).map((r) => r.vm!.spread!['p99Cv']!);
    expect(cvs.every((c) => c > 0)).toBe(true);
    expect(two.p99Cv).toBeCloseTo(cvs.reduce((s, c) => s + c, 0) / cvs.length, 12);
    const md = renderMarkdown(report);
    const lines = md.split('\n');
    const header = cellsOf(lines.find((l) => l.startsWith('| VMs'))!);
    const row = cellsOf(lines.find((l) => l.startsWith('| 2 |'))!);
    expect(row[header.indexOf('p99 CV between VMs')]).toBe(`${(two.p99Cv! * 100).toFixed(1)}%`);
    expect(header.indexOf('p99 CV between VMs')).toBe(header.indexOf('p99 of one VM (min–max)') + 1);
  });
});

// A bare disk (an ssh target: no datastore, no disk format) beside a VM's VMDK and RDM in one run:
// the bare target's one row is the reference, compared with each format on every shared test; the
// answer says which axes the bare side lacks, and never answers "nothing" without saying why.
import { describe, expect, it } from 'vitest';
import { buildReport } from '../../../src/report/model.ts';
import { axisFindings } from '../../../src/report/wording.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { testIdentity, type ResultRecord } from '../../../src/results/record.ts';

const KiB = 1024;
const tests = [
  testIdentity({ pattern: 'randread', blockSizeBytes: 4 * KiB, queueDepth: 32, threads: 1, readPercent: 100 }),
  testIdentity({ pattern: 'read', blockSizeBytes: 1024 * KiB, queueDepth: 8, threads: 1, readPercent: 100 }),
];

function records(): ResultRecord[] {
  const perms = [
    { id: 'p-bare', axes: { target: 'lab-guest', 'workload.profile': 'q' }, factor: 1 },
    { id: 'p-thin', axes: { target: 'lab-vcenter', 'datastore.kind': 'existing', 'disk.format': 'thin', 'workload.profile': 'q' }, factor: 0.5 },
    { id: 'p-rdm', axes: { target: 'lab-vcenter', 'datastore.kind': 'existing', 'disk.format': 'rdm-physical', 'workload.profile': 'q' }, factor: 0.9 },
  ];
  const out: ResultRecord[] = [];
  for (const p of perms) {
    for (let rep = 1; rep <= 3; rep++) {
      for (const t of tests) {
        const bytesPerSecond = 400e6 * p.factor * (1 + rep * 0.001);
        out.push({
          runId: 'mixed',
          permutationId: p.id,
          axes: p.axes,
          repetition: rep,
          test: t,
          iops: bytesPerSecond / t.blockSizeBytes,
          bytesPerSecond,
          latencyUs: { mean: 100, p50: null, p95: null, p99: null, p999: null },
          cpuPercent: null,
          tool: { name: 'fio', version: 'fio-3.33' },
          rawPath: `raw/${p.id}-${rep}.json`,
        } as ResultRecord);
      }
    }
  }
  return out;
}

describe('a bare target beside a VM in one report', () => {
  it('--baseline target=lab-guest: VMDK and RDM each compared with the bare disk on every shared test', () => {
    const report = buildReport(records(), { runId: 'mixed' }, { baseline: { axis: 'target', value: 'lab-guest' } });
    for (const s of report.tests) {
      const c = s.comparisons.find((x) => x.axis === 'target')!;
      const primary = c.rows.filter((r) => r.metric === s.primaryMetric);
      expect(primary.map((r) => r.permutationId).sort()).toEqual(['p-rdm', 'p-thin']);
      expect(primary.every((r) => r.baselinePermutationId === 'p-bare')).toBe(true);
      expect(primary.find((r) => r.permutationId === 'p-thin')!.comparison.delta!.pct).toBeCloseTo(-50, 0);
    }
    const line = axisFindings(report).find((f) => f.axis === 'target')!.text;
    expect(line).toMatch(/^target lab-vcenter vs lab-guest \(lab-guest has no datastore\.kind, disk\.format\): /);
    expect(line).toContain('beyond noise');
    expect(line).not.toContain('nothing to compare');
  });

  it('the other way round (baseline lab-vcenter): the bare row would line up with each format, and the answer says so', () => {
    const report = buildReport(records(), { runId: 'mixed' }, { baseline: { axis: 'target', value: 'lab-vcenter' } });
    const line = axisFindings(report).find((f) => f.axis === 'target')!.text;
    expect(line).toBe(
      'target lab-guest vs lab-vcenter (lab-guest has no datastore.kind, disk.format): nothing to compare (target lab-guest has no disk.format, which target lab-vcenter varies: it would line up with each of them; compare them the other way round (--baseline target=lab-guest))',
    );
    expect(renderMarkdown(report)).toContain('compare them the other way round (--baseline target=lab-guest)');
  });

  it('by default (first value of each axis): target against the bare disk, and disk.format within the VM', () => {
    const report = buildReport(records(), { runId: 'mixed' });
    const lines = axisFindings(report).map((f) => f.text);
    expect(lines.some((l) => l.startsWith('target lab-vcenter vs lab-guest'))).toBe(true);
    expect(lines.some((l) => l.startsWith('format rdm-physical vs thin') && !l.includes('nothing to compare'))).toBe(true);
  });

  it('the axes line shows the bare target without the axes it lacks', () => {
    const md = renderMarkdown(buildReport(records(), { runId: 'mixed' }));
    expect(md).toContain('- Fixed: workload.profile = q; source = mixed; datastore.kind = existing (lab-guest: none)');
    expect(md).toMatch(/- Axes varied: .*disk\.format \(thin, rdm-physical\) \(lab-guest: none\)/);
  });
});

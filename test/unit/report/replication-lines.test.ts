// What a report says about the run's repetitions: the replication unit with the round order's seed,
// and for repeat-until-stable which permutations reached the asked interval and which did not, by
// the rule the run stopped on (results/stability.ts).
import { describe, expect, it } from 'vitest';
import { buildReport, type RunInfo } from '../../../src/report/model.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { repeatUntilLine, replicationLine } from '../../../src/report/wording.ts';
import { NULL_LATENCY, testIdentity, type ResultRecord } from '../../../src/results/record.ts';

const test = testIdentity({ pattern: 'randread', blockSizeBytes: 4096, queueDepth: 1, threads: 1, readPercent: 100 });
const rec = (perm: string, format: string, repetition: number, iops: number): ResultRecord => ({
  runId: 'r1', permutationId: perm, axes: { 'disk.format': format }, repetition, test, iops, bytesPerSecond: iops * 4096,
  latencyUs: { ...NULL_LATENCY }, cpuPercent: null, tool: { name: 'fio', version: 'fio-3.33' }, rawPath: null,
});
// thin: steady, stopped at 3; eager: noisy, ran to 8
const records = [...[1000, 1001, 999].map((v, i) => rec('p1', 'thin', i + 1, v)), ...[500, 1500, 600, 1400, 700, 1300, 800, 1200].map((v, i) => rec('p2', 'eager', i + 1, v))];

describe('the report on the run\'s repetitions', () => {
  it('names the unit and the round order\'s seed', () => {
    const info: RunInfo = { runId: 'r1', replication: 'between-provisionings', rounds: { seed: 42 } };
    expect(replicationLine(buildReport(records, info))).toBe('Replication unit: the provisioning (each repetition on freshly provisioned objects): intervals include between-provisioning variance; in rounds (repetition k of every permutation before any k+1), each round in a random order from seed 42');
  });

  it('repeat until stable: which permutations reached the interval, and which did not', () => {
    const info: RunInfo = { runId: 'r1', replication: 'between-provisionings', repeatUntil: { ciPct: 5, min: 3, max: 8 } };
    const line = repeatUntilLine(buildReport(records, info))!;
    expect(line).toMatch(/^Repeat until stable: until the main metric's 95 % interval is within ±5 % of its mean, 3–8 repetitions; reached by 1 of 2: disk\.format=thin \(n = 3, ±0\.2 %\); not reached: disk\.format=eager \(n = 8, ±32\.8 %\)$/);
    expect(renderMarkdown(buildReport(records, info))).toContain('Repeat until stable');
    expect(repeatUntilLine(buildReport(records, { runId: 'r1' }))).toBeNull();
  });
});

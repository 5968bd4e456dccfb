// A run directory may come from anyone (a colleague's tarball, a shared disk): `results` and `status`
// print nothing from it raw. Every name in a hostile run — playbook, target, axis names and values,
// test ids, tool versions, failure reasons, a left-over object's kind, name and error — carries
// ANSI colour, an OSC 8 hyperlink, a CR LF with a forged line after it, a tab, a bidi override and a
// C1 CSI. The CLI (spawned, as a user runs it) must show each as a visible escape on its own line:
// no byte a terminal acts on, and no line the run did not have.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunPlan } from '../../../src/contract/plan.ts';
import { NULL_LATENCY, testIdentity, type ResultRecord } from '../../../src/results/record.ts';
import { ResultStore, type RunMeta } from '../../../src/results/store.ts';
import { runCli } from '../../helpers/cli.ts';

const H = 'X\x1b[31mRED\x1b]8;;http://evil.example\x07LINK\x1b]8;;\x07\r\nFORGED LINE\u202eRTL\tTAB\x9bC1';
/** What a terminal would act on, or a line end that is not the output's own. */
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-hostile-'));
  const meta = { runId: 'rhostile', playbook: `pb${H}`, playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: `t${H}`, startedAt: `2024-01-01T00:00:00.000Z${H}`, fingerprint: { storsweep: `0.1.0${H}` }, insecureEndpoints: [] } as RunMeta;
  const axes = { [`disk.format${H}`]: `v${H}` };
  const plan = {
    version: 1,
    runId: 'rhostile',
    playbook: `pb${H}`,
    target: `t${H}`,
    provider: 'local',
    axes: [{ name: `disk.format${H}`, values: [`v${H}`] }],
    baseline: null,
    profiles: {},
    permutations: ['pA', 'pB'].map((id, index) => ({ index, permutationId: id, axes, workload: `w${H}`, steps: [], repetitions: 1, estimateSec: 1 })),
    totalEstimateSec: 2,
  } as unknown as RunPlan;
  const s = ResultStore.create(dir, meta, plan);
  const test = { ...testIdentity({ pattern: 'read', blockSizeBytes: 1 << 20, queueDepth: 8, threads: 1, readPercent: 100 }), id: `read${H}` };
  const rec: ResultRecord = { runId: 'rhostile', permutationId: 'pA', axes, repetition: 1, test, iops: 1, bytesPerSecond: 1, latencyUs: NULL_LATENCY, cpuPercent: null, tool: { name: 'fio', version: `fio${H}` }, rawPath: 'raw/x' };
  s.markRunning('pA');
  s.addRepetition('pA', 1, [rec]);
  s.markFinished('pA', 'done', null);
  s.markRunning('pB');
  s.ledgerIntent('pB', 'local', { kind: `file${H}`, name: `ss-rhostile-pB-x${H}` }, {});
  s.ledgerState({ kind: `file${H}`, name: `ss-rhostile-pB-x${H}` }, 'remove-failed', `error${H}`);
  s.markFinished('pB', 'failed', `reason${H}`);
  s.close();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const lines = (text: string) => text.replace(/\n$/, '').split('\n');

describe('results and status of a hostile run directory print nothing raw', () => {
  it('results: the header and one line for the one record, every hostile value shown as escapes', async () => {
    const r = await runCli(['results', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(lines(r.stdout)).toHaveLength(2);
    expect(lines(r.stdout)[1]).toContain('readX\\x1b[31mRED\\x1b]8;;http://evil.example\\x07LINK\\x1b]8;;\\x07\\r\\nFORGED LINE\\u202eRTL\\tTAB\\x9bC1');
  });

  it('status: the run line, the counts, the failed permutation, the leftover heading and the leftover: five lines, all escaped', async () => {
    const r = await runCli(['status', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    const out = lines(r.stdout);
    expect(out).toHaveLength(5);
    expect(out[0]).toMatch(/^run rhostile \(pbX\\x1b\[31mRED.*\\r\\nFORGED LINE\\u202eRTL\\tTAB\\x9bC1 → tX\\x1b.*\), started 2024-01-01T00:00:00\.000ZX\\x1b/);
    expect(out[2]).toMatch(/^ {2}failed {2}pB .*=vX\\x1b.*: reasonX\\x1b\[31mRED.*\\r\\nFORGED LINE.*\\x9bC1$/);
    expect(out[4]).toMatch(/^ {2}remove-failed fileX\\x1b.* ss-rhostile-pB-xX\\x1b.*: errorX\\x1b.*\\x9bC1$/);
  });

  it('--json keeps the values, escaped as JSON does', async () => {
    const json = await runCli(['status', dir, '--json']);
    expect(json.stdout).not.toMatch(RAW);
    expect((JSON.parse(json.stdout) as { permutations: Array<{ reason: string | null }> }).permutations[1]!.reason).toBe(`reason${H}`);
    const records = await runCli(['results', dir, '--json']);
    expect(records.stdout).not.toMatch(RAW);
    expect((JSON.parse(records.stdout) as ResultRecord).test.id).toBe(`read${H}`);
  });

  it('a store.json naming a store with CR LF and escapes in its user, database and password reference: the refusal is one line, escaped', async () => {
    const ptr = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-hostile-ptr-'));
    try {
      fs.writeFileSync(path.join(ptr, 'store.json'), JSON.stringify({ store: 'postgresql://u%0D%0AFORGED%1B[31m@127.0.0.1:1/d%0Ab', runId: 'r1', passwordRef: '${env:X\nY}' }));
      for (const extra of [[], ['--store', 'postgresql://a@b:5432/c']]) {
        const r = await runCli(['status', ptr, ...extra]);
        expect(r.code).toBe(2);
        expect(r.stderr).not.toMatch(RAW);
        expect(lines(r.stderr)).toHaveLength(1);
        expect(r.stderr).toContain('postgresql://u\\r\\nFORGED\\x1b[31m@127.0.0.1:1/d\\nb');
      }
    } finally {
      fs.rmSync(ptr, { recursive: true, force: true });
    }
  });
});

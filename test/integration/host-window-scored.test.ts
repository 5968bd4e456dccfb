// The host watches a test's scored passes only (issue 27: "align the host window with the scored
// passes, not pass 0, the pauses and the start-up"). Proven by the order of events, not by clocks:
// fio waits at a gate (test/helpers/fio-gate.ts) at each of its runs — the fill, the unscored pass
// 0, the measured pass — and the simulator's call log says when the observation started (the
// perf observer reads the host's clock, CurrentTime, as it starts and as it stops). While pass 0
// waits, nothing of the test was observed yet; when the measured pass waits, the observation has
// started once. The record says its host window is the scored passes, and the report says so.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostMetrics, ResultRecord } from '../../src/results/record.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { diskPlaybook } from '../helpers/disk-playbook.ts';
import { fioGate, type FioGate } from '../helpers/fio-gate.ts';
import { NOTHING_LEFT, runDirOf, startVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';
import { waitFor } from '../helpers/wait.ts';

let lab: VsphereLab;
beforeAll(async () => void (lab = await startVsphereLab({ version: '8.0' })), 120_000);
afterAll(async () => void (await lab?.stop()));

/** The fio waiting at the gate, once exactly one is (its arguments). */
async function held(gate: FioGate, what: string): Promise<string[]> {
  await waitFor(() => gate.held().length === 1, { what, timeoutMs: 120_000 });
  return gate.held()[0]!.args;
}

/** Lets the fio waiting through, and holds the next one (it starts only after this one ran its second). */
async function letThrough(gate: FioGate): Promise<void> {
  gate.open();
  await waitFor(() => gate.held().length === 0, { what: 'the fio to pass the gate' });
  gate.close();
}

describe('host latency window', () => {
  it('starts after the unscored pass 0, before the first measured pass; the record and the report say the span', async () => {
    const text = diskPlaybook({ name: 'window', target: 'lab-vcenter', format: 'thin' }).replace('  warmupPass: false', '  warmupPass: true');
    expect(text).toContain('warmupPass: true');
    const pb = await lab.writePlaybook('window.yaml', text);
    const runsDir = await lab.newRunsDir('window');
    const gate = fioGate(path.join(lab.dir, 'window-gate'));
    await lab.sim.control.reset();
    const clockReads = async () => (await lab.sim.control.log()).filter((c) => c.method === 'CurrentTime').length;
    const cli = startCli(['run', pb, '-i', lab.inventory, '--out', runsDir, '--no-report', '--json'], { env: gate.env, timeoutMs: 240_000 });
    try {
      expect(await held(gate, 'the fill at the gate')).toContain('--name=storsweep-prefill');
      await letThrough(gate);
      expect(await held(gate, 'pass 0 at the gate')).not.toContain('--name=storsweep-prefill');
      const beforePass0 = await clockReads();
      await letThrough(gate);
      await held(gate, 'the measured pass at the gate');
      const beforeScored = await clockReads();
      gate.open();
      // the observation started between pass 0 and the measured pass (before: ahead of pass 0)
      expect(beforeScored - beforePass0).toBe(1);
    } finally {
      gate.open();
    }
    const r = await cli.done;
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    const records = (await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as ResultRecord);
    expect(records).toHaveLength(1);
    expect(records[0]!.host).toMatchObject({ source: 'vsphere-perf', window: 'scored-passes' } satisfies Partial<HostMetrics>);
    const report = await runCli(['report', runDir]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain('time covered: both sides cover the scored passes');
    expect(report.stdout).not.toContain('overlap the whole test');
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  }, 300_000);
});

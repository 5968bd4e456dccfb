// Issue 14's acceptance, as a user sees it: `storsweep plan --json` for the CrystalDiskMark 5 and 8
// profiles shows every read test before every write test (DiskBench.cpp ExecDiskBenchAll of 5.1.2
// and 8.x, quoted in src/workloads/profiles.ts) and the unscored warm-up pass (pass 0, "Preparing…")
// the reference runs before its measured passes, and the one pre-fill of the test region.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-plan-cdm-'));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

interface PlanJson {
  profiles: Record<string, { warmupPass: boolean; passes: number; runtimeSec: number; prefill?: boolean; tests: Array<{ id: string }> }>;
  permutations: Array<{ axes: Record<string, string>; steps: Array<{ step: string; arguments: { profile: string; tests: string[]; warmupPass: boolean; prefill: boolean } }> }>;
}

describe('plan --json for cdm5 and cdm8-default', () => {
  it('lists all reads before all writes in the workload step, with the unscored warm-up pass and the pre-fill', async () => {
    const pb = path.join(dir, 'cdm.yaml');
    fs.writeFileSync(pb, ['name: cdm-order', 'target: lab-local', 'matrix:', '  workload:', '    profile: [cdm5, cdm8-default]', ''].join('\n'));
    const r = await runCli(['plan', pb, '-i', 'test/fixtures/config/inv-ok.yaml', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout) as PlanJson;
    const expected: Record<string, string[]> = {
      // 5.1.2: Seq Q32T1, 4K Q32T1, Seq, 4K — reads, then the same four as writes
      cdm5: ['seq-128k-q32t1-read', 'rnd-4k-q32t1-read', 'seq-1m-q1t1-read', 'rnd-4k-q1t1-read', 'seq-128k-q32t1-write', 'rnd-4k-q32t1-write', 'seq-1m-q1t1-write', 'rnd-4k-q1t1-write'],
      // 8.x default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1 — reads, then writes
      'cdm8-default': ['seq-1m-q8t1-read', 'seq-1m-q1t1-read', 'rnd-4k-q32t1-read', 'rnd-4k-q1t1-read', 'seq-1m-q8t1-write', 'seq-1m-q1t1-write', 'rnd-4k-q32t1-write', 'rnd-4k-q1t1-write'],
    };
    expect(plan.permutations.map((p) => p.axes['workload.profile'])).toEqual(['cdm5', 'cdm8-default']);
    for (const p of plan.permutations) {
      const w = p.steps.find((s) => s.step === 'workload')!;
      const name = w.arguments.profile;
      expect(w.arguments.tests, name).toEqual(expected[name]);
      const lastRead = Math.max(...w.arguments.tests.map((t, i) => (t.endsWith('-read') ? i : -1)));
      const firstWrite = w.arguments.tests.findIndex((t) => t.endsWith('-write'));
      expect(lastRead, name).toBeLessThan(firstWrite);
      expect(w.arguments, name).toMatchObject({ warmupPass: true, prefill: true });
      // the profile behind it: best of 5 measured passes of 5 s after that one unscored pass
      expect(plan.profiles[name], name).toMatchObject({ warmupPass: true, passes: 5, runtimeSec: 5 });
      expect(plan.profiles[name]!.tests.map((t) => t.id), name).toEqual(expected[name]);
    }
  });
});

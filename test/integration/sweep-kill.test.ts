// Overnight sweeps survive a controller crash: the CLI is SIGKILLed at 20 seeded points of a VMFS
// sweep on the vcsim lab (each point = "as soon as the journal reaches entry #k", k drawn from a
// seeded PRNG), resumed after every kill (and killed again) until it finishes. The final result set
// must equal an uninterrupted run's, key for key, and pyvmomi must see nothing named ss-… left.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/plan/matrix.ts';
import { runCli } from '../helpers/cli.ts';
import { journalSeq, ledgerRows, NOTHING_LEFT, permutationStatuses, resultKeys, runCliKilledAt, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

const KILLS = 20;
const SEED = 20260606;

// The planner's own seeded PRNG: the kill points are the same on every run of the test.
const prng = seededRandom;

let lab: VsphereLab;
let playbook: string;

beforeAll(async () => {
  lab = await startVsphereLab();
  // VMFS3 1/2/4/8 MB × thin/eager-zeroed thick, repeat 2: 8 permutations, 16 repetitions.
  playbook = await lab.writePlaybook('sweep.yaml', sweepPlaybook({ name: 'kill-sweep' }));
});

afterAll(async () => {
  await lab?.stop();
});

describe('kill -9 at seeded points, then --resume until done', () => {
  it('ends with exactly the uninterrupted result set and nothing left in the lab', async () => {
    const ref = await runCli(['run', playbook, ...lab.runArgs(await lab.newRunsDir('reference'))]);
    expect(ref.code, ref.stderr).toBe(0);
    const refDir = (JSON.parse(ref.stdout.trim().split('\n').pop()!) as { runDir: string }).runDir;
    const expected = resultKeys(refDir);
    expect(expected).toHaveLength(16);
    const refJournal = journalSeq(refDir);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);

    const rand = prng(SEED);
    // Kill within the next ~1/8 of a run's journal, so kills fall in every phase of a permutation.
    const nextOffset = () => 1 + Math.floor(rand() * Math.ceil(refJournal / 8));
    const killPoints: Array<{ sweep: number; seq: number; liveObjects: number }> = [];
    let sweep = 0;
    while (killPoints.length < KILLS) {
      sweep++;
      const runsDir = await lab.newRunsDir(`sweep-${sweep}`);
      let attempt = await runCliKilledAt(['run', playbook, ...lab.runArgs(runsDir)], { runsDir }, nextOffset());
      const runDir = attempt.runDir;
      expect(runDir, attempt.stderr).not.toBeNull();
      let attempts = 1;
      while (attempt.killed) {
        const seq = journalSeq(runDir!);
        killPoints.push({ sweep, seq, liveObjects: ledgerRows(runDir!).filter((r) => r.state === 'intent' || r.state === 'created').length });
        attempts++;
        expect(attempts, 'resume makes progress').toBeLessThan(60);
        // every permutation formats the LUN: while one is not done, a resume confirms it again
        const left = permutationStatuses(runDir!).some((p) => p.status !== 'done');
        const resumeArgs = ['run', '--resume', runDir!, ...(left ? ['--confirm-destroy', lab.vmfsDevice] : []), '--no-report', '--json'];
        attempt = killPoints.length < KILLS ? await runCliKilledAt(resumeArgs, { runDir: runDir! }, seq + nextOffset()) : { ...(await runCli(resumeArgs, { timeoutMs: 180_000 })), killed: false, runDir };
      }
      expect(attempt.code, attempt.stderr).toBe(0);
      // No loss, no duplicates: the same (permutation, repetition, test) keys as the reference run.
      expect(resultKeys(runDir!)).toEqual(expected);
      expect(permutationStatuses(runDir!).map((p) => p.status)).toEqual(Array(8).fill('done'));
      expect(ledgerRows(runDir!).filter((r) => r.state === 'intent' || r.state === 'created' || r.state === 'remove-failed')).toEqual([]);
      expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
      const st = await runCli(['status', runDir!]);
      expect(st.stdout).toContain('done 8, failed 0, pending 0 of 8');
    }
    expect(killPoints).toHaveLength(KILLS);
    // The kills did hit the dangerous moments: with objects of a permutation still in the lab.
    expect(killPoints.filter((k) => k.liveObjects > 0).length).toBeGreaterThan(0);
  }, 600_000);
});

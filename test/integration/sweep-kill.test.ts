// Overnight sweeps survive a controller crash: the CLI is SIGKILLed at seeded points of a VMFS sweep
// on the vcsim lab and resumed after every kill (and killed again) until it finishes. The final
// result set must equal an uninterrupted run's, key for key, and pyvmomi must see nothing named ss-…
// left.
//
// Each kill point is a journal entry of the uninterrupted run: the CLI is killed as soon as the run
// has got as far as the reference's entry #k. Every phase of a permutation (PHASES: what runs after
// its entries) gets one kill, in a permutation and at an entry of the phase drawn by a seeded PRNG,
// so the kills fall in every phase — datastore and disk creates in flight, the guest-disk lookup,
// the prefill, each repetition, between them, the teardown, between permutations — and in both
// permutations. A resumed run first tears down what the killed one left: the first resume, and a
// seeded third of the others, are killed while doing so, at one of their first journal entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/plan/matrix.ts';
import { runCli } from '../helpers/cli.ts';
import { journalSeq, ledgerRows, NOTHING_LEFT, permutationStatuses, readRun, resultKeys, runCliWhen, runDirOf, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

const SEED = 20260606;

/**
 * A permutation's journal entries (step without the object's name, event) in the order an
 * uninterrupted run writes them, grouped by what runs once they are written: a kill as soon as one
 * of a group's entries is written lands in that phase.
 */
const PHASES: Record<string, string[]> = {
  'creating the datastore': ['permutation start', 'datastore intent', 'datastore sent'],
  'creating the disk': ['datastore created', 'disk intent', 'disk sent'],
  'finding the disk in the guest': ['disk created', 'guest-disk intent', 'measure found'],
  'prefilling the test file': ['guest-disk done'],
  'repetition 1': ['prefill filled'],
  'repetition 2, after repetition 1 was recorded': ['repetition-1 recorded'],
  'removing the disk': ['repetition-2 recorded', 'disk note', 'disk removed'],
  'removing the datastore, then the next permutation': ['datastore note', 'datastore removed', 'permutation done'],
};

let lab: VsphereLab;
let playbook: string;

beforeAll(async () => {
  lab = await startVsphereLab();
  // VMFS3 1 MB × thin/eager-zeroed thick, repeat 2: 2 permutations, 4 repetitions — every phase of
  // a permutation twice, a repetition recorded before another, a permutation done before another
  playbook = await lab.writePlaybook('sweep.yaml', sweepPlaybook({ name: 'kill-sweep', blockSizesMb: [1], repeat: 2 }));
});

afterAll(async () => {
  await lab?.stop();
});

interface Entry {
  seq: number;
  permutationId: string | null;
  step: string;
  event: string;
}

function entriesAfter(runDir: string, seq: number): Entry[] {
  return readRun(runDir, (db) => db.prepare('SELECT seq, permutation_id AS permutationId, step, event FROM journal WHERE seq > ? ORDER BY seq').all(seq) as Entry[]);
}

/** an entry as any run of the plan writes it: the object names in steps carry the run id */
const kindOf = (e: Entry) => `${e.step.replace(/:.*/, '')} ${e.event}`;
const keyOf = (e: Entry) => `${e.permutationId} ${kindOf(e)}`;

/**
 * How far an attempt (the journal after `startSeq`) has got, as a position in the reference journal:
 * its newest entry the reference has, from the attempt's first permutation start on (what a resume
 * tears down before that has reference-like entries too).
 */
function progress(runDir: string, startSeq: number, refPos: Map<string, number>): number {
  const own = entriesAfter(runDir, startSeq);
  const first = own.findIndex((e) => e.step === 'permutation' && e.event === 'start');
  if (first < 0) return 0;
  return Math.max(0, ...own.slice(first).map((e) => refPos.get(keyOf(e)) ?? 0));
}

describe('kill -9 at seeded points, then --resume until done', () => {
  it('ends with exactly the uninterrupted result set and nothing left in the lab', async () => {
    const ref = await runCli(['run', playbook, ...lab.runArgs(await lab.newRunsDir('reference'))]);
    expect(ref.code, ref.stderr).toBe(0);
    const refDir = runDirOf(ref);
    const expected = resultKeys(refDir);
    expect(expected).toHaveLength(4);
    const refEntries = entriesAfter(refDir, 0);
    const refPos = new Map(refEntries.map((e, i) => [keyOf(e), i + 1]));
    expect(refPos.size, 'every entry of an uninterrupted run is one of its own').toBe(refEntries.length);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);

    // a permutation's entries are the phases' entries, in their order: a new kind of entry needs a phase
    const perms = [...new Set(refEntries.map((e) => e.permutationId))];
    expect(perms).toHaveLength(2);
    for (const p of perms) expect(refEntries.filter((e) => e.permutationId === p).map(kindOf)).toEqual(Object.values(PHASES).flat());

    // The planner's own seeded PRNG: the kill points are the same on every run of the test. Each
    // phase: a permutation, then one of its entries, drawn; the run's last three entries are left out
    // (a kill there could come after the run ended). Killed in the order the run reaches them.
    const rand = seededRandom(SEED);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const targets = Object.entries(PHASES)
      .map(([phase, kinds]) => {
        const at = (perm: string | null) => kinds.map((k) => refPos.get(`${perm} ${k}`)!).filter((pos) => pos <= refEntries.length - 3);
        const perm = pick(perms.filter((p) => at(p).length > 0));
        return { phase, pos: pick(at(perm)) };
      })
      .sort((a, b) => a.pos - b.pos);

    const runsDir = await lab.newRunsDir('killed');
    const kills: Array<{ target: string; last: string; liveObjects: number; recordedOfUnfinished: number; permutation: string | null }> = [];
    let runDir: string | null = null;
    let startSeq = 0;
    const args = (): string[] => {
      if (!runDir) return ['run', playbook, ...lab.runArgs(runsDir)];
      // every permutation formats the LUN: while one is not done, a resume confirms it again
      const left = permutationStatuses(runDir).some((p) => p.status !== 'done');
      return ['run', '--resume', runDir, ...(left ? ['--confirm-destroy', lab.vmfsDevice] : []), '--no-report', '--json'];
    };
    const killAt = async (target: string, when: (runDir: string) => boolean): Promise<boolean> => {
      const r = await runCliWhen(args(), runDir ? { runDir } : { runsDir }, when, (pid) => void process.kill(pid, 'SIGKILL'));
      runDir ??= r.runDir;
      expect(runDir, r.stderr).not.toBeNull();
      if (!(r.fired && r.code === null)) {
        expect(r.code, r.stderr).toBe(0);
        return false;
      }
      const own = entriesAfter(runDir!, startSeq);
      const last = own.at(-1);
      const unfinished = new Set(permutationStatuses(runDir!).filter((p) => p.status !== 'done').map((p) => p.permutationId));
      kills.push({
        target,
        last: last ? `${last.step.replace(/:.*/, '')} ${last.event}` : '(nothing)',
        liveObjects: ledgerRows(runDir!).filter((l) => l.state === 'intent' || l.state === 'created').length,
        recordedOfUnfinished: resultKeys(runDir!).filter((k) => unfinished.has(k.split('/')[0]!)).length,
        permutation: [...own].reverse().find((e) => e.permutationId)?.permutationId ?? null,
      });
      startSeq = journalSeq(runDir!);
      return true;
    };

    for (const { phase, pos } of targets) {
      // a resume after a kill tears down first: the first, and a third of the others, are killed while doing so
      if (runDir && (!kills.some((x) => x.target.startsWith("resume's")) || rand() < 1 / 3)) {
        const n = 1 + Math.floor(rand() * 3);
        const from = startSeq;
        await killAt(`resume's own entry #${n}`, (d) => journalSeq(d) >= from + n);
      }
      const from = startSeq;
      if (!(await killAt(`${phase}: reference entry #${pos} (${keyOf(refEntries[pos - 1]!)})`, (d) => progress(d, from, refPos) >= pos))) break;
    }
    const last = await runCli(args(), { timeoutMs: 180_000 });
    expect(last.code, last.stderr).toBe(0);

    // No loss, no duplicates: the same (permutation, repetition, test) keys as the reference run.
    expect(resultKeys(runDir!)).toEqual(expected);
    expect(permutationStatuses(runDir!).map((p) => p.status)).toEqual(['done', 'done']);
    expect(ledgerRows(runDir!).filter((r) => r.state === 'intent' || r.state === 'created' || r.state === 'remove-failed')).toEqual([]);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    const st = await runCli(['status', runDir!]);
    expect(st.stdout).toContain('done 2, failed 0, pending 0 of 2');

    // The kills did hit the dangerous moments: one in every phase of a permutation,
    const seen = JSON.stringify(kills, null, 1);
    const inPhases = kills.filter((k) => !k.target.startsWith("resume's"));
    expect(inPhases.map((k) => k.target.replace(/:.*/, '')), seen).toEqual(targets.map((t) => t.phase));
    expect(new Set(targets.map((t) => t.phase))).toEqual(new Set(Object.keys(PHASES)));
    // with objects of a permutation still in the lab,
    expect(kills.filter((k) => k.liveObjects > 0).length, seen).toBeGreaterThan(0);
    // with a repetition recorded of a permutation not done (the resume redoes it whole, once),
    expect(kills.filter((k) => k.recordedOfUnfinished > 0).length, seen).toBeGreaterThan(0);
    // in a resume's teardown of what the kill before left,
    expect(kills.filter((k) => k.target.startsWith("resume's")).length, seen).toBeGreaterThan(0);
    // and in both permutations.
    expect(new Set(kills.map((k) => k.permutation).filter(Boolean)).size, seen).toBe(2);
  }, 600_000);
});

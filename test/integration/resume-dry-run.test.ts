// `run --resume <dir> --dry-run` sends nothing: a run killed with one permutation done and the next
// half-done (its VMFS datastore created on the LUN) is resumed with --dry-run. It prints the calls
// still left (removing what the half-done permutation left, then that permutation whole), and
// afterwards pyvmomi sees the lab exactly as before and the run directory is byte for byte the same
// (no journal row, no lock file). A real resume then finishes the run and leaves nothing.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { pyvmomi } from '../helpers/pyvmomi-verify.ts';
import { journalSeq, ledgerRows, NOTHING_LEFT, permutationStatuses, runCliWhen, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

let lab: VsphereLab;
let playbook: string;

beforeAll(async () => {
  lab = await startVsphereLab();
  // two permutations (VMFS3 1 MB and 2 MB blocks, thin), one repetition each
  playbook = await lab.writePlaybook('sweep.yaml', sweepPlaybook({ name: 'resume-dry', blockSizesMb: [1, 2], formats: ['thin'], repeat: 1 }));
});

afterAll(async () => {
  await lab?.stop();
});

/** Every file of the run directory with its SHA-256 (SQLite's shared-memory index aside: readers map it). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    if (name.endsWith('-shm') || !fs.statSync(file).isFile()) out[name] = 'present';
    else out[name] = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  }
  return out;
}

async function labState() {
  const [py, leftovers] = await Promise.all([pyvmomi(lab.sim, { count: 'Datastore', vm: 'DC0_H0_VM0' }), lab.leftovers()]);
  return { leftovers, datastores: py.count, disks: py.disks?.map((d) => d.fileName).sort() };
}

describe('run --resume --dry-run', () => {
  it('prints what is left, sends nothing and leaves the run directory unchanged', async () => {
    const runsDir = await lab.newRunsDir('killed');
    const killed = await runCliWhen(
      ['run', playbook, ...lab.runArgs(runsDir)],
      { runsDir },
      (d) => permutationStatuses(d)[0]?.status === 'done' && ledgerRows(d).some((r) => r.kind === 'datastore' && r.state === 'created' && r.permutationId === permutationStatuses(d)[1]?.permutationId),
      (pid) => void process.kill(pid, 'SIGKILL'),
    );
    expect(killed.fired && killed.code === null, killed.stderr).toBe(true);
    const runDir = killed.runDir!;
    const [first, second] = permutationStatuses(runDir);
    expect(first!.status).toBe('done');
    expect(second!.status).toBe('running');
    const leftDatastore = ledgerRows(runDir).find((r) => r.kind === 'datastore' && r.state === 'created')!;

    const before = await labState();
    expect(before.leftovers.datastores).toEqual([leftDatastore.name]);
    const files = snapshot(runDir);
    const seq = journalSeq(runDir);

    // the JSON and the text form at once (the text form without --confirm-destroy: a dry run confirms nothing)
    const [json, text] = await Promise.all([runCli(['run', '--resume', runDir, '--dry-run', '--json']), runCli(['run', '--resume', runDir, '--dry-run'])]);
    expect(json.code, json.stderr).toBe(0);
    const calls = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { permutationId: string; step: string; operation: string; arguments: Record<string, unknown> });
    // the done permutation is not redone; the half-done one is cleaned up first, then redone whole
    expect(calls.some((c) => c.permutationId === first!.permutationId)).toBe(false);
    const cleanups = calls.slice(0, calls.findIndex((c) => !c.step.startsWith('cleanup ')));
    expect(cleanups.length).toBeGreaterThan(0);
    expect(cleanups.at(-1)).toMatchObject({ permutationId: second!.permutationId, step: 'cleanup datastore', operation: 'destroy', arguments: { kind: 'datastore', name: leftDatastore.name } });
    expect(calls.filter((c) => c.permutationId === second!.permutationId && c.operation === 'CreateVmfsDatastore')).toHaveLength(1);

    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`1 permutations, ${calls.length} calls; destroys data on ${lab.vmfsDevice}`);
    expect(text.stdout).toContain('nothing was sent');

    // nothing was sent: the lab as before (the leftover datastore still there, nothing new)
    expect(await labState()).toEqual(before);
    // nothing was written: no journal row, no lock, the same bytes
    expect(journalSeq(runDir)).toBe(seq);
    expect(snapshot(runDir)).toEqual(files);

    // the run resumes for real afterwards, and finishes clean
    const real = await runCli(['run', '--resume', runDir, '--confirm-destroy', lab.vmfsDevice, '--no-report', '--json'], { timeoutMs: 180_000 });
    expect(real.code, real.stderr).toBe(0);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done']);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  }, 300_000);
});

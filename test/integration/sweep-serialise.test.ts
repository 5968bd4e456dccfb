// Listed targets that share a guest test file never run at once, with real fio: `lab-guest` (fio
// over SSH to the lab's sshd on 127.0.0.1) and `lab-local` (fio on this machine) write the same
// file in the same work directory — one machine, one file. They take turns; a third target with its
// own work directory runs beside them. Checked on what fio itself says (each pass's end time and
// runtime in its JSON) and on the run journal's permutation start/done times; `plan` names the
// serialised targets and what they share.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { startLabGuest, type LabGuest } from '../helpers/lab-guest.ts';

let guest: LabGuest;
let playbook: string;
let run: CliResult;
let runDir: string;

const TARGETS = ['lab-guest', 'lab-local', 'lab-other'];

beforeAll(async () => {
  guest = await startLabGuest();
  const otherDir = path.join(guest.dir, 'scratch-other');
  fs.mkdirSync(otherDir);
  fs.appendFileSync(guest.inventory, ['  lab-other:', '    provider: local', `    workdir: ${otherDir}`, ''].join('\n'));
  playbook = await guest.writePlaybook(
    'shared.yaml',
    [
      'name: shared-guest',
      `target: [${TARGETS.join(', ')}]`,
      'matrix:',
      '  workload:',
      '    profile: [rd, wr]',
      'workloads:',
      '  rd: { iometer: "4k 100% read 100% random" }',
      '  wr: { iometer: "4k 0% read 100% random" }',
      'settings: { fileSize: 8m, runtimeSec: 2, passes: 1, warmupPass: false, intervalSec: 0 }',
      '',
    ].join('\n'),
  );
  run = await runCli(['run', playbook, '-i', guest.inventory, '--out', guest.runsDir, '--no-report', '--json']);
  runDir = (JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { runDir: string }).runDir;
}, 180_000);

afterAll(async () => {
  await guest?.stop();
});

interface Span {
  target: string;
  start: number;
  end: number;
}
const overlaps = (a: Span[], b: Span[]) => a.some((x) => b.some((y) => x.start < y.end && y.start < x.end));
const of = (spans: Span[], target: string) => spans.filter((s) => s.target === target);

/** Each permutation's target and its start/done times from the journal. */
function journalSpans(): Span[] {
  const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT p.axes AS axes,
                (SELECT min(at) FROM journal j WHERE j.permutation_id = p.permutation_id AND j.step = 'permutation' AND j.event = 'start') AS start,
                (SELECT max(at) FROM journal j WHERE j.permutation_id = p.permutation_id AND j.step = 'permutation' AND j.event = 'done') AS end
         FROM permutations p ORDER BY p.idx`,
      )
      .all() as Array<{ axes: string; start: string; end: string }>;
    return rows.map((r) => ({ target: String((JSON.parse(r.axes) as Record<string, unknown>).target), start: Date.parse(r.start), end: Date.parse(r.end) }));
  } finally {
    db.close();
  }
}

/** Each measured fio pass as fio reports it: it ended at `timestamp_ms` after `job_runtime` ms (plus its ramp, none here). */
function fioSpans(): Span[] {
  const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
  try {
    const rows = db.prepare('SELECT record FROM results').all() as Array<{ record: string }>;
    return rows.map((r) => {
      const rec = JSON.parse(r.record) as { axes: Record<string, unknown>; rawPath: string };
      const raw = JSON.parse(fs.readFileSync(path.resolve(runDir, rec.rawPath), 'utf8')) as { timestamp_ms: number; jobs: Array<{ job_runtime: number }> };
      const end = raw.timestamp_ms;
      return { target: String(rec.axes.target), start: end - raw.jobs[0]!.job_runtime, end };
    });
  } finally {
    db.close();
  }
}

describe('targets sharing a guest test file, with real fio', { timeout: 180_000 }, () => {
  it('`plan` names the targets that take turns and the file and directory they share', async () => {
    const [r, json] = await Promise.all([runCli(['plan', playbook, '-i', guest.inventory]), runCli(['plan', playbook, '-i', guest.inventory, '--json'])]);
    expect(r.code, r.stderr).toBe(0);
    const file = path.join(guest.workdir, 'storsweep-test.dat');
    expect(r.stdout).toContain('targets run in parallel, except these, which run one after the other (one permutation at a time):\n');
    expect(r.stdout).toContain(`  lab-guest, lab-local: they share guest test file ${file} on this machine; guest work directory ${guest.workdir} on this machine\n`);
    expect(r.stdout).not.toMatch(/lab-other: they share|lab-other.*share/);
    const plan = JSON.parse(json.stdout) as { serialised: Array<{ targets: string[]; what: string }> };
    expect(plan.serialised.map((s) => s.targets)).toEqual([['lab-guest', 'lab-local'], ['lab-guest', 'lab-local']]);
  });

  it('the run finishes every permutation and says, before starting, which targets take turns', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('lab-guest, lab-local: they share guest test file');
    const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
    const statuses = db.prepare('SELECT status FROM permutations').all();
    db.close();
    expect(statuses).toEqual(Array(6).fill({ status: 'done' }));
  });

  it('their fio passes never overlap (fio\'s own times), nor do their permutations (journal)', () => {
    const fio = fioSpans();
    expect(fio).toHaveLength(6);
    expect(overlaps(of(fio, 'lab-guest'), of(fio, 'lab-local'))).toBe(false);
    const perms = journalSpans();
    for (const p of perms) expect(p.end, p.target).toBeGreaterThan(p.start);
    expect(overlaps(of(perms, 'lab-guest'), of(perms, 'lab-local'))).toBe(false);
  });

  it('the target with its own work directory runs beside them', () => {
    const perms = journalSpans();
    expect(overlaps(of(perms, 'lab-other'), [...of(perms, 'lab-guest'), ...of(perms, 'lab-local')])).toBe(true);
    const fio = fioSpans();
    expect(overlaps(of(fio, 'lab-other'), [...of(fio, 'lab-guest'), ...of(fio, 'lab-local')])).toBe(true);
  });
});

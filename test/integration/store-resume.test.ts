// `run --resume RUNDIR` of a run written to a real PostgreSQL store (test/helpers/postgres.ts): the
// CLI is killed with -9 once the first permutation is done; the resume, by the run directory
// (store.json), skips what is done, redoes the half-done permutation and runs the rest, as a
// run.sqlite's resume does. Checked in the database itself. The kill lands while a permutation
// measures: once the first is done the gate closes (test/helpers/fio-gate.ts) and the next fio waits
// there, however slow the machine.
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines } from '../helpers/cli.ts';
import { localStoreLab, type LocalStoreLab } from '../helpers/local-store-lab.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { waitFor } from '../helpers/wait.ts';

let lab: LocalStoreLab;
let dir: string;

const PLAYBOOK = [
  'name: store-resume',
  'target: here',
  'matrix:',
  '  workload:',
  '    profile: [w1, w2, w3, w4, w5]',
  'workloads:',
  '  w1:',
  '    iometer: "4k 0% read 100% random"',
  '  w2:',
  '    iometer: "4k 100% read 100% random"',
  '  w3:',
  '    iometer: "64k 0% read 0% random"',
  '  w4:',
  '    iometer: "64k 100% read 0% random"',
  '  w5:',
  '    iometer: "16k 50% read 100% random"',
  ...quickSettings({ fileSize: '8m' }),
  '',
].join('\n');

beforeAll(async () => {
  lab = await localStoreLab('store-resume', { playbook: PLAYBOOK, targets: ['here'], database: 'resume', fioGate: true });
  dir = lab.dir;
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});

/** a job's own record, not the read or write half of a mixed job (w5 has both halves: results/mix-halves.ts) */
const whole = (r: { record: string }): boolean => (JSON.parse(r.record) as { test?: { half?: string } }).test?.half === undefined;

const query = <T extends pg.QueryResultRow>(sql: string, args: unknown[] = []): Promise<T[]> => lab.db.query<T>(sql, args);

const statuses = async (runId: string) => (await query<{ permutation_id: string; status: string }>('SELECT permutation_id, status FROM storsweep.permutations WHERE run_id = $1 ORDER BY idx', [runId])).map((r) => `${r.permutation_id}:${r.status}`);

describe('run --resume of a run in PostgreSQL', () => {
  it('killed with -9 after its first permutation: the resume by its run directory skips what is done and finishes the run, each result once', async () => {
    // the run, killed once the store says a permutation is done, while the next one measures
    let pid = 0;
    const first = runCli(['run', lab.playbook, '-i', lab.storeInventory, '-o', path.join(dir, 'runs'), '--json'], { timeoutMs: 180_000, onSpawn: (p) => (pid = p) });
    const runId = await waitFor(
      async () => {
        const done = await query<{ run_id: string; n: string }>("SELECT run_id, count(*) FILTER (WHERE status = 'done') AS n FROM storsweep.permutations GROUP BY run_id").catch(() => []);
        return done[0] && Number(done[0].n) >= 1 ? done[0].run_id : null;
      },
      { what: 'a permutation done', timeoutMs: 120_000 },
    );
    lab.gate.close();
    try {
      await waitFor(() => lab.gate.held().length > 0, { what: 'the next fio at the gate', timeoutMs: 120_000 });
      process.kill(pid, 'SIGKILL');
    } finally {
      lab.gate.open();
    }
    const killed = await first;
    expect(killed.code).toBe(null);
    const [runDir] = fs.readdirSync(path.join(dir, 'runs')).map((d) => path.join(dir, 'runs', d));
    expect(JSON.parse(fs.readFileSync(path.join(runDir!, 'store.json'), 'utf8'))).toMatchObject({ runId });
    const before = await statuses(runId);
    const doneBefore = before.filter((s) => s.endsWith(':done')).map((s) => s.split(':')[0]!);
    expect(doneBefore.length).toBeGreaterThanOrEqual(1);
    expect(doneBefore.length).toBeLessThan(5);
    const recordsOfDone = await query<{ permutation_id: string; seq: string; record: string }>('SELECT permutation_id, seq, record FROM storsweep.results WHERE run_id = $1 AND permutation_id = ANY($2) ORDER BY seq', [runId, doneBefore]);
    expect(recordsOfDone.filter(whole)).toHaveLength(doneBefore.length);

    // --dry-run: what is left, nothing written
    // the run directory alone does not pick the store's password (store.json: app/store.ts)
    const alone = await runCli(['run', '--resume', runDir!, '--dry-run']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('a run directory never chooses which secret is sent where');
    const dry = await runCli(['run', '--resume', runDir!, '-i', lab.storeInventory, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`${5 - doneBefore.length} permutations,`);
    expect(await statuses(runId)).toEqual(before);

    const resumed = await runCli(['run', '--resume', runDir!, '-i', lab.storeInventory, '--json'], { timeoutMs: 180_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(stackTraceLines(resumed.stderr)).toEqual([]);
    expect(fs.existsSync(path.join(runDir!, 'run.sqlite'))).toBe(false);
    expect((await statuses(runId)).every((s) => s.endsWith(':done'))).toBe(true);
    // one result per permutation × test, those of the permutations done before the kill untouched
    const all = await query<{ permutation_id: string; seq: string; record: string }>('SELECT permutation_id, seq, record FROM storsweep.results WHERE run_id = $1 ORDER BY seq', [runId]);
    expect(new Set(all.map((r) => r.permutation_id)).size).toBe(5);
    expect(all.filter(whole)).toHaveLength(5);
    // and w5's read and write halves, once each
    expect(all.filter((r) => !whole(r))).toHaveLength(2);
    expect(all.filter((r) => doneBefore.includes(r.permutation_id))).toEqual(recordsOfDone);
    const events = await query<{ event: string }>("SELECT event FROM storsweep.journal WHERE run_id = $1 AND step = 'run' AND event = 'resume'", [runId]);
    expect(events).toHaveLength(1);
    // the permutation the kill caught half-done was cleaned up and redone, nothing else
    const halfDone = before.filter((s) => s.endsWith(':running')).map((s) => s.split(':')[0]!);
    const redone = await query<{ permutation_id: string }>("SELECT permutation_id FROM storsweep.journal WHERE run_id = $1 AND step = 'permutation' AND event = 'redo' ORDER BY seq", [runId]);
    expect(redone.map((r) => r.permutation_id)).toEqual(halfDone);
    // the status by the run directory agrees
    const st = await runCli(['status', runDir!, '-i', lab.storeInventory, '--json']);
    expect(JSON.parse(st.stdout)).toMatchObject({ runId, done: 5, pending: 0, failed: 0 });
  }, 300_000);
});

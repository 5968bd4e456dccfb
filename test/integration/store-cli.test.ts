// A run written to a real PostgreSQL store (test/helpers/postgres.ts) through the CLI, then read
// back by every command that reads a run — by its run directory (store.json), by `--run ID` with
// `--store URL`, and with the inventory's `store:` (`-i`) — on a local fio target.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastJsonLine, runCli, stackTraceLines, submitRun } from '../helpers/cli.ts';
import { localStoreLab, type LocalStoreLab } from '../helpers/local-store-lab.ts';
import type { TestDatabase, TestPostgres } from '../helpers/postgres.ts';
import { quickSettings } from '../helpers/quick-settings.ts';

let lab: LocalStoreLab;
let pgsrv: TestPostgres;
let db: TestDatabase;
let dir: string;
let runDir: string;
let runId: string;
let runOut: { code: number | null; stdout: string; stderr: string };

// one fio test of 1 s (cdm8-default's SEQ1M Q8T1 read): what is read back is the same for one record as for eight
const PLAYBOOK = ['name: store-smoke', 'target: here', 'matrix:', '  workload:', '    profile: [one]', 'workloads:', '  one:', '    iometer: "1m 100% read 0% random q8"', ...quickSettings({ fileSize: '8m' }), ''].join('\n');

beforeAll(async () => {
  lab = await localStoreLab('store-cli', { playbook: PLAYBOOK, targets: ['here'], database: 'cli' });
  ({ dir, pgsrv, db } = lab);
  runOut = await runCli(['run', lab.playbook, '-i', lab.inventory, '-o', path.join(dir, 'runs'), '--store', db.url, '--json'], { timeoutMs: 180_000 });
  runDir = lastJsonLine<{ runDir: string }>(runOut.stdout).runDir;
  runId = (JSON.parse(fs.readFileSync(path.join(runDir, 'store.json'), 'utf8')) as { runId: string }).runId;
}, 240_000);
afterAll(async () => {
  await lab?.stop();
});

describe('run --store postgresql://…', () => {
  it('writes the run to the store: the run directory keeps raw output and store.json (the URL without the password, the reference\'s name apart), no run.sqlite', () => {
    expect(runOut.code).toBe(0);
    expect(stackTraceLines(runOut.stderr)).toEqual([]);
    expect(fs.existsSync(path.join(runDir, 'run.sqlite'))).toBe(false);
    const ref = /:(\$\{file:[^}]+\})@/.exec(db.url)![1]!;
    expect(JSON.parse(fs.readFileSync(path.join(runDir, 'store.json'), 'utf8'))).toEqual({ store: `postgresql://storsweep@127.0.0.1:${pgsrv.server.port}/${db.name}`, passwordRef: ref, runId });
    expect(fs.readdirSync(path.join(runDir, 'raw')).length).toBe(1);
    expect(fs.existsSync(path.join(runDir, 'report.md'))).toBe(true);
    // the password itself is nowhere in the run directory, nor in what the run printed
    const password = pgsrv.server.password;
    const files = fs.readdirSync(runDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    for (const f of files) expect(fs.readFileSync(path.join(f.parentPath, f.name), 'utf8')).not.toContain(password);
    expect(runOut.stdout + runOut.stderr).not.toContain(password);
  });

  it('status --json by --run and --store: counts with "pending": 0, every permutation done', async () => {
    const r = await runCli(['status', '--run', runId, '--store', db.url, '--json']);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(s).toMatchObject({ runId, total: 1, done: 1, failed: 0, pending: 0, leftovers: [], inUseBy: null });
    expect((s.permutations as Array<{ status: string }>).map((p) => p.status)).toEqual(['done']);
  });

  it('status by the run directory (store.json) with the store given now (--store, -i), and by the inventory\'s store:', async () => {
    // the run directory alone does not pick the password: refused, saying what to pass
    const alone = await runCli(['status', runDir]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain(`give --store 'postgresql://storsweep:\${file:`);
    const byDir = await runCli(['status', runDir, '--store', db.url]);
    expect(byDir.code, byDir.stderr).toBe(0);
    const byDirInv = await runCli(['status', runDir, '-i', lab.storeInventory]);
    expect(byDirInv.stdout).toBe(byDir.stdout);
    expect(byDir.stdout).toContain(`run ${runId} (store-smoke → here)`);
    expect(byDir.stdout).toContain('done 1, failed 0, pending 0 of 1');
    expect(byDir.stdout).toContain(`in postgresql://storsweep@127.0.0.1:${pgsrv.server.port}/${db.name}`);
    const byInv = await runCli(['status', '--run', runId, '-i', lab.storeInventory]);
    expect(byInv.code).toBe(0);
    expect(byInv.stdout).toBe(byDir.stdout);
  });

  it('report --store URL <runId> and --run render the run; results and compare read it too', async () => {
    const md = await runCli(['report', '--store', db.url, runId]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('seq-1m-q8t1-read');
    expect(md.stdout).toContain(runId);
    const byRun = await runCli(['report', '--store', db.url, '--run', runId]);
    expect(byRun.stdout).toBe(md.stdout);
    const results = await runCli(['results', '--run', runId, '--store', db.url, '--json']);
    // the same records, in the same order, as the run's results.jsonl mirror
    const ids = (text: string) => text.trim().split('\n').map((l) => (JSON.parse(l) as { test: { id: string } }).test.id);
    expect(ids(results.stdout)).toEqual(ids(fs.readFileSync(path.join(runDir, 'results.jsonl'), 'utf8')));
    expect(ids(results.stdout)).toContain('seq-1m-q8t1-read');
    const cmp = await runCli(['compare', '--store', db.url, runId, runDir, '--json']);
    expect(cmp.code).toBe(0);
  }, 180_000);

  it('cleanup --run: nothing left, nothing to remove', async () => {
    const r = await runCli(['cleanup', '--run', runId, '--store', db.url]);
    expect(r).toMatchObject({ code: 0, stdout: 'nothing to clean up\n' });
  });

  it('status --watch on an ended run prints its progress line and the status, and exits 0', async () => {
    const r = await runCli(['status', '--run', runId, '--store', db.url, '--watch', '0.5']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d ${runId}: done 1, failed 0, running 0, pending 0 of 1\\n`));
    expect(r.stdout).toContain('done 1, failed 0, pending 0 of 1');
  });

  it('refusals: a literal password (never repeated), an unknown run id, --run without a store', async () => {
    const literal = await runCli(['status', '--run', runId, '--store', 'postgresql://storsweep:hunter2secret@127.0.0.1:5432/x']);
    expect(literal.code).toBe(2);
    expect(literal.stderr).toContain('the password in a store URL must be a secret reference');
    expect(literal.stderr).not.toContain('hunter2secret');
    const unknown = await runCli(['status', '--run', 'nosuchrun', '--store', db.url]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(`run "nosuchrun" not found in postgresql://storsweep@127.0.0.1:${pgsrv.server.port}/${db.name}; \`storsweep status --store URL\` lists the runs it holds\n`.replace('"nosuchrun"', 'nosuchrun'));
    const noStore = await runCli(['status', '--run', runId]);
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toContain('which store?');
  });

  it("submit and worker take the inventory's store: (-i, no --store), as every other command; without a store both are refused (exit 2, nothing printed on stdout)", async () => {
    const inv = lab.storeInventory;
    const sub = await submitRun([lab.playbook, '-i', inv]);
    const queued = sub.runId;
    expect(sub.stderr).toContain(`in postgresql://storsweep@127.0.0.1:${pgsrv.server.port}/${db.name}`);
    const w = await runCli(['worker', '-i', inv, '--until-idle', '--poll-ms', '200', '--out', path.join(dir, 'worker-out'), '--json'], { timeoutMs: 180_000 });
    expect(w.code, w.stderr).toBe(0);
    expect(lastJsonLine(w.stdout)).toMatchObject({ done: 1, failed: 0 });
    const st = await runCli(['status', '--run', queued, '-i', inv, '--json']);
    expect(JSON.parse(st.stdout)).toMatchObject({ done: 1, pending: 0 });
    expect(stackTraceLines(w.stderr)).toEqual([]);

    const noStore = lab.inventory;
    const subNone = await runCli(['submit', lab.playbook, '-i', noStore]);
    expect(subNone).toMatchObject({ code: 2, stdout: '' });
    expect(subNone.stderr).toBe(`submit: which store? give --store postgresql://…, or a store: in ${noStore}; workers share the run through PostgreSQL\n`);
    const workNone = await runCli(['worker', '-i', noStore, '--until-idle']);
    expect(workNone.code).toBe(2);
    expect(workNone.stderr).toContain('worker: which store?');
  }, 240_000);
});

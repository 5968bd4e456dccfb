// `cleanup` must not run while workers work the run (review 17, finding 2): every worker holds the
// run's lock shared (its lease session) while it works a permutation of it, cleanup needs it alone.
// Two local targets of one run on this machine, worked at once by one worker (--concurrency 2);
// cleanup while they measure is refused naming the worker, and both permutations complete (the
// review saw cleanup's leftover-stopper for target a kill target b's fio: they shared the run's token).
// Both fio wait at a gate (test/helpers/fio-gate.ts) until cleanup has answered: the worker is
// measuring on both targets throughout, however slow the machine.
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fioIn, localStoreLab, type LocalStoreLab } from '../helpers/local-store-lab.ts';
import { waitFor } from '../helpers/wait.ts';
import type { TestDatabase, TestPostgres } from '../helpers/postgres.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { lastJsonLine, runCli, stackTraceLines, submitRun } from '../helpers/cli.ts';

let lab: LocalStoreLab;
let pgsrv: TestPostgres;
let db: TestDatabase;
let dir: string;

const PLAYBOOK = ['name: cleanup-under-workers', 'target: [a, b]', 'matrix:', '  workload:', '    profile: [cdm8-default]', ...quickSettings({ fileSize: '16m' }), ''].join('\n');

beforeAll(async () => {
  lab = await localStoreLab('wcleanup', { playbook: PLAYBOOK, targets: ['a', 'b'], database: 'wcl', fioGate: true });
  ({ dir, pgsrv, db } = lab);
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});

describe('cleanup under live workers', () => {
  it('is refused naming the worker; the worker\'s permutations on both targets complete; afterwards cleanup runs', async () => {
    const { runId } = await submitRun([lab.playbook, '-i', lab.inventory, '--store', db.url]);
    lab.gate.close();
    const worker = runCli(['worker', '-i', lab.inventory, '--store', db.url, '--until-idle', '--concurrency', '2', '--poll-ms', '200', '--out', path.join(dir, 'out'), '--json'], { timeoutMs: 240_000 });
    // both targets measuring at once (their fio at the gate)
    const measuring = (t: string) => lab.gate.held().some((f) => f.args.some((a) => a.includes(lab.workdir(t))));
    let heldMs = 0;
    let cl: Awaited<ReturnType<typeof runCli>>;
    try {
      await waitFor(() => measuring('a') && measuring('b'), { what: "both targets' fio at the gate", timeoutMs: 120_000 });
      const bothHeld = performance.now();
      cl = await runCli(['cleanup', '--run', runId, '--store', db.url]);
      // cleanup's leftover-stopper killed neither
      expect([measuring('a'), measuring('b')]).toEqual([true, true]);
      heldMs = performance.now() - bothHeld;
    } finally {
      lab.gate.open();
    }
    expect(cl.code, cl.stderr).toBe(2);
    expect(cl.stderr).toContain(`run ${runId} in postgresql://storsweep@127.0.0.1:${pgsrv.server.port}/${db.name} is in use by 1 worker(s) working it: storsweep worker ${os.hostname()}:`);
    expect(cl.stderr).toContain('cleanup must not run while workers work the run');
    expect(cl.stdout).not.toContain('stopped fio');
    expect(stackTraceLines(cl.stderr)).toEqual([]);
    const w = await worker;
    expect(w.code, w.stderr).toBe(0);
    const summary = lastJsonLine<{ failed: number; queueMs: number; executeMs: number; storeWrites: number; storeWriteMs: number }>(w.stdout);
    expect(summary).toMatchObject({ failed: 0 });
    // each slot counts its own executor time (review s23 L3: a pass counted the other slot's run that
    // ended meanwhile too: queue time came out negative): each slot's permutation spanned at least
    // the stretch both were held at the gate and its own 1 s of fio after (a lower bound a loaded
    // machine only lengthens); and the store writes on the lease session
    expect(summary.queueMs).toBeGreaterThanOrEqual(0);
    expect(summary.executeMs).toBeGreaterThan(2 * (heldMs + 1000));
    expect(summary.storeWrites).toBeGreaterThanOrEqual(2 * 3);
    expect(summary.storeWriteMs).toBeGreaterThan(0);
    const st = await runCli(['status', '--run', runId, '--store', db.url, '--json']);
    expect(JSON.parse(st.stdout)).toMatchObject({ total: 2, done: 2, failed: 0, pending: 0 });
    // host state: no fio of the run left on this machine
    expect(fioIn(dir)).toEqual([]);
    // the worker gone, cleanup holds the run alone
    const after = await runCli(['cleanup', '--run', runId, '--store', db.url]);
    expect(after).toMatchObject({ code: 0, stdout: 'nothing to clean up\n' });
  }, 300_000);
});

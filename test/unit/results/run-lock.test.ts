// The run directory's lock (src/results/run-lock.ts), with real processes: the lock is the
// kernel's, so only separate processes can show who wins.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunDirLocked } from '../../../src/errors.ts';
import { lockRunDir, LOCK_FILE, runDirHolder } from '../../../src/results/run-lock.ts';

const TAKER = fileURLToPath(new URL('./fixtures/lock-taker.ts', import.meta.url));
const RUN_TS = fileURLToPath(new URL('../../../bin/run-ts.mjs', import.meta.url));

interface Outcome {
  won: boolean;
  pid: number;
  previous?: { pid: number } | null;
  holder?: { pid: number; host: string; since: string; command: string } | null;
  message?: string;
}

function taker(dir: string, startAt: number, holdMs: number): { pid: number; done: Promise<Outcome | null> } {
  const child = spawn(process.execPath, [RUN_TS, TAKER, dir, String(startAt), String(holdMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<Outcome | null>((resolve) => child.on('close', () => resolve(out.trim() ? (JSON.parse(out.trim().split('\n')[0]!) as Outcome) : null)));
  return { pid: child.pid!, done };
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-lock-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('lockRunDir', () => {
  it('is refused in the same process while held, names the holder, and is free again after release', () => {
    const lock = lockRunDir(dir, 'run');
    expect(lock.holder).toMatchObject({ pid: process.pid, host: os.hostname(), command: 'run' });
    expect(lock.previous).toBeNull();
    expect(() => lockRunDir(dir, 'cleanup')).toThrow(RunDirLocked);
    expect(() => lockRunDir(dir, 'cleanup')).toThrow(new RegExp(`in use by pid ${process.pid} on host .* \\(storsweep run, since `));
    lock.release();
    const again = lockRunDir(dir, 'cleanup');
    // released cleanly: no stale holder to report
    expect(again.previous).toBeNull();
    again.release();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(true);
  });

  it('a lock of a process killed with -9 is taken over by exactly one of six processes trying at the same instant', { timeout: 60_000 }, async () => {
    // The first holder dies without releasing: its row stays in the file, its kernel lock does not.
    const first = taker(dir, 0, 60_000);
    await expect.poll(() => fs.existsSync(path.join(dir, LOCK_FILE)) && fs.statSync(path.join(dir, LOCK_FILE)).size > 0, { timeout: 20_000 }).toBe(true);
    // while it lives, a taker is refused and told who holds it
    // status's view: held, by whom (and reading it did not take the lock away)
    expect(runDirHolder(dir)).toMatchObject({ held: true, holder: { pid: first.pid, command: 'test' } });
    const refused = await taker(dir, 0, 0).done;
    expect(refused).toMatchObject({ won: false, holder: { pid: first.pid, host: os.hostname(), command: 'test' } });
    expect(refused!.message).toMatch(/wait for it to end, or stop it first/);
    process.kill(first.pid, 'SIGKILL');
    await first.done;
    // the kernel dropped the dead holder's lock; its row is still in the file
    expect(runDirHolder(dir)).toEqual({ held: false });

    const startAt = Date.now() + 4000;
    const takers = Array.from({ length: 6 }, () => taker(dir, startAt, 3000));
    const outcomes = (await Promise.all(takers.map((t) => t.done))).filter((o): o is Outcome => o !== null);
    expect(outcomes).toHaveLength(6);
    const winners = outcomes.filter((o) => o.won);
    expect(winners).toHaveLength(1);
    // the winner saw the dead holder's row; every loser names the winner
    expect(winners[0]!.previous).toMatchObject({ pid: first.pid });
    for (const o of outcomes.filter((x) => !x.won)) expect(o.holder?.pid).toBe(winners[0]!.pid);
  });
});

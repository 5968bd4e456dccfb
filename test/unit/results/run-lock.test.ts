// The run directory's lock (src/results/run-lock.ts), with real processes: the lock is the
// kernel's, so only separate processes can show who wins.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { RunDirLocked, RunLockUnusable } from '../../../src/errors.ts';
import { lockRunDir, LOCK_FILE, runDirHolder } from '../../../src/results/run-lock.ts';
import { fileAnchor } from './fixtures/file-anchor.ts';

const TAKER = fileURLToPath(new URL('./fixtures/lock-taker.ts', import.meta.url));
const RUN_TS = fileURLToPath(new URL('../../../bin/run-ts.mjs', import.meta.url));

interface Outcome {
  won: boolean;
  pid: number;
  previous?: { pid: number } | null;
  holder?: { pid: number; host: string; since: string; command: string } | null;
  message?: string;
}

function taker(dir: string, startAt: number | 'on-go', holdMs: number | 'until-release', anchorFile?: string): { pid: number; done: Promise<Outcome | null>; outcome: Promise<Outcome | null>; ready: Promise<boolean> } {
  const child = spawn(process.execPath, [RUN_TS, TAKER, dir, String(startAt), String(holdMs), ...(anchorFile ? [anchorFile] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  // the outcome is the first line after `ready` (on-go: loaded, waiting for the go file)
  const lines = () => out.split('\n').slice(0, -1).filter((l) => l !== 'ready');
  const first = (): Outcome | null => (lines().length ? (JSON.parse(lines()[0]!) as Outcome) : null);
  // `outcome`: as soon as the taker printed its line (a winner goes on holding); `done`: it exited
  let readyNow: (v: boolean) => void = () => undefined;
  const ready = new Promise<boolean>((resolve) => (readyNow = resolve));
  const outcome = new Promise<Outcome | null>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('ready\n')) readyNow(true);
      const o = first();
      if (o) resolve(o);
    });
    child.on('close', () => {
      readyNow(false);
      resolve(first());
    });
  });
  const done = new Promise<Outcome | null>((resolve) => child.on('close', () => resolve(first())));
  return { pid: child.pid!, done, outcome, ready };
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

  // Eight processes through tsx (about a second of CPU each to start): minutes on a machine loaded 9
  // on 2 cores, hence the time allowed; what is asserted does not depend on it.
  it('a lock of a process killed with -9 is taken over by exactly one of six processes trying at the same instant', { timeout: 240_000 }, async () => {
    // The first holder dies without releasing: its row stays in the file, its kernel lock does not.
    const first = taker(dir, 0, 60_000);
    await expect.poll(() => fs.existsSync(path.join(dir, LOCK_FILE)) && fs.statSync(path.join(dir, LOCK_FILE)).size > 0, { timeout: 120_000 }).toBe(true);
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

    // Each taker loads, says it is ready and waits for the go file: all six try at the same instant
    // however long each took to start on a loaded machine (a fixed start time a few seconds ahead
    // let late starters try one after the other). The winner holds until every taker has answered:
    // one that tried after the winner let go would rightly win too (sequential, not a race).
    const takers = Array.from({ length: 6 }, () => taker(dir, 'on-go', 'until-release'));
    expect(await Promise.all(takers.map((t) => t.ready))).toEqual(Array(6).fill(true));
    fs.writeFileSync(path.join(dir, 'go'), '');
    const outcomes = (await Promise.all(takers.map((t) => t.outcome))).filter((o): o is Outcome => o !== null);
    fs.writeFileSync(path.join(dir, 'release'), '');
    await Promise.all(takers.map((t) => t.done));
    expect(outcomes, JSON.stringify(outcomes)).toHaveLength(6);
    const winners = outcomes.filter((o) => o.won);
    expect(winners, JSON.stringify(outcomes)).toHaveLength(1);
    // the winner saw the dead holder's row; every loser names the winner
    expect(winners[0]!.previous).toMatchObject({ pid: first.pid });
    for (const o of outcomes.filter((x) => !x.won)) expect(o.holder?.pid).toBe(winners[0]!.pid);
  });

  it('deleting run.lock under a live holder does not free the run directory: the recorded lock file is still held', { timeout: 60_000 }, async () => {
    const anchorFile = path.join(dir, 'anchor.json');
    const anchor = fileAnchor(anchorFile);
    const first = taker(dir, 0, 60_000, anchorFile);
    await expect.poll(() => fs.existsSync(anchorFile), { timeout: 20_000 }).toBe(true);
    const lockFile = path.join(dir, LOCK_FILE);
    expect(anchor.read()).toMatchObject({ pid: first.pid, command: 'test', ino: String(fs.statSync(lockFile).ino) });
    // the hostile step: the path is given a new file while the holder keeps the old one
    fs.rmSync(lockFile);
    expect(runDirHolder(dir, anchor)).toMatchObject({ held: true, holder: { pid: first.pid, command: 'test' } });
    let refused: unknown = null;
    try {
      lockRunDir(dir, 'cleanup', anchor);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(RunDirLocked);
    expect((refused as RunDirLocked).holder).toMatchObject({ pid: first.pid, command: 'test' });
    expect((refused as Error).message).toMatch(/run\.lock was deleted or replaced while held, and the original is still locked/);
    // the anchor still names the live holder's file
    expect(anchor.read()!.pid).toBe(first.pid);
    process.kill(first.pid, 'SIGKILL');
    await first.done;
    // its kernel lock is gone with it: the new file is taken and recorded
    const lock = lockRunDir(dir, 'cleanup', anchor);
    expect(anchor.read()).toMatchObject({ pid: process.pid, command: 'cleanup', ino: String(fs.statSync(lockFile).ino) });
    lock.release();
  });

  it('never follows or rewrites what is not its lock file: symlink, FIFO, device, other content (nothing outside is touched)', () => {
    const lockFile = path.join(dir, LOCK_FILE);
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-lock-victim-'));
    try {
      const empty = path.join(outside, 'empty');
      fs.writeFileSync(empty, '');
      const text = path.join(outside, 'notes.txt');
      fs.writeFileSync(text, 'my notes\n');
      for (const [target, kind] of [[empty, /is a symbolic link \(to ".*empty"\)/], [text, /is a symbolic link/], ['/dev/null', /is a symbolic link/]] as const) {
        fs.rmSync(lockFile, { force: true });
        fs.symlinkSync(target, lockFile);
        expect(() => lockRunDir(dir, 'cleanup')).toThrow(RunLockUnusable);
        expect(() => lockRunDir(dir, 'cleanup')).toThrow(kind);
        expect(runDirHolder(dir)).toEqual({ held: false });
      }
      // the files the links pointed to are as they were: not turned into a database
      expect(fs.readFileSync(empty, 'utf8')).toBe('');
      expect(fs.readFileSync(text, 'utf8')).toBe('my notes\n');
      fs.rmSync(lockFile);
      execFileSync('mkfifo', [lockFile]);
      expect(() => lockRunDir(dir, 'cleanup')).toThrow(/is a FIFO/);
      fs.rmSync(lockFile);
      fs.writeFileSync(lockFile, 'not a database at all\n');
      expect(() => lockRunDir(dir, 'cleanup')).toThrow(/is not a lock database .*Remove it .* and retry/);
      expect(fs.readFileSync(lockFile, 'utf8')).toBe('not a database at all\n');
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});

// The run directory's lock (src/results/run-lock.ts), with real processes: the lock is the
// kernel's, so only separate processes can show who wins. The taker processes
// (fixtures/lock-taker.ts) are driven through their stdin: nothing waits on a clock.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { RunDirLocked, RunLockUnusable } from '../../../src/errors.ts';
import { lockRunDir, LOCK_FILE, runDirHolder } from '../../../src/results/run-lock.ts';
import { bundleEntry } from '../../helpers/bundle-entry.ts';
import { fileAnchor } from './fixtures/file-anchor.ts';

const TAKER = fileURLToPath(new URL('./fixtures/lock-taker.ts', import.meta.url));

interface Outcome {
  won: boolean;
  pid: number;
  previous?: { pid: number } | null;
  holder?: { pid: number; host: string; since: string; command: string } | null;
  message?: string;
}

interface Taker {
  pid: number;
  /** its outcome as soon as it printed it (a winner goes on holding), null if it ended without one */
  outcome: Promise<Outcome | null>;
  /** its outcome once it exited */
  done: Promise<Outcome | null>;
  /** true once it said it is loaded and waits for `go` (false if it ended first) */
  ready: Promise<boolean>;
  /** a line on its stdin (`go`, `release`); nothing once it has ended */
  send(line: string): void;
}

/** The taker fixture, bundled once for the file (beforeAll): eight processes start in seconds, not minutes, on a loaded machine. */
let takerBundle = '';

function taker(dir: string, start: 'now' | 'on-go', hold: 'at-once' | 'until-release', anchorFile?: string): Taker {
  const child = spawn(process.execPath, [takerBundle, dir, start, hold, ...(anchorFile ? [anchorFile] : [])], { stdio: ['pipe', 'pipe', 'inherit'] });
  // a taker that has ended (a loser) closes its stdin: a line sent then goes nowhere
  child.stdin.on('error', () => undefined);
  let out = '';
  // the outcome is the first line after `ready` (on-go: loaded, waiting for go)
  const lines = () => out.split('\n').slice(0, -1).filter((l) => l !== 'ready');
  const first = (): Outcome | null => (lines().length ? (JSON.parse(lines()[0]!) as Outcome) : null);
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
  const send = (line: string) => void (child.stdin.writable && child.stdin.write(`${line}\n`));
  return { pid: child.pid!, done, outcome, ready, send };
}

let dir: string;
let bundleDir: string;
beforeAll(async () => {
  bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-lock-bin-'));
  takerBundle = await bundleEntry(TAKER, bundleDir);
}, 120_000);
afterAll(() => {
  fs.rmSync(bundleDir, { recursive: true, force: true });
});
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

  it('a lock of a process killed with -9 is taken over by exactly one of six processes trying at the same instant', { timeout: 120_000 }, async () => {
    // The first holder dies without releasing: its row stays in the file, its kernel lock does not.
    const first = taker(dir, 'now', 'until-release');
    expect(await first.outcome).toMatchObject({ won: true, pid: first.pid });
    expect(fs.statSync(path.join(dir, LOCK_FILE)).size).toBeGreaterThan(0);
    // while it lives, a taker is refused and told who holds it
    // status's view: held, by whom (and reading it did not take the lock away)
    expect(runDirHolder(dir)).toMatchObject({ held: true, holder: { pid: first.pid, command: 'test' } });
    const refused = await taker(dir, 'now', 'at-once').done;
    expect(refused).toMatchObject({ won: false, holder: { pid: first.pid, host: os.hostname(), command: 'test' } });
    expect(refused!.message).toMatch(/wait for it to end, or stop it first/);
    process.kill(first.pid, 'SIGKILL');
    await first.done;
    // the kernel dropped the dead holder's lock; its row is still in the file
    expect(runDirHolder(dir)).toEqual({ held: false });

    // Each taker loads, says it is ready and waits for `go` on its stdin: all six try at the same
    // instant however long each took to start on a loaded machine. The winner holds until every
    // taker has answered: one that tried after the winner let go would rightly win too (sequential,
    // not a race).
    const takers = Array.from({ length: 6 }, () => taker(dir, 'on-go', 'until-release'));
    expect(await Promise.all(takers.map((t) => t.ready))).toEqual(Array(6).fill(true));
    for (const t of takers) t.send('go');
    const outcomes = (await Promise.all(takers.map((t) => t.outcome))).filter((o): o is Outcome => o !== null);
    for (const t of takers) t.send('release');
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
    const first = taker(dir, 'now', 'until-release', anchorFile);
    expect(await first.outcome).toMatchObject({ won: true, pid: first.pid });
    const lockFile = path.join(dir, LOCK_FILE);
    expect(anchor.read()).toMatchObject({ pid: first.pid, command: 'test', ino: String(fs.statSync(lockFile).ino) });
    // the hostile step: the path is given a new file while the holder keeps the old one open (its
    // inode stays in use while it lives; once it is gone, a file that reuses the inode is locked
    // under another pid, which run-lock.ts replacedLockHolder does not take for the recorded holder)
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

  it('a recorded lock file whose inode another process now locks under its own pid does not hold the run directory', { timeout: 60_000 }, async () => {
    // The recorded holder is gone and its file's inode was reused by a file another process locks
    // (here: another directory's run.lock, held by a live taker). Only the recorded pid holding
    // that identity would mean the run is still held.
    const otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-lock-other-'));
    const other = taker(otherDir, 'now', 'until-release');
    try {
      expect(await other.outcome).toMatchObject({ won: true, pid: other.pid });
      const st = fs.statSync(path.join(otherDir, LOCK_FILE), { bigint: true });
      const anchorFile = path.join(dir, 'anchor.json');
      const anchor = fileAnchor(anchorFile);
      // a pid that is not a lock holder of that inode: this test's parent (alive, holds no lock)
      anchor.write({ pid: process.ppid, host: os.hostname(), since: '2026-12-05T00:00:00.000Z', command: 'run', dev: String(st.dev), ino: String(st.ino) });
      expect(runDirHolder(dir, anchor)).toMatchObject({ held: false });
      const lock = lockRunDir(dir, 'cleanup', anchor);
      expect(lock.holder).toMatchObject({ pid: process.pid, command: 'cleanup' });
      lock.release();
      // the same identity recorded under the pid that does lock it is still refused
      anchor.write({ pid: other.pid, host: os.hostname(), since: '2026-12-05T00:00:00.000Z', command: 'run', dev: String(st.dev), ino: String(st.ino) });
      expect(() => lockRunDir(dir, 'cleanup', anchor)).toThrow(RunDirLocked);
    } finally {
      other.send('release');
      await other.done;
      fs.rmSync(otherDir, { recursive: true, force: true });
    }
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

// One writer per run directory: `run`, `run --resume` and `cleanup` hold an OS-level lock on
// `<runDir>/run.lock` for their whole life. The lock is SQLite's own POSIX (fcntl) lock: the file is
// a tiny SQLite database opened with `locking_mode=EXCLUSIVE` and written once, so the connection
// keeps its exclusive lock until it closes or the process dies. The kernel drops the lock of a dead
// process (kill -9, crash, power loss of a client of a local disk), so a lock can never go stale, and
// taking it is one atomic kernel decision: two takers can never both win. The row written under the
// lock says who holds it (pid, host, since, command) for the refusal message; a row left by a dead
// holder is just overwritten by the next one. See docs/decisions.md.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunDirLocked } from '../errors.ts';

export const LOCK_FILE = 'run.lock';

export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the lock was taken */
  since: string;
  /** what holds it, e.g. `run`, `run --resume`, `cleanup` */
  command: string;
}

export interface RunLock {
  readonly holder: LockHolder;
  /** the holder recorded by an earlier process that ended without releasing (null: none) */
  readonly previous: LockHolder | null;
  release(): void;
}

// POSIX locks belong to the process, not to a descriptor: closing ANY descriptor of the file in
// this process drops them. So this process never opens a lock file it holds a second time.
const held = new Map<string, RunLock>();

function readHolder(db: Database.Database): LockHolder | null {
  try {
    const row = db.prepare('SELECT pid, host, since, command FROM holder LIMIT 1').get() as LockHolder | undefined;
    return row ?? null;
  } catch {
    return null;
  }
}

/**
 * The holder written into a lock file another process holds. Its locks are advisory byte ranges
 * that do not stop a plain read, so the file's bytes are read and opened as an in-memory copy.
 */
function holderOf(file: string): LockHolder | null {
  try {
    const copy = new Database(fs.readFileSync(file));
    try {
      return readHolder(copy);
    } finally {
      copy.close();
    }
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The holder's row is committed an instant after it took the lock: until then the file still names
 * the previous (dead) holder. On this host that is visible, so read again for a moment.
 */
function currentHolder(file: string): LockHolder | null {
  let h = holderOf(file);
  for (let i = 0; i < 20 && (!h || (h.host === os.hostname() && !alive(h.pid))); i++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    h = holderOf(file);
  }
  return h;
}

const READER_GRACE_MS = 1000;

/**
 * Whether a process holds the run directory's lock now, and who (for `status`). Takes only a shared
 * lock for the instant of one read, which a taker waits out (READER_GRACE_MS).
 */
export function runDirHolder(runDir: string): { held: false } | { held: true; holder: LockHolder | null } {
  const file = path.join(path.resolve(runDir), LOCK_FILE);
  if (!fs.existsSync(file)) return { held: false };
  const mine = held.get(fs.realpathSync(path.dirname(file)));
  if (mine) return { held: true, holder: mine.holder };
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    return { held: false };
  }
  let busy = false;
  try {
    db.pragma('busy_timeout = 0');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (err) {
    busy = (err as { code?: string }).code === 'SQLITE_BUSY';
  } finally {
    db.close();
  }
  return busy ? { held: true, holder: currentHolder(file) } : { held: false };
}

/** Takes the run directory's lock, or throws RunDirLocked naming the holder. Never waits. */
export function lockRunDir(runDir: string, command: string): RunLock {
  const file = path.join(path.resolve(runDir), LOCK_FILE);
  const key = fs.realpathSync(path.dirname(file));
  const mine = held.get(key);
  if (mine) throw new RunDirLocked(runDir, mine.holder);
  const db = new Database(file);
  let previous: LockHolder | null;
  try {
    // A reader (`status`) holds a shared lock for the instant of its check: wait that out; a
    // holder keeps its lock for the run's life, so a longer wait would not help.
    db.pragma(`busy_timeout = ${READER_GRACE_MS}`);
    db.pragma('locking_mode = EXCLUSIVE');
    // No journal file next to the lock: the database is one row, rewritten under the lock.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new RunDirLocked(runDir, currentHolder(file), { cause: err });
    throw err;
  }
  const holder: LockHolder = { pid: process.pid, host: os.hostname(), since: new Date().toISOString(), command };
  try {
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, host TEXT NOT NULL, since TEXT NOT NULL, command TEXT NOT NULL)');
    previous = readHolder(db);
    db.exec('DELETE FROM holder');
    db.prepare('INSERT INTO holder (pid, host, since, command) VALUES (?, ?, ?, ?)').run(holder.pid, holder.host, holder.since, holder.command);
    // COMMIT keeps the exclusive lock (locking_mode=EXCLUSIVE): it is held until close().
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    throw err;
  }
  let released = false;
  const lock: RunLock = {
    holder,
    previous,
    release() {
      if (released) return;
      released = true;
      held.delete(key);
      try {
        // Leave no holder behind: the next taker then reports no "previous" holder.
        db.exec('DELETE FROM holder');
      } catch {
        /* a full disk: the row is stale, the lock is released by close() regardless */
      }
      db.close();
    },
  };
  held.set(key, lock);
  return lock;
}

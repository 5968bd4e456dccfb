// One writer per run directory: `run`, `run --resume` and `cleanup` hold an OS-level lock on
// `<runDir>/run.lock` for their whole life. The lock is SQLite's own POSIX (fcntl) lock: the file is
// a tiny SQLite database opened with `locking_mode=EXCLUSIVE` and written once, so the connection
// keeps its exclusive lock until it closes or the process dies. The kernel drops the lock of a dead
// process (kill -9, crash, power loss of a client of a local disk), so a lock can never go stale, and
// taking it is one atomic kernel decision: two takers can never both win. The row written under the
// lock says who holds it (pid, host, since, command) for the refusal message; a row left by a dead
// holder is just overwritten by the next one. See docs/decisions.md.
//
// A lock belongs to a file, and a path can be given another file: `rm run.lock` during a live run
// would let the next `cleanup` create and lock a new run.lock while the run still holds the old,
// deleted one. So the holder also records which file it locked (device and inode) in the run's own
// database (the anchor: run.sqlite, which cannot be replaced without losing the run). A taker that
// finds the path holding another file than the recorded one asks the kernel whether the recorded
// file is still locked (/proc/locks lists locks on deleted files too) and refuses if it is. And
// run.lock itself is never followed: a symlink, device or FIFO there, or a file that is not a lock
// database, is refused (RunLockUnusable) before anything is opened or written.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunDirLocked, RunLockUnusable } from '../errors.ts';
import { fileKind } from '../input/file-kind.ts';

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
  /** records which file this lock is (for a run whose database is created after its lock) */
  anchorTo(anchor: LockAnchor): void;
  release(): void;
}

/** The lock file a holder locked (device and inode, as decimal text) and who it was. */
export interface AnchoredLock extends LockHolder {
  dev: string;
  ino: string;
}

/** Where a holder records which lock file it holds: the run's database (ResultStore.lockAnchor). */
export interface LockAnchor {
  read(): AnchoredLock | null;
  write(lock: AnchoredLock): void;
}

interface FileId {
  dev: bigint;
  ino: bigint;
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

const describeKind = (st: fs.BigIntStats): string => `is ${fileKind(st)}`;

/** lstat: the path itself, never what a link points to (null: nothing there). */
function lstatId(file: string): fs.BigIntStats | null {
  try {
    return fs.lstatSync(file, { bigint: true });
  } catch {
    return null;
  }
}

/**
 * Makes sure `file` is a regular lock file of ours before SQLite opens it: never a link (opened
 * with O_NOFOLLOW, and refused), a device or FIFO (O_NONBLOCK: opening a FIFO never hangs), nor a
 * file with other content. Creates it when missing. Returns its identity. The descriptor is closed
 * before SQLite takes its lock (closing one later would drop the lock).
 */
function prepareLockFile(file: string): FileId {
  const before = lstatId(file);
  if (before?.isSymbolicLink()) {
    let to = '';
    try {
      to = ` (to ${JSON.stringify(fs.readlinkSync(file))})`;
    } catch {
      /* gone meanwhile */
    }
    throw new RunLockUnusable(file, `is a symbolic link${to}`);
  }
  if (before && !before.isFile()) throw new RunLockUnusable(file, describeKind(before));
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new RunLockUnusable(file, 'is a symbolic link', { cause: err });
    throw err;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile()) throw new RunLockUnusable(file, describeKind(st));
    if (st.size > 0n) {
      const head = Buffer.alloc(SQLITE_HEADER.length);
      const n = fs.readSync(fd, head, 0, head.length, 0);
      if (n < head.length || !head.equals(SQLITE_HEADER)) throw new RunLockUnusable(file, 'is not a lock database (it does not start with the SQLite header)');
    }
    return { dev: st.dev, ino: st.ino };
  } finally {
    fs.closeSync(fd);
  }
}

const sameId = (a: FileId, dev: string, ino: string) => a.dev.toString() === dev && a.ino.toString() === ino;

/** Linux's major/minor of a device number (glibc's encoding, as /proc/locks prints it). */
function majorMinor(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}`;
}

/**
 * Who holds a POSIX lock on the file with this identity, from the kernel's table (Linux's
 * /proc/locks: it lists locks on files already deleted). `undefined`: the table cannot be read here.
 */
function kernelLockPids(dev: string, ino: string): number[] | undefined {
  let table: string;
  try {
    table = fs.readFileSync('/proc/locks', 'utf8');
  } catch {
    return undefined;
  }
  const want = `${majorMinor(BigInt(dev))}:${ino}`;
  const pids: number[] = [];
  for (const line of table.split('\n')) {
    // "1: POSIX  ADVISORY  WRITE 2147 fe:00:2149546 1073741824 1073742335"; "1: -> …" are waiters
    const m = /^\d+:\s+(\S+)\s+\S+\s+(\S+)\s+(-?\d+)\s+([0-9a-f]+:[0-9a-f]+:\d+)\s/.exec(line);
    if (!m || m[1] === '->' || m[4] !== want) continue;
    // The holder's WRITE locks first: a reader (`status`) may hold a READ lock for an instant.
    if (m[2] === 'WRITE') pids.unshift(Number(m[3]));
    else pids.push(Number(m[3]));
  }
  return pids;
}

/**
 * The recorded lock file, when the path now holds another file (or none): is the recorded one still
 * held? Returns the holder to name in a refusal, or null when it is provably free.
 */
function replacedLockHolder(recorded: AnchoredLock): LockHolder | null {
  // This process holds no other run.lock of this directory (`held`): a lock of its own on that
  // identity is a file that reused the deleted lock file's inode (e.g. the run.sqlite-shm its own
  // read created after the last run removed it), not the old holder.
  const pids = kernelLockPids(recorded.dev, recorded.ino)?.filter((p) => p !== process.pid);
  if (pids && pids.length === 0) return null;
  const who = stripId(recorded);
  // A lock by another process on that identity is a file that reused the freed inode (another
  // run's database, a parallel test's file): POSIX locks belong to the process that took them, so
  // the recorded holder still holding its old file is listed under its own pid.
  if (pids) return pids.includes(recorded.pid) ? who : null;
  // No kernel table to ask (not Linux): on this host, the recorded process's life decides (a
  // reused pid only makes us refuse); on another host nothing can be checked from here.
  if (recorded.host === os.hostname() && !alive(recorded.pid)) return null;
  return who;
}

const REPLACED_NOTE = 'its run.lock was deleted or replaced while held, and the original is still locked';

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
    const copy = new Database(readLockBytes(file));
    try {
      return readHolder(copy);
    } finally {
      copy.close();
    }
  } catch {
    return null;
  }
}

/** The lock file's bytes: never through a link, never blocking on a FIFO, at most 1 MiB (it is one row). */
function readLockBytes(file: string): Buffer {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > 1024 * 1024) throw new Error('not a lock file');
    const buf = Buffer.alloc(st.size);
    const n = fs.readSync(fd, buf, 0, st.size, 0);
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
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
export function runDirHolder(runDir: string, anchor?: LockAnchor): { held: false } | { held: true; holder: LockHolder | null } {
  const file = path.join(path.resolve(runDir), LOCK_FILE);
  const mine = fs.existsSync(path.dirname(file)) ? held.get(fs.realpathSync(path.dirname(file))) : undefined;
  if (mine) return { held: true, holder: mine.holder };
  const st = lstatId(file);
  const recorded = anchor?.read() ?? null;
  if (recorded && !(st?.isFile() && sameId(st, recorded.dev, recorded.ino))) {
    const holder = replacedLockHolder(recorded);
    if (holder) return { held: true, holder };
  }
  if (!st?.isFile()) return { held: false };
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

/**
 * Takes the run directory's lock, or throws RunDirLocked naming the holder. Never waits. With an
 * anchor (the run's database), refuses while a lock file this run recorded is still held under
 * another name, and records the file it locked.
 */
export function lockRunDir(runDir: string, command: string, anchor?: LockAnchor): RunLock {
  const file = path.join(path.resolve(runDir), LOCK_FILE);
  const key = fs.realpathSync(path.dirname(file));
  const mine = held.get(key);
  if (mine) throw new RunDirLocked(runDir, mine.holder);
  const id = prepareLockFile(file);
  const db = lockExclusively(runDir, file);
  // The lock is the file's: the path must still name the file checked above (not swapped meanwhile).
  const now = lstatId(file);
  if (!now?.isFile() || now.dev !== id.dev || now.ino !== id.ino) {
    db.close();
    throw new RunLockUnusable(file, 'was replaced while it was being locked');
  }
  // A lock file recorded by an earlier holder that is no longer at this path may still be held.
  const recorded = anchor?.read() ?? null;
  if (recorded && !sameId(id, recorded.dev, recorded.ino)) {
    const other = replacedLockHolder(recorded);
    if (other) {
      db.close();
      throw new RunDirLocked(runDir, other, { note: REPLACED_NOTE });
    }
  }
  const holder: LockHolder = { pid: process.pid, host: os.hostname(), since: new Date().toISOString(), command };
  let previous: LockHolder | null;
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
    anchorTo(a: LockAnchor) {
      a.write({ ...holder, dev: id.dev.toString(), ino: id.ino.toString() });
    },
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
  try {
    if (anchor) lock.anchorTo(anchor);
  } catch (err) {
    lock.release();
    throw err;
  }
  held.set(key, lock);
  return lock;
}


/** The lock database opened and locked exclusively (BEGIN EXCLUSIVE), or RunDirLocked / RunLockUnusable. */
function lockExclusively(runDir: string, file: string): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_NOTADB') throw new RunLockUnusable(file, 'is not a lock database', { cause: err });
    throw err;
  }
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
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_BUSY') throw new RunDirLocked(runDir, currentHolder(file), { cause: err });
    if (code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT')) throw new RunLockUnusable(file, 'is not a lock database', { cause: err });
    throw err;
  }
  return db;
}

function stripId(a: AnchoredLock): LockHolder {
  return { pid: a.pid, host: a.host, since: a.since, command: a.command };
}

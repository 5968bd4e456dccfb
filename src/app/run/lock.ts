// The run directory's lock, as `run --resume` and `cleanup` take it.
import { lockRunDir, type RunLock } from '../../results/run-lock.ts';
import type { ResultStore } from '../../results/store.ts';
import { notify, type Notify } from '../notify.ts';

type Holder = NonNullable<RunLock['previous']>;

/** What is said when a lock left by a process that ended is taken over. */
export function lockTakeoverNote(runDir: string, p: Holder): string {
  return `note: ${runDir} was last held by pid ${p.pid} on host ${JSON.stringify(p.host)} (storsweep ${p.command}, since ${p.since}), which ended without releasing it; taking over\n`;
}

/**
 * Takes the run directory's lock for this process's life (released by the caller, or by the OS
 * when the process ends). A lock left by a process that died is taken over: said (`note`) and
 * in the journal.
 */
export function takeRunLock(store: ResultStore, command: string, note: Notify = notify): RunLock {
  const lock = lockRunDir(store.runDir, command, store.lockAnchor());
  if (lock.previous) {
    const p = lock.previous;
    note(lockTakeoverNote(store.runDir, p));
    store.appendJournal(null, 'run', 'lock-takeover', { previous: p, pid: process.pid });
  }
  return lock;
}

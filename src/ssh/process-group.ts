// A long command on a POSIX host (fio on a Linux guest, or on this machine) that must not outlive
// an abort or a timeout. Closing an SSH channel or killing the local `sh -c` leaves the command's
// children running (no pty, so no SIGHUP), and teardown would then delete the disk under them.
// So the command runs in its own session and process group (`setsid`), whose id it writes to a
// pidfile first; stopping it signals the whole group (TERM, then KILL) and checks that no live
// process of the group is left, before the caller goes on.
//
// Start/stop race: the stopper creates a cancel marker, then reads the pidfile; the wrapper writes
// the pidfile, then looks for the marker. Whichever comes second sees the other's file: either the
// stopper finds the group to signal, or the wrapper never starts the command.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { RemoteCommandFailed } from '../errors.ts';
import type { CommandResult, CommandRunner } from './command-runner.ts';
import { shJoin } from './quote.ts';

export interface GroupStop {
  /** the process group id read from the pidfile (null: the command never started) */
  pgid: number | null;
  outcome: 'stopped' | 'not-running' | 'not-started' | 'still-running' | 'unknown';
  /** the signal that ended the group (`TERM`, or `KILL` after the grace period) */
  signal?: 'TERM' | 'KILL';
  detail?: string;
}

export interface GroupRunOptions {
  /** a directory on the host that the command's pidfile and cancel marker may be written to */
  controlDir: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** seconds between TERM and KILL, and after KILL, while waiting for the group to be gone */
  graceSec?: number;
  /** called after an aborted or timed-out command was stopped (or found gone) */
  onStopped?: (stop: GroupStop) => void;
}

// $1 pidfile, $2 cancel marker, then the command. `trap : TERM…` keeps the wrapper alive until the
// command (which gets the group's signal with default handling) has ended, so it reaps it and
// removes the pidfile: no orphaned zombie of the command is left behind.
const WRAPPER = 'p=$1; c=$2; shift 2; echo $$ >"$p" || exit 125; if [ -e "$c" ]; then rm -f "$p"; exit 130; fi; trap : TERM INT HUP; "$@"; rc=$?; rm -f "$p"; exit $rc';

// $1 pidfile, $2 cancel marker, $3 grace in tenths of a second. A process counts as alive unless it
// is a zombie (a zombie holds no file and does no I/O; a container's init may never reap it); where
// /proc is missing, `kill -0` on the group decides.
const STOPPER = [
  'p=$1; c=$2; n=$3',
  ': >"$c" 2>/dev/null',
  'g=$(cat "$p" 2>/dev/null)',
  "case $g in ''|*[!0-9]*) echo not-started; exit 0;; esac",
  'alive() { if [ -r /proc/self/stat ]; then for f in /proc/[0-9]*/stat; do { read -r l <"$f"; } 2>/dev/null || continue; r=${l##*") "}; set -- $r; if [ "$3" = "$g" ] && [ "$1" != Z ]; then return 0; fi; done; return 1; fi; kill -s 0 -- "-$g" 2>/dev/null; }',
  'gone() { i=0; while alive; do [ $i -ge $n ] && return 1; sleep 0.1; i=$((i+1)); done; return 0; }',
  'if ! alive; then rm -f "$p" "$c"; echo "not-running $g"; exit 0; fi',
  'kill -s TERM -- "-$g" 2>/dev/null',
  'if gone; then rm -f "$p" "$c"; echo "stopped $g TERM"; exit 0; fi',
  'kill -s KILL -- "-$g" 2>/dev/null',
  'if gone; then rm -f "$p" "$c"; echo "stopped $g KILL"; exit 0; fi',
  'echo "still-running $g"; exit 1',
].join('; ');

/** The command line that runs `argv` in its own process group, its pgid in `pidFile`. */
export function groupCommand(argv: readonly string[], pidFile: string, cancelFile: string): string {
  // `; exit` keeps the login shell from exec'ing setsid as its last command: setsid would then be
  // a group leader already, fork, and return at once while the command ran on unobserved.
  return `${shJoin(['setsid', 'sh', '-c', WRAPPER, 'storsweep-group', pidFile, cancelFile, ...argv])}; exit`;
}

export function stopCommand(pidFile: string, cancelFile: string, graceSec: number): string {
  return shJoin(['sh', '-c', STOPPER, 'storsweep-stop', pidFile, cancelFile, String(Math.max(1, Math.round(graceSec * 10)))]);
}

export function parseStop(stdout: string): GroupStop {
  const last = stdout.trim().split('\n').pop() ?? '';
  const [word, pg, sig] = last.split(' ');
  const pgid = pg && /^\d+$/.test(pg) ? Number(pg) : null;
  if (word === 'stopped') return { pgid, outcome: 'stopped', signal: sig === 'KILL' ? 'KILL' : 'TERM' };
  if (word === 'not-running' || word === 'not-started' || word === 'still-running') return { pgid, outcome: word };
  return { pgid, outcome: 'unknown', detail: last.slice(0, 200) };
}

/** Where a command's group is recorded on its host: enough to stop it through another connection. */
export interface GroupFiles {
  pidFile: string;
  cancelFile: string;
}

const stranded = new WeakMap<object, GroupFiles>();

/**
 * The group a command may have left running when its connection was lost (the error runInGroup
 * rejected with): stop it through the next connection before running anything else there.
 */
export function strandedGroupOf(err: unknown): GroupFiles | undefined {
  return err && typeof err === 'object' ? stranded.get(err) : undefined;
}

/** Signals the group of a command started by runInGroup and waits until none of it is alive. */
export async function stopGroup(runner: CommandRunner, pidFile: string, cancelFile: string, graceSec = 5): Promise<GroupStop> {
  try {
    const r = await runner.run(stopCommand(pidFile, cancelFile, graceSec), { timeoutMs: (graceSec * 2 + 30) * 1000 });
    return parseStop(r.stdout);
  } catch (err) {
    return { pgid: null, outcome: 'unknown', detail: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Runs `argv` in its own process group on `runner`'s host. When the run is aborted or times out,
 * the group is stopped (and checked gone) before the returned promise rejects.
 */
export async function runInGroup(runner: CommandRunner, argv: readonly string[], opts: GroupRunOptions): Promise<CommandResult> {
  const base = path.posix.join(opts.controlDir, `.storsweep-${randomBytes(8).toString('hex')}`);
  const pidFile = `${base}.pgid`;
  const cancelFile = `${base}.cancel`;
  try {
    return await runner.run(groupCommand(argv, pidFile, cancelFile), { timeoutMs: opts.timeoutMs, signal: opts.signal });
  } catch (err) {
    // 'timeout' is also how runners report an abort: the command may still run over there. After
    // a lost connection this runner cannot reach the host any more: the error carries the group's
    // files (strandedGroupOf) for whoever reconnects.
    if (err instanceof RemoteCommandFailed && err.details.reason === 'timeout') {
      const stop = await stopGroup(runner, pidFile, cancelFile, opts.graceSec);
      opts.onStopped?.(stop);
    } else if (err instanceof RemoteCommandFailed && err.details.reason === 'connection') {
      stranded.set(err, { pidFile, cancelFile });
    }
    throw err;
  }
}

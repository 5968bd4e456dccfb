// A long command on a Linux host (fio on a guest, or on this machine) that must not outlive an
// abort, a timeout, a lost connection or a killed storsweep. Closing an SSH channel or killing the
// local `sh -c` leaves the command running (no pty, so no SIGHUP), and teardown would then delete
// the disk under it.
//
// A process group is not enough to find it again: fio forks one process per job and each job calls
// setsid() (fio 3.33 backend.c, thread_main: `if (!o->use_thread) { setsid(); ... }`), so the jobs
// that do the I/O are in neither the wrapper's group nor its session, and once fio's parent is gone
// they are children of init. So every process of ours carries a token in its environment
// (STORSWEEP_GROUP=<runId>-<nonce>, set before the command is exec'd; fork and exec inherit it) and
// the stopper finds the processes to signal by that token in /proc/<pid>/environ: fio's parent and
// every job, wherever they were reparented. It signals nothing else: not what a pidfile names (a
// pidfile is a hint that a command was started, never a target), not pid 1, not itself. Where it
// cannot read environments (no /proc) it signals nothing and says it could not tell.
//
// Start/stop race: the stopper creates a cancel marker, then looks for the pidfile and the
// processes; the wrapper writes the pidfile, then looks for the marker. Whichever comes second sees
// the other's file: either the stopper finds the processes to signal, or the wrapper never starts
// (and removes both files as it leaves: the marker has done its work).
//
// End/stop race: the pidfile outlives the wrapper — it is the proof that the command started. Were
// it removed when the command ended, a stop that comes just after (an abort at that moment, or the
// next connection after a lost one) would find neither pidfile nor process, could not tell "ended"
// from "not started yet", and would leave its cancel marker for a wrapper that never comes. So the
// caller removes the pidfile once it has the command's result (runInGroup), and a stop that finds
// it with no process left says `not-running` and removes both files.
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { InvalidArgument, RemoteCommandFailed } from '../errors.ts';
import type { CommandResult, CommandRunner } from './command-runner.ts';
import type { GroupStop } from '../contract/host-process.ts';

export type { GroupStop } from '../contract/host-process.ts';
import { shJoin } from './quote.ts';

/** The environment variable every process started by runInGroup carries (its value: the group's token). */
export const GROUP_ENV = 'STORSWEEP_GROUP';

export interface GroupRunOptions {
  /** a directory on the host that the command's pidfile and cancel marker may be written to */
  controlDir: string;
  /** whose command this is: the run id ([a-z0-9]); a later process of the same run finds it by this (stopRunGroups) */
  owner?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** seconds between TERM and KILL, and after KILL, while waiting for the processes to be gone */
  graceSec?: number;
  /** called after an aborted or timed-out command was stopped (or found gone) */
  onStopped?: (stop: GroupStop) => void;
  /**
   * Run the command as root through `sudo -n` (a non-root login measuring a raw device). sudo
   * resets the environment, so the token is set again inside it (`sudo -n env TOKEN cmd`), and
   * the stopper runs through `sudo -n` too: a user cannot read root's /proc/PID/environ, and a
   * stopper that cannot see the processes would call them gone.
   */
  asRoot?: boolean;
}

const OWNER = /^[a-z0-9]{1,40}$/;
const NONCE = '[0-9a-f]{16}';

function checkOwner(owner: string): string {
  if (!OWNER.test(owner)) throw new InvalidArgument(`process group owner ${JSON.stringify(owner.slice(0, 60))}: expected 1–40 of a-z, 0-9 (a run id)`, { name: 'owner', value: owner });
  return owner;
}

// $1 pidfile, $2 cancel marker, then the command; the token is already in the environment (`env`
// exec'd this shell with it). `set -C`: the pidfile is created, never written through a file or
// link already there. `trap : TERM…` keeps the wrapper alive until the command (which gets the
// signal with default handling) has ended, so it reaps it (`rc=…; exit` keeps a shell from exec'ing
// the command in its place). The pidfile stays (see above).
const WRAPPER = 'p=$1; c=$2; shift 2; set -C; { echo $$ >"$p"; } 2>/dev/null || exit 125; set +C; if [ -e "$c" ]; then rm -f "$p" "$c"; exit 130; fi; trap : TERM INT HUP; "$@"; rc=$?; exit $rc';

// $1 pidfile, $2 cancel marker (both may be empty), $3 grace in tenths of a second, $4 the
// environment entry that proves a process ours (an extended regex for the whole entry), $5/$6 a
// directory and a file-name prefix whose leftover pidfiles/markers to remove once nothing is left.
// `ours` lists the live processes whose environment holds that entry (a zombie's environment reads
// empty: it holds no file and does no I/O). Each process is signalled once per signal; TERM, then
// KILL after the grace period, then the grace again for the kernel to finish it.
const STOPPER = [
  'p=$1; c=$2; n=$3; e=$4; d=$5; x=$6',
  'if [ -n "$c" ]; then { : >"$c"; } 2>/dev/null; fi',
  // the check must be able to see a process, or it proves nothing: refuse rather than report "gone"
  `if ! [ -r /proc/$$/environ ] || ! printf 'a\\0' | grep -qzx a 2>/dev/null; then echo "unknown - cannot read process environments here (/proc/PID/environ, grep -z): nothing signalled"; exit 1; fi`,
  'g=-',
  // a hint of what was started, read only from a regular file (never through a link)
  'if [ -n "$p" ] && [ -f "$p" ] && ! [ -L "$p" ]; then { read -r g <"$p"; } 2>/dev/null; case $g in ""|*[!0-9]*) g=-;; esac; fi',
  'ours() { L=; for f in $(grep -lszxE -e "$e" /proc/[0-9]*/environ); do q=${f#/proc/}; q=${q%/environ}; case $q in ""|*[!0-9]*|0|1|$$) continue;; esac; L="$L $q"; done; [ -n "$L" ]; }',
  'tidy() { if [ -n "$p" ]; then rm -f "$p" "$c"; fi; if [ -n "$d" ]; then for f in "$d/$x"*; do if [ -f "$f" ] && ! [ -L "$f" ]; then rm -f -- "$f"; fi; done; fi; }',
  // no pidfile and no process: the command has not started; the cancel marker stays to keep it from starting
  'if ! ours; then if [ "$g" = - ] && [ -n "$p" ]; then echo "not-started -"; else tidy; echo "not-running $g"; fi; exit 0; fi',
  'A=',
  'for s in TERM KILL; do S=; i=0; while ours; do for q in $L; do case " $S " in *" $q "*) ;; *) kill -s $s "$q" 2>/dev/null; S="$S $q"; case " $A " in *" $q "*) ;; *) A="$A $q";; esac;; esac; done; [ $i -ge $n ] && break; sleep 0.1; i=$((i+1)); done',
  'if ! ours; then tidy; echo "stopped $g $s$A"; exit 0; fi; done',
  'echo "still-running $g$L"; exit 1',
].join('; ');

/** Where a command's group is recorded on its host, and its token: enough to stop it through another connection. */
export interface GroupFiles {
  pidFile: string;
  cancelFile: string;
  token: string;
  /** the command runs as root through `sudo -n`; so does its stopper */
  asRoot?: boolean;
}

/** The pidfile, cancel marker and token of a new command of `owner` under `controlDir`. */
export function newGroupFiles(controlDir: string, owner = 'adhoc', asRoot = false): GroupFiles {
  const token = `${checkOwner(owner)}-${randomBytes(8).toString('hex')}`;
  const base = path.posix.join(controlDir, `.storsweep-${token}`);
  return { pidFile: `${base}.pgid`, cancelFile: `${base}.cancel`, token, ...(asRoot ? { asRoot: true } : {}) };
}

const SUDO = ['sudo', '-n'];

/** The wrapper's argument vector after `sh`: it writes the pidfile, checks the cancel marker, runs `argv` (through `sudo -n env TOKEN` for asRoot). */
function wrapperArgs(argv: readonly string[], files: GroupFiles): string[] {
  const command = files.asRoot ? [...SUDO, 'env', `${GROUP_ENV}=${files.token}`, ...argv] : argv;
  return ['-c', WRAPPER, 'storsweep-group', files.pidFile, files.cancelFile, ...command];
}

/** The command line that runs `argv` in its own session, carrying the group's token, its wrapper's pid in the pidfile. */
export function groupCommand(argv: readonly string[], files: GroupFiles): string {
  // `; exit` keeps the login shell from exec'ing setsid as its last command: setsid would then be
  // a group leader already, fork, and return at once while the command ran on unobserved.
  return `${shJoin(['setsid', 'env', `${GROUP_ENV}=${files.token}`, 'sh', ...wrapperArgs(argv, files)])}; exit`;
}

/**
 * Starts the group's wrapper on `runner`'s host: directly where the runner can (this machine:
 * runInSession, the wrapper its own session leader with the token in its environment from the
 * start, as `setsid env TOKEN sh` would make it, without those three processes), else the
 * command line of groupCommand through the runner's shell.
 */
function startGroup(runner: CommandRunner, argv: readonly string[], files: GroupFiles, o: { timeoutMs?: number | undefined; signal?: AbortSignal | undefined }): Promise<CommandResult> {
  if (runner.runInSession) return runner.runInSession(['/bin/sh', ...wrapperArgs(argv, files)], { [GROUP_ENV]: files.token }, o);
  return runner.run(groupCommand(argv, files), o);
}

/** Stops the processes carrying `files.token` (see STOPPER). */
export function stopCommand(files: GroupFiles, graceSec: number): string {
  if (!/^[a-z0-9]+-[0-9a-f]{16}$/.test(files.token)) throw new InvalidArgument(`process group token ${JSON.stringify(files.token.slice(0, 80))} is not one runInGroup makes`, { name: 'token', value: files.token });
  return shJoin([...(files.asRoot ? SUDO : []), 'sh', '-c', STOPPER, 'storsweep-stop', files.pidFile, files.cancelFile, tenths(graceSec), `${GROUP_ENV}=${files.token}`, '', '']);
}

/**
 * Stops every process of `owner` (toolOwner: a run's target) under any token, and removes its
 * leftover pidfiles in `controlDir`. `legacyOwner`: also the processes an older storsweep started
 * under the bare run id (before tokens were scoped to a target).
 */
export function stopRunCommand(controlDir: string, owner: string, graceSec: number, asRoot = false, legacyOwner?: string): string {
  const who = legacyOwner !== undefined ? `(${checkOwner(owner)}|${checkOwner(legacyOwner)})` : checkOwner(owner);
  return shJoin([...(asRoot ? SUDO : []), 'sh', '-c', STOPPER, 'storsweep-stop', '', '', tenths(graceSec), `${GROUP_ENV}=${who}-${NONCE}`, controlDir, `.storsweep-${owner}-`]);
}

/**
 * Whose tool processes these are: the run id and a digest of the target's name (`<runId>t<8 hex>`).
 * Two targets of one run may share a machine (two local targets, two guests on one host seen by one
 * login) and be worked by different workers: stopping one target's leftovers must never signal the
 * other's tool, so each target's processes carry their own owner.
 */
export function toolOwner(runId: string, target: string): string {
  return checkOwner(`${checkOwner(runId)}t${createHash('sha256').update(target).digest('hex').slice(0, 8)}`);
}

const tenths = (sec: number) => String(Math.max(1, Math.round(sec * 10)));

export function parseStop(stdout: string): GroupStop {
  const last = stdout.trim().split('\n').pop() ?? '';
  const words = last.split(' ');
  const [word, pg] = words;
  const pgid = pg && /^\d+$/.test(pg) ? Number(pg) : null;
  const pids = (from: number) => words.slice(from).filter((w) => /^\d+$/.test(w)).map(Number);
  if (word === 'stopped') return { pgid, outcome: 'stopped', signal: words[2] === 'KILL' ? 'KILL' : 'TERM', pids: pids(3) };
  if (word === 'still-running') return { pgid, outcome: word, pids: pids(2) };
  if (word === 'not-running' || word === 'not-started') return { pgid, outcome: word };
  return { pgid, outcome: 'unknown', detail: (word === 'unknown' ? words.slice(2).join(' ') : last).slice(0, 200) };
}

const stranded = new WeakMap<object, GroupFiles>();

/**
 * The group a command may have left running when its connection was lost (the error runInGroup
 * rejected with): stop it through the next connection before running anything else there.
 */
export function strandedGroupOf(err: unknown): GroupFiles | undefined {
  return err && typeof err === 'object' ? stranded.get(err) : undefined;
}

async function runStopper(runner: CommandRunner, command: string, graceSec: number): Promise<GroupStop> {
  try {
    const r = await runner.run(command, { timeoutMs: (graceSec * 2 + 30) * 1000 });
    return parseStop(r.stdout);
  } catch (err) {
    return { pgid: null, outcome: 'unknown', detail: err instanceof Error ? err.message : String(err) };
  }
}

/** Signals the processes of a command started by runInGroup and waits until none of them is alive. */
export function stopGroup(runner: CommandRunner, files: GroupFiles, graceSec = 5): Promise<GroupStop> {
  return runStopper(runner, stopCommand(files, graceSec), graceSec);
}

/**
 * Stops whatever an earlier process of run `owner` left running on `runner`'s host (storsweep was
 * killed, or its connection lost, while fio ran), before anything of the run goes on there.
 */
export function stopRunGroups(runner: CommandRunner, controlDir: string, owner: string, graceSec = 5, asRoot = false, legacyOwner?: string): Promise<GroupStop> {
  return runStopper(runner, stopRunCommand(controlDir, owner, graceSec, asRoot, legacyOwner), graceSec);
}

/**
 * Runs `argv` in its own session on `runner`'s host. When the run is aborted or times out, every
 * process of it is stopped (and checked gone) before the returned promise rejects.
 */
export async function runInGroup(runner: CommandRunner, argv: readonly string[], opts: GroupRunOptions): Promise<CommandResult> {
  const files = newGroupFiles(opts.controlDir, opts.owner, opts.asRoot);
  let result: CommandResult;
  try {
    result = await startGroup(runner, argv, files, { timeoutMs: opts.timeoutMs, signal: opts.signal });
  } catch (err) {
    // 'timeout' is also how runners report an abort: the command may still run over there. After
    // a lost connection this runner cannot reach the host any more: the error carries the group's
    // files (strandedGroupOf) for whoever reconnects.
    if (err instanceof RemoteCommandFailed && err.details.reason === 'timeout') {
      const stop = await stopGroup(runner, files, opts.graceSec);
      opts.onStopped?.(stop);
    } else if (err instanceof RemoteCommandFailed && err.details.reason === 'connection') {
      stranded.set(err, files);
    }
    throw err;
  }
  // The command ended and its result is here: no stop will come for it, so its pidfile can go. If
  // this fails (the connection dropped just now), the file stays for the run's next stopRunGroups.
  const removed = runner.removeFile ? runner.removeFile(files.pidFile) : runner.run(shJoin(['rm', '-f', '--', files.pidFile]), { timeoutMs: CLEANUP_TIMEOUT_MS });
  await removed.catch(() => undefined);
  return result;
}

const CLEANUP_TIMEOUT_MS = 30_000;

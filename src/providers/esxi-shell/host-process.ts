// A monitor storsweep runs in the background on an ESXi host (esxtop -b): started so that the host
// itself can later prove the process ours, and stopped only while it does.
//
// A pid from `echo $!` proves nothing once the process has ended (esxtop ends by itself after its
// -n iterations, or on a crash): the host gives the pid to whatever it starts next, and a bare
// `kill <pid>` then signals that, as root. ESXi has no /proc and documents no start-time column for
// `ps` (the stand-in src/lab/harness/esxi/ps cites what is known: `ps -c` prints WID, CID, world name
// and the command line). So the identity is carried in the command line the host shows:
//   sh -c ': storsweep-<kind> <owner>-<nonce> <start>; <wrapper>' storsweep-<kind> <out> <argv…>
// owner = toolOwner(runId, target), nonce = 16 hex of this start, start = the host's clock
// (`date -u +%s`) when it was started. The same three go to a pidfile named like it
// (`/tmp/storsweep-<kind>-<owner>-<nonce>.pid`: `<pid> <start>`), the output to `….<ext>`.
// The wrapper runs the monitor as its child and, on TERM, stops that child and waits for it: a child
// not yet reaped keeps its pid, so the wrapper's `kill` can only reach it. The wrapper itself is
// signalled only while `ps -c` shows the pidfile's pid with a command line holding
// `storsweep-<kind> <owner>-<nonce> <start>;` — a pid the host has given to another program shows
// another command line and is left alone (and said so). Once the wrapper is gone (its child with
// it) or proven not ours, the output file and the pidfile go.
//
// Found again by a later process of the run (cleanup, takeover, `run --resume`): every pidfile of the
// owner under the directory is looked at the same way (stopOwnedProcesses without a nonce).
import { randomBytes } from 'node:crypto';
import { InvalidArgument, ParseError } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import type { HostProcessStop, OwnedProcessOutcome } from '../../contract/host-process.ts';
import { runChecked } from '../../ssh/run-checked.ts';
import { shJoin, shQuote } from '../../ssh/quote.ts';

/** What kind of monitor, and where its files go on the host. */
export interface MonitorSpec {
  /** names its files and its command-line mark (`storsweep-<kind>`): [a-z]+ */
  kind: string;
  /** the output file's extension: [a-z]+ */
  ext: string;
  /** the directory of its pidfile and output (ESXi: /tmp) */
  dir: string;
}

export interface StartedMonitor {
  /** `<owner>-<nonce>`: what the command line and the files carry */
  token: string;
  nonce: string;
  /** the wrapper's pid (ESXi: its world id) */
  pid: number;
  /** the host's clock when it was started (s since 1970, UTC) */
  startSec: number;
  out: string;
  pidFile: string;
}

const WORD = /^[a-z]+$/;
const OWNER = /^[a-z0-9]{1,40}$/;
const NONCE = /^[0-9a-f]{16}$/;
const DIR = /^\/[A-Za-z0-9_./-]*$/;

function check(spec: MonitorSpec, owner: string, nonce?: string): void {
  if (!WORD.test(spec.kind) || !WORD.test(spec.ext)) throw new InvalidArgument(`monitor kind/ext ${JSON.stringify([spec.kind, spec.ext])}: expected a-z`, { name: 'kind', value: spec.kind });
  if (!DIR.test(spec.dir)) throw new InvalidArgument(`monitor directory ${JSON.stringify(spec.dir.slice(0, 80))}: expected an absolute path of plain characters`, { name: 'dir', value: spec.dir });
  if (!OWNER.test(owner)) throw new InvalidArgument(`monitor owner ${JSON.stringify(owner.slice(0, 60))}: expected 1–40 of a-z, 0-9 (toolOwner)`, { name: 'owner', value: owner });
  if (nonce !== undefined && !NONCE.test(nonce)) throw new InvalidArgument(`monitor nonce ${JSON.stringify(nonce.slice(0, 40))}: expected 16 hex digits`, { name: 'nonce', value: nonce });
}

/** The files of one start of an owner's monitor. */
export function monitorFiles(spec: MonitorSpec, owner: string, nonce: string): { token: string; pidFile: string; out: string } {
  check(spec, owner, nonce);
  const base = `${spec.dir.replace(/\/+$/, '')}/storsweep-${spec.kind}-${owner}-${nonce}`;
  return { token: `${owner}-${nonce}`, pidFile: `${base}.pid`, out: `${base}.${spec.ext}` };
}

// After the mark: $1 the output file, then the monitor's argv. The trap is set before the child
// starts (a TERM then finds `c` empty and only waits); `set -C`: the output file is created, never
// written through a file or link already there; `wait` returns on a trapped TERM. (A TERM landing
// in the instant after the child ended and was reaped but before the wrapper exits would reach a
// pid reused within that instant: the one window left, microseconds wide.)
const WRAPPER = `o=$1; shift; c=; trap '[ -n "$c" ] && kill "$c" 2>/dev/null; wait; exit 143' TERM INT HUP; set -C; "$@" >"$o" 2>&1 </dev/null & c=$!; wait "$c"`;

/**
 * The command line that starts `argv` under the wrapper, its pidfile first created empty (never
 * through a file already there), then given `<pid> <start>`; it prints the same.
 */
export function startMonitorCommand(spec: MonitorSpec, owner: string, nonce: string, argv: readonly string[]): string {
  const f = monitorFiles(spec, owner, nonce);
  const mark = `storsweep-${spec.kind}`;
  // `": <mark> <token> $s; "` is double-quoted for $s alone: mark and token are [a-z0-9-]
  const script = `": ${mark} ${f.token} $s; "${shQuote(WRAPPER)}`;
  return [
    'umask 077',
    's=$(date -u +%s)',
    'set -C',
    `{ : >${shQuote(f.pidFile)}; } 2>/dev/null || { echo ${shQuote(`cannot create ${f.pidFile}`)} >&2; exit 125; }`,
    'set +C',
    `sh -c ${script} ${shJoin([mark, f.out, ...argv])} </dev/null >/dev/null 2>&1 & p=$!`,
    `echo "$p $s" >${shQuote(f.pidFile)}`,
    'echo "$p $s"',
  ].join('; ');
}

/** Starts `argv` as the owner's monitor on the host; resolves once it runs in the background. */
export async function startMonitor(runner: CommandRunner, spec: MonitorSpec, owner: string, argv: readonly string[]): Promise<StartedMonitor> {
  const nonce = randomBytes(8).toString('hex');
  const f = monitorFiles(spec, owner, nonce);
  const r = await runChecked(runner, startMonitorCommand(spec, owner, nonce, argv), { what: `start ${spec.kind}` });
  const m = /^(\d+) (\d+)$/.exec(r.stdout.trim());
  if (!m) throw new ParseError(`start ${spec.kind}: expected its pid and the host's clock, got ${JSON.stringify(r.stdout.slice(0, 80))}`, { source: spec.kind, expected: 'a pid and seconds since the epoch' });
  return { token: f.token, nonce, pid: Number(m[1]), startSec: Number(m[2]), out: f.out, pidFile: f.pidFile };
}

// $1 dir, $2 mark (storsweep-<kind>), $3 owner, $4 one nonce or empty (all of the owner's), $5 the
// output's extension, $6 grace: how many short sleeps to wait for a stopped wrapper to be gone.
// `look` sets x: 0 the pid runs with our command line, 1 no process has the pid, 3 the pid runs
// another command line, 2 the processes cannot be listed. One line per pidfile:
// `<outcome> <nonce> <pid> <start>[ <detail>]`; `none` when the owner has no pidfile.
const STOPPER = [
  'd=$1; k=$2; w=$3; one=$4; e=$5; g=$6; r=0; any=',
  `look() { L=$(ps -c 2>/dev/null) || { x=2; return; }; printf '%s\\n' "$L" | awk -v p="$p" -v m="$m" '$1==p||$2==p{s=1; if(index($0,m)) f=1} END{exit f?0:(s?3:1)}'; x=$?; }`,
  'for f in "$d/$k-$w-"*.pid; do',
  '[ -f "$f" ] && ! [ -L "$f" ] || continue',
  'n=${f#"$d/$k-$w-"}; n=${n%.pid}',
  'case $n in ""|*[!0-9a-f]*) continue;; esac',
  'if [ -n "$one" ] && [ "$n" != "$one" ]; then continue; fi',
  'any=1; p=; s=; { read -r p s <"$f"; } 2>/dev/null',
  'case $p in ""|*[!0-9]*) echo "unknown $n - - its pidfile names no pid"; r=1; continue;; esac',
  'case $s in ""|*[!0-9]*) echo "unknown $n $p - its pidfile names no start time"; r=1; continue;; esac',
  'm="$k $w-$n $s;"; look; o=',
  // ours: TERM (the wrapper stops its child), then look again until neither shows
  'if [ $x = 0 ]; then kill "$p" 2>/dev/null; i=0; while look; [ $x = 0 ] && [ $i -lt $g ]; do sleep 0.2 2>/dev/null || sleep 1; i=$((i+1)); done',
  'case $x in 0) echo "still-running $n $p $s"; r=1; continue;; 2) echo "unknown $n $p $s cannot list processes (ps -c) after TERM"; r=1; continue;; esac; o=stopped; fi',
  'if [ -z "$o" ]; then case $x in 1) o=ended;; 3) o=left-alone;; *) echo "unknown $n $p $s cannot list processes (ps -c): nothing signalled"; r=1; continue;; esac; fi',
  'rm -f "$d/$k-$w-$n.$e" "$f"; echo "$o $n $p $s"',
  'done',
  '[ -n "$any" ] || echo none',
  'exit $r',
]
  // one line (a quoted argument may hold no newline: ssh/quote.ts): each part ends its own statement
  .map((l) => (/(?:do|then|;)$/.test(l) ? l : `${l};`))
  .join(' ');

/** The command line that stops the owner's monitors of `spec` (or the one of `nonce`) as STOPPER says. */
export function stopMonitorCommand(spec: MonitorSpec, owner: string, nonce: string | undefined, graceSteps: number): string {
  check(spec, owner, nonce);
  return shJoin(['sh', '-c', STOPPER, 'storsweep-stop', spec.dir.replace(/\/+$/, ''), `storsweep-${spec.kind}`, owner, nonce ?? '', spec.ext, String(Math.max(1, Math.round(graceSteps)))]);
}

const OUTCOMES = new Set<OwnedProcessOutcome['outcome']>(['stopped', 'ended', 'left-alone', 'still-running', 'unknown']);

/** Reads STOPPER's lines into each process's outcome and the whole as a GroupStop. */
export function parseMonitorStop(stdout: string, owner: string, what: string): HostProcessStop {
  const processes: OwnedProcessOutcome[] = [];
  for (const line of stdout.split('\n')) {
    const [word, nonce, pid, start, ...rest] = line.trim().split(' ');
    if (!word || !OUTCOMES.has(word as OwnedProcessOutcome['outcome']) || !nonce) continue;
    const startSec = start && /^\d+$/.test(start) ? Number(start) : null;
    processes.push({
      token: `${owner}-${nonce}`,
      pid: pid && /^\d+$/.test(pid) ? Number(pid) : null,
      startedAt: startSec === null ? null : new Date(startSec * 1000).toISOString(),
      outcome: word as OwnedProcessOutcome['outcome'],
      ...(rest.length ? { detail: rest.join(' ').slice(0, 200) } : {}),
    });
  }
  const pidsOf = (o: OwnedProcessOutcome['outcome']) => processes.filter((p) => p.outcome === o && p.pid !== null).map((p) => p.pid!);
  const leftAlone = processes.filter((p) => p.outcome === 'left-alone').map((p) => `pid ${p.pid} now runs another program: left alone`);
  const unknown = processes.filter((p) => p.outcome === 'unknown').map((p) => p.detail ?? 'could not tell');
  const detail = [...unknown, ...leftAlone].join('; ') || undefined;
  const base = { pgid: null, what, processes, ...(detail ? { detail } : {}) };
  if (pidsOf('still-running').length) return { ...base, outcome: 'still-running', pids: pidsOf('still-running') };
  if (unknown.length) return { ...base, outcome: 'unknown' };
  if (pidsOf('stopped').length) return { ...base, outcome: 'stopped', signal: 'TERM', pids: pidsOf('stopped') };
  return { ...base, outcome: 'not-running' };
}

/**
 * Stops the owner's monitors of `spec` on the host (only the one of `nonce` when given) as the
 * header says, removing their files; never throws: what could not be done is `unknown`.
 */
export async function stopOwnedProcesses(runner: CommandRunner, spec: MonitorSpec, owner: string, opts: { nonce?: string; graceSteps?: number; timeoutMs?: number } = {}): Promise<HostProcessStop> {
  const command = stopMonitorCommand(spec, owner, opts.nonce, opts.graceSteps ?? 50);
  try {
    const r = await runner.run(command, { timeoutMs: opts.timeoutMs ?? 120_000 });
    const stop = parseMonitorStop(r.stdout, owner, spec.kind);
    if (r.exitCode !== 0 && stop.outcome !== 'still-running' && stop.outcome !== 'unknown') return { ...stop, outcome: 'unknown', detail: `the stop exited ${r.exitCode}: ${(r.stdout + r.stderr).trim().slice(-200)}` };
    return stop;
  } catch (err) {
    return { pgid: null, outcome: 'unknown', what: spec.kind, processes: [], detail: err instanceof Error ? err.message : String(err) };
  }
}

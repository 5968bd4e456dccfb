// What a stop of a provider's own processes on a host found (a monitor such as esxtop, started by
// observeHost): per process what was stopped and what was left alone, and the whole in the
// GroupStop shape the executor and cleanup already record for a workload's leftovers.

/** What stopping a process group found (src/ssh/process-group.ts stopGroup, runInGroup's onStopped). */
export interface GroupStop {
  /** the wrapper's pid read from the pidfile (null: none was there) — what was started, not what was signalled */
  pgid: number | null;
  outcome: 'stopped' | 'not-running' | 'not-started' | 'still-running' | 'unknown';
  /** the last signal sent (`TERM`, or `KILL` after the grace period) */
  signal?: 'TERM' | 'KILL';
  /** the processes that carried the token and were signalled (stopped), or that are still alive (still-running) */
  pids?: number[];
  detail?: string;
}

/** One process the run recorded starting on the host, and what the stop did about it. */
export interface OwnedProcessOutcome {
  /** what it was started with, naming the run's target and this start (`<owner>-<nonce>`) */
  token: string;
  pid: number | null;
  /** the host's clock at its start, ISO 8601 (null: its record said none) */
  startedAt: string | null;
  /**
   * stopped: the host showed it as ours and it is gone now; ended: no process has that pid any
   * more; left-alone: the pid now runs another program (not signalled); still-running: ours, and
   * still there after the grace period; unknown: could not tell (nothing signalled)
   */
  outcome: 'stopped' | 'ended' | 'left-alone' | 'still-running' | 'unknown';
  detail?: string;
}

export interface HostProcessStop extends GroupStop {
  /** the program, for messages (esxtop) */
  what: string;
  processes: OwnedProcessOutcome[];
}

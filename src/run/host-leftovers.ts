// How a stop of a provider's own processes on a host (Provider.stopLeftovers: esxtop) is journaled
// and said, the same way by `run --resume`, a worker's takeover (run/executor.ts) and `cleanup`
// (cli): what was stopped, and what was left alone because the host no longer shows it as ours.
import type { HostProcessStop } from '../contract/host-process.ts';

/** The journal event of a host leftover stop (its whole outcome is the entry's data). */
export function hostStopEvent(s: HostProcessStop): 'stopped' | 'stop-failed' | 'left-alone' | 'none' {
  if (s.outcome === 'still-running' || s.outcome === 'unknown') return 'stop-failed';
  if (s.outcome === 'stopped') return 'stopped';
  return s.processes.some((p) => p.outcome === 'left-alone') ? 'left-alone' : 'none';
}

/** One line per process worth saying (stopped, left alone, not confirmed); none when nothing was there. */
export function hostStopLines(s: HostProcessStop, target: string): Array<{ level: 'warn' | 'error'; text: string }> {
  const out: Array<{ level: 'warn' | 'error'; text: string }> = [];
  for (const p of s.processes) {
    const started = p.startedAt ? `, started ${p.startedAt}` : '';
    if (p.outcome === 'stopped') out.push({ level: 'warn', text: `stopped ${s.what} left running on ${target} (pid ${p.pid}${started}, SIGTERM); its output removed` });
    else if (p.outcome === 'left-alone') out.push({ level: 'warn', text: `${s.what} of this run on ${target} had ended (pid ${p.pid}${started}); that pid now runs another program: left alone` });
    else if (p.outcome === 'still-running' || p.outcome === 'unknown') out.push({ level: 'error', text: `could not confirm that ${s.what} of this run on ${target} stopped (pid ${p.pid ?? '?'}${started}): ${p.outcome === 'still-running' ? 'still running' : (p.detail ?? 'could not tell')}` });
  }
  if (!s.processes.length && s.outcome === 'unknown') out.push({ level: 'error', text: `could not look for ${s.what} left running on ${target}: ${s.detail ?? 'could not tell'}` });
  return out;
}

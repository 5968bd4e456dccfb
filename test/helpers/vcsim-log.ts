// Reading the vcsim harness's call log (GET /_harness/log) for what a test waits on or asserts:
// a call held by `control.hold()`, a long poll under way, how many calls of a method ran at once.
//
//   await sim.control.hold('ReconfigVM_Task', { task: true });
//   const run = provider.apply(step, ctx);                       // its task stays running
//   await waitFor(async () => taskAwaited(await sim.control.log(), 'ReconfigVM_Task'), { what: 'the task wait' });
//   await sim.control.release('ReconfigVM_Task');
import type { HarnessCall } from '../../src/lab/vcsim.ts';

export const count = (log: readonly HarnessCall[], method: string): number => log.filter((e) => e.method === method).length;

/** The calls of `method` held at the harness's gate now (arrived, not answered). */
export const heldCalls = (log: readonly HarnessCall[], method: string): HarnessCall[] => log.filter((e) => e.method === method && e.held && e.end === 0);

/** The answered calls of `method` whose task is held (running until released). */
export const heldTasks = (log: readonly HarnessCall[], method: string): HarnessCall[] => log.filter((e) => e.method === method && e.held && e.end > 0 && !e.taskEnd);

/** A WaitForUpdatesEx under way (not answered) that was sent after `afterMs` (epoch ms). */
export const pollUnderWay = (log: readonly HarnessCall[], afterMs = 0): boolean => log.some((e) => e.method === 'WaitForUpdatesEx' && e.end === 0 && e.start > afterMs);

/**
 * A held task of `method` is being waited for: the call was answered (its task held running) and a
 * long poll sent after that answer is under way.
 */
export function taskAwaited(log: readonly HarnessCall[], method: string): boolean {
  const held = heldTasks(log, method);
  return held.length > 0 && pollUnderWay(log, Math.max(...held.map((e) => e.end)));
}

/** The most calls of `method` under way at one instant (a call not answered yet is open until now). */
export function maxInFlight(log: readonly HarnessCall[], method: string): number {
  const edges = log.filter((e) => e.method === method).flatMap((e) => [{ t: e.start, d: 1 }, { t: e.end || Infinity, d: -1 }]);
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  let n = 0;
  let max = 0;
  for (const e of edges) max = Math.max(max, (n += e.d));
  return max;
}

/**
 * A long poll under way with nothing left to report: every ModifyListView and CreateFilter has been
 * answered, a poll answered after that (it brought their changes), and the poll sent after that
 * answer is under way. With tasks held (nothing changes) that poll blocks until something does: the
 * waits are registered and waiting.
 */
export function quietPoll(log: readonly HarnessCall[]): boolean {
  const changes = log.filter((e) => e.method === 'ModifyListView' || e.method === 'CreateFilter');
  if (changes.some((e) => e.end === 0)) return false;
  const changed = Math.max(0, ...changes.map((e) => e.end));
  const polls = log.filter((e) => e.method === 'WaitForUpdatesEx');
  const answered = polls.filter((e) => e.end > changed).map((e) => e.end);
  return answered.length > 0 && polls.some((e) => e.end === 0 && e.start > Math.min(...answered));
}

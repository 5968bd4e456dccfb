// Waiting for a Task: Task.info through the session's shared property collector and its one
// WaitForUpdatesEx loop (wait.ts) until info.state is success or error. The task goes into the
// session's task view (one ListView and one filter, wait.ts) rather than a filter of its own.
import { fromTaskError } from './fault.ts';
import type { RoundTripper } from './methods.ts';
import type { MoRef } from './soap.ts';
import type { ServiceContent, TaskInfo } from './types.ts';
import { waitForUpdates, type Watch } from './wait.ts';

export interface WaitTaskOptions {
  /** overall limit for the task; undefined = wait as long as the server reports progress */
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?(info: TaskInfo): void;
  /** the endpoint, for messages */
  host?: string;
}

/** Resolves with `info.result` when the task succeeds; rejects with TaskFailed naming the fault. */
export async function waitForTask(rt: RoundTripper, sc: ServiceContent, task: MoRef, opts: WaitTaskOptions = {}): Promise<unknown> {
  return (await waitTask(rt, sc, task, opts)).result;
}

/**
 * waitForTask, and `watch`'s properties as they were when the task's success was reported: the
 * task's filter carries them (wait.ts, PropertyWaits.wait), so no read after the task is needed
 * for a change the task made — the server makes the change before it marks the task successful,
 * and the collector reports changes in the order they happened. A property the server did not
 * report is absent; the caller reads it then.
 */
export async function waitForTaskWatching(rt: RoundTripper, sc: ServiceContent, task: MoRef, watch: Watch, opts: WaitTaskOptions = {}): Promise<{ result: unknown; watched: Record<string, unknown> }> {
  const r = await waitTask(rt, sc, task, opts, watch);
  return { result: r.result, watched: r.also[0] ?? {} };
}

function waitTask(rt: RoundTripper, sc: ServiceContent, task: MoRef, opts: WaitTaskOptions, watch?: Watch): Promise<{ result: unknown; also: Array<Record<string, unknown>> }> {
  let last: TaskInfo | undefined;
  return waitForUpdates(
    rt,
    sc,
    task,
    ['info'],
    (values, also) => {
      const info = values.info as TaskInfo | undefined;
      if (!info) return undefined;
      last = info;
      opts.onProgress?.(info);
      if (info.state === 'success') return { value: { result: info.result, also: also.map((v) => ({ ...v })) } };
      if (info.state === 'error') throw fromTaskError(info.error, { task: task.value, taskName: info.name ?? info.descriptionId ?? '', entity: info.entityName ?? info.entity?.value ?? '' });
      return undefined;
    },
    {
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(watch ? { also: [watch] } : {}),
      taskView: true,
      what: () => `task ${task.value} (${last?.name ?? '?'}, last state ${last?.state ?? 'unknown'})`,
      host: opts.host ?? '',
    },
  );
}

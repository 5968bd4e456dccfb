// Waiting for a Task: Task.info through the session's shared property collector and its one
// WaitForUpdatesEx loop (wait.ts) until info.state is success or error.
import { fromTaskError } from './fault.ts';
import type { RoundTripper } from './methods.ts';
import type { MoRef } from './soap.ts';
import type { ServiceContent, TaskInfo } from './types.ts';
import { waitForUpdates } from './wait.ts';

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
  let last: TaskInfo | undefined;
  return waitForUpdates(
    rt,
    sc,
    task,
    ['info'],
    (values) => {
      const info = values.info as TaskInfo | undefined;
      if (!info) return undefined;
      last = info;
      opts.onProgress?.(info);
      if (info.state === 'success') return { value: info.result };
      if (info.state === 'error') throw fromTaskError(info.error, { task: task.value, taskName: info.name ?? info.descriptionId ?? '', entity: info.entityName ?? info.entity?.value ?? '' });
      return undefined;
    },
    {
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      what: () => `task ${task.value} (${last?.name ?? '?'}, last state ${last?.state ?? 'unknown'})`,
      host: opts.host ?? '',
    },
  );
}

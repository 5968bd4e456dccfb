// Waiting for a Task without sleep-polling: a private PropertyCollector with a filter on
// Task.info, then WaitForUpdatesEx until info.state is success or error. The collector (and with
// it the filter) is destroyed in `finally`, so an aborted wait leaks nothing server-side.
import { fromTaskError, VsphereFault } from './fault.ts';
import { createFilter, createPropertyCollector, destroyPropertyCollector, waitForUpdatesEx, type RoundTripper } from './methods.ts';
import type { MoRef } from './soap.ts';
import { arr, type ServiceContent, type TaskInfo } from './types.ts';

export interface WaitTaskOptions {
  /** server-side long-poll bound per WaitForUpdatesEx call; keep below the HTTP timeout */
  maxWaitSeconds?: number;
  /** overall limit for the task; undefined = wait as long as the server reports progress */
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?(info: TaskInfo): void;
}

/** Resolves with `info.result` when the task succeeds; rejects with TaskFailed naming the fault. */
export async function waitForTask(rt: RoundTripper, sc: ServiceContent, task: MoRef, opts: WaitTaskOptions = {}): Promise<unknown> {
  const maxWaitSeconds = opts.maxWaitSeconds ?? 30;
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  const pc = await createPropertyCollector(rt, sc.propertyCollector);
  try {
    await createFilter(rt, pc, { propSet: [{ type: 'Task', pathSet: ['info'] }], objectSet: [{ obj: task, skip: false }] }, false);
    let version = '';
    let info: TaskInfo | undefined;
    for (;;) {
      opts.signal?.throwIfAborted();
      if (Date.now() > deadline) {
        throw new VsphereFault('Timedout', `task ${task.value} (${info?.name ?? '?'}) not finished after ${opts.timeoutMs} ms; last state ${info?.state ?? 'unknown'}`, {
          method: 'WaitForUpdatesEx',
          host: '',
          detail: {},
        });
      }
      const set = await waitForUpdatesEx(rt, pc, version, { maxWaitSeconds });
      // null: nothing changed within maxWaitSeconds; ask again with the same version.
      if (!set) continue;
      version = set.version;
      for (const fu of arr(set.filterSet)) {
        for (const ou of arr(fu.objectSet)) {
          for (const ch of arr(ou.changeSet)) {
            if (ch.name === 'info' && ch.op !== 'remove' && ch.val) info = ch.val as TaskInfo;
          }
        }
      }
      if (set.truncated) continue;
      if (!info) continue;
      opts.onProgress?.(info);
      if (info.state === 'success') return info.result;
      if (info.state === 'error') {
        throw fromTaskError(info.error, { task: task.value, taskName: info.name ?? info.descriptionId ?? '', entity: info.entityName ?? info.entity?.value ?? '' });
      }
    }
  } finally {
    await destroyPropertyCollector(rt, pc).catch(() => undefined);
  }
}

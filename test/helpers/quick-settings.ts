// The shortest timing the playbook schema accepts (whole seconds, the unit fio's and diskspd's
// runtimes share), for playbooks that tests and benchmarks write: one measured pass of `runtimeSec`
// (1 s unless given) on a `fileSize` file, no warm-up, no pause between tests; repeat 1 unless given.
// `passes`, `warmupPass` and `intervalSec` may be given where a test or benchmark needs more than
// that; `direct` and `prefill` are written only when given (the schema's defaults otherwise).
export interface QuickSettings {
  fileSize?: string;
  runtimeSec?: number;
  passes?: number;
  warmupPass?: boolean;
  intervalSec?: number;
  direct?: boolean;
  prefill?: boolean;
  repeat?: number;
}

/** The `settings:` block and `repeat:` line, as playbook lines. */
export function quickSettings(o: QuickSettings = {}): string[] {
  return [
    'settings:',
    `  fileSize: ${o.fileSize ?? '4m'}`,
    `  runtimeSec: ${o.runtimeSec ?? 1}`,
    `  passes: ${o.passes ?? 1}`,
    `  warmupPass: ${o.warmupPass ?? false}`,
    `  intervalSec: ${o.intervalSec ?? 0}`,
    ...(o.direct === undefined ? [] : [`  direct: ${o.direct}`]),
    ...(o.prefill === undefined ? [] : [`  prefill: ${o.prefill}`]),
    `repeat: ${o.repeat ?? 1}`,
  ];
}

// Progress events drive both the terminal view and the JSON log (one hook interface, as in
// Terraform). On a TTY: a live status block (permutation i/N, step, elapsed, ETA from measured
// times, last result, failures). Otherwise, or under CI: plain timestamped lines. The view writes its
// own cursor sequences, so every value from input (ids, axis values, reasons, host messages) passes
// visible()/visibleText() here: nothing reaches the terminal raw in either mode.
import type { Axes } from '../contract/axis.ts';
import { visible, visibleText } from '../text/visible.ts';

export type ProgressEvent =
  | { type: 'run-start'; runId: string; total: number; estimateSec: number }
  | { type: 'permutation-start'; index: number; total: number; permutationId: string; axes: Axes; estimateSec: number }
  | { type: 'step'; permutationId: string; step: string; operation: string }
  | { type: 'step-end'; permutationId: string; step: string; durationMs: number }
  | { type: 'result'; permutationId: string; repetition: number; testId: string; iops: number | null; bytesPerSecond: number | null }
  | { type: 'failure'; permutationId: string; axes: Axes; reason: string; /** the long form (a failed command's whole story) for log.jsonl; the terminal shows `reason` */ detail?: string }
  | { type: 'permutation-end'; permutationId: string; status: 'done' | 'failed'; reason?: string }
  | { type: 'message'; level: 'info' | 'warn' | 'error'; text: string; fields?: Record<string, unknown> }
  | { type: 'run-end'; summary: { done: number; failed: number; skipped: number; pending: number; interrupted: boolean; leftovers: number } };

/** `name=value …` for one line: names and values from input are made visible. */
export function axesLabel(axes: Axes): string {
  return Object.entries(axes)
    .map(([k, v]) => `${visible(k.split('.').pop())}=${visible(v)}`)
    .join(' ');
}

function fmtDuration(sec: number): string {
  if (!Number.isFinite(sec) || sec < 0) return '?';
  const h = Math.floor(sec / 3600);
  const m = Math.floor((sec % 3600) / 60);
  const s = Math.floor(sec % 60);
  return h ? `${h}h${String(m).padStart(2, '0')}m` : m ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}

export interface ProgressView {
  onEvent(e: ProgressEvent): void;
  close(): void;
}

export function createProgressView(stream: NodeJS.WriteStream, opts: { live: boolean }): ProgressView {
  const started = Date.now();
  let total = 0;
  let estimateTotal = 0;
  let index = 0;
  let current = '';
  let step = '';
  let last = '';
  let failures = 0;
  let finishedEstimate = 0;
  let finishedActualMs = 0;
  let permStarted = Date.now();
  let permEstimate = 0;
  let drawn = 0;
  const stamp = () => new Date().toISOString().slice(11, 19);
  const eta = () => {
    // Scale the remaining estimate by how fast finished permutations went compared to theirs.
    const ratio = finishedEstimate > 0 ? finishedActualMs / 1000 / finishedEstimate : 1;
    return (estimateTotal - finishedEstimate) * ratio;
  };
  const draw = () => {
    if (!opts.live) return;
    const lines = [
      `storsweep  permutation ${index + 1}/${total}  elapsed ${fmtDuration((Date.now() - started) / 1000)}  ETA ${fmtDuration(eta())}  failures ${failures}`,
      `  ${current}`,
      `  step: ${step}`,
      `  last: ${last}`,
    ];
    let out = drawn ? `\x1b[${drawn}A` : '';
    for (const l of lines) out += `\x1b[2K${l.slice(0, (stream.columns || 120) - 1)}\n`;
    stream.write(out);
    drawn = lines.length;
  };
  const line = (text: string) => {
    if (opts.live) {
      if (drawn) stream.write(`\x1b[${drawn}A\x1b[J`);
      drawn = 0;
      stream.write(`${text}\n`);
      draw();
    } else stream.write(`${stamp()} ${text}\n`);
  };
  return {
    onEvent(e) {
      switch (e.type) {
        case 'run-start':
          total = e.total;
          estimateTotal = e.estimateSec;
          line(`run ${visible(e.runId)}: ${e.total} permutations, estimated ${fmtDuration(e.estimateSec)}`);
          break;
        case 'permutation-start':
          index = e.index;
          current = `${visible(e.permutationId)} ${axesLabel(e.axes)}`;
          permStarted = Date.now();
          permEstimate = e.estimateSec;
          if (!opts.live) line(`[${e.index + 1}/${e.total}] ${current} (elapsed ${fmtDuration((Date.now() - started) / 1000)}, ETA ${fmtDuration(eta())}, failures ${failures})`);
          draw();
          break;
        case 'step':
          step = visible(e.step);
          draw();
          break;
        case 'result': {
          const mbs = e.bytesPerSecond === null ? '?' : (e.bytesPerSecond / 1e6).toFixed(1);
          last = `${visible(e.testId)} rep ${e.repetition}: ${mbs} MB/s, ${e.iops === null ? '?' : e.iops.toFixed(0)} IOPS`;
          if (!opts.live) line(`  ${last}`);
          draw();
          break;
        }
        case 'failure':
          failures++;
          line(`FAILED ${visible(e.permutationId)} ${axesLabel(e.axes)}: ${visibleText(e.reason)}`);
          break;
        case 'permutation-end':
          finishedEstimate += permEstimate;
          finishedActualMs += Date.now() - permStarted;
          break;
        case 'message':
          if (e.level !== 'info' || !opts.live) line(`${e.level === 'info' ? '' : e.level.toUpperCase() + ': '}${visibleText(e.text)}`);
          break;
        case 'run-end':
          line(
            `finished: ${e.summary.done} done, ${e.summary.failed} failed, ${e.summary.skipped} already done, ${e.summary.pending} pending${e.summary.interrupted ? ' (interrupted)' : ''}${leftBehind(e.summary.leftovers)}`,
          );
          break;
        default:
          break;
      }
    },
    close() {
      if (opts.live && drawn) stream.write('');
    },
  };
}

/** The run-end summary's tail: the count is the store's leftovers (created or kept, not removed); -1 when the ledger could not be read. */
export function leftBehind(n: number): string {
  if (n === 0) return '';
  if (n < 0) return ', objects left behind unknown (the ledger could not be read; see storsweep status)';
  return `, ${n} object${n === 1 ? '' : 's'} left behind (storsweep status lists ${n === 1 ? 'it' : 'them'}, storsweep cleanup removes ${n === 1 ? 'it' : 'them'})`;
}

// Progress events drive both the terminal view and the JSON log (one hook interface, as in
// Terraform). On a TTY: a live status block (permutation i/N, each running permutation with its
// step, elapsed, ETA from measured times, last result, failures). Otherwise, or under CI: plain
// timestamped lines. With listed targets (they run in parallel) every line about a permutation
// starts with its target's name. The view writes its
// own cursor sequences, so every value from input (ids, axis values, reasons, host messages) passes
// visible()/visibleText() here: nothing reaches the terminal raw in either mode.
import type { Axes } from '../contract/axis.ts';
import { visible, visibleText } from '../text/visible.ts';

export type ProgressEvent =
  | {
      type: 'run-start';
      runId: string;
      /** the plan's permutations */
      total: number;
      /** seconds until the end, for what is left (a resume: without the permutations already done), targets in parallel */
      estimateSec: number;
      /** permutations a resumed run has already done (skipped) */
      done?: number;
      /** the sum of the estimates of what is left, when targets run in parallel (then more than estimateSec) */
      workSec?: number;
    }
  | {
      type: 'permutation-start';
      index: number;
      total: number;
      permutationId: string;
      axes: Axes;
      estimateSec: number;
      /** set when each repetition provisions anew: this start is of that repetition (and its own provisioning) */
      repetition?: number;
    }
  | { type: 'step'; permutationId: string; step: string; operation: string }
  | { type: 'step-end'; permutationId: string; step: string; durationMs: number }
  | { type: 'result'; permutationId: string; repetition: number; testId: string; iops: number | null; bytesPerSecond: number | null }
  | { type: 'failure'; permutationId: string; axes: Axes; reason: string; /** the long form (a failed command's whole story) for log.jsonl; the terminal shows `reason` */ detail?: string }
  | { type: 'permutation-end'; permutationId: string; status: 'done' | 'failed'; reason?: string; /** as in permutation-start: the end of that repetition */ repetition?: number }
  | {
      type: 'message';
      level: 'info' | 'warn' | 'error';
      text: string;
      fields?: Record<string, unknown>;
      /** the permutation it is about (its target leads the line) */
      permutationId?: string;
      /** the target it is about, when its permutation has not started yet (a wait for another target) */
      target?: string;
    }
  | { type: 'run-end'; summary: { done: number; failed: number; skipped: number; pending: number; interrupted: boolean; leftovers: number | null } };

/** `name=value …` for one line: names and values from input are made visible. */
export function axesLabel(axes: Axes, opts: { withoutTarget?: boolean } = {}): string {
  const entries = Object.entries(axes).filter(([k]) => !(opts.withoutTarget && k === 'target'));
  // the last part of the name (`format`), or the whole name where two axes end alike
  // (`disk.sizeGb=8 volume.sizeGb=1000`, never two bare `sizeGb`)
  const short = (k: string) => k.split('.').pop()!;
  const count = new Map<string, number>();
  for (const [k] of entries) count.set(short(k), (count.get(short(k)) ?? 0) + 1);
  return entries.map(([k, v]) => `${visible(count.get(short(k))! > 1 ? k : short(k))}=${visible(v)}`).join(' ');
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
  /** how much faster than the sum of their estimates the permutations left end (targets in parallel) */
  let parallelFactor = 1;
  let index = 0;
  let last = '';
  let failures = 0;
  let finishedEstimate = 0;
  let finishedActualMs = 0;
  /** permutations under way (several when targets run in parallel), in start order */
  const running = new Map<string, { label: string; step: string; started: number; estimateSec: number }>();
  let shown: { label: string; step: string } = { label: '', step: '' };
  /** each permutation's target (listed targets only): it leads every line about the permutation */
  const targetOf = new Map<string, string>();
  let drawn = 0;
  const stamp = () => new Date().toISOString().slice(11, 19);
  const who = (permutationId: string | undefined, target?: string) => {
    const t = target ?? (permutationId === undefined ? undefined : targetOf.get(permutationId));
    return t === undefined ? '' : `${visible(t)}: `;
  };
  const eta = () => {
    // Scale the remaining estimate by how fast finished permutations went compared to theirs.
    const ratio = finishedEstimate > 0 ? finishedActualMs / 1000 / finishedEstimate : 1;
    return Math.max(0, estimateTotal - finishedEstimate) * ratio * parallelFactor;
  };
  const draw = () => {
    if (!opts.live) return;
    const under = running.size ? [...running.values()] : [shown];
    const lines = [
      `storsweep  permutation ${index + 1}/${total}  elapsed ${fmtDuration((Date.now() - started) / 1000)}  ETA ${fmtDuration(eta())}  failures ${failures}`,
      ...under.flatMap((r) => [`  ${r.label}`, `  step: ${r.step}`]),
      `  last: ${last}`,
    ];
    let out = drawn ? `\x1b[${drawn}A` : '';
    if (drawn > lines.length) out += '\x1b[J';
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
          estimateTotal = e.workSec ?? e.estimateSec;
          parallelFactor = e.workSec ? e.estimateSec / e.workSec : 1;
          line(
            e.done
              ? `run ${visible(e.runId)}: ${e.total - e.done} of ${e.total} permutations left (${e.done} already done), estimated ${fmtDuration(e.estimateSec)}`
              : `run ${visible(e.runId)}: ${e.total} permutations, estimated ${fmtDuration(e.estimateSec)}`,
          );
          break;
        case 'permutation-start': {
          index = e.index;
          if (e.axes.target !== undefined) targetOf.set(e.permutationId, String(e.axes.target));
          const own = `${visible(e.permutationId)} ${axesLabel(e.axes, { withoutTarget: targetOf.has(e.permutationId) })}${e.repetition !== undefined ? ` (repetition ${e.repetition}, provisioned anew)` : ''}`;
          const label = `${who(e.permutationId)}${own}`;
          running.set(e.permutationId, { label, step: '', started: Date.now(), estimateSec: e.estimateSec });
          shown = { label, step: '' };
          // the target first, then the count: every line about a permutation starts with its target
          if (!opts.live) line(`${who(e.permutationId)}[${e.index + 1}/${e.total}] ${own} (elapsed ${fmtDuration((Date.now() - started) / 1000)}, ETA ${fmtDuration(eta())}, failures ${failures})`);
          draw();
          break;
        }
        case 'step': {
          const r = running.get(e.permutationId);
          if (r) r.step = visible(e.step);
          shown = r ?? { ...shown, step: visible(e.step) };
          draw();
          break;
        }
        case 'result': {
          const mbs = e.bytesPerSecond === null ? '?' : (e.bytesPerSecond / 1e6).toFixed(1);
          last = `${who(e.permutationId)}${visible(e.testId)} rep ${e.repetition}: ${mbs} MB/s, ${e.iops === null ? '?' : e.iops.toFixed(0)} IOPS`;
          if (!opts.live) line(targetOf.has(e.permutationId) ? last : `  ${last}`);
          draw();
          break;
        }
        case 'failure':
          failures++;
          line(`${who(e.permutationId)}FAILED ${visible(e.permutationId)} ${axesLabel(e.axes, { withoutTarget: targetOf.has(e.permutationId) })}: ${visibleText(e.reason)}`);
          break;
        case 'permutation-end': {
          const r = running.get(e.permutationId);
          running.delete(e.permutationId);
          if (r) {
            finishedEstimate += r.estimateSec;
            finishedActualMs += Date.now() - r.started;
            shown = r;
          }
          break;
        }
        case 'message':
          if (e.level !== 'info' || !opts.live) line(`${who(e.permutationId, e.target)}${e.level === 'info' ? '' : e.level.toUpperCase() + ': '}${visibleText(e.text)}`);
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

/**
 * The run-end summary's tail: the count is the store's leftovers (created or kept, not removed); -1
 * when the ledger could not be read; null when not counted (a worker's permutation: `status` counts them).
 */
export function leftBehind(n: number | null): string {
  if (n === 0 || n === null) return '';
  if (n < 0) return ', objects left behind unknown (the ledger could not be read; see storsweep status)';
  return `, ${n} object${n === 1 ? '' : 's'} left behind (storsweep status lists ${n === 1 ? 'it' : 'them'}, storsweep cleanup removes ${n === 1 ? 'it' : 'them'})`;
}

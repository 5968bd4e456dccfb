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
  const d = new ProgressDisplay(stream, opts.live);
  return { onEvent: (e) => d.onEvent(e), close: () => d.close() };
}

type Running = { label: string; step: string; started: number; estimateSec: number };

/** What the view knows of the run so far, and how it draws it: one line per event, or (live) a block redrawn in place. */
class ProgressDisplay {
  private readonly started = Date.now();
  private total = 0;
  private estimateTotal = 0;
  /** how much faster than the sum of their estimates the permutations left end (targets in parallel) */
  private parallelFactor = 1;
  private index = 0;
  private last = '';
  private failures = 0;
  private finishedEstimate = 0;
  private finishedActualMs = 0;
  /** permutations under way (several when targets run in parallel), in start order */
  private readonly running = new Map<string, Running>();
  private shown: { label: string; step: string } = { label: '', step: '' };
  /** each permutation's target (listed targets only): it leads every line about the permutation */
  private readonly targetOf = new Map<string, string>();
  private drawn = 0;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly live: boolean,
  ) {}

  private who(permutationId: string | undefined, target?: string): string {
    const t = target ?? (permutationId === undefined ? undefined : this.targetOf.get(permutationId));
    return t === undefined ? '' : `${visible(t)}: `;
  }

  private eta(): number {
    // Scale the remaining estimate by how fast finished permutations went compared to theirs.
    const ratio = this.finishedEstimate > 0 ? this.finishedActualMs / 1000 / this.finishedEstimate : 1;
    return Math.max(0, this.estimateTotal - this.finishedEstimate) * ratio * this.parallelFactor;
  }

  private draw(): void {
    if (!this.live) return;
    const under = this.running.size ? [...this.running.values()] : [this.shown];
    const lines = [
      `storsweep  permutation ${this.index + 1}/${this.total}  elapsed ${fmtDuration((Date.now() - this.started) / 1000)}  ETA ${fmtDuration(this.eta())}  failures ${this.failures}`,
      ...under.flatMap((r) => [`  ${r.label}`, `  step: ${r.step}`]),
      `  last: ${this.last}`,
    ];
    let out = this.drawn ? `\x1b[${this.drawn}A` : '';
    if (this.drawn > lines.length) out += '\x1b[J';
    for (const l of lines) out += `\x1b[2K${l.slice(0, (this.stream.columns || 120) - 1)}\n`;
    this.stream.write(out);
    this.drawn = lines.length;
  }

  private line(text: string): void {
    if (this.live) {
      if (this.drawn) this.stream.write(`\x1b[${this.drawn}A\x1b[J`);
      this.drawn = 0;
      this.stream.write(`${text}\n`);
      this.draw();
    } else this.stream.write(`${new Date().toISOString().slice(11, 19)} ${text}\n`);
  }

  onEvent(e: ProgressEvent): void {
    switch (e.type) {
      case 'run-start':
        this.runStart(e);
        break;
      case 'permutation-start':
        this.permutationStart(e);
        break;
      case 'step': {
        const r = this.running.get(e.permutationId);
        if (r) r.step = visible(e.step);
        this.shown = r ?? { ...this.shown, step: visible(e.step) };
        this.draw();
        break;
      }
      case 'result': {
        const mbs = e.bytesPerSecond === null ? '?' : (e.bytesPerSecond / 1e6).toFixed(1);
        this.last = `${this.who(e.permutationId)}${visible(e.testId)} rep ${e.repetition}: ${mbs} MB/s, ${e.iops === null ? '?' : e.iops.toFixed(0)} IOPS`;
        if (!this.live) this.line(this.targetOf.has(e.permutationId) ? this.last : `  ${this.last}`);
        this.draw();
        break;
      }
      case 'failure':
        this.failures++;
        this.line(`${this.who(e.permutationId)}FAILED ${visible(e.permutationId)} ${axesLabel(e.axes, { withoutTarget: this.targetOf.has(e.permutationId) })}: ${visibleText(e.reason)}`);
        break;
      case 'permutation-end':
        this.permutationEnd(e.permutationId);
        break;
      case 'message':
        if (e.level !== 'info' || !this.live) this.line(`${this.who(e.permutationId, e.target)}${e.level === 'info' ? '' : e.level.toUpperCase() + ': '}${visibleText(e.text)}`);
        break;
      case 'run-end':
        this.line(
          `finished: ${e.summary.done} done, ${e.summary.failed} failed, ${e.summary.skipped} already done, ${e.summary.pending} pending${e.summary.interrupted ? ' (interrupted)' : ''}${leftBehind(e.summary.leftovers)}`,
        );
        break;
      default:
        break;
    }
  }

  private runStart(e: Extract<ProgressEvent, { type: 'run-start' }>): void {
    this.total = e.total;
    this.estimateTotal = e.workSec ?? e.estimateSec;
    this.parallelFactor = e.workSec ? e.estimateSec / e.workSec : 1;
    this.line(
      e.done
        ? `run ${visible(e.runId)}: ${e.total - e.done} of ${e.total} permutations left (${e.done} already done), estimated ${fmtDuration(e.estimateSec)}`
        : `run ${visible(e.runId)}: ${e.total} permutations, estimated ${fmtDuration(e.estimateSec)}`,
    );
  }

  private permutationStart(e: Extract<ProgressEvent, { type: 'permutation-start' }>): void {
    this.index = e.index;
    if (e.axes.target !== undefined) this.targetOf.set(e.permutationId, String(e.axes.target));
    const own = `${visible(e.permutationId)} ${axesLabel(e.axes, { withoutTarget: this.targetOf.has(e.permutationId) })}${e.repetition !== undefined ? ` (repetition ${e.repetition}, provisioned anew)` : ''}`;
    const label = `${this.who(e.permutationId)}${own}`;
    this.running.set(e.permutationId, { label, step: '', started: Date.now(), estimateSec: e.estimateSec });
    this.shown = { label, step: '' };
    // the target first, then the count: every line about a permutation starts with its target
    if (!this.live) this.line(`${this.who(e.permutationId)}[${e.index + 1}/${e.total}] ${own} (elapsed ${fmtDuration((Date.now() - this.started) / 1000)}, ETA ${fmtDuration(this.eta())}, failures ${this.failures})`);
    this.draw();
  }

  private permutationEnd(permutationId: string): void {
    const r = this.running.get(permutationId);
    this.running.delete(permutationId);
    if (r) {
      this.finishedEstimate += r.estimateSec;
      this.finishedActualMs += Date.now() - r.started;
      this.shown = r;
    }
  }

  close(): void {
    if (this.live && this.drawn) this.stream.write('');
  }
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

// The CLI's only writers to the terminal. Everything a command prints passes `visibleText`, so no
// name, axis value, fault text or imported file can send a terminal sequence (ESC, CSI, OSC 8, C1,
// NUL, bidi overrides are shown as `\x1b`, `\u202e`, …): a new command cannot forget it, and eslint
// forbids `process.stdout`/`process.stderr` elsewhere in src/. JSON output is escaped losslessly
// first (`jsonText`), so it stays valid JSON. Files (`report -o`) are written elsewhere, unchanged.
import { visibleJson, visibleText } from '../text/visible.ts';

export interface Output {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** A stream whose reader went away (keepGoingWhenOutputCloses): nothing more is written to it. */
const gone = { stdout: false, stderr: false };

function write(which: 'stdout' | 'stderr', text: string): void {
  const stream = process[which];
  if (gone[which] || stream.destroyed) return;
  stream.write(visibleText(text));
}

export const terminal: Output = {
  stdout: (text) => write('stdout', text),
  stderr: (text) => write('stderr', text),
};

/** JSON.stringify (with `replacer`/`space`), its DEL/C1/bidi characters written as `\uXXXX`. */
export function jsonText(value: unknown, space?: number, replacer?: (key: string, value: unknown) => unknown): string {
  return visibleJson(JSON.stringify(value, replacer, space));
}

/**
 * The stream the run's progress view draws on (stderr). The view writes its own cursor sequences
 * and makes every value from input visible itself (src/run/progress.ts).
 */
export function progressStream(): NodeJS.WriteStream {
  if (level === 'quiet') return QUIET_STREAM;
  // a progress line per event, never redrawn in place (the live view draws on a terminal only)
  if (level === 'verbose') return lineStream(process.stderr);
  return process.stderr;
}

/** `stream` as one that is no terminal: its methods called on the stream itself. */
function lineStream(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  return new Proxy(stream, {
    get(target, key) {
      if (key === 'isTTY') return false;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * `--quiet`: no progress lines from `run` and `worker` (their log.jsonl keeps every event); the
 * result, warnings and errors stay. `--verbose`: every progress event on a line of its own, also on
 * a terminal, where the live view would redraw one summary.
 */
export type OutputLevel = 'quiet' | 'normal' | 'verbose';
let level: OutputLevel = 'normal';
export function setOutputLevel(l: OutputLevel): void {
  level = l;
}

/** Where quiet progress goes: nowhere. */
const QUIET_STREAM = { write: () => true, isTTY: false, columns: 120 } as unknown as NodeJS.WriteStream;

function exitOnEpipe(err: NodeJS.ErrnoException): void {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
}

/** `storsweep plan … | head` closes the pipe early: that is not an error. */
export function exitQuietlyOnClosedPipe(): void {
  process.stdout.on('error', exitOnEpipe);
}

/**
 * `run` and `cleanup` own objects in the lab: a reader that goes away (`| head` closed the pipe:
 * EPIPE; the terminal was closed: EIO) must not end them before their teardown. From then on that
 * stream is not written to; the run's log.jsonl keeps the record. `onClose` is told once per stream.
 */
export function keepGoingWhenOutputCloses(onClose?: (stream: 'stdout' | 'stderr', code: string) => void): void {
  process.stdout.off('error', exitOnEpipe);
  for (const which of ['stdout', 'stderr'] as const) {
    process[which].on('error', (err: NodeJS.ErrnoException) => {
      if (gone[which]) return;
      gone[which] = true;
      onClose?.(which, err.code ?? err.message);
    });
  }
}

/** Marks our own help text puts around a title (private-use characters: visibleText keeps them). */
const BOLD_ON = '\ue000';
const BOLD_OFF = '\ue001';

/** A title of the help text, bold when it is written with colour (writeHelp). */
export const boldTitle = (text: string): string => `${BOLD_ON}${text}${BOLD_OFF}`;

/**
 * Colour on stdout? `--color always|never` decides; else NO_COLOR (set, not empty: no colour,
 * https://no-color.org), FORCE_COLOR (set, not 0: colour), else only on a terminal that is not dumb.
 */
export function colorWanted(flag: string | undefined): boolean {
  if (flag === 'always') return true;
  if (flag === 'never') return false;
  if (process.env.NO_COLOR) return false;
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0' && process.env.FORCE_COLOR !== 'false') return true;
  return Boolean(process.stdout.isTTY) && process.env.TERM !== 'dumb';
}

/** Help text of our own (commander's writeOut): made visible, then its title marks → bold or nothing. */
export function writeHelp(text: string, color: boolean): void {
  if (gone.stdout || process.stdout.destroyed) return;
  const shown = visibleText(text);
  process.stdout.write(color ? shown.replaceAll(BOLD_ON, '\x1b[1m').replaceAll(BOLD_OFF, '\x1b[22m') : shown.replaceAll(BOLD_ON, '').replaceAll(BOLD_OFF, ''));
}

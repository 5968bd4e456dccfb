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

export const terminal: Output = {
  stdout: (text) => void process.stdout.write(visibleText(text)),
  stderr: (text) => void process.stderr.write(visibleText(text)),
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
  return process.stderr;
}

/** `storsweep plan … | head` closes the pipe early: that is not an error. */
export function exitQuietlyOnClosedPipe(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

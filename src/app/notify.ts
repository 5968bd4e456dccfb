// How a use case speaks while it works. src/app/ never chooses a terminal itself: the composition
// root (src/cli/output.ts) sets the sink to its terminal-safe stderr, and each command maps the typed
// outcome a use case returns to stdout and an exit code (Terraform's hooks: one interface drives the UI).
import { visibleText } from '../text/visible.ts';

/** A line (or lines) for the user while a use case works: a note, a warning, an error that does not stop it. */
export type Notify = (text: string) => void;

// Before the CLI sets the sink (a use case called in-process, as tests do): stderr, made visible
// as src/cli/output.ts does, so nothing from input reaches a terminal raw.
let sink: Notify = (text) => void process.stderr.write(visibleText(text));

/** Where warnings from inside a use case go (a store reached without TLS): set once by the composition root. */
export function setNotify(n: Notify): void {
  sink = n;
}

/** Says `text` through the sink the composition root set. */
export const notify: Notify = (text) => sink(text);

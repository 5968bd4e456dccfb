// What a configuration load refuses, as a test compares it: the ConfigError's message or its
// formatted diagnostics (file:line:col: key: message). Any other error fails the test as it is.
import { loadPlaybook } from '../../src/config/index.ts';
import { parseSetArguments } from '../../src/config/overrides.ts';
import { ConfigError, formatDiagnostic } from '../../src/errors.ts';

/** The ConfigError message `fn` throws, or `ok` when it throws none. */
export function configErrorOf(fn: () => unknown, ok = 'ok'): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return ok;
}

/** The formatted diagnostics a load raises; when it loads fine, `fine` (without it, the test fails). */
export function diagnosticsOf(load: () => unknown, fine?: string[]): string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostics.map(formatDiagnostic);
    throw err;
  }
  if (fine) return fine;
  throw new Error('expected a ConfigError, but the file loaded');
}

/** What loading playbook `pb` with these `--set` arguments refuses (its message), or `ok`. */
export function setProblems(pb: string, set: string[]): string {
  return configErrorOf(() => loadPlaybook(pb, parseSetArguments(set)));
}

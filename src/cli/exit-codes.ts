// The exit codes, with what each means: one table for the code (EXIT), `storsweep help exit-codes`
// and docs/guide/install.md. Imports nothing, so the start-up path (src/cli/main.ts) stays small.

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  regression: 3,
  interrupted: 130,
} as const;

export const EXIT_CODE_MEANINGS: readonly (readonly [code: number, meaning: string])[] = [
  [EXIT.ok, 'success: the command did all it was asked'],
  [EXIT.failure, 'a failure while working: a permutation, a remote command, a host, the store (see the message and the run\'s log.jsonl)'],
  [EXIT.usage, 'refused before doing anything: bad arguments, a playbook or inventory that does not validate, a missing secret, an unsafe operation not confirmed, a run directory in use'],
  [EXIT.regression, '`compare --fail-on-regression`: B is significantly slower than A'],
  [EXIT.interrupted, 'interrupted (Ctrl-C, SIGTERM, SIGHUP): once, the current permutation is torn down first; twice, at once (`storsweep cleanup RUNDIR` removes leftovers); `run --resume` continues'],
];

/** `storsweep help exit-codes`. */
export function exitCodesHelp(): string {
  const rows = EXIT_CODE_MEANINGS.map(([code, meaning]) => `  ${String(code).padStart(3)}  ${meaning}`);
  return `Exit codes of storsweep:\n${rows.join('\n')}\n`;
}

// `storsweep run` in the test's own process: the use case the CLI calls (src/app/run/), with the
// options only a test sets (the timing a test shortens, e.g. `orphanGraceMs`), its notes collected
// instead of printed. The exit code the CLI would give: runExitCode(outcome) (src/cli/commands/run.ts).
//
//   const { outcome, notes } = await runInProcess(pb, { inventory, out: runsDir, orphanGraceMs: 500 });
import type { RunOutcome, RunHooks } from '../../src/app/run/execute.ts';
import { executePrepared } from '../../src/app/run/execute.ts';
import { prepareRun, type HeldLock, type RunOptions } from '../../src/app/run/prepare.ts';

export interface InProcessRun {
  outcome: RunOutcome;
  /** what the run said on stderr, in order */
  notes: string;
}

/** Prepares and executes a run (no dry run, no signals taken, no progress view); its lock released after. */
export async function runInProcess(playbook: string, o: RunOptions): Promise<InProcessRun> {
  let notes = '';
  const note = (text: string) => void (notes += text);
  const hooks: RunHooks = {
    note,
    progressView: () => ({ onEvent: () => undefined, close: () => undefined }),
    onInterrupt: () => () => undefined,
    exitNow: () => {
      throw new Error('runInProcess: a second interrupt (none is sent in-process)');
    },
    keepGoingWhenOutputCloses: () => undefined,
  };
  const held: HeldLock = {};
  try {
    const prepared = await prepareRun(playbook, o, held, note);
    if (prepared.kind === 'dry-run') throw new Error('runInProcess: a dry run prints, it does not execute');
    return { outcome: await executePrepared(prepared.prep, o, hooks), notes };
  } finally {
    held.lock?.release();
  }
}

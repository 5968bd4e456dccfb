// `storsweep run`: argv → prepare and execute (src/app/run/) → output and exit code. Also
// `--resume <runDir>` after a crash.
import path from 'node:path';
import type { Command } from 'commander';
import { scheduleLines } from '../../app/plan-text.ts';
import type { DryRun, DryRunCall } from '../../app/run/dry-run.ts';
import { executePrepared, type RunHooks, type RunOutcome } from '../../app/run/execute.ts';
import { prepareRun, type HeldLock, type RunOptions } from '../../app/run/prepare.ts';
import { createProgressView } from '../../run/progress.ts';
import { visibleJson } from '../../text/visible.ts';
import { EXIT } from '../exit.ts';
import { retriesOption, stepTimeoutOption } from '../options.ts';
import { jsonText, keepGoingWhenOutputCloses, progressStream, terminal } from '../output.ts';
import { collect, inventoryRepeatHelp, SET_HELP } from './config-commands.ts';

/** `run`'s options: the use case's, and how the outcome is printed. */
export interface RunCommandOptions extends RunOptions {
  json?: boolean;
}

export async function runCommand(playbookFile: string | undefined, o: RunCommandOptions): Promise<number> {
  // The run directory's lock is held from before the first write until after the report.
  const held: HeldLock = {};
  try {
    const prepared = await prepareRun(playbookFile, o, held, terminal.stderr);
    if (prepared.kind === 'dry-run') {
      printDryRun(prepared.dryRun, o);
      return EXIT.ok;
    }
    return printOutcome(await executePrepared(prepared.prep, o, processHooks()), o);
  } finally {
    // a refused run too: a session a check opened (the capacity gate's) is logged out here
    await held.pool?.close();
    held.lock?.release();
  }
}

/** The process this command runs in, as a run sees it: signals, the progress view, closed output. */
function processHooks(): RunHooks {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  return {
    note: terminal.stderr,
    progressView: () => createProgressView(progressStream(), { live: Boolean(progressStream().isTTY) && !process.env.CI && process.env.TERM !== 'dumb' }),
    // A closed terminal (SIGHUP) stops the run like SIGTERM: abort, then teardown.
    onInterrupt: (handler) => {
      for (const s of signals) process.on(s, handler);
      return () => {
        for (const s of signals) process.off(s, handler);
      };
    },
    exitNow: () => process.exit(EXIT.interrupted),
    keepGoingWhenOutputCloses,
  };
}

/** The exit code of a run that ended so: the directory could not be written, interrupted, a permutation failed, or ok. */
export function runExitCode({ summary }: Pick<RunOutcome, 'summary'>): number {
  if (summary.fatal) return EXIT.failure;
  if (summary.interrupted) return EXIT.interrupted;
  return summary.failed ? EXIT.failure : EXIT.ok;
}

function printOutcome(outcome: RunOutcome, o: RunCommandOptions): number {
  const { runDir, summary, records, reports } = outcome;
  if (summary.fatal) {
    terminal.stderr(`error: the run directory ${runDir} cannot be written: ${summary.fatal}\n${records} record(s) committed before are kept; free space, then \`storsweep run --resume ${runDir}\`\n`);
    if (o.json) terminal.stdout(jsonText({ runDir, ...summary }) + '\n' + jsonText({ runDir }) + '\n');
    return runExitCode(outcome);
  }
  if (reports.length) terminal.stderr(`report: ${reports.map((n) => path.join(runDir, n)).join(' and ')}\n`);
  if (o.json) terminal.stdout(jsonText({ runDir, ...summary }) + '\n' + jsonText({ runDir }) + '\n');
  else terminal.stdout(`${runDir}\n`);
  return runExitCode(outcome);
}

/** `--dry-run`: the calls a run would send, one line each (JSON Lines with --json), the schedule, and what `--confirm-destroy` must name. */
function printDryRun({ plan, lines, destroys }: DryRun, o: RunCommandOptions): void {
  if (o.json) {
    if (lines.length) terminal.stdout(lines.map(visibleJson).join('\n') + '\n');
    return;
  }
  for (const l of lines) {
    const s = JSON.parse(l) as DryRunCall;
    terminal.stdout(`${s.destructive ? `DESTRUCTIVE (destroys ${(s.destroys ?? []).join(', ')}) ` : ''}${s.permutationId} ${s.step}: ${s.provider} ${s.operation} ${JSON.stringify(s.arguments)}\n`);
  }
  for (const l of scheduleLines(plan)) terminal.stdout(`${l}\n`);
  terminal.stdout(`${plan.permutations.length} permutations, ${lines.length} calls${destroys.length ? `; destroys data on ${destroys.join(', ')} (confirm with --confirm-destroy ${destroys.join(',')})` : ''}; nothing was sent\n`);
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run a sweep: provision, measure, tear down, record (each run gets its own directory)')
    .argument('[playbook]', 'playbook YAML (omit with --resume)')
    .option('-i, --inventory <file>', `inventory YAML; ${inventoryRepeatHelp()} (a resume uses the run's own files)`, collect)
    .option('-o, --out <dir>', 'directory for run directories', 'runs')
    .option('--dry-run', 'print every planned call and touch nothing')
    .option('--json', 'machine-readable output; the last line is {"runDir": …}')
    .option('--resume <runDir>', 'continue an interrupted run: done permutations are skipped, a half-done one is cleaned up and redone')
    .option('--keep', "leave the last permutation's objects in place for inspection")
    .option('--fail-fast', 'stop at the first failed permutation')
    .option('--confirm-destroy <names>', 'comma-separated: exactly the names the destructive steps destroy (naa.…/eui.…/t10.… LUNs, disk<N>:<serial> Hyper-V disks, raw guest devices, a test file at its path that storsweep did not create); --dry-run lists what the steps destroy')
    .option('--retries <n>', 'retries of a transient failure per step, 0-20 (default 3)', retriesOption)
    .option('--step-timeout <sec>', 'limit for each provisioning step in whole seconds, 1-2147483 (default 1800)', stepTimeoutOption)
    .option('--no-report', 'do not write report.md/report.html at the end')
    .option('--preflight', 'run the preflight checks first (storsweep preflight, without the canary) and stop on a failed one')
    .option('--set <key=value>', `${SET_HELP}; recorded in the run, which --resume uses`, collect)
    .option('--store <url>', "write the run to this PostgreSQL store (default: the inventory's store:, else the run directory's run.sqlite): postgresql://USER[:${env:NAME}|${file:path}]@HOST[:PORT]/DB")
    .action(async (playbook: string | undefined, o: RunCommandOptions, cmd: Command) => {
      process.exitCode = await runCommand(playbook, { ...o, outGiven: cmd.getOptionValueSource('out') === 'cli', env: process.env });
    });
}

// Several controllers on one sweep (docs/architecture.md, "Several controllers"): `submit` and
// `worker` parse argv, call their use case (src/app/queue/submit.ts, work.ts) and print its outcome.
import type { Command } from 'commander';
import { submitRun, type SubmitOptions } from '../../app/queue/submit.ts';
import { work, type WorkOptions, type WorkOutcome } from '../../app/queue/work.ts';
import { DEFAULT_LEASE_SEC } from '../../results/pg-coordination.ts';
import { createProgressView } from '../../run/progress.ts';
import { visible } from '../../text/visible.ts';
import { EXIT } from '../exit.ts';
import { intOption, retriesOption, stepTimeoutOption } from '../options.ts';
import { jsonText, progressStream, terminal } from '../output.ts';
import { collect, SET_HELP } from './config-commands.ts';

export async function submitCommand(playbookFile: string, o: SubmitOptions & { json?: boolean }): Promise<number> {
  const r = await submitRun(playbookFile, o);
  const bound = r.machineBound;
  terminal.stderr(`run ${r.runId}: ${r.permutations} permutation(s) queued in ${r.groups.length} target group(s) in ${r.where}; workers: storsweep worker -i INVENTORY --store URL\n`);
  if (bound.length) terminal.stderr(`note: ${bound.map(visible).join(', ')} ${bound.length === 1 ? 'is' : 'are'} this machine (a local target, or reached at a loopback address): only workers on this machine (${visible(r.machine.host)}) take ${bound.length === 1 ? 'its' : 'their'} permutations\n`);
  if (o.json) terminal.stdout(jsonText({ runId: r.runId, permutations: r.permutations, groups: r.groups.map((g) => g.targets), store: r.where }) + '\n' + jsonText({ runId: r.runId }) + '\n');
  else terminal.stdout(`${r.runId}\n`);
  return EXIT.ok;
}

export interface WorkerCommandOptions extends WorkOptions {
  json?: boolean;
}

export async function workerCommand(o: WorkerCommandOptions): Promise<number> {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const outcome = await work(o, {
    note: terminal.stderr,
    progressView: () => createProgressView(progressStream(), { live: false }),
    onInterrupt: (handler) => {
      for (const s of signals) process.on(s, handler);
      return () => {
        for (const s of signals) process.off(s, handler);
      };
    },
    exitNow: () => process.exit(EXIT.interrupted),
  });
  return printWorkOutcome(outcome, o);
}

function printWorkOutcome(outcome: WorkOutcome, o: WorkerCommandOptions): number {
  const { summary, blocked } = outcome;
  if (o.json) terminal.stdout(jsonText(summary) + '\n');
  else terminal.stderr(`worker: ${summary.done} permutation(s) done, ${summary.failed} failed, ${summary.alreadyDone} already done, ${summary.takenOver} taken over from gone workers, ${summary.givenBack} given back, ${summary.abandoned} left to a worker taking over${summary.refused ? `, ${summary.refused} job(s) refused` : ''}\n`);
  for (const [id, e] of blocked) terminal.stderr(`error: run ${visible(id)} still has work this worker could not prepare: ${e.error}\n`);
  return workExitCode(outcome, o);
}

/** The exit code of a worker that ended so: work it could not prepare, a lost lease (--once), interrupted, a failed permutation, or ok. */
export function workExitCode({ summary, blocked, leaseLost, interrupted }: WorkOutcome, o: Pick<WorkerCommandOptions, 'once'>): number {
  if (blocked.length) return EXIT.failure;
  if (leaseLost && o.once && !interrupted) return EXIT.failure;
  if (interrupted) return EXIT.interrupted;
  return summary.failed ? EXIT.failure : EXIT.ok;
}

const concurrencyOption = intOption('--concurrency', 1, 64, 'a number of permutations');
const leaseOption = intOption('--lease', 2, 3600, 'whole seconds');
const pollOption = intOption('--poll-ms', 50, 60_000, 'milliseconds');

export function registerQueueCommands(program: Command): void {
  program
    .command('submit')
    .description('plan a sweep and queue every permutation in a PostgreSQL store for `storsweep worker`s')
    .argument('<playbook>', 'playbook YAML')
    .option('-i, --inventory <file>', 'inventory YAML')
    .option('--store <url>', 'postgresql://USER:${env:NAME}@HOST[:PORT]/DB (the password by reference; default: the inventory\'s store:)')
    .option('--confirm-destroy <names>', 'comma-separated: exactly the names the destructive steps destroy (as for run)')
    .option('--set <key=value>', SET_HELP, collect)
    .option('--json', 'machine-readable output; the last line is {"runId": …}')
    .action(async (playbook: string, o: SubmitOptions) => {
      process.exitCode = await submitCommand(playbook, { ...o, env: process.env });
    });
  program
    .command('worker')
    .description('work through queued permutations of the targets this inventory reaches (several workers share a run)')
    .option('-i, --inventory <file>', 'inventory YAML')
    .option('--store <url>', 'postgresql://USER:${env:NAME}@HOST[:PORT]/DB (default: the inventory\'s store:)')
    .option('--targets <names>', 'comma-separated: only these targets of the inventory')
    .option('--run <runId>', 'only this run (default: every queued run with work left)')
    .option('--once', 'stop after one permutation')
    .option('--until-idle', 'stop when nothing this worker can do is left (waiting or running elsewhere)')
    .option('-o, --out <dir>', 'directory for raw tool output (<out>/<runId>/raw) and the worker log', 'runs')
    .option('--concurrency <n>', 'permutations at once, of different target groups (default 1)', concurrencyOption)
    .option('--lease <sec>', `how long a silent worker keeps its targets (keepalive on its lease session; heartbeat every third; default ${DEFAULT_LEASE_SEC})`, leaseOption)
    .option('--poll-ms <ms>', 'pause between looks at an empty queue (default 1000)', pollOption)
    .option('--retries <n>', 'retries of a transient failure per step, 0-20 (default 3)', retriesOption)
    .option('--step-timeout <sec>', 'limit for each provisioning step in whole seconds (default: the playbook timeouts.stepSec, else 1800)', stepTimeoutOption)
    .option('--json', 'print the summary as JSON')
    .action(async (o: WorkerCommandOptions & { lease?: number }) => {
      process.exitCode = await workerCommand({ ...o, ...(o.lease !== undefined ? { leaseSec: o.lease } : {}), env: process.env });
    });
}

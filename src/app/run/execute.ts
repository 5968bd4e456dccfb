// The second half of `run`: a prepared run connected to its targets, executed (run/executor.ts),
// its records mirrored to results.jsonl and its reports written. The CLI hands in the hooks that
// touch the process (signals, the progress view, closed output) and maps the outcome to output.
import path from 'node:path';
import { redact } from '../../input/secrets.ts';
import type { Provider } from '../../contract/provider.ts';
import { errorLongForm, errorMessage, OutputRefused, UsageError } from '../../errors.ts';
import type { RunStore } from '../../results/port.ts';
import { writeFileAtomic } from '../../results/raw.ts';
import { executeRun, type RunSummary, type TargetEndpoints } from '../../run/executor.ts';
import { createRunLog, type RunLog } from '../../run/log.ts';
import type { ProgressEvent } from '../../run/progress.ts';
import { loadSource } from '../load-source.ts';
import type { Composition } from '../compose.ts';
import type { Notify } from '../notify.ts';
import { scheduleLines } from '../plan-text.ts';
import { makeReport } from '../report.ts';
import { storeAwareLoader } from '../store.ts';
import { recordFingerprint } from './fingerprint.ts';
import type { Prepared, RunOptions } from './prepare.ts';

/** What `run` needs from the process it runs in (the CLI is the composition root). */
export interface RunHooks {
  /** notes and warnings while the run goes on (stderr) */
  note: Notify;
  /** the progress view, made when the run starts */
  progressView(): { onEvent(e: ProgressEvent): void; close(): void };
  /** calls `handler` on SIGINT, SIGTERM and SIGHUP until the returned function is called */
  onInterrupt(handler: (signal: string) => void): () => void;
  /** a second interrupt: ends the process at once */
  exitNow(): void;
  /** from now on a reader that goes away (EPIPE, EIO) never ends the run; `onClose` is told */
  keepGoingWhenOutputCloses(onClose: (stream: 'stdout' | 'stderr', code: string) => void): void;
}

/** How a run ended: its directory, its summary, the reports written. */
export interface RunOutcome {
  runDir: string;
  summary: RunSummary;
  /** the records committed (kept when the run directory could not be written: summary.fatal) */
  records: number;
  /** report.md / report.html written into runDir */
  reports: string[];
}

/** Executes a prepared run; its store is closed once, after the last write or on the way out. */
export async function executePrepared(prep: Prepared, o: RunOptions, hooks: RunHooks): Promise<RunOutcome> {
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= prep.close().catch(() => undefined));
  try {
    return await executeAndReport({ ...prep, close }, o, hooks);
  } finally {
    await close();
  }
}

async function executeAndReport(prep: Prepared, o: RunOptions, hooks: RunHooks): Promise<RunOutcome> {
  const { store, close } = prep;
  if (store.runDir === null) throw new UsageError(`${store.where}: a run needs a local directory`);
  const runDir = store.runDir;
  const log = createRunLog(path.join(runDir, 'log.jsonl'));
  const summary = await measure(prep, o, hooks, log);
  let records: Awaited<ReturnType<RunStore['records']>> = [];
  try {
    records = await store.records();
    await store.setMeta('summary', summary);
    // results.jsonl mirrors the database for tools that do not speak SQLite.
    writeFileAtomic(path.join(runDir, 'results.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : ''));
  } catch (err) {
    summary.fatal ??= redact(errorMessage(err));
  } finally {
    await close();
    try {
      log.close();
    } catch {
      /* a full disk: the log is best effort */
    }
  }
  // a run where every permutation failed still gets its report: the failures are what it has to say
  const reports = !summary.fatal && (records.length || summary.failed) && o.report !== false ? await writeReports(runDir, o, hooks.note) : [];
  return { runDir, summary, records: records.length, reports };
}

/** Connects the targets and runs the plan, with the interrupts and progress view around it. */
async function measure(prep: Prepared, o: RunOptions, hooks: RunHooks, log: RunLog): Promise<RunSummary> {
  const { plan, store, comps, confirmed } = prep;
  const runDir = store.runDir!;
  // targets that share a VM, a guest, a test file, a LUN…: said before they start taking turns
  if (plan.serialised?.length) hooks.note(scheduleLines(plan).join('\n') + '\n');
  const timeouts = (await store.meta()).timeouts ?? {};
  const stepSec = o.stepTimeout ?? timeouts.stepSec;
  // cleanup removes with the run's own retries and deadline (cli/commands/cleanup)
  const teardownPolicy = { ...(o.retries !== undefined ? { retries: o.retries } : {}), ...(stepSec !== undefined ? { stepSec } : {}) };
  await store.setMeta('meta', { ...(await store.meta()), teardown: teardownPolicy });
  const view = hooks.progressView();
  const ac = new AbortController();
  const off = hooks.onInterrupt(interruptHandler(store, runDir, ac, hooks));
  // Nobody reading our output any more (`| head`, a closed terminal) never ends the run mid-way.
  hooks.keepGoingWhenOutputCloses((stream, code) => log.event({ type: 'message', level: 'warn', text: `${stream} was closed (${code}): printing stops, the run goes on; this log has the rest` }));
  const onEvent = (e: ProgressEvent) => {
    view.onEvent(e);
    log.event(e);
  };
  const providers: Array<Provider | null> = [];
  try {
    const endpoints = await connectTargets(comps, store, log, providers);
    const all = Object.entries(endpoints);
    await recordFingerprint(store, all.length === 1 ? [['', all[0]![1]]] : all);
    const first = all[0]![1];
    return await executeRun({
      store,
      plan,
      provider: first.provider,
      workload: first.workload,
      ...(plan.targets ? { targets: endpoints } : {}),
      signal: ac.signal,
      onEvent,
      failFast: o.failFast,
      keep: o.keep,
      confirmedDestroy: confirmed,
      stepTimeoutMs: stepSec !== undefined ? stepSec * 1000 : undefined,
      ...(o.orphanGraceMs !== undefined ? { orphanGraceMs: o.orphanGraceMs } : {}),
      workloadSlackSec: timeouts.workloadSlackSec,
      retry: o.retries !== undefined ? { retries: o.retries } : undefined,
      // named in this command (checked against the plan): teardown may act on what the host shows no mark on
      confirmedHere: true,
    });
  } finally {
    // Targets on one vCenter share its session: it logs out when the last of them closes.
    for (const p of providers) await p?.close().catch(() => undefined);
    off();
    view.close();
  }
}

/** The first interrupt stops after the current permutation's teardown; a second ends the process at once. */
function interruptHandler(store: RunStore, runDir: string, ac: AbortController, hooks: RunHooks): (sig: string) => void {
  let interrupts = 0;
  return (sig) => {
    interrupts++;
    if (interrupts === 1) {
      hooks.note(`\n${sig}: stopping after teardown of the current permutation (again to exit at once; \`storsweep cleanup ${runDir}\` removes leftovers)\n`);
      void store.appendJournal(null, 'run', 'signal', { signal: sig }).catch(() => undefined);
      ac.abort(new Error(`interrupted by ${sig}`));
    } else {
      // Everything measured is already committed; the ledger shows what is still live.
      // (SQLite writes it at once; a remote store may not get it before the exit)
      void store.appendJournal(null, 'run', 'signal-exit', { signal: sig }).catch(() => undefined);
      hooks.exitNow();
    }
  };
}

/** Each target's provider connected, in playbook order (`providers` collects them for closing). */
async function connectTargets(comps: Map<string, Composition>, store: RunStore, log: RunLog, providers: Array<Provider | null>): Promise<Record<string, TargetEndpoints & { comp: Composition }>> {
  const endpoints: Record<string, TargetEndpoints & { comp: Composition }> = {};
  for (const [name, comp] of comps) {
    let provider: Provider | null;
    try {
      provider = await comp.connectProvider();
    } catch (err) {
      // Nothing runs: every permutation not done says why in the journal (and `status`).
      const reason = `not started: cannot connect to target ${name}: ${redact(errorMessage(err))}`;
      const detail = errorLongForm(err);
      try {
        await store.noteNotStarted('connect', reason, { target: name, ...(detail ? { detail: redact(detail) } : {}) });
      } catch {
        /* the journal is best effort here: the connect failure is what the user must see */
      }
      log.event({ type: 'message', level: 'error', text: reason, ...(detail ? { fields: { detail: redact(detail) } } : {}) });
      throw err;
    }
    providers.push(provider);
    endpoints[name] = { provider, workload: comp.workload, comp };
  }
  return endpoints;
}

/**
 * report.md and report.html into the run directory. The measurements are committed: a report that
 * cannot be written (a report.md the user replaced, a full disk) is a warning naming the file, and
 * the other one is still written. Returns the names written.
 */
async function writeReports(runDir: string, o: RunOptions, note: Notify): Promise<string[]> {
  // a run in a PostgreSQL store is read from there (its run directory's store.json)
  // with the store the run was given (store.json never picks the password: app/store.ts)
  const loader = storeAwareLoader(loadSource, { env: o.env, ...(o.store !== undefined ? { store: o.store } : {}), ...(o.inventory !== undefined ? { inventory: o.inventory } : {}) });
  const written: string[] = [];
  for (const [format, name] of [['md', 'report.md'], ['html', 'report.html']] as const) {
    const file = path.join(runDir, name);
    try {
      await makeReport([runDir], { format, output: file }, { loadSource: loader, notify: () => undefined });
      written.push(name);
    } catch (err) {
      const why =
        err instanceof OutputRefused && err.details.reason === 'not-a-report'
          ? `it exists and is not a report storsweep wrote, so it was left as it is; \`storsweep report ${runDir} -f ${format} -o ${file} --force\` replaces it`
          : `${errorMessage(err)}; \`storsweep report ${runDir} -f ${format} -o ${file}\` writes it later`;
      note(`warning: ${file} was not written: ${why}\n`);
    }
  }
  return written;
}

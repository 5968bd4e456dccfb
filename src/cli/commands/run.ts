// `storsweep run`: plan, guard, execute, report. Also `--resume <runDir>` after a crash.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { inventoryName, loadInventory, loadPlaybook, type LoadedInventory, type LoadedPlaybook } from '../../config/index.ts';
import { checkPlaybookAgainst } from '../../plan/check.ts';
import { redact, redactDeep } from '../../input/secrets.ts';
import { errorLongForm, errorMessage, OutputRefused, ResumeMismatch, UnsafeOperation, UsageError } from '../../errors.ts';
import type { Replication, RunPlan } from '../../contract/plan.ts';
import { newRunId } from '../../plan/permutation.ts';
import { writeFileAtomic } from '../../results/raw.ts';
import { readInputFile } from '../../input/read-input.ts';
import { lockRunDir, type RunLock } from '../../results/run-lock.ts';
import { DB_FILE, ResultStore, type RunMeta } from '../../results/store.ts';
import type { LedgerRow, PermutationRow, RunStore } from '../../results/port.ts';
import { SqliteRunStore } from '../../results/sqlite-store.ts';
import { checkRunConfirmed, readConfirmed } from '../../results/confirmation.ts';
import { loadSource } from '../../app/load-source.ts';
import { connectPointerStore, readStorePointer, selectStore, connectStore, storeAwareLoader, storePointerOf, writeStorePointer, type StorePointer } from '../store.ts';
import { executeRun, type RunSummary, type TargetEndpoints } from '../../run/executor.ts';
import type { ForeignFile, Provider } from '../../contract/provider.ts';
import { foreignMessage } from '../../providers/test-file.ts';
import { createRunLog } from '../../run/log.ts';
import { createProgressView, type ProgressEvent } from '../../run/progress.ts';
import { composeTargets, measurementFacts, planRun, usedFacts, type Composition } from '../compose.ts';
import { checkAgainstHostVersions } from '../host-versions.ts';
import { checkPlanOnline } from '../../app/online-checks.ts';
import { EXIT } from '../exit.ts';
import { retriesOption, stepTimeoutOption } from '../options.ts';
import { runReport } from './report.ts';
import { runEnvironment } from '../../config/run-environment.ts';
import { collect, INVENTORY_REPEAT_HELP, scheduleLines, SET_HELP } from './config-commands.ts';
import { overrideTexts, parseSetArguments, sameOverrides, type PlaybookOverride } from '../../config/overrides.ts';
import { serialisedResources } from '../../plan/plan.ts';
import { ensureOutputDirectory } from '../out-dir.ts';
import { jsonText, keepGoingWhenOutputCloses, progressStream, terminal } from '../output.ts';
import { visibleJson, visibleText } from '../../text/visible.ts';
import { canonicalJson } from '../../text/canonical-json.ts';
import { VERSION } from '../../version.ts';
import { PROVIDERS, stepArgumentsProblem } from '../../providers/index.ts';
import { refuseWithoutRoom } from '../../preflight/capacity.ts';
import { preflightBeforeRun } from '../../preflight/before-run.ts';

export interface RunCommandOptions {
  /** `-i`, repeatable: later files add or replace targets and endpoints (config/inventory-layers.ts) */
  inventory?: string | readonly string[];
  out: string;
  dryRun?: boolean;
  json?: boolean;
  resume?: string;
  keep?: boolean;
  failFast?: boolean;
  confirmDestroy?: string;
  /** parsed and range-checked by commander (src/cli/options.ts) */
  retries?: number;
  stepTimeout?: number;
  report?: boolean;
  /** `--set key=value` overrides of playbook values (config/overrides.ts) */
  set?: string[];
  /** `--out` was given on the command line (not its default): a resume refuses it */
  outGiven?: boolean;
  /** `--store URL`: the PostgreSQL store the run is written to (else the inventory's store:, else run.sqlite) */
  store?: string;
  /** `--preflight`: run the read-only preflight checks first and stop on a ✗ */
  preflight?: boolean;
}

/**
 * Everything the plan's destructive steps destroy, by the names their planners gave (`destroys`):
 * what `--confirm-destroy` must list exactly. A destructive step that names nothing is a planner
 * bug and refused here rather than confirmed by any text.
 */
export function destroyedNames(plan: RunPlan, left: (permutationId: string) => boolean = () => true): string[] {
  const found = new Set<string>();
  for (const p of plan.permutations) {
    if (!left(p.permutationId)) continue;
    for (const s of p.steps) {
      if (!s.destructive) continue;
      if (!s.destroys?.length) throw new UnsafeOperation(`step ${s.step} (${s.operation}) of ${p.permutationId} is destructive but names nothing it destroys; refusing`, { operation: 'run', target: plan.target });
      for (const n of s.destroys) found.add(n);
    }
  }
  return [...found].sort();
}

/** The names a user typed, as a set: comma-separated, spaces around each ignored. */
export function parseConfirmDestroy(confirm: string | undefined): string[] {
  return [...new Set((confirm ?? '').split(',').map((s) => s.trim()).filter(Boolean))].sort();
}

/** A destroyed name in words, as its provider puts it (`disk2:S4E…` is host disk 2 with that serial); a LUN or guest device as is. */
function describeName(n: string): string {
  for (const m of Object.values(PROVIDERS)) {
    const words = m.describeDestroyed(n);
    if (words !== null) return words;
  }
  return n;
}

/**
 * A stored plan's steps parsed again with their providers' argument schemas before a resume sends
 * anything: a plan written by another storsweep version (or edited) is refused, with each problem.
 */
export function checkStoredPlan(plan: RunPlan, runDir: string): void {
  const problems: string[] = [];
  for (const p of plan.permutations) {
    for (const s of p.steps) {
      const problem = stepArgumentsProblem(s);
      if (problem) problems.push(`${p.permutationId} step ${JSON.stringify(s.step)} (${s.provider} ${JSON.stringify(s.operation)}): ${problem}`);
      if (problems.length >= 5) break;
    }
    if (problems.length >= 5) break;
  }
  if (problems.length) {
    throw new UsageError(`${runDir}: the stored plan is not one this storsweep (${VERSION}) can run: ${problems.join('; ')}${problems.length >= 5 ? '; …' : ''}; nothing was sent. Resume it with the storsweep version that made it, or start a new run`);
  }
}

/**
 * `--confirm-destroy` must list exactly what the plan destroys: a missing name is refused, and so
 * is an extra or unknown one (a typo never confirms something else). The refusal lists every name.
 */
export function checkConfirmDestroy(plan: RunPlan, confirm: string | undefined, foreign: readonly ForeignFile[] = []): string[] {
  const required = withForeign(destroyedNames(plan), foreign);
  const confirmed = parseConfirmDestroy(confirm);
  const missing = required.filter((d) => !confirmed.includes(d));
  const extra = confirmed.filter((d) => !required.includes(d));
  if (!missing.length && !extra.length) return required;
  refuseForeign(foreign, missing, required, { operation: 'run', target: plan.target });
  const steps = plan.permutations.flatMap((p) => p.steps.filter((s) => s.destructive)).length;
  const why = [missing.length && confirm !== undefined ? `not confirmed: ${missing.map(describeName).join(', ')}` : '', extra.length ? `not destroyed by this plan: ${extra.map((e) => JSON.stringify(e)).join(', ')}` : ''].filter(Boolean).join('; ');
  if (!required.length) {
    throw new UnsafeOperation(`this plan destroys nothing, but --confirm-destroy names ${extra.map((e) => JSON.stringify(e)).join(', ')}; leave it out`, { operation: 'run', target: plan.target });
  }
  throw new UnsafeOperation(
    `this plan has ${steps} destructive step(s) that destroy data on ${required.map(describeName).join(', ')}${why ? ` (${why})` : ''}; review them with --dry-run, then confirm with --confirm-destroy ${required.join(',')}`,
    { operation: 'run', target: plan.target },
  );
}

/**
 * `run --resume` re-plans nothing, but it asks again: a resume that still has destructive steps to
 * run (in permutations not done) needs `--confirm-destroy` naming exactly what they destroy — not
 * what the run destroyed before, nor the set it started with. What is left destroys nothing: no
 * confirmation, and one given is refused. `recorded` (the set confirmed at the start) is named in
 * the refusal. Returns the names confirmed.
 */
export function checkResumeConfirmation(plan: RunPlan, isDone: (permutationId: string) => boolean, recorded: readonly string[] | undefined, confirm: string | undefined, foreign: readonly ForeignFile[] = []): string[] {
  const left = (id: string) => !isDone(id);
  const required = withForeign(destroyedNames(plan, left), foreign);
  const confirmed = parseConfirmDestroy(confirm);
  const missing = required.filter((d) => !confirmed.includes(d));
  const extra = confirmed.filter((d) => !required.includes(d));
  if (!missing.length && !extra.length) return required;
  const target = { operation: 'run --resume', target: plan.target };
  refuseForeign(foreign, missing, required, target);
  if (!required.length) {
    throw new UnsafeOperation(`what is left of this run destroys nothing, but --confirm-destroy names ${extra.map((e) => JSON.stringify(e)).join(', ')}; leave it out`, target);
  }
  const perms = plan.permutations.filter((p) => left(p.permutationId) && p.steps.some((s) => s.destructive)).length;
  const why = [missing.length && confirm !== undefined ? `not confirmed: ${missing.map(describeName).join(', ')}` : '', extra.length ? `not destroyed by what is left: ${extra.map((e) => JSON.stringify(e)).join(', ')}` : ''].filter(Boolean).join('; ');
  const before = recorded?.length ? `; the run was confirmed for ${recorded.join(', ')} when it started` : '';
  throw new UnsafeOperation(
    `the rest of this run (${perms} permutation(s) not done) destroys data on ${required.map(describeName).join(', ')}${why ? ` (${why})` : ''}${before}; confirm again with --confirm-destroy ${required.join(',')}`,
    target,
  );
}

/** What the plan destroys and the files found at test file paths that storsweep did not create: one sorted set. */
function withForeign(destroyed: readonly string[], foreign: readonly ForeignFile[]): string[] {
  return [...new Set([...destroyed, ...foreign.map((f) => f.path)])].sort();
}

/** A file storsweep did not create, found where a test file goes and not confirmed: refused first, in its own words. */
function refuseForeign(foreign: readonly ForeignFile[], missing: readonly string[], required: readonly string[], target: { operation: string; target: string }): void {
  const found = foreign.filter((f) => missing.includes(f.path));
  if (!found.length) return;
  const confirm = required.join(',');
  throw new UnsafeOperation(found.map((f) => foreignMessage(f.where, f.path, f.found, confirm)).join('\n'), target);
}

/**
 * Each target's test file looked at on its guest now (read-only), before anything is written: the
 * files there that storsweep did not create (a run must be confirmed for them by path). A guest that
 * cannot be reached now is left to the run, whose marking step looks again before it writes.
 */
export async function foreignTestFiles(comps: ReadonlyMap<string, Composition>): Promise<ForeignFile[]> {
  const looks = await Promise.all([...comps.values()].map(async (comp) => (comp.testFile ? comp.testFile.look().catch(() => null) : null)));
  const found = new Map<string, ForeignFile>();
  for (const f of looks) if (f) found.set(`${f.where}\0${f.path}`, f);
  return [...found.values()];
}

export function dryRunLines(plan: RunPlan): string[] {
  const out: string[] = [];
  for (const p of plan.permutations) {
    // The plan holds no secret (it is built from non-secret fields, and validate refuses a secret
    // value pasted into one): printed as it is, like plan.json and run.sqlite keep it.
    for (const s of p.steps) out.push(JSON.stringify({ permutationId: p.permutationId, step: s.step, provider: s.provider, operation: s.operation, arguments: s.arguments, destructive: s.destructive, ...(s.destroys?.length ? { destroys: s.destroys } : {}) }));
    // Teardown removes what the steps created, in reverse order (see run/executor.ts).
    for (const s of [...p.steps].reverse()) {
      if (s.creates) out.push(JSON.stringify({ permutationId: p.permutationId, step: `teardown ${s.creates.kind}`, provider: s.provider, operation: 'destroy', arguments: { kind: s.creates.kind, name: s.creates.name }, destructive: false }));
    }
  }
  return out;
}

/**
 * `--dry-run`: the calls a run would send, one line each (JSON Lines with --json), the schedule, and
 * what `--confirm-destroy` must name; nothing is sent. `before`: calls that come first (on resume,
 * the removal of what an interrupted permutation left behind).
 */
function printDryRun(plan: RunPlan, o: RunCommandOptions, before: readonly string[] = []): void {
  const lines = [...before, ...dryRunLines(plan)];
  const devices = destroyedNames(plan);
  if (o.json) {
    if (lines.length) terminal.stdout(lines.map(visibleJson).join('\n') + '\n');
    return;
  }
  for (const l of lines) {
    const s = JSON.parse(l) as { permutationId: string; step: string; provider: string; operation: string; arguments: unknown; destructive: boolean; destroys?: string[] };
    terminal.stdout(`${s.destructive ? `DESTRUCTIVE (destroys ${(s.destroys ?? []).join(', ')}) ` : ''}${s.permutationId} ${s.step}: ${s.provider} ${s.operation} ${JSON.stringify(s.arguments)}\n`);
  }
  for (const l of scheduleLines(plan)) terminal.stdout(`${l}\n`);
  terminal.stdout(`${plan.permutations.length} permutations, ${lines.length} calls${devices.length ? `; destroys data on ${devices.join(', ')} (confirm with --confirm-destroy ${devices.join(',')})` : ''}; nothing was sent\n`);
}

/** Whether a permutation is done, by id, as `permutations` records it. */
function doneIn(permutations: readonly PermutationRow[]): (permutationId: string) => boolean {
  const done = new Set(permutations.filter((p) => p.status === 'done').map((p) => p.permutationId));
  return (id) => done.has(id);
}

/** What `run --resume` still runs: the permutations not done (a half-done one is redone whole). */
export function resumeLeft(plan: RunPlan, permutations: readonly PermutationRow[]): RunPlan {
  const done = new Set(permutations.filter((p) => p.status === 'done').map((p) => p.permutationId));
  return { ...plan, permutations: plan.permutations.filter((p) => !done.has(p.permutationId)) };
}

/**
 * Before a half-done permutation is redone, resume removes what it left behind (run/executor.ts):
 * its live ledger objects (`live`), newest first, as dry-run lines.
 */
function resumeCleanupLines(plan: RunPlan, permutations: readonly PermutationRow[], live: readonly LedgerRow[]): string[] {
  const left = new Set(resumeLeft(plan, permutations).permutations.map((p) => p.permutationId));
  return [...live]
    .filter((o) => left.has(o.permutationId))
    .sort((a, b) => b.seq - a.seq)
    .map((o) => JSON.stringify({ permutationId: o.permutationId, step: `cleanup ${o.kind}`, provider: o.provider, operation: 'destroy', arguments: { kind: o.kind, name: o.name }, destructive: false }));
}

/**
 * Takes the run directory's lock for this process's life (released by the caller, or by the OS
 * when the process ends). A lock left by a process that died is taken over: said on stderr and
 * in the journal.
 */
export function takeRunLock(store: ResultStore, command: string): RunLock {
  const lock = lockRunDir(store.runDir, command, store.lockAnchor());
  if (lock.previous) {
    const p = lock.previous;
    terminal.stderr(`note: ${store.runDir} was last held by pid ${p.pid} on host ${JSON.stringify(p.host)} (storsweep ${p.command}, since ${p.since}), which ended without releasing it; taking over\n`);
    store.appendJournal(null, 'run', 'lock-takeover', { previous: p, pid: process.pid });
  }
  return lock;
}

// through the one bounded reader: a path swapped for a device or FIFO after it was parsed is refused
const sha256 = (file: string) => createHash('sha256').update(readInputFile(file, 'config')).digest('hex');
/** Text from input made safe for a terminal: control characters become visible escapes. */
const shown = (v: string) => JSON.stringify(v);

/** The top-level playbook keys whose parsed values differ, for the refusal. */
function differingKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort().filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]));
}

/**
 * `run --resume DIR PLAYBOOK`: PLAYBOOK must be the run's own playbook. Compared as parsed (the
 * run keeps its playbook as playbook.yaml): comments, key order, quoting and layout do not matter,
 * any value does. A run directory without its playbook.yaml falls back to the recorded SHA-256.
 */
function checkResumePlaybook(playbookFile: string | undefined, meta: RunMeta, runDir: string, overrides: readonly PlaybookOverride[]): void {
  if (!playbookFile) return;
  const kept = path.join(runDir, 'playbook.yaml');
  // both as the run saw them: with the run's own --set values
  const given = loadPlaybook(playbookFile, overrides);
  const refuse = (detail: string, was: string, now: string) =>
    new ResumeMismatch(
      `run --resume: ${shown(playbookFile)} is not the playbook this run started with (${shown(meta.playbookFile)}, kept as ${kept}): ${detail}; a run resumes with its own plan: omit the playbook argument, or start a new run`,
      [{ key: 'playbook', was, now }],
    );
  if (fs.existsSync(kept)) {
    const own = loadPlaybook(kept, overrides);
    const a = own.playbook as unknown as Record<string, unknown>;
    const b = given.playbook as unknown as Record<string, unknown>;
    const keys = differingKeys(a, b);
    if (keys.length) throw refuse(`it differs in ${keys.join(', ')}`, canonicalJson(a), canonicalJson(b));
    return;
  }
  const expected = meta.config?.playbookSha256;
  const actual = sha256(playbookFile);
  if (expected !== undefined && actual !== expected) throw refuse(`SHA-256 ${actual.slice(0, 12)}… ≠ ${expected.slice(0, 12)}…`, expected, actual);
}

/**
 * Refuses a resume whose inventory would measure the rest of the run differently, naming each
 * difference. Only what the run's permutations use is compared (usedFacts), on both sides: a run
 * recorded before that restriction kept every field.
 */
export function checkResumeInventory(meta: RunMeta, names: readonly string[], plan: RunPlan, now: Record<string, string>, inventoryFile: string): void {
  const started = (meta.inventoryFiles ?? [meta.inventoryFile]).join(' + ');
  const recorded = meta.config?.facts;
  const was = recorded ? usedFacts(recorded, names, plan) : undefined;
  if (!was) {
    terminal.stderr(`note: this run predates configuration checks: cannot verify that ${inventoryFile} still describes the targets it measured\n`);
    return;
  }
  const diffs = [...new Set([...Object.keys(was), ...Object.keys(now)])]
    .sort()
    .filter((k) => was[k] !== now[k])
    .map((k) => ({ key: k, was: was[k] ?? '(absent)', now: now[k] ?? '(absent)' }));
  if (!diffs.length) return;
  const lines = diffs.map((d) => `  ${shown(d.key).slice(1, -1)}: ${d.was === '(absent)' ? d.was : shown(d.was)} → ${d.now === '(absent)' ? d.now : shown(d.now)}`);
  // An SSH endpoint's port identifies the machine as much as its address: on one address (the
  // lab's 127.0.0.1, a NAT gateway) each port is another server, so a new port is refused too.
  const port = diffs.some((d) => /^sshHosts\..+\.port$/.test(d.key))
    ? '\n(an SSH port names which machine is reached: on one address another port is another machine, e.g. a lab started again)'
    : '';
  throw new ResumeMismatch(
    `run --resume: ${inventoryFile} differs from the inventory this run started with (${started}) in what it measures; resuming would mix two configurations in one run:\n${lines.join('\n')}${port}\nresume with the inventory as it was, or start a new run`,
    diffs,
  );
}

function runDirFor(out: string, plan: RunPlan): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return path.resolve(out, `${stamp}-${plan.playbook}-${plan.runId}`);
}

interface Prepared {
  plan: RunPlan;
  store: RunStore;
  /** closes the store (and, for a PostgreSQL store, releases the run's lock there) */
  close: () => Promise<void>;
  /** by target name, in playbook order */
  comps: Map<string, Composition>;
  resumed: boolean;
  /** what the user confirmed this run may destroy (a resume: confirmed again now) */
  confirmed: string[];
}

/**
 * `run --resume` with `--set`: the run keeps the values it started with (in its plan); the same
 * set again is fine (any order), another one is refused naming both — a resume never mixes two
 * configurations. Returns the run's own overrides.
 */
export function checkResumeOverrides(plan: Pick<RunPlan, 'overrides'>, given: readonly string[] | undefined): PlaybookOverride[] {
  const recorded = parseSetArguments(plan.overrides ?? []);
  if (!given?.length) return recorded;
  const now = parseSetArguments(given);
  if (sameOverrides(now, recorded)) return recorded;
  const words = (list: readonly PlaybookOverride[]) => (list.length ? list.map((x) => x.argument).join(' ') : 'no --set');
  throw new ResumeMismatch(`run --resume: ${words(now)} differs from what this run started with (${words(recorded)}); a run resumes with its own values: leave --set out, or start a new run`, [
    { key: '--set', was: overrideTexts(recorded).join(' '), now: overrideTexts(now).join(' ') },
  ]);
}

export function prepareNew(playbookFile: string, o: Pick<RunCommandOptions, 'inventory' | 'set'>): { plan: RunPlan; comps: Map<string, Composition>; inv: LoadedInventory; pb: LoadedPlaybook; pbText: string; timeouts: RunMeta['timeouts'] } {
  if (!o.inventory?.length) throw new UsageError('run: -i/--inventory <file> is required');
  const overrides = parseSetArguments(o.set);
  const pb = loadPlaybook(playbookFile, overrides);
  const inv = loadInventory(o.inventory);
  const targets = checkPlaybookAgainst(pb, inv);
  const comps = composeTargets([...targets.keys()], inv);
  const plan = planRun(pb.playbook, comps, newRunId(), overrideTexts(overrides));
  return { plan, comps, inv, pb, pbText: pb.text, timeouts: pb.playbook.timeouts };
}

/** What a new run records about itself (run.sqlite's meta; a PostgreSQL run's too: `submit`). */
export function newRunMeta(a: { plan: RunPlan; comps: Map<string, Composition>; inv: LoadedInventory; pb: LoadedPlaybook; playbookFile: string; timeouts: RunMeta['timeouts']; confirmedDestroy: string[] }): RunMeta {
  const { plan, comps, inv, pb, playbookFile, timeouts, confirmedDestroy } = a;
  const environment = runEnvironment(pb.playbook, inv.inventory, [...comps.keys()]);
  return {
    runId: plan.runId,
    playbook: plan.playbook,
    playbookFile: path.resolve(playbookFile),
    inventoryFile: path.resolve(inv.file),
    ...((inv.files?.length ?? 1) > 1 ? { inventoryFiles: inv.files!.map((f) => path.resolve(f)) } : {}),
    target: plan.target,
    ...(plan.targets ? { targets: plan.targets.map((t) => t.name) } : {}),
    startedAt: new Date().toISOString(),
    fingerprint: { storsweep: VERSION, node: process.version, provider: plan.provider, target: plan.target },
    // what the playbook states about the setup, shown in reports beside the fingerprint
    ...(environment ? { environment } : {}),
    insecureEndpoints: [...new Set([...comps.values()].flatMap((c) => c.insecureEndpoints))],
    ...(timeouts ? { timeouts } : {}),
    config: { playbookSha256: sha256(playbookFile), facts: measurementFacts([...comps.keys()], inv, plan) },
    // what the user confirmed (exactly what the plan destroys): resume relies on it
    confirmedDestroy,
    // what the report says a repetition is a sample of (and which permutations reached repeat.until)
    ...(plan.replication ? { replication: replicationMeta(plan.replication) } : {}),
  };
}

function replicationMeta(r: Replication): NonNullable<RunMeta['replication']> {
  return { unit: r.unit, order: r.order, seed: r.seed, min: r.min, max: r.max, until: r.until };
}

/**
 * `run --resume RUNDIR` of a run written to a PostgreSQL store (RUNDIR's store.json names it): the
 * same checks as a run.sqlite's resume, read from the store, then the same executor (done
 * permutations skipped, a half-done one cleaned up from the ledger and redone). The run's lock in
 * the store (one writer across machines) and the run directory's own are held to the end. Null:
 * a dry run, printed.
 */
async function prepareStoreResume(runDir: string, pointer: StorePointer, playbookFile: string | undefined, o: RunCommandOptions, held: { lock?: RunLock }): Promise<Prepared | null> {
  // the password only from the store given now (--store, -i): store.json never picks it (cli/store.ts)
  const backend = await connectPointerStore(runDir, pointer, o);
  let storeLock: { release(): void } | null = null;
  try {
    if (!o.dryRun) {
      held.lock = lockRunDir(runDir, 'run --resume');
      const p = held.lock.previous;
      if (p) terminal.stderr(`note: ${runDir} was last held by pid ${p.pid} on host ${JSON.stringify(p.host)} (storsweep ${p.command}, since ${p.since}), which ended without releasing it; taking over\n`);
      storeLock = await backend.lockRun(pointer.runId, 'run --resume');
    }
    const store = await backend.openRun(pointer.runId, { runDir });
    const meta = await store.meta();
    const plan = await store.plan();
    const overrides = checkResumeOverrides(plan, o.set);
    checkResumePlaybook(playbookFile, meta, runDir, overrides);
    checkStoredPlan(plan, store.where);
    const inv = loadInventory(o.inventory ?? meta.inventoryFiles ?? meta.inventoryFile);
    const names = meta.targets ?? [meta.target];
    const comps = composeTargets(names, inv, runDir);
    if (plan.targets && plan.serialised === undefined) plan.serialised = serialisedResources(names.map((name) => ({ name, resources: comps.get(name)?.sharedResources })));
    checkResumeInventory(meta, names, plan, measurementFacts(names, inv, plan), inventoryName(inv));
    const permutations = await store.permutations();
    // what is left must be the plan the run was confirmed for (a dry run too: it would print an edited plan)
    const isDone = doneIn(permutations);
    checkRunConfirmed(plan, await readConfirmed(store), (id) => !isDone(id));
    if (o.dryRun) {
      printDryRun(resumeLeft(plan, permutations), o, resumeCleanupLines(plan, permutations, await store.ledger({ live: true })));
      await backend.close();
      return null;
    }
    const reconfirmed = checkResumeConfirmation(plan, isDone, meta.confirmedDestroy, o.confirmDestroy, await foreignTestFiles(comps));
    await store.appendJournal(null, 'run', 'resume', { pid: process.pid, ...(reconfirmed.length ? { confirmedDestroy: reconfirmed } : {}) });
    const lock = storeLock;
    return { plan, store, close: async () => (lock?.release(), await backend.close()), comps, resumed: true, confirmed: reconfirmed };
  } catch (err) {
    storeLock?.release();
    await backend.close();
    throw err;
  }
}

export async function runCommand(playbookFile: string | undefined, o: RunCommandOptions): Promise<number> {
  // The run directory's lock is held from before the first write until after the report.
  const held: { lock?: RunLock } = {};
  try {
    return await runLocked(playbookFile, o, held);
  } finally {
    held.lock?.release();
  }
}

async function runLocked(playbookFile: string | undefined, o: RunCommandOptions, held: { lock?: RunLock }): Promise<number> {
  let prep: Prepared;
  if (o.resume) {
    const runDir = path.resolve(o.resume);
    // a resumed run continues in its own directory: an --out would be silently ignored
    if (o.outGiven) throw new UsageError(`run --resume: --out is not used by a resume (the run continues in its own directory ${shown(runDir)}); leave --out out`);
    const pointer = fs.existsSync(path.join(runDir, DB_FILE)) ? null : readStorePointer(runDir);
    if (pointer) {
      const fromStore = await prepareStoreResume(runDir, pointer, playbookFile, o, held);
      if (!fromStore) return EXIT.ok;
      return execute(fromStore, o);
    }
    // --dry-run reads the run as it is: opened read-only, no lock taken, nothing journaled
    const store = o.dryRun ? ResultStore.openReadOnly(runDir) : ResultStore.open(runDir);
    try {
      if (!o.dryRun) held.lock = takeRunLock(store, 'run --resume');
      const meta = store.meta();
      const overrides = checkResumeOverrides(store.plan(), o.set);
      checkResumePlaybook(playbookFile, meta, runDir, overrides);
      checkStoredPlan(store.plan(), runDir);
      const inv = loadInventory(o.inventory ?? meta.inventoryFiles ?? meta.inventoryFile);
      const names = meta.targets ?? [meta.target];
      const comps = composeTargets(names, inv, runDir);
      const plan = store.plan();
      // a plan stored before targets that share something were serialised: the same rule, from the inventory
      if (plan.targets && plan.serialised === undefined) plan.serialised = serialisedResources(names.map((name) => ({ name, resources: comps.get(name)?.sharedResources })));
      checkResumeInventory(meta, names, plan, measurementFacts(names, inv, plan), inventoryName(inv));
      // what is left must be the plan the run was confirmed for (a dry run too: it would print an edited plan)
      const isDone = doneIn(store.permutations());
      checkRunConfirmed(plan, await readConfirmed(new SqliteRunStore(store)), (id) => !isDone(id));
      if (o.dryRun) {
        // a dry run confirms nothing: it says what --confirm-destroy must name
        printDryRun(resumeLeft(plan, store.permutations()), o, resumeCleanupLines(plan, store.permutations(), store.ledger({ live: true })));
        store.close();
        return EXIT.ok;
      }
      // last: once the configuration is known to be the run's own, what is left to destroy is confirmed again
      // a test file storsweep did not create is looked for on the guests now, before anything is written
      const reconfirmed = checkResumeConfirmation(plan, isDone, meta.confirmedDestroy, o.confirmDestroy, await foreignTestFiles(comps));
      prep = { plan, store: new SqliteRunStore(store), close: async () => store.close(), comps, resumed: true, confirmed: reconfirmed };
      store.appendJournal(null, 'run', 'resume', { pid: process.pid, ...(reconfirmed.length ? { confirmedDestroy: reconfirmed } : {}) });
    } catch (err) {
      store.close();
      throw err;
    }
  } else {
    if (!playbookFile) throw new UsageError('run: a playbook is required (or --resume <runDir>)');
    const { plan, comps, inv, pb, pbText, timeouts } = prepareNew(playbookFile, o);
    if (o.dryRun) {
      printDryRun(plan, o);
      return EXIT.ok;
    }
    // the test files looked at on their guests (read-only) first: one storsweep did not create must be confirmed too
    const confirmedDestroy = checkConfirmDestroy(plan, o.confirmDestroy, await foreignTestFiles(comps));
    // a host whose release the inventory does not state is asked (read-only) before anything changes
    await checkAgainstHostVersions(pb, inv, comps);
    // the last preflight's age and ✗, or (--preflight) the checks now, stopping on a ✗
    await preflightBeforeRun(plan, comps, { out: o.out, inventory: inv.file, preflight: o.preflight, say: (l) => terminal.stderr(`${visibleText(l)}\n`) });
    // every LUN and datastore the plan fills has room for its largest permutation: read before anything is formatted
    await refuseWithoutRoom(plan, comps);
    await checkPlanOnline(plan, comps); // storage policies exist and fit (app/online-checks.ts)
    const runDir = runDirFor(o.out, plan);
    const meta = newRunMeta({ plan, comps, inv, pb, playbookFile, timeouts, confirmedDestroy });
    // --store, else the inventory's store:, else the run directory's run.sqlite
    // (the inventory's was checked and its password resolved at load, refused at its line if wrong)
    const resolved = selectStore(o, inv);
    // connected (and migrated) before anything is created: a store that cannot be used stops the run first
    const backend = resolved ? await connectStore(resolved) : null;
    try {
      ensureOutputDirectory(o.out, '--out');
      fs.mkdirSync(runDir);
      held.lock = lockRunDir(runDir, 'run');
      if (backend && resolved) {
        const storeLock = await backend.lockRun(plan.runId, 'run');
        const store = await backend.createRun(meta, plan, { runDir });
        writeStorePointer(runDir, { ...storePointerOf(resolved), runId: plan.runId });
        prep = { plan, store, close: async () => (storeLock.release(), await backend.close()), comps, resumed: false, confirmed: confirmedDestroy };
      } else {
        const store = ResultStore.create(runDir, meta, plan);
        held.lock.anchorTo(store.lockAnchor());
        prep = { plan, store: new SqliteRunStore(store), close: async () => store.close(), comps, resumed: false, confirmed: confirmedDestroy };
      }
    } catch (err) {
      await backend?.close();
      throw err;
    }
    writeFileAtomic(path.join(runDir, 'plan.json'), JSON.stringify(plan, null, 1));
    writeFileAtomic(path.join(runDir, 'playbook.yaml'), pbText);
  }
  return execute(prep, o);
}

async function execute(prep: Prepared, o: RunCommandOptions): Promise<number> {
  // closed once: after the last write (before the report reads the run), or on the way out
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= prep.close().catch(() => undefined));
  try {
    return await executePrepared({ ...prep, close }, o);
  } finally {
    await close();
  }
}

async function executePrepared({ plan, store, comps, close, confirmed }: Prepared, o: RunCommandOptions): Promise<number> {
  if (store.runDir === null) throw new UsageError(`${store.where}: a run needs a local directory`);
  const runDir = store.runDir;
  // targets that share a VM, a guest, a test file, a LUN…: said before they start taking turns
  if (plan.serialised?.length) terminal.stderr(scheduleLines(plan).join('\n') + '\n');
  const timeouts = (await store.meta()).timeouts ?? {};
  const stepSec = o.stepTimeout ?? timeouts.stepSec;
  const log = createRunLog(path.join(runDir, 'log.jsonl'));
  // cleanup removes with the run's own retries and deadline (run-dir-commands.ts)
  const teardownPolicy = { ...(o.retries !== undefined ? { retries: o.retries } : {}), ...(stepSec !== undefined ? { stepSec } : {}) };
  await store.setMeta('meta', { ...(await store.meta()), teardown: teardownPolicy });
  const live = Boolean(progressStream().isTTY) && !process.env.CI && process.env.TERM !== 'dumb';
  const view = createProgressView(progressStream(), { live });
  const ac = new AbortController();
  let sigints = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    sigints++;
    if (sigints === 1) {
      terminal.stderr(`\n${sig}: stopping after teardown of the current permutation (again to exit at once; \`storsweep cleanup ${runDir}\` removes leftovers)\n`);
      void store.appendJournal(null, 'run', 'signal', { signal: sig }).catch(() => undefined);
      ac.abort(new Error(`interrupted by ${sig}`));
    } else {
      // Everything measured is already committed; the ledger shows what is still live.
      // (SQLite writes it at once; a remote store may not get it before the exit)
      void store.appendJournal(null, 'run', 'signal-exit', { signal: sig }).catch(() => undefined);
      process.exit(EXIT.interrupted);
    }
  };
  // A closed terminal (SIGHUP) stops the run like SIGTERM: abort, then teardown.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  // Nobody reading our output any more (`| head`, a closed terminal) never ends the run mid-way.
  keepGoingWhenOutputCloses((stream, code) => log.event({ type: 'message', level: 'warn', text: `${stream} was closed (${code}): printing stops, the run goes on; this log has the rest` }));
  const onEvent = (e: ProgressEvent) => {
    view.onEvent(e);
    log.event(e);
  };
  let summary: RunSummary;
  const providers: Array<Provider | null> = [];
  try {
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
    const all = Object.entries(endpoints);
    await recordFingerprint(store, all.length === 1 ? [['', all[0]![1]]] : all);
    const first = all[0]![1];
    summary = await executeRun({
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
      workloadSlackSec: timeouts.workloadSlackSec,
      retry: o.retries !== undefined ? { retries: o.retries } : undefined,
      // named in this command (checked against the plan): teardown may act on what the host shows no mark on
      confirmedHere: true,
    });
  } finally {
    // Targets on one vCenter share its session: it logs out when the last of them closes.
    for (const p of providers) await p?.close().catch(() => undefined);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    view.close();
  }
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
  if (summary.fatal) {
    terminal.stderr(`error: the run directory ${runDir} cannot be written: ${summary.fatal}\n${records.length} record(s) committed before are kept; free space, then \`storsweep run --resume ${runDir}\`\n`);
    if (o.json) terminal.stdout(jsonText({ runDir, ...summary }) + '\n' + jsonText({ runDir }) + '\n');
    return EXIT.failure;
  }
  // a run where every permutation failed still gets its report: the failures are what it has to say
  if ((records.length || summary.failed) && o.report !== false) {
    // a run in a PostgreSQL store is read from there (its run directory's store.json)
    // with the store the run was given (store.json never picks the password: cli/store.ts)
    const quiet = { loadSource: storeAwareLoader(loadSource, { ...(o.store !== undefined ? { store: o.store } : {}), ...(o.inventory !== undefined ? { inventory: o.inventory } : {}) }), stdout: () => undefined, stderr: () => undefined };
    // The measurements are committed: a report that cannot be written (a report.md the user
    // replaced, a full disk) is a warning naming the file, and the other one is still written.
    const written: string[] = [];
    for (const [format, name] of [['md', 'report.md'], ['html', 'report.html']] as const) {
      const file = path.join(runDir, name);
      try {
        await runReport([runDir], { format, output: file }, quiet);
        written.push(name);
      } catch (err) {
        const why =
          err instanceof OutputRefused && err.details.reason === 'not-a-report'
            ? `it exists and is not a report storsweep wrote, so it was left as it is; \`storsweep report ${runDir} -f ${format} -o ${file} --force\` replaces it`
            : `${errorMessage(err)}; \`storsweep report ${runDir} -f ${format} -o ${file}\` writes it later`;
        terminal.stderr(`warning: ${file} was not written: ${why}\n`);
      }
    }
    if (written.length) terminal.stderr(`report: ${written.map((n) => path.join(runDir, n)).join(' and ')}\n`);
  }
  if (o.json) terminal.stdout(jsonText({ runDir, ...summary }) + '\n' + jsonText({ runDir }) + '\n');
  else terminal.stdout(`${runDir}\n`);
  if (summary.interrupted) return EXIT.interrupted;
  return summary.failed ? EXIT.failure : EXIT.ok;
}

/**
 * Adds what can only be learned by connecting (product versions, guest OS, tool version) to the
 * run's environment fingerprint, so comparisons can warn when two runs differ in more than their
 * axes. Best effort: a fact that cannot be read is left out, the run goes on.
 */
async function recordFingerprint(store: RunStore, targets: Array<[string, { provider: Provider | null; comp: Composition }]>): Promise<void> {
  const facts = await targetFacts(targets);
  const meta = await store.meta();
  await store.setMeta('meta', { ...meta, fingerprint: { ...meta.fingerprint, ...facts } });
}

/**
 * What connecting to `targets` tells of their environment (product versions, guest OS, tool
 * version), redacted: one target named '' gives plain keys, else each target's facts are under
 * `<target>/`. `run` and `worker` record the same.
 */
export async function targetFacts(targets: Array<[string, { provider: Provider | null; comp: Pick<Composition, 'workload'> }]>): Promise<Record<string, string>> {
  const facts: Record<string, string> = {};
  // One target: plain keys; several: each target's facts under `<target>/`.
  for (const [name, { provider, comp }] of targets) {
    const own: Record<string, string> = { 'workload.tool': comp.workload.tool };
    Object.assign(own, await provider?.describe?.().catch(() => ({})));
    if (comp.workload.describe) {
      const runner = await comp.workload.connect().catch(() => null);
      if (runner) {
        Object.assign(own, await comp.workload.describe(runner).catch(() => ({})));
        await runner.close().catch(() => undefined);
      }
    }
    for (const [k, v] of Object.entries(own)) facts[name ? `${name}/${k}` : k] = v;
  }
  return redactDeep(facts);
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run a sweep: provision, measure, tear down, record (each run gets its own directory)')
    .argument('[playbook]', 'playbook YAML (omit with --resume)')
    .option('-i, --inventory <file>', `inventory YAML; ${INVENTORY_REPEAT_HELP} (a resume uses the run's own files)`, collect)
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
      process.exitCode = await runCommand(playbook, { ...o, outGiven: cmd.getOptionValueSource('out') === 'cli' });
    });
}

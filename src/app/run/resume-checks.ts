// The checks of `run --resume`: the stored plan, playbook, inventory and `--set` values must be the
// run's own (a resume never mixes two configurations), and what is left of the run.
import fs from 'node:fs';
import path from 'node:path';
import { loadPlaybook } from '../../config/index.ts';
import { overrideTexts, parseSetArguments, sameOverrides, type PlaybookOverride } from '../../config/overrides.ts';
import type { RunPlan } from '../../contract/plan.ts';
import { ResumeMismatch, UsageError } from '../../errors.ts';
import { stepArgumentsProblem } from '../../providers/index.ts';
import type { LedgerRow, PermutationRow } from '../../results/port.ts';
import type { RunMeta } from '../../results/store.ts';
import { canonicalJson } from '../../text/canonical-json.ts';
import { VERSION } from '../../version.ts';
import { usedFacts } from '../compose.ts';
import { notify, type Notify } from '../notify.ts';
import { sha256 } from './new-run.ts';

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

/** Whether a permutation is done, by id, as `permutations` records it. */
export function doneIn(permutations: readonly PermutationRow[]): (permutationId: string) => boolean {
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
export function resumeCleanupLines(plan: RunPlan, permutations: readonly PermutationRow[], live: readonly LedgerRow[]): string[] {
  const left = new Set(resumeLeft(plan, permutations).permutations.map((p) => p.permutationId));
  return [...live]
    .filter((o) => left.has(o.permutationId))
    .sort((a, b) => b.seq - a.seq)
    .map((o) => JSON.stringify({ permutationId: o.permutationId, step: `cleanup ${o.kind}`, provider: o.provider, operation: 'destroy', arguments: { kind: o.kind, name: o.name }, destructive: false }));
}

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
export function checkResumePlaybook(playbookFile: string | undefined, meta: RunMeta, runDir: string, overrides: readonly PlaybookOverride[]): void {
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
export function checkResumeInventory(meta: RunMeta, names: readonly string[], plan: RunPlan, now: Record<string, string>, inventoryFile: string, note: Notify = notify): void {
  const started = (meta.inventoryFiles ?? [meta.inventoryFile]).join(' + ');
  const recorded = meta.config?.facts;
  const was = recorded ? usedFacts(recorded, names, plan) : undefined;
  if (!was) {
    note(`note: this run predates configuration checks: cannot verify that ${inventoryFile} still describes the targets it measured\n`);
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

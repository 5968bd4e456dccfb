// What a run destroys and what the user confirmed (`--confirm-destroy`): checked before a run, a
// resume and a submit send anything. A typo never confirms something else.
import type { RunPlan } from '../../contract/plan.ts';
import type { Composition, ForeignFile } from '../../contract/provider.ts';
import { UnsafeOperation } from '../../errors.ts';
import { foreignMessage } from '../../providers/test-file.ts';
import { providerModules } from '../../providers/index.ts';

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
  for (const m of providerModules()) {
    const words = m.describeDestroyed(n);
    if (words !== null) return words;
  }
  return n;
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

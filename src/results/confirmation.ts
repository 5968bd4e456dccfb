// What a run was confirmed for, kept with the run and checked before anything of a permutation is
// sent — by `run`, `run --resume`, a worker and a worker taking a dead one's permutation over,
// whichever store holds the plan (run.sqlite or PostgreSQL): run/executor.ts calls
// checkPermutationConfirmed for each permutation, the commands call checkRunConfirmed early.
//
// A store's rows can be edited by anyone who can write to it (`UPDATE storsweep.permutations SET
// plan = replace(plan, 'a1', 'b2')`). The record written with the run (meta key CONFIRMATION_KEY)
// holds what `--confirm-destroy` named and a SHA-256 of each permutation's plan (canonical JSON),
// sealed by a SHA-256 of the whole record: a plan row edited afterwards no longer matches its
// digest, and a step that destroys a name the run was not confirmed for is refused even when the
// digests were made to match. The digests hold no secret: they catch an edit, not someone who
// rewrites the plan, the digests and the seal together (docs/decisions.md, "Plan digests").
import { createHash } from 'node:crypto';
import type { PermutationPlan, RunPlan } from '../contract/plan.ts';
import { UnsafeOperation } from '../errors.ts';
import { canonicalJson } from '../text/canonical-json.ts';
import { visible } from '../text/visible.ts';

/** The run meta key of the record (RunStore.getMeta). */
export const CONFIRMATION_KEY = 'confirmation';

/** How the digests are made; a record with another scheme is not trusted. */
export const CONFIRMATION_SCHEME = 'sha256 over canonical JSON, v1';

export interface RunConfirmation {
  scheme: string;
  runId: string;
  /** exactly what `--confirm-destroy` named when the run started (sorted) */
  destroys: string[];
  /** the plan without its permutations (profiles, targets, axes…) */
  header: string;
  /** each permutation's plan, by permutation id */
  permutations: Record<string, string>;
  /** the digest of everything above: the record as one */
  seal: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The digest of a permutation's plan (or any plan value), as the record keeps it. */
export const planDigest = (v: unknown): string => sha256(canonicalJson(v));

/** The plan's header: everything but its permutations. */
function headerOf(plan: RunPlan): Omit<RunPlan, 'permutations'> {
  const { permutations: _, ...header } = plan;
  return header;
}

/** The header's digest, once per plan object (`run` checks every permutation against one plan). */
const headerDigests = new WeakMap<RunPlan, string>();
function headerDigest(plan: RunPlan): string {
  let d = headerDigests.get(plan);
  if (d === undefined) headerDigests.set(plan, (d = planDigest(headerOf(plan))));
  return d;
}

const sealOf = (c: Omit<RunConfirmation, 'seal'>): string => planDigest({ scheme: c.scheme, runId: c.runId, destroys: c.destroys, header: c.header, permutations: c.permutations });

/**
 * The record a new run keeps: `destroys` as confirmed (meta's `confirmedDestroy`: `run` and `submit`
 * always state it, checked equal to what the plan destroys), every permutation's digest. A caller
 * that states nothing (a test, a benchmark building a store by hand) confirms the plan as given.
 */
export function confirmationOf(runId: string, destroys: readonly string[] | undefined, plan: RunPlan): RunConfirmation {
  const stated = destroys ?? plan.permutations.flatMap((p) => p.steps.flatMap((s) => (s.destructive ? (s.destroys ?? []) : [])));
  const body = {
    scheme: CONFIRMATION_SCHEME,
    runId,
    destroys: [...new Set(stated)].sort(),
    header: headerDigest(plan),
    permutations: Object.fromEntries(plan.permutations.map((p) => [p.permutationId, planDigest(p)])),
  };
  return { ...body, seal: sealOf(body) };
}

/** What the run recorded: its confirmation record (null: a run from before it existed) and meta's `confirmedDestroy`. */
export interface Confirmed {
  record: RunConfirmation | null;
  confirmedDestroy?: readonly string[] | undefined;
}

const names = (list: readonly string[]) => list.map(visible).join(', ');

/** recordProblem's answer, once per record read (its seal covers every permutation's digest). */
const judged = new WeakMap<Confirmed, string | null>();

/**
 * Why the record cannot be trusted at all (another scheme or run, a broken seal, a destroy set
 * other than meta's), or null. A run without a record is judged by meta's `confirmedDestroy` alone.
 */
function recordProblem(runId: string, c: Confirmed): string | null {
  const r = c.record;
  if (!r) return null;
  if (r.runId !== runId) return `its confirmation record belongs to run ${JSON.stringify(visible(String(r.runId)))}`;
  let problem = judged.get(c);
  if (problem === undefined) judged.set(c, (problem = judge(r, c.confirmedDestroy)));
  return problem;
}

function judge(r: RunConfirmation, confirmedDestroy: readonly string[] | undefined): string | null {
  if (r.scheme !== CONFIRMATION_SCHEME) return `its confirmation record has an unknown scheme ${JSON.stringify(visible(String(r.scheme)))}`;
  if (!Array.isArray(r.destroys) || typeof r.permutations !== 'object' || r.permutations === null || sealOf(r) !== r.seal) return 'its confirmation record was changed after the run started (its seal does not match)';
  // meta states it for every run `run` or `submit` made (a store built by hand may not)
  const meta = confirmedDestroy === undefined ? r.destroys : [...new Set(confirmedDestroy)].sort();
  if (canonicalJson(meta) !== canonicalJson(r.destroys)) return `its confirmation record (${names(r.destroys) || 'nothing'}) and its metadata (${names(meta) || 'nothing'}) name different devices`;
  return null;
}

/** Every name the permutation's destructive steps destroy (a destructive step naming nothing: '?'). */
function destroyedBy(p: PermutationPlan): string[] {
  return [...new Set(p.steps.filter((s) => s.destructive).flatMap((s) => (s.destroys?.length ? s.destroys : ['?'])))].sort();
}

/**
 * Refuses (UnsafeOperation) a permutation whose plan is not what the run was confirmed for: a
 * destroyed name outside the confirmed set, or (with a record) a plan whose digest differs from the
 * one taken when the run started; the refusal names the run, the permutation and the devices.
 * `plan` is the run's plan as it will be used (its header is checked too).
 */
export function checkPermutationConfirmed(plan: RunPlan, perm: PermutationPlan, c: Confirmed): void {
  const row = `run ${visible(plan.runId)}, permutation ${visible(perm.permutationId)}`;
  const destroys = destroyedBy(perm);
  const devices = destroys.length ? `; its steps destroy ${names(destroys)}` : '';
  const refuse = (why: string) => {
    throw new UnsafeOperation(`${row}: ${why}; nothing of it was sent (check who changed the store; the run can be started again)`, { operation: 'run', target: `${plan.runId}/${perm.permutationId}` });
  };
  const bad = recordProblem(plan.runId, c);
  if (bad) refuse(`${bad}${devices}`);
  const confirmed = c.record?.destroys ?? c.confirmedDestroy ?? [];
  const unconfirmed = destroys.filter((d) => !confirmed.includes(d));
  if (unconfirmed.length) refuse(`its stored plan destroys data on ${names(unconfirmed)}, which this run was not confirmed for (it was confirmed for ${names(confirmed) || 'nothing'})`);
  if (!c.record) return;
  const want = c.record.permutations[perm.permutationId];
  if (want === undefined) refuse(`it is not in the plan the run was confirmed with${devices}`);
  const got = planDigest(perm);
  if (got !== want) refuse(`its stored plan differs from the plan the run was confirmed with (SHA-256 ${got.slice(0, 12)}… ≠ ${want!.slice(0, 12)}…)${devices}`);
  const header = headerDigest(plan);
  if (header !== c.record.header) refuse(`the run's stored plan (its profiles, targets or axes) differs from the plan the run was confirmed with (SHA-256 ${header.slice(0, 12)}… ≠ ${c.record.header.slice(0, 12)}…)${devices}`);
}

/** The same check for every permutation `left` selects (a resume: those not done), the first refusal thrown. */
export function checkRunConfirmed(plan: RunPlan, c: Confirmed, left: (permutationId: string) => boolean = () => true): void {
  for (const p of plan.permutations) if (left(p.permutationId)) checkPermutationConfirmed(plan, p, c);
}

/** What the run recorded, read from its store (the record and meta's `confirmedDestroy`). */
export async function readConfirmed(store: { meta(): Promise<{ confirmedDestroy?: string[] }>; getMeta<T>(key: string): Promise<T | null> }): Promise<Confirmed> {
  const [meta, record] = await Promise.all([store.meta(), store.getMeta<RunConfirmation>(CONFIRMATION_KEY)]);
  return { record, confirmedDestroy: meta.confirmedDestroy };
}

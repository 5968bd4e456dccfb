// The canary (issue 29): the smallest permutations of a plan provisioned for real under a throw-away
// run — a 1 GiB disk of each disk format and controller the plan uses, on each datastore kind — found
// in the guest by the identity the run will use, measured a few seconds, and torn down. It is a run
// of its own (run.sqlite in `<out>/preflight-canary-<runId>`), so everything it creates goes through
// the executor's ledger, its confirmation record and the same destroy guard as a night's sweep.
import type { RunPlan } from '../contract/plan.ts';
import type { Composition, Provider } from '../contract/provider.ts';
import type { Axes } from '../contract/axis.ts';
import { errorMessage, type DiskIdentityMismatch } from '../errors.ts';
import type { JournalEntry, RunMeta } from '../results/port.ts';
import { ResultStore } from '../results/store.ts';
import { SqliteRunStore } from '../results/sqlite-store.ts';
import { executeRun, type TargetEndpoints } from '../run/executor.ts';

/** What picks the canary's permutations: one per datastore kind, disk format and controller (and target). */
const KIND_AXES = ['target', 'datastore.kind', 'disk.format', 'disk.controller'];

/** Pure: the first permutation of each kind (the plan's order), as the canary runs them. */
export function canaryPermutations(plan: RunPlan): RunPlan {
  const seen = new Set<string>();
  const keep = plan.permutations.filter((p) => {
    const k = KIND_AXES.map((a) => String(p.axes[a] ?? '')).join('\0');
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return { ...plan, permutations: keep.map((p, index) => ({ ...p, index, repetitions: 1 })) };
}

export interface CanaryPermutation {
  permutationId: string;
  axes: Axes;
  status: string;
  /** the identity the guest found the disk by (wwn-0x…, a Windows serial), and the device */
  identity?: string;
  /** the disk was not found by the identity expected: the object, the identity expected, those a disk of its size shows */
  identityMismatch?: DiskIdentityMismatch;
  device?: string;
  provisionSec?: number;
  teardownSec?: number;
  error?: string;
}

export interface CanaryResult {
  runDir: string;
  ok: boolean;
  permutations: CanaryPermutation[];
  /** the plan's estimate of the night, and the same with the provisioning and teardown times measured here */
  estimate?: { plannedSec: number; revisedSec: number };
  /** why the canary did not run */
  skipped?: string;
}

const sec = (a?: string, b?: string) => (a && b ? Math.round((Date.parse(b) - Date.parse(a)) / 100) / 10 : undefined);

/** A permutation's times and identity from the run's journal: provisioning from its start to its workload, teardown from its workload's end to the last object removed. */
export function readCanaryJournal(id: string, journal: readonly JournalEntry[]): Pick<CanaryPermutation, 'identity' | 'identityMismatch' | 'device' | 'provisionSec' | 'teardownSec'> {
  const mine = journal.filter((j) => j.permutationId === id);
  const found = mine.find((j) => j.step === 'measure' && j.event === 'found')?.detail as { identity?: string; device?: string } | undefined;
  const mismatch = mine.find((j) => j.step === 'measure' && j.event === 'not-found')?.detail as DiskIdentityMismatch | undefined;
  const measuring = (j: JournalEntry) => j.step === 'prefill' || j.step.startsWith('repetition') || j.step.startsWith('workload');
  const start = mine.find((j) => j.step === 'permutation' && j.event === 'start');
  const firstWork = mine.findIndex(measuring);
  const lastWork = mine.length - 1 - [...mine].reverse().findIndex(measuring);
  const provisioned = firstWork > 0 ? mine[firstWork - 1] : undefined;
  const teardown = firstWork >= 0 ? mine.slice(lastWork + 1).filter((j) => j.step.includes(':')) : [];
  const provisionSec = sec(start?.at, provisioned?.at);
  const teardownSec = teardown.length ? sec(mine[lastWork]?.at, teardown[teardown.length - 1]?.at) : undefined;
  return {
    ...(found?.identity ? { identity: found.identity } : {}),
    ...(found?.device ? { device: found.device } : {}),
    ...(mismatch ? { identityMismatch: mismatch } : {}),
    ...(provisionSec !== undefined ? { provisionSec } : {}),
    ...(teardownSec !== undefined ? { teardownSec } : {}),
  };
}

export interface CanaryInput {
  /** the canary's plan (1 GiB disks, short passes) with its targets composed, and the run meta to store */
  plan: RunPlan;
  comps: ReadonlyMap<string, Composition>;
  meta: RunMeta;
  runDir: string;
  /** the plan's own estimate of the whole night (seconds) and its permutation count */
  night: { estimateSec: number; permutations: number };
}

/** Runs the canary plan through the executor; its result, never a throw for a failed permutation. */
export async function runCanary(c: CanaryInput): Promise<CanaryResult> {
  const store = ResultStore.create(c.runDir, c.meta, c.plan);
  const providers: Provider[] = [];
  try {
    const targets: Record<string, TargetEndpoints> = {};
    for (const [name, comp] of c.comps) {
      const p = await comp.connectProvider();
      if (p) providers.push(p);
      targets[name] = { provider: p, workload: comp.workload };
    }
    const first = Object.values(targets)[0]!;
    await executeRun({ store: new SqliteRunStore(store), plan: c.plan, provider: first.provider, workload: first.workload, ...(c.plan.targets ? { targets } : {}), signal: new AbortController().signal, confirmedDestroy: c.meta.confirmedDestroy ?? [], confirmedHere: true });
    const journal = store.journal();
    const rows = store.permutations();
    const perms: CanaryPermutation[] = c.plan.permutations.map((p) => {
      const row = rows.find((r) => r.permutationId === p.permutationId);
      return { permutationId: p.permutationId, axes: p.axes, status: row?.status ?? 'unknown', ...(row?.reason ? { error: row.reason } : {}), ...readCanaryJournal(p.permutationId, journal) };
    });
    // the planner's error on each canary permutation (measured wall time − its estimate), applied to every permutation of the night
    const walls = c.plan.permutations.map((p) => {
      const mine = journal.filter((j) => j.permutationId === p.permutationId);
      return (sec(mine[0]?.at, mine[mine.length - 1]?.at) ?? p.estimateSec) - p.estimateSec;
    });
    const errPerPerm = walls.reduce((a, b) => a + b, 0) / Math.max(1, walls.length);
    return {
      runDir: c.runDir,
      ok: perms.every((p) => p.status === 'done' && p.identity !== undefined),
      permutations: perms,
      estimate: { plannedSec: Math.round(c.night.estimateSec), revisedSec: Math.round(Math.max(0, c.night.estimateSec + c.night.permutations * errPerPerm)) },
    };
  } catch (err) {
    return { runDir: c.runDir, ok: false, permutations: [], skipped: errorMessage(err) };
  } finally {
    for (const p of providers) await p.close().catch(() => undefined);
    store.close();
  }
}

// The capacity check (issue 29): every LUN the plan formats and every datastore it fills must hold
// the largest permutation's disks (a thick disk's whole size, a thin one what the workload writes),
// read from the host before anything is formatted. `preflight` prints it as a check; `run` refuses
// a plan that does not fit before its first step (no LUN is formatted four times to learn it).
import type { RunPlan } from '../contract/plan.ts';
import type { Composition } from '../contract/provider.ts';
import { PLACE_NOUN, placeText, type PreflightCheck, type SpacePlace } from '../contract/preflight.ts';
import { UsageError, errorMessage } from '../errors.ts';

const GiB = 1024 ** 3;
const gib = (b: number) => `${(b / GiB).toFixed(1)} GiB`;

export interface PlaceDemand {
  target: string;
  place: SpacePlace;
  /** the most one permutation puts there (its disks on that place add up) */
  bytes: number;
  permutationId: string;
  what: string[];
}

const targetOf = (plan: RunPlan, axes: Record<string, unknown>): string => (plan.targets ? String(axes.target) : plan.target);

/** Pure: per target and place, the largest permutation's demand. */
export function placeDemands(plan: RunPlan, comps: ReadonlyMap<string, Pick<Composition, 'preflight'>>): PlaceDemand[] {
  const out = new Map<string, PlaceDemand>();
  for (const p of plan.permutations) {
    const target = targetOf(plan, p.axes);
    const pre = comps.get(target)?.preflight;
    if (!pre) continue;
    const written = plan.profiles[p.workload]?.fileSizeBytes ?? 0;
    const mine = new Map<string, { place: SpacePlace; bytes: number; what: string[] }>();
    for (const n of pre.spaceNeeds(p.steps, written)) {
      const k = placeText(n.place);
      const m = mine.get(k) ?? { place: n.place, bytes: 0, what: [] };
      m.bytes += n.bytes;
      m.what.push(n.what);
      mine.set(k, m);
    }
    for (const [k, m] of mine) {
      const key = `${target}\0${k}`;
      const was = out.get(key);
      if (!was || m.bytes > was.bytes) out.set(key, { target, place: m.place, bytes: m.bytes, permutationId: p.permutationId, what: m.what });
    }
  }
  return [...out.values()];
}

/** What to do when a place is too small: smaller (or sparse) disks, a smaller test file on a whole disk, or a larger place. */
function roomRemedy(place: SpacePlace, room: number): string {
  const at = Math.floor(Math.max(0, room) / GiB);
  if (place.kind === 'disk') return `use a test file of at most ${at} GiB (settings.fileSize), or a larger ${PLACE_NOUN.disk}`;
  return `use disks of at most ${at} GiB (or ${place.kind === 'volume' ? 'vhdx-dynamic' : 'thin'}), or a larger ${PLACE_NOUN[place.kind]}`;
}

export interface CapacityResult {
  target: string;
  check: PreflightCheck;
}

/** Reads each place's room from its host (read-only) and compares; one check per place. */
export async function checkCapacity(plan: RunPlan, comps: ReadonlyMap<string, Pick<Composition, 'preflight'>>, o: { shared?: boolean } = {}): Promise<CapacityResult[]> {
  const demands = placeDemands(plan, comps);
  const out: CapacityResult[] = [];
  for (const target of [...new Set(demands.map((d) => d.target))]) {
    const mine = demands.filter((d) => d.target === target);
    let have;
    try {
      have = await comps.get(target)!.preflight!.spaceOf(mine.map((d) => d.place), o);
    } catch (err) {
      for (const d of mine) out.push({ target, check: { check: `capacity ${placeText(d.place)}`, status: 'fail', detail: `cannot read its size: ${errorMessage(err)}`, remedy: 'make the host reachable, then check again' } });
      continue;
    }
    mine.forEach((d, i) => {
      const h = have[i];
      const check = `capacity ${placeText(d.place)}`;
      const need = `${d.what.join(' + ')} (${gib(d.bytes)}, permutation ${d.permutationId})`;
      if (!h || h.bytes === null) out.push({ target, check: { check, status: 'fail', detail: `needs ${need}; ${h?.detail ?? 'size unknown'}`, remedy: 'name a device or datastore the host has' } });
      else if (h.bytes < d.bytes) out.push({ target, check: { check, status: 'fail', detail: `needs ${need}, has room for ${gib(Math.max(0, h.bytes))}: ${h.detail}`, remedy: roomRemedy(d.place, h.bytes) } });
      else out.push({ target, check: { check, status: 'ok', detail: `needs ${need}; ${h.detail}` } });
    });
  }
  return out;
}

/**
 * `run`'s gate, before anything is formatted or created: a place too small for its largest
 * permutation refuses the run (UsageError, exit 2), naming each. A place whose size cannot be
 * read is left to the run (its steps fail as they would have).
 */
export async function refuseWithoutRoom(plan: RunPlan, comps: ReadonlyMap<string, Pick<Composition, 'preflight'>>): Promise<void> {
  // through the run's own sessions: the gate adds no login
  const results = await checkCapacity(plan, comps, { shared: true });
  const short = results.filter((r) => r.check.status === 'fail' && r.check.detail.includes('has room for'));
  if (!short.length) return;
  throw new UsageError(`refusing to run: ${short.map((r) => `target ${r.target}: ${r.check.check.replace(/^capacity /, '')} ${r.check.detail}; ${r.check.remedy ?? ''}`).join('\n')}\nnothing was formatted or created (storsweep preflight checks this and more)`);
}

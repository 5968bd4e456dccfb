// Which permutation each one is compared with along an axis: the one with the baseline value there
// and the same values of the other axes it must match on. Along `target`, a target may lack axes
// another takes (a bare disk over SSH has no datastore or disk format; playbook `lackingAxes:
// once`): the baseline target's permutation that lacks an axis lines up with every value of it, and
// the comparison says which axes it lacks. A candidate lacking an axis its baseline has would line
// up with several: it is listed as unpaired, saying why and how to compare it. Pure.
import type { AxisValue, Axes } from '../contract/axis.ts';

export const TARGET_AXIS = 'target';

export interface PairingInput {
  axes: Axes;
  permutationId: string;
}

export interface Unpaired {
  axis: string;
  value: AxisValue;
  baselineValue: AxisValue;
  permutationIds: string[];
  /** why they have no partner, in words (the axes one side lacks, or what nothing matches) */
  why: string;
}

export interface Pairing {
  /** per permutation, the index of its baseline permutation, or -1 */
  baseOf: Int32Array;
  unpaired: Unpaired[];
}

const sameValue = (a: AxisValue | undefined, b: AxisValue | string): boolean => a !== undefined && String(a) === String(b);
const keyOf = (axes: Axes, names: readonly string[]): string => JSON.stringify(names.map((k) => (k in axes ? String(axes[k]) : null)));

/** The permutations along `axis` against `baselineValue`, matched by `matchBy` (the other varying axes to agree on). */
export function pairAlong(perms: readonly PairingInput[], axis: string, baselineValue: AxisValue, matchBy: readonly string[]): Pairing {
  const mask = (axes: Axes) => matchBy.filter((k) => k in axes);
  // the baseline permutations, by which of the matched axes they have, then by their values of those
  const bases = new Map<string, { names: string[]; byKey: Map<string, number> }>();
  perms.forEach((p, i) => {
    if (!sameValue(p.axes[axis], baselineValue)) return;
    const names = axis === TARGET_AXIS ? mask(p.axes) : [...matchBy];
    const m = JSON.stringify(names);
    let g = bases.get(m);
    if (!g) bases.set(m, (g = { names, byKey: new Map() }));
    const k = keyOf(p.axes, names);
    g.byKey.set(k, g.byKey.has(k) ? -2 : i);
  });
  const baseOf = new Int32Array(perms.length).fill(-1);
  const missing = new Map<string, Unpaired>();
  perms.forEach((p, i) => {
    const value = p.axes[axis];
    if (value === undefined || sameValue(value, baselineValue)) return;
    const has = new Set(mask(p.axes));
    let found = -1;
    let why = '';
    for (const g of bases.values()) {
      // a baseline that has an axis this permutation lacks would match every value of it
      if (axis === TARGET_AXIS && !g.names.every((n) => has.has(n))) continue;
      const b = g.byKey.get(keyOf(p.axes, g.names));
      if (b === undefined) continue;
      if (b === -2 || found >= 0) {
        found = -2;
        break;
      }
      found = b;
    }
    if (found >= 0) {
      baseOf[i] = found;
      return;
    }
    if (found === -2) why = `several ${axis}=${String(baselineValue)} permutations have the same ${matchBy.join(', ') || 'axes'}`;
    else {
      const theirs = [...bases.values()].flatMap((g) => g.names.filter((n) => !has.has(n)));
      const lacks = [...new Set(theirs)];
      if (axis === TARGET_AXIS && lacks.length) {
        why = `${axis} ${String(value)} has no ${lacks.join(', ')}, which ${axis} ${String(baselineValue)} varies: it would line up with each of them; compare them the other way round (--baseline ${axis}=${String(value)})`;
      } else why = `no ${axis}=${String(baselineValue)} permutation has the same ${matchBy.join(', ') || 'axes'}`;
    }
    baseOf[i] = -1;
    let u = missing.get(String(value));
    if (!u) missing.set(String(value), (u = { axis, value, baselineValue, permutationIds: [], why }));
    u.permutationIds.push(p.permutationId);
  });
  return { baseOf, unpaired: [...missing.values()] };
}

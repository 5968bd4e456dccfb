// The one rule on RDM permutations that the vSphere and ESXi-shell planners share: an RDM disk is
// the LUN itself (rdmDevice); the datastore only holds its mapping file. So the datastore axes
// (kind, block size) change nothing an RDM permutation measures, while a VMFS kind formats
// vmfsDevice once more for each value. `validate` (src/plan/check.ts) refuses two RDM permutations
// that differ only in these axes.
import type { Axes } from '../contract/axis.ts';

export const RDM_FORMATS: readonly string[] = ['rdm-physical', 'rdm-virtual'];

export function datastoreAxisNotMeasured(axis: string): (p: Axes) => string | undefined {
  return (p) => {
    const format = p['disk.format'];
    if (typeof format !== 'string' || !RDM_FORMATS.includes(format)) return undefined;
    return `disk.format ${format} measures the LUN itself (the target's rdmDevice) and the datastore only holds its mapping file, so ${axis} changes nothing it measures (and each VMFS kind formats vmfsDevice again)`;
  };
}

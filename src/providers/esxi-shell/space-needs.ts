// Pure: where a permutation's disks land and what each takes. Apart from preflight.ts so a command
// that only reads a plan (validate) does not load the preflight's checks (decision 0086).
import type { PlannedStep } from '../../contract/provider.ts';
import type { SpaceNeed, SpacePlace } from '../../contract/preflight.ts';

const GiB = 1024 ** 3;

const volumeOf = (path: string): string | undefined => /^\/vmfs\/volumes\/([^/]+)\//.exec(path)?.[1];

/** Pure: a permutation's disks by where they land (a LUN its own `vmkfstools -C` formats, or an existing datastore). */
export function esxiSpaceNeeds(steps: readonly PlannedStep[], writtenBytes: number): SpaceNeed[] {
  const formatted = new Map<string, string>();
  for (const s of steps) {
    if (s.operation === 'vmkfstools -C') formatted.set(String(s.arguments.label), String(s.arguments.device));
  }
  const out: SpaceNeed[] = [];
  for (const s of steps) {
    if (s.operation !== 'vmkfstools -c') continue;
    const vol = volumeOf(String(s.arguments.path));
    if (vol === undefined) continue;
    const sizeBytes = Number(s.arguments.sizeGb) * GiB;
    const format = String(s.arguments.format);
    const device = formatted.get(vol);
    const place: SpacePlace = device ? { kind: 'lun', device } : { kind: 'datastore', name: vol };
    // a thin disk takes what is written to it; a thick one its whole size at creation
    const bytes = format === 'thin' ? Math.min(sizeBytes, writtenBytes) : sizeBytes;
    out.push({ place, bytes, what: `${String(s.arguments.sizeGb)} GiB ${format} disk` });
  }
  return out;
}

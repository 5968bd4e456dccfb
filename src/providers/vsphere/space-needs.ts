// Pure: where a permutation's disks land and what each takes. Apart from preflight.ts so a command
// that only reads a plan (validate) does not load the preflight's checks (decision 0086).
import type { PlannedStep } from '../../contract/provider.ts';
import type { SpaceNeed, SpacePlace } from '../../contract/preflight.ts';

/** Pure: a permutation's disks by where they land (the LUN its CreateVmfsDatastore formats, or an existing datastore). NFS is left to its server. */
export function vsphereSpaceNeeds(steps: readonly PlannedStep[], writtenBytes: number): SpaceNeed[] {
  const formatted = new Map<string, string>();
  const nas = new Set<string>();
  for (const s of steps) {
    if (s.operation === 'CreateVmfsDatastore') formatted.set(String(s.arguments.name), String(s.arguments.device));
    if (s.operation === 'CreateNasDatastore') nas.add(String(s.arguments.name));
  }
  const out: SpaceNeed[] = [];
  for (const s of steps) {
    const a = s.arguments;
    if (s.operation !== 'ReconfigVM_Task' || a.backing !== 'flat' || nas.has(String(a.datastore))) continue;
    const device = formatted.get(String(a.datastore));
    const place: SpacePlace = device ? { kind: 'lun', device } : { kind: 'datastore', name: String(a.datastore) };
    const size = Number(a.sizeBytes);
    out.push({ place, bytes: a.format === 'thin' ? Math.min(size, writtenBytes) : size, what: `${String(a.sizeGb)} GiB ${String(a.format)} disk` });
  }
  return out;
}

// `storsweep preflight` for the disk.policy axis: each storage policy the plan's disks name exists
// on vCenter, and an existing datastore a disk goes to satisfies it (PbmQueryMatchingHub). ✗ names
// the policy; read-only, like the run-start check (storage-policy.ts) it runs ahead of.
import type { PreflightCheck } from '../../contract/preflight.ts';
import type { PlannedStep } from '../../contract/provider.ts';
import { errorMessage } from '../../errors.ts';
import type { MoRef, VsphereClient } from './client.ts';
import { pbmOf, policyNamed, refuseIncompatible } from './storage-policy.ts';

export async function policyChecks(c: VsphereClient, steps: readonly PlannedStep[], datacenter: MoRef): Promise<PreflightCheck[]> {
  const created = new Set(steps.filter((s) => s.operation === 'CreateVmfsDatastore' || s.operation === 'CreateNasDatastore').map((s) => String(s.arguments.name)));
  const pairs = new Map<string, { policy: string; datastore: string }>();
  for (const s of steps) {
    const a = s.arguments;
    if (s.operation === 'ReconfigVM_Task' && a.backing === 'flat' && typeof a.policy === 'string') pairs.set(JSON.stringify([a.policy, a.datastore]), { policy: a.policy, datastore: String(a.datastore) });
  }
  const pbm = pbmOf(c);
  const out: PreflightCheck[] = [];
  for (const { policy: name, datastore } of pairs.values()) {
    const check = `storage policy ${JSON.stringify(name)}`;
    try {
      const policy = await policyNamed(pbm, name, c.endpoint);
      const ref = created.has(datastore) ? undefined : await c.findDatastoreOrNone(datastore, datacenter);
      if (ref) await refuseIncompatible(pbm, policy, { name: datastore, ref });
      out.push({ check, status: 'ok', detail: ref ? `exists (${policy.id}); datastore ${datastore} satisfies it` : `exists (${policy.id}); the datastore the plan creates is checked when the disk is made` });
    } catch (err) {
      out.push({ check, status: 'fail', detail: errorMessage(err), remedy: 'name a storage policy vCenter has and the disk\u2019s datastore satisfies (disk.policy)' });
    }
  }
  return out;
}

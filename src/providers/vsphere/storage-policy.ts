// The disk.policy axis: a vCenter storage policy (SPBM) applied to the disk a permutation creates.
// The policy is named in the playbook and looked up by name on vCenter (names are checked online:
// validate checks only the shape). A policy the disk's datastore does not satisfy is refused before
// anything is created: vCenter would create the disk anyway and report it non-compliant (pbm.ts),
// which measures a disk outside its policy. Applied: VirtualDeviceConfigSpec.profile =
// VirtualMachineDefinedProfileSpec{profileId} (API reference: the policy to associate with a virtual
// disk); checked after the create with PbmCheckCompliance; its rules go into every record.
import type { Axes, AxisValue } from '../../contract/axis.ts';
import type { MeasuredTarget } from '../../contract/provider.ts';
import { InvalidArgument, ProvisionedStateMismatch } from '../../errors.ts';
import { currentTime } from './methods.ts';
import { PbmClient, type StoragePolicy } from './pbm.ts';
import { VsphereClient, type MoRef, type VsphereEndpoint } from './client.ts';
import type { VsphereStepTarget } from './config.ts';
import type { VsphereHost } from './host.ts';

export const POLICY_AXIS = 'disk.policy';

/**
 * A storage policy name as vCenter shows it: 1 to 80 characters (the vSphere Client's limit for a
 * policy name, unverified), none a control character.
 */
export function isPolicyName(v: AxisValue): boolean {
  // eslint-disable-next-line no-control-regex
  return typeof v === 'string' && v.trim().length > 0 && v.length <= 80 && !/[\u0000-\u001f\u007f]/.test(v);
}
export const POLICY_NAME_EXPECTED = 'the name of an existing vCenter storage policy (1 to 80 characters; the name is looked up on vCenter at run start)';

const pbmClients = new WeakMap<VsphereClient, PbmClient>();

/** The PBM client of a logged-in vSphere client (same session; one per client). */
export function pbmOf(c: VsphereClient): PbmClient {
  let p = pbmClients.get(c);
  if (!p) {
    p = new PbmClient(c.session.soap, async () => {
      await currentTime(c.session);
    });
    pbmClients.set(c, p);
  }
  return p;
}

const policyCache = new WeakMap<PbmClient, Promise<StoragePolicy[]>>();

/** The policy named `name`, else InvalidArgument naming the policies vCenter has. */
export async function policyNamed(pbm: PbmClient, name: string, endpoint: string): Promise<StoragePolicy> {
  let all = policyCache.get(pbm);
  if (!all) policyCache.set(pbm, (all = pbm.storagePolicies()));
  const list = await all;
  const found = list.filter((p) => p.name === name);
  if (found.length === 1) return found[0]!;
  const why = found.length ? `${found.length} storage policies are named ${JSON.stringify(name)}` : `vCenter ${endpoint} has no storage policy named ${JSON.stringify(name)}`;
  throw new InvalidArgument(`disk.policy: ${why}; its storage policies: ${list.map((p) => JSON.stringify(p.name)).join(', ') || 'none'}`, { name: POLICY_AXIS, value: name });
}

/** Refuses a policy datastore `ds` does not satisfy (PbmQueryMatchingHub), before anything is created. */
export async function refuseIncompatible(pbm: PbmClient, policy: StoragePolicy, ds: { name: string; ref: MoRef }): Promise<void> {
  const hubs = await pbm.matchingDatastores(policy.id, [ds.ref]);
  if (hubs.includes(ds.ref.value)) return;
  throw new InvalidArgument(
    `disk.policy ${JSON.stringify(policy.name)}: datastore ${ds.name} is incompatible with it (vCenter's placement check finds no match; rules: ${policy.rules.join('; ') || 'none'}); nothing was created. Use a policy this datastore satisfies, or another datastore`,
    { name: POLICY_AXIS, value: policy.name },
  );
}

/** Reads a created disk's policy and compliance back; anything but its policy, compliant, fails the permutation. */
export async function checkDiskPolicy(pbm: PbmClient, policy: StoragePolicy, vm: MoRef, diskKey: number, file: string): Promise<Record<string, string>> {
  const associated = await pbm.diskPolicy(vm, diskKey);
  if (associated !== policy.id) {
    throw new ProvisionedStateMismatch(`disk.policy ${JSON.stringify(policy.name)} was asked for, but vCenter associates ${file} with ${associated ? `policy ${associated}` : 'no policy'}`, { axis: POLICY_AXIS, asked: policy.name, got: associated ?? 'none', object: file });
  }
  const { status } = await pbm.diskCompliance(vm, diskKey);
  if (status !== 'compliant') {
    throw new ProvisionedStateMismatch(`disk.policy ${JSON.stringify(policy.name)}: vCenter reports ${file} ${status} with it (PbmCheckCompliance); a permutation is measured only in the state its axes name`, { axis: POLICY_AXIS, asked: 'compliant', got: status, object: file });
  }
  return policyFacts(policy, status);
}

/** What every record of a permutation with a storage policy says about it. */
export function policyFacts(policy: StoragePolicy, compliance: string): Record<string, string> {
  return { 'disk.policyId': policy.id, 'disk.policyRules': policy.rules.join('; '), 'disk.policyCompliance': compliance };
}

/**
 * Composition.checkOnline for a vSphere target: a session of its own (like readHostVersion), the
 * policies its permutations name, each checked against the target's existing datastore where a
 * permutation puts the disk there.
 */
export async function checkPoliciesOnline(endpoint: VsphereEndpoint, target: VsphereStepTarget, perms: readonly Axes[]): Promise<void> {
  const named = perms.filter((a) => a[POLICY_AXIS] !== undefined);
  if (!named.length) return;
  const onExisting = new Set(named.filter((a) => (a['datastore.kind'] ?? 'existing') === 'existing').map((a) => String(a[POLICY_AXIS])));
  const all = [...new Set(named.map((a) => String(a[POLICY_AXIS])))];
  const c = await VsphereClient.connect(endpoint);
  try {
    const dc = target.datacenter ? await c.findDatacenter(target.datacenter) : undefined;
    const pbm = pbmOf(c);
    const ref = target.datastore ? await c.findDatastoreOrNone(target.datastore, dc) : undefined;
    for (const name of all) {
      const policy = await policyNamed(pbm, name, c.endpoint);
      if (target.datastore && ref && onExisting.has(name)) await refuseIncompatible(pbm, policy, { name: target.datastore, ref });
    }
  } finally {
    await c.logout().catch(() => undefined);
  }
}

/** apply(): the policy for a disk about to be created on `datastore`, refused there if it does not fit. */
export async function policyForDisk(c: VsphereClient, name: string, datastore: string, ref: MoRef | undefined): Promise<StoragePolicy> {
  const pbm = pbmOf(c);
  const policy = await policyNamed(pbm, name, c.endpoint);
  if (ref) await refuseIncompatible(pbm, policy, { name: datastore, ref });
  return policy;
}

/** verify(): the created disk carries the policy and complies; returns the facts for its records. */
export async function verifyDiskPolicy(c: VsphereClient, name: string, vm: MoRef, diskKey: number, file: string): Promise<Record<string, string>> {
  const pbm = pbmOf(c);
  return checkDiskPolicy(pbm, await policyNamed(pbm, name, c.endpoint), vm, diskKey, file);
}

/** A provider context whose measure() adds `facts` (the disk's policy) to what a guest step found. */
export function withMeasureFacts<C extends { measure?: (t: MeasuredTarget) => void }>(ctx: C, facts: Record<string, string> | undefined): C {
  const measure = ctx.measure;
  if (!facts || !measure) return ctx;
  return Object.assign(Object.create(ctx) as C, { measure: (t: MeasuredTarget) => measure.call(ctx, { ...t, facts: { ...t.facts, ...facts } }) });
}

/** a disk's storage policy facts per provider connection (owned name → facts): verify() reads them back, the guest step's records carry them */
const factsByHost = new WeakMap<VsphereHost, Map<string, Record<string, string>>>();

export function rememberPolicyFacts(h: VsphereHost, disk: string, facts: Record<string, string>): void {
  let m = factsByHost.get(h);
  if (!m) factsByHost.set(h, (m = new Map<string, Record<string, string>>()));
  m.set(disk, facts);
}

export function policyFactsOf(h: VsphereHost, disk: string): Record<string, string> | undefined {
  return factsByHost.get(h)?.get(disk);
}

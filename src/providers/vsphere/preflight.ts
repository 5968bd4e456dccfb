// What `storsweep preflight` asks of a vCenter or ESXi SOAP endpoint (contract/preflight.ts): the
// room on each LUN the plan formats and datastore it fills, and read-only checks — the TLS
// certificate (thumbprint or CA), the login, the product and API version, the privileges the steps
// need on each object as the server itself answers them (AuthorizationManager.HasPrivilegeOnEntity
// for this session), the performance counters the host offers and its clock. Nothing is changed.
import type { PlannedStep } from '../../contract/provider.ts';
import type { PreflightCheck, SpaceHave, SpacePlace, TargetPreflight } from '../../contract/preflight.ts';
import { errorMessage } from '../../errors.ts';
import { formatEsxiVersion, parseEsxiVersion } from '../esxi-version.ts';
import type { VsphereClient } from './client.ts';
import type { VsphereTargetConfig } from './config.ts';
import { currentTime, queryAvailablePerfMetric, queryPerfProviderSummary, type RoundTripper } from './methods.ts';
import { counterKeys } from './perf.ts';
import { policyChecks } from './storage-policy-preflight.ts';
import { namedVmChecks, type GuestLogin } from './named-vm-preflight.ts';
import { namedMemberVms } from './vm-count.ts';
import type { MoRef } from './soap.ts';
import { arr, decodeReturn, type PerfCounterInfo } from './types.ts';
import { vsphereSpaceNeeds } from './space-needs.ts';

export { vsphereSpaceNeeds };

const GiB = 1024 ** 3;

/**
 * What a new VMFS keeps for itself on a LUN: the partition starts 1 MiB in and the volume's metadata
 * takes a few hundred MB (the lab's simulator counts 700 MiB; a real host's figure depends on the
 * version and is unverified); VMware asks that ~200 MB stay free on every VMFS (Broadcom KB 318856).
 */
export const VMFS_RESERVE_BYTES = GiB;

interface Objects {
  host: MoRef;
  vm: MoRef;
  datacenter: MoRef;
}

async function spaceOf(c: VsphereClient, o: Objects, places: readonly SpacePlace[]): Promise<SpaceHave[]> {
  const luns = places.some((p) => p.kind === 'lun') ? await c.listHostLuns(o.host) : [];
  const out: SpaceHave[] = [];
  for (const place of places) {
    if (place.kind === 'lun') {
      const lun = luns.find((l) => l.canonicalName === place.device);
      const size = lun?.capacity ? lun.capacity.block * lun.capacity.blockSize : null;
      out.push(size === null ? { place, bytes: null, detail: `the host lists no LUN ${place.device} with a capacity (config.storageDevice.scsiLun)` } : { place, bytes: size - VMFS_RESERVE_BYTES, detail: `LUN ${place.device} is ${(size / GiB).toFixed(1)} GiB (HostScsiDisk.capacity), less 1 GiB the new VMFS keeps` });
      continue;
    }
    if (place.kind !== 'datastore') {
      out.push({ place, bytes: null, detail: `vSphere has no ${place.kind} place` });
      continue;
    }
    const ref = await c.findDatastoreOrNone(place.name, o.datacenter);
    if (!ref) {
      out.push({ place, bytes: null, detail: `no datastore ${place.name}` });
      continue;
    }
    const { summary } = await c.readDatastore(ref);
    out.push({ place, bytes: summary.freeSpace, detail: `datastore ${place.name} has ${(summary.freeSpace / GiB).toFixed(1)} GiB free (summary.freeSpace)` });
  }
  return out;
}

/** Where a `vm.count` permutation's clones of the target's VM go (clones.ts cloneVm): the VM's folder, its resource pool, its datastores. */
export interface CloneHome {
  folder: MoRef;
  pool?: MoRef;
  datastores: Array<{ ref: MoRef; name: string }>;
}

/**
 * What CloneVM_Task needs (vSphere Automation API, vcenter/vm?action=clone: "VirtualMachine.Provisioning.Clone"
 * on the source, "VirtualMachine.Inventory.CreateFromExisting" on the folder, "Resource.AssignVMToPool"
 * on the resource pool, "Datastore.AllocateSpace" on the datastore), and what the run then does to
 * each clone: a clone inherits its folder's permissions, so those are asked on the folder.
 */
function clonePrivileges(vm: string, o: Objects, home: CloneHome | undefined, add: (priv: string, on: MoRef, what: string) => void): void {
  add('VirtualMachine.Provisioning.Clone', o.vm, `VM ${vm}`);
  if (!home) return;
  const clones = `the folder of VM ${vm} (its clones go there and inherit its permissions)`;
  add('VirtualMachine.Inventory.CreateFromExisting', home.folder, clones);
  if (home.pool) add('Resource.AssignVMToPool', home.pool, `the resource pool of VM ${vm}`);
  for (const d of home.datastores) add('Datastore.AllocateSpace', d.ref, `datastore ${d.name} (the clones' copies of VM ${vm}'s files)`);
  for (const p of ['VirtualMachine.Config.EditDevice', 'VirtualMachine.Interact.PowerOn', 'VirtualMachine.Interact.PowerOff', 'VirtualMachine.Inventory.Delete']) add(p, home.folder, clones);
}

/** The privileges each step needs, on which object (vSphere Security: "Required Privileges for Common Tasks"). */
export function privilegesNeeded(steps: readonly PlannedStep[], o: Objects & { datastore?: { ref: MoRef; name: string }; cloneHome?: CloneHome; vms?: ReadonlyMap<string, MoRef> }, viaTools: boolean): Array<{ priv: string; on: MoRef; what: string }> {
  const out = new Map<string, { priv: string; on: MoRef; what: string }>();
  // asked once per object; the first step that needs it names why
  const add = (priv: string, on: MoRef, what: string) => void (out.has(`${priv} ${on.value}`) || out.set(`${priv} ${on.value}`, { priv, on, what }));
  // a step on a clone acts on a VM that does not exist yet: asked where it will inherit from (its folder)
  const clones = new Set(steps.filter((s) => s.operation === 'CloneVM_Task').map((s) => String(s.arguments.name)));
  // a VM the inventory names for vm.count (scaleVms) is asked about itself; a clone, on its folder; any other, the target's
  const vmOf = (s: PlannedStep): { on: MoRef; what: string } => {
    const named = o.vms?.get(String(s.arguments.vm));
    if (named) return { on: named, what: `VM ${String(s.arguments.vm)}` };
    return clones.has(String(s.arguments.vm)) && o.cloneHome ? { on: o.cloneHome.folder, what: 'the folder of the clones (they inherit its permissions)' } : { on: o.vm, what: `VM ${String(s.arguments.vm)}` };
  };
  for (const s of steps) {
    if (s.operation === 'CloneVM_Task') clonePrivileges(String(s.arguments.vm), o, o.cloneHome, add);
    if (s.operation === 'CreateVmfsDatastore' || s.operation === 'CreateNasDatastore') add('Host.Config.Storage', o.host, `host ${String(s.arguments.host)}`);
    if (s.operation === 'ReconfigVM_Task' && s.arguments.deviceChange === 'add+create') {
      const v = vmOf(s);
      add('VirtualMachine.Config.AddNewDisk', v.on, v.what);
      add('VirtualMachine.Config.RemoveDisk', v.on, v.what);
      // a datastore the plan creates inherits its permissions from the datacenter
      const existing = o.datastore && s.arguments.datastore === o.datastore.name ? o.datastore : undefined;
      add('Datastore.AllocateSpace', existing ? existing.ref : o.datacenter, existing ? `datastore ${existing.name}` : 'the datacenter (whose permissions the datastores the plan creates inherit)');
      if (s.arguments.backing === 'rdm') add('VirtualMachine.Config.RawDevice', v.on, v.what);
    }
    if (s.operation === 'ReconfigVM_Task' && s.arguments.device === 'controller') add('VirtualMachine.Config.AddRemoveDevice', vmOf(s).on, vmOf(s).what);
  }
  // a named VM first: where it is also the target's VM, it is named (a privilege is asked once, named by its first reason)
  const guests: Array<[MoRef, string]> = [...[...(o.vms ?? new Map<string, MoRef>())].map(([name, ref]): [MoRef, string] => [ref, `VM ${name}'s guest (VMware Tools guest operations)`]), [o.vm, 'the guest (VMware Tools guest operations)']];
  if (clones.size > 0 && o.cloneHome) guests.push([o.cloneHome.folder, 'the clones\' guests (VMware Tools guest operations; from their folder)']);
  if (viaTools) for (const [on, what] of guests) for (const p of ['VirtualMachine.GuestOperations.Execute', 'VirtualMachine.GuestOperations.Modify', 'VirtualMachine.GuestOperations.Query']) add(p, on, what);
  return [...out.values()];
}

/** Room for the most clones one permutation makes (its CloneVM_Task steps' `count`), as the clone step checks it before its first clone. */
async function cloneRoomChecks(c: VsphereClient, vm: MoRef, steps: readonly PlannedStep[]): Promise<PreflightCheck[]> {
  const clones = steps.filter((s) => s.operation === 'CloneVM_Task');
  if (clones.length === 0) return [];
  const countOf = (s: PlannedStep) => Number(s.arguments.count ?? s.arguments.member) || 1;
  const largest = clones.reduce((a, b) => (countOf(b) > countOf(a) ? b : a));
  const most = countOf(largest);
  const a = largest.arguments;
  const disk = typeof a.diskDatastore === 'string' && typeof a.diskBytes === 'number' ? { datastore: a.diskDatastore, bytes: a.diskBytes } : undefined;
  const short = await c.cloneRoomShortfall(vm, most, disk, a.clone === 'linked');
  return [short ? { check: 'clone room', status: 'fail', detail: short, remedy: 'use a template VM with smaller disks, free space on its datastore, or a smaller vm.count' } : { check: 'clone room', status: 'ok', detail: `${most} full clone${most === 1 ? '' : 's'} of the VM fit its datastores (summary.freeSpace)` }];
}

/** Where the target's VM's clones would go, read when the steps clone it. */
async function cloneHomeOf(c: VsphereClient, vm: MoRef, steps: readonly PlannedStep[]): Promise<CloneHome | undefined> {
  if (!steps.some((s) => s.operation === 'CloneVM_Task')) return undefined;
  const p = await c.readProps(vm, ['parent', 'resourcePool', 'datastore']);
  if (!p.parent) return undefined;
  const refs = arr(p.datastore as MoRef[] | undefined);
  const datastores = await Promise.all(refs.map(async (ref) => ({ ref, name: String((await c.readProps(ref, ['name'])).name) })));
  return { folder: p.parent as MoRef, ...(p.resourcePool ? { pool: p.resourcePool as MoRef } : {}), datastores };
}

/** AuthorizationManager.HasPrivilegeOnEntity(entity, sessionId, privId[]) → one boolean per privilege. */
async function hasPrivileges(rt: RoundTripper, am: MoRef, entity: MoRef, sessionId: string, privs: string[]): Promise<boolean[]> {
  const r = await rt.roundTrip('HasPrivilegeOnEntity', am, [['entity', entity], ['sessionId', sessionId], ...privs.map((p): [string, string] => ['privId', p])]);
  return (decodeReturn(r, 'boolean[]') as unknown[]).map((v) => v === true || v === 'true');
}

async function privilegeChecks(c: VsphereClient, needs: ReturnType<typeof privilegesNeeded>): Promise<PreflightCheck[]> {
  const am = c.serviceContent.authorizationManager;
  const key = c.session.userSession?.key;
  if (!am || !key) return [{ check: 'privileges', status: 'warn', detail: 'the server has no AuthorizationManager to ask', remedy: 'check the role of the account by hand' }];
  const out: PreflightCheck[] = [];
  for (const n of needs) {
    const [granted] = await hasPrivileges(c.session, am, n.on, key, [n.priv]);
    out.push(granted ? { check: `privilege ${n.priv}`, status: 'ok', detail: `granted on ${n.what} (${n.on.type} ${n.on.value})` } : { check: `privilege ${n.priv}`, status: 'fail', detail: `not granted on ${n.what} (${n.on.type} ${n.on.value}) to ${c.session.userSession?.userName ?? 'this user'}`, remedy: `give the account a role with ${n.priv} on ${n.what}` });
  }
  return out;
}

async function versionChecks(c: VsphereClient, o: Objects, stated: string | undefined): Promise<PreflightCheck[]> {
  const about = c.serviceContent.about;
  const out: PreflightCheck[] = [{ check: 'API version', status: 'ok', detail: `${about.fullName} (${about.apiType}, API ${about.apiVersion})` }];
  const p = await c.readProps(o.host, ['config.product.version']);
  const found = typeof p['config.product.version'] === 'string' ? p['config.product.version'] : '';
  const got = parseEsxiVersion(found);
  const want = stated ? parseEsxiVersion(stated) : undefined;
  if (!want || (got && formatEsxiVersion(got) === formatEsxiVersion(want))) out.push({ check: 'version', status: 'ok', detail: `host runs ESXi ${found}${stated ? ` (inventory: ${stated})` : ''}` });
  else out.push({ check: 'version', status: 'fail', detail: `the host runs ESXi ${found}, the inventory says ${stated ?? ''}`, remedy: `set version: "${got ? formatEsxiVersion(got) : found}" in the target` });
  return out;
}

/**
 * Pure: whether the steps attach a disk the Linux guest finds by its backing uuid (a flat VMDK, a
 * virtual-mode RDM) — the disks for which the VM needs disk.EnableUUID. A physical-mode RDM passes
 * the LUN's own NAA id through, with or without it (guest-identity.ts).
 */
export function identifiesByUuid(steps: readonly PlannedStep[]): boolean {
  return steps.some((s) => s.operation === 'ReconfigVM_Task' && s.arguments.deviceChange === 'add+create' && (s.arguments.backing === 'flat' || (s.arguments.backing === 'rdm' && s.arguments.compatibilityMode !== 'physicalMode')));
}

/**
 * The VM as the run will use it: VMware Tools running (and its version) when the guest is reached
 * through guest operations; disk.EnableUUID = TRUE for a Linux guest that finds its disk by WWN —
 * without it the virtual disk answers no VPD page 0x83 and udev makes no wwn- link
 * (real-product-rules §3.4, KB 1029157). Asked only where the run identifies a disk by its uuid.
 */
async function vmChecks(c: VsphereClient, o: Objects, g: { viaTools: boolean; windows: boolean; byUuid: boolean }): Promise<PreflightCheck[]> {
  const p = await c.readProps(o.vm, ['guest.toolsRunningStatus', 'guest.toolsVersion', 'config.extraConfig']);
  const out: PreflightCheck[] = [];
  const running = p['guest.toolsRunningStatus'] === 'guestToolsRunning';
  const version = typeof p['guest.toolsVersion'] === 'string' ? p['guest.toolsVersion'] : '';
  if (running) out.push({ check: 'VMware Tools', status: 'ok', detail: `running${version ? `, version ${version}` : ''}` });
  else out.push({ check: 'VMware Tools', status: g.viaTools ? 'fail' : 'warn', detail: `not running (${typeof p['guest.toolsRunningStatus'] === 'string' ? p['guest.toolsRunningStatus'] : 'unknown'})`, remedy: g.viaTools ? 'start the guest and its VMware Tools: the guest is reached through them' : 'host-side guest facts will be missing' });
  if (!g.windows && g.byUuid) {
    const extra = arr(p['config.extraConfig'] as Array<{ key: string; value: unknown }> | undefined);
    const v = [...extra].reverse().find((e) => e.key.toLowerCase() === 'disk.enableuuid')?.value;
    const on = typeof v === 'string' && (v.toUpperCase() === 'TRUE' || v === '1');
    out.push(on ? { check: 'disk.EnableUUID', status: 'ok', detail: `TRUE on the VM: the guest sees each disk as wwn-0x<its uuid>` } : { check: 'disk.EnableUUID', status: 'fail', detail: `disk.EnableUUID is ${v === undefined ? 'not set' : JSON.stringify(v)} on the VM: the guest gets no wwn-0x link for an attached disk, so the run cannot find it`, remedy: 'set disk.EnableUUID = TRUE in the VM\u2019s advanced configuration (VM powered off), then power it on' });
  }
  return out;
}

async function metricChecks(c: VsphereClient, o: Objects): Promise<PreflightCheck[]> {
  const pm = c.serviceContent.perfManager;
  if (!pm) return [{ check: 'host metrics', status: 'warn', detail: 'no PerformanceManager: no host-side figures', remedy: 'host metrics are left out of the report' }];
  const summary = await queryPerfProviderSummary(c.session, pm, o.vm);
  const counters = counterKeys(arr((await c.readProps(pm, ['perfCounter'])).perfCounter as PerfCounterInfo[] | undefined));
  // what the host offers for this VM's disks at its real-time interval, not only what the server defines
  const offered = summary.refreshRate ? await queryAvailablePerfMetric(c.session, pm, o.vm, summary.refreshRate) : [];
  const has = (name: string) => offered.some((m) => m.counterId === counters.get(name));
  const us = has('virtualDisk.readLatencyUS.latest') && has('virtualDisk.writeLatencyUS.latest');
  const ms = has('virtualDisk.totalReadLatency.average');
  const out: PreflightCheck[] = [];
  if (!summary.currentSupported || !summary.refreshRate) out.push({ check: 'host metrics', status: 'warn', detail: 'the VM offers no real-time statistics', remedy: 'host figures will be missing from the report' });
  else if (us) out.push({ check: 'host metrics', status: 'ok', detail: `real-time interval ${summary.refreshRate} s; µs latency counters (virtualDisk.readLatencyUS/writeLatencyUS)` });
  else out.push({ check: 'host metrics', status: 'warn', detail: `real-time interval ${summary.refreshRate} s; ${ms ? 'only whole-ms latency counters (totalReadLatency)' : 'no virtualDisk latency counters'}`, remedy: 'host latency under 1 ms will read as 0 or 1 ms' });
  const before = Date.now();
  const server = Date.parse(await currentTime(c.session));
  const offset = server - (before + Date.now()) / 2;
  const far = Math.abs(offset) > 5000;
  out.push({ check: 'clock', status: far ? 'warn' : 'ok', detail: `server clock ${offset >= 0 ? '+' : ''}${(offset / 1000).toFixed(1)} s from this machine's`, ...(far ? { remedy: 'set both clocks by NTP: host-metric windows are read by the server\u2019s clock' } : {}) });
  return out;
}

/** The vSphere target's preflight; `connect` opens a session of its own (logged out after each use). */
export function vspherePreflight(connect: () => Promise<VsphereClient>, shared: () => Promise<VsphereClient>, cfg: Pick<VsphereTargetConfig, 'host' | 'vm' | 'datacenter' | 'datastore' | 'version' | 'vcenter' | 'guestOs'>, viaTools: boolean, guestLogin?: GuestLogin): TargetPreflight {
  // `shared`: the run's pooled session, which its providers log out when they close
  const withClient = async <X>(fn: (c: VsphereClient, o: Objects) => Promise<X>, own = true): Promise<X> => {
    const c = await (own ? connect() : shared());
    try {
      const datacenter = await c.findDatacenter(cfg.datacenter);
      return await fn(c, { datacenter, host: await c.findHost(cfg.host, datacenter), vm: await c.findVm(cfg.vm, datacenter) });
    } finally {
      if (own) await c.logout().catch(() => undefined);
    }
  };
  return {
    spaceNeeds: vsphereSpaceNeeds,
    spaceOf: (places, o) => withClient((c, objs) => spaceOf(c, objs, places), !o?.shared),
    checks: async (steps) => {
      let c: VsphereClient;
      try {
        c = await connect();
      } catch (err) {
        return [{ check: 'connection', status: 'fail', detail: errorMessage(err), remedy: 'check the URL, the pinned thumbprint (or caFile) and the credentials of the vcenters entry' }];
      }
      await c.logout().catch(() => undefined);
      const head: PreflightCheck[] = [{ check: 'connection', status: 'ok', detail: `${cfg.vcenter.url}: certificate ${cfg.vcenter.thumbprint ? 'matches the pinned thumbprint' : cfg.vcenter.insecure ? 'NOT verified (insecure: true)' : 'verified'}; logged in as ${cfg.vcenter.username}` }];
      return withClient(async (c2, o) => {
        const ds = cfg.datastore ? await c2.findDatastoreOrNone(cfg.datastore, o.datacenter) : undefined;
        // the VMs in scaleVms the plan uses (vm.count): each checked, ✗ naming it (named-vm-preflight.ts)
        const named = await namedVmChecks(c2, o.datacenter, namedMemberVms(steps), { byUuid: identifiesByUuid(steps), login: guestLogin });
        const cloneHome = await cloneHomeOf(c2, o.vm, steps);
        const privs = await privilegeChecks(c2, privilegesNeeded(steps, { ...o, vms: named.found, ...(ds && cfg.datastore ? { datastore: { ref: ds, name: cfg.datastore } } : {}), ...(cloneHome ? { cloneHome } : {}) }, viaTools));
        return [...head, ...(await versionChecks(c2, o, cfg.version)), ...privs, ...(await vmChecks(c2, o, { viaTools, windows: cfg.guestOs === 'windows', byUuid: identifiesByUuid(steps) })), ...named.checks, ...(await metricChecks(c2, o)), ...(await policyChecks(c2, steps, o.datacenter)), ...(await cloneRoomChecks(c2, o.vm, steps))];
      });
    },
  };
}

// The `vsphere` provider module: a target on a vCenter (or an ESXi host's SOAP endpoint) whose VM
// gets a datastore and a disk per permutation; fio runs on the VM's guest (local or SSH).
import { z } from 'zod';
import type { AxisDiagnostic, ComposeContext, Composition, ProviderModule, TargetDiagnostic } from '../../contract/provider.ts';
import { matching, plainText } from '../../input/fields.ts';
import { registerSecretValue, shortSecretMessage } from '../../input/secrets.ts';
import { UsageError } from '../../errors.ts';
import { CANONICAL_DEVICE_EXPECTED, isCanonicalDevice } from '../canonical-device.ts';
import { DEFAULT_ENDPOINT_CONCURRENCY } from '../endpoint-pool.ts';
import { esxiVersionField } from '../esxi-version-field.ts';
import { ATTACHED_DISK, ATTACHED_DISK_TEST_FILE, attachedDiskGuestSchema, guestOpener, guestWorkload, nameField } from '../guest.ts';
import { toolsGuest, toolsWorkloadEndpoint, type ToolsGuestWiring } from './guest-tools.ts';
import { guestInventoryDiagnostics, WINDOWS_GUEST_FILESYSTEMS } from './guest-config.ts';
import { fioGuestResources, lunResource } from '../shared-resources.ts';
import { VSPHERE_AXES } from './axes.ts';
import { endpointFromEnv, sdkEndpointKey, VsphereClient } from './client.ts';
import type { VsphereStepTarget, VsphereTargetConfig } from './config.ts';
import { createVsphereProvider } from './provider.ts';
import { checkPoliciesOnline } from './storage-policy.ts';
import { isTransient } from './retrying.ts';
import { planVsphereSteps } from './steps.ts';
import { LINUX_GUEST_FILESYSTEMS, type GuestAccess } from '../guest-disk.ts';
import { guestSettingsOnWindows, writeCacheOnLinux } from '../guest-settings-axes.ts';
import { estimateSteps, schemasOf } from '../operations.ts';
import { VSPHERE_OPERATIONS } from './operations/index.ts';
import { lazyPreflight } from '../lazy-preflight.ts';
import { vsphereSpaceNeeds } from './space-needs.ts';
import { scaleVmsDiagnostics, vmCountDiagnostics, VM_COUNT_AXIS } from './vm-count.ts';
import { VCENTERS, vcenterSection, type VcenterEntry } from './endpoint.ts';

const name = nameField;

/**
 * A Linux guest finds the attached disk by `<byIdDir>/wwn-0x<WWN>` (guest-disk.ts). udev makes
 * `wwn-` links from ID_WWN_WITH_EXTENSION, which only SCSI/ATA disks get; an NVMe namespace gets
 * `nvme-<wwid>` (the kernel's wwid: `eui.…`, `uuid.…` or `nvme.…`) and `nvme-<model>_<serial>`
 * [systemd rules.d/60-persistent-storage.rules, "# NVMe" block; Linux commit 118472ab8532 "NVMe:
 * Expose ns wwid through single sysfs entry"]. Which identifier a VMware virtual NVMe namespace
 * reports for a VMDK is not known here, so the pairing is refused until it is.
 */
const NVME_LINUX_REFUSED = (target: string) =>
  `"nvme" with target "${target}"'s Linux guest: the guest finds the attached disk by its udev link wwn-0x<WWN>, and udev gives an NVMe namespace no wwn- link (only nvme-eui.<id> and nvme-<model>_<serial>: systemd 60-persistent-storage.rules); which id a VMware virtual NVMe disk reports is not known to storsweep yet, so the disk could not be found. Use a SCSI controller (pvscsi, lsilogic, lsisas, buslogic) for a Linux guest`;
const canonicalDevice = () => matching(isCanonicalDevice, CANONICAL_DEVICE_EXPECTED);

const targetSchema = z.strictObject({
  provider: z.literal('vsphere'),
  vcenter: name().describe('Name under vcenters'),
  datacenter: plainText().optional(),
  host: name().describe('ESXi host name or inventory path'),
  vm: name().describe('VM name or inventory path that gets the disks'),
  datastore: name().optional().describe('Existing datastore for datastore.kind = existing'),
  vmfsDevice: canonicalDevice().optional().describe('LUN to format for VMFS permutations (must be in allowedDevices)'),
  rdmDevice: canonicalDevice().optional().describe('LUN to map for RDM permutations (must be in allowedDevices)'),
  allowedDevices: z.array(canonicalDevice()).default([]).describe('LUNs that may be formatted or mapped, by canonical name'),
  nfs: z
    .strictObject({
      remoteHost: name(),
      remotePath: name(),
      vaaiNas: z.boolean().default(false).describe('The host has a VAAI-NAS plugin for this export that reserves space: only then are thick disks possible on it (without, NFS has thin disks only)'),
    })
    .optional(),
  version: esxiVersionField(),
  scaleVms: z
    .array(name())
    .min(1)
    .optional()
    .describe('Existing VMs a vm.count permutation measures instead of clones: count N uses the first N. Each gets only its own disk; never powered off, reconfigured otherwise or destroyed. Reached like the target\'s guest (guest.via: tools, the same credential and work directory)'),
  guest: attachedDiskGuestSchema,
});

export type VsphereTarget = z.output<typeof targetSchema>;

/** The vSphere target without its endpoint, as the pure planner sees it (no URL, no credentials). */
export function vsphereStepTargetOf(t: VsphereTarget): VsphereStepTarget {
  return {
    datacenter: t.datacenter,
    host: t.host,
    vm: t.vm,
    datastore: t.datastore,
    vmfsDevice: t.vmfsDevice,
    rdmDevice: t.rdmDevice,
    allowedDevices: t.allowedDevices,
    nfs: t.nfs,
    version: t.version,
    ...(t.scaleVms ? { scaleVms: t.scaleVms } : {}),
    guestWorkdir: t.guest.workdir,
    ...(t.guest.os === 'windows' ? { guestOs: 'windows' as const } : {}),
  };
}

function compose(target: VsphereTarget, ctx: ComposeContext): Composition {
  const vc = ctx.endpoint(VCENTERS, target.vcenter) as VcenterEntry | undefined;
  // govc's variables fill in only what the inventory leaves out; GOVC_PASSWORD is a secret of
  // this run (masked in messages, held to the same minimum length) only when this target uses
  // it — masking an unused "1" would garble every message and tell the password.
  const fromEnv = !vc?.url || !vc.username || !vc.password ? endpointFromEnv(ctx.env) : undefined;
  if (fromEnv && !vc?.password) {
    const short = shortSecretMessage(fromEnv.password);
    if (short) throw new UsageError(`${ctx.file}: the password from GOVC_PASSWORD/GOVC_URL that vcenter "${target.vcenter}" falls back to: ${short}`);
    registerSecretValue(fromEnv.password);
  }
  const url = vc?.url ?? fromEnv?.url;
  const username = vc?.username ?? fromEnv?.username;
  const password = vc?.password ? ctx.reveal(vc.password) : fromEnv?.password;
  if (!url || !username || password === undefined) throw new UsageError(`${ctx.file}: vcenter "${target.vcenter}" needs url, username and password (or GOVC_URL, GOVC_USERNAME, GOVC_PASSWORD)`);
  const cfg: VsphereTargetConfig = {
    vcenter: {
      url,
      username,
      password,
      thumbprint: vc?.thumbprint,
      caFile: vc?.caFile ? ctx.resolvePath(vc.caFile) : fromEnv?.caFile,
      insecure: vc ? vc.insecure : fromEnv?.insecure,
    },
    ...vsphereStepTargetOf(target),
  };
  const stepTarget = vsphereStepTargetOf(target);
  // the guest: over SSH (or this machine), or through VMware Tools guest operations (guest-tools.ts)
  const cred = target.guest.credential;
  const tools =
    target.guest.via === 'tools'
      ? toolsGuest(cfg.vcenter, { vcenter: target.vcenter, vm: target.vm, datacenter: target.datacenter }, target.guest, () => {
          // revealed at each call, never into the plan, a runner field or a message
          if (!cred) throw new UsageError(`${ctx.file}: target guest via: tools needs guest.credential`);
          return { username: cred.username, password: ctx.reveal(cred.password) ?? '' };
        })
      : undefined;
  const g = tools
    ? { endpoint: toolsWorkloadEndpoint(target.guest, tools), describe: { runsOn: `${tools.label} (guest operations, ${target.guest.os})`, measures: ATTACHED_DISK }, provider: 'vsphere' as const }
    : guestWorkload(ctx, target.guest);
  const linux = (open: GuestAccess['open']): GuestAccess => ({ byIdDir: target.guest.byIdDir, sudo: target.guest.sudo, diskWaitSec: target.guest.diskWaitSec, open });
  // guestFor: a vm.count clone's guest, a copy of the target's, through guest operations too (vm-count.ts)
  const guestOf = () =>
    tools
      ? target.guest.os === 'windows'
        ? { windowsGuest: { open: () => tools.openWindows() } }
        : { guest: linux(() => tools.openLinux()), guestFor: (vm: string) => linux(() => tools.forVm(vm).openLinux()) }
      : { guest: linux(guestOpener(ctx, target.guest)) };
  return {
    provider: 'vsphere',
    planSteps: (axes, names) => planVsphereSteps(axes, stepTarget, names),
    connectProvider: async () => {
      // one session per endpoint and account; one provisioning limit per endpoint, whichever
      // account or spelling of its URL a target uses (sdkEndpointKey)
      const endpoint = sdkEndpointKey(url);
      const key = `${endpoint}|${username}`;
      const connect = () => ctx.pool.session(key, () => VsphereClient.connect(cfg.vcenter));
      return ctx.pool.share(key, vc?.maxConcurrent ?? DEFAULT_ENDPOINT_CONCURRENCY, createVsphereProvider(cfg, { connect, ...guestOf() }), { limitKey: `vcenter ${endpoint}` });
    },
    readHostVersion: async () => {
      // HostSystem.config.product (AboutInfo) is the host's own release, also through vCenter
      const c = await VsphereClient.connect(cfg.vcenter);
      try {
        const p = await c.readProps(await c.findHost(cfg.host), ['config.product.version']);
        const v = p['config.product.version'];
        if (typeof v !== 'string') throw new UsageError(`${target.vcenter}: host ${cfg.host} reports no config.product.version`);
        return v;
      } finally {
        await c.logout().catch(() => undefined);
      }
    },
    // storage policies by name, and the datastore's fit, before anything is created (storage-policy.ts)
    checkOnline: (axes) => checkPoliciesOnline(cfg.vcenter, stepTarget, axes),
    workload: g.endpoint,
    workloadProvider: g.provider,
    workloadTarget: g.describe,
    insecureEndpoints: cfg.vcenter.insecure ? [`vcenter:${target.vcenter}`] : [],
    preflight: lazyPreflight(vsphereSpaceNeeds, async () => (await import('./preflight.ts')).vspherePreflight(() => VsphereClient.connect(cfg.vcenter), () => ctx.pool.session(`${sdkEndpointKey(url)}|${username}`, () => VsphereClient.connect(cfg.vcenter)), cfg, target.guest.via === 'tools', tools && target.scaleVms ? (vm) => guestLogin(tools, vm) : undefined)),
  };
}

/** A named VM's guest login, proven by running `true` there through guest operations (preflight). */
async function guestLogin(tools: ToolsGuestWiring, vm: string): Promise<void> {
  const runner = await tools.forVm(vm).openLinux();
  try {
    const r = await runner.run('true');
    if (r.exitCode !== 0) throw new Error(`\`true\` exited ${r.exitCode} in ${vm}'s guest`);
  } finally {
    await runner.close().catch(() => undefined);
  }
}

export const vsphere = {
  name: 'vsphere',
  // `vcenters:` (endpoint.ts): the core reaches it through the registry only
  endpointSection: vcenterSection,
  endpointOf: (t) => ({ name: t.vcenter, path: ['vcenter'] }),
  targetSchema,
  secretFields: [['guest', 'credential', 'password']],
  axes: VSPHERE_AXES,
  // a guest reached through VMware Tools opens no SSH connection (its sshHost is refused: checkInventory)
  sshHostsOf: (t) => (t.guest.sshHost && t.guest.via === 'ssh' ? [{ name: t.guest.sshHost, path: ['guest', 'sshHost'], shell: 'posix' }] : []),
  workloadTool: (t) => (t.guest.os === 'windows' ? 'diskspd' : 'fio'),
  checkInventory(t, names) {
    const out: TargetDiagnostic[] = [...guestInventoryDiagnostics(t.guest), ...scaleVmsDiagnostics(t)];
    for (const key of ['vmfsDevice', 'rdmDevice'] as const) {
      const dev = t[key];
      if (dev && !t.allowedDevices.includes(dev)) out.push({ path: [key], message: `${dev} is not listed in allowedDevices; a device is formatted or mapped only when the inventory allows it by canonical name` });
    }
    if (!names.endpoints[VCENTERS]?.includes(t.vcenter) && !names.env.GOVC_URL) out.push({ path: ['vcenter'], message: `no vcenters entry named "${t.vcenter}" (and GOVC_URL is not set)` });
    if (t.guest.testFile !== undefined) out.push({ path: ['guest', 'testFile'], message: ATTACHED_DISK_TEST_FILE });
    return out;
  },
  validate(t, values, name) {
    const out: AxisDiagnostic[] = t.guest.os === 'windows' ? guestSettingsOnWindows(values, name) : writeCacheOnLinux(values, name);
    out.push(...vmCountDiagnostics(t.guest, values[VM_COUNT_AXIS] ?? [], name, t.scaleVms));
    // guest.filesystem: each guest makes its own kind (the axis lists both)
    for (const [i, f] of (values['guest.filesystem'] ?? []).entries()) {
      if (t.guest.os === 'windows' && !(WINDOWS_GUEST_FILESYSTEMS as readonly unknown[]).includes(f)) {
        out.push({ axis: 'guest.filesystem', index: i, message: `target "${name}" has a Windows guest (guest.os: windows), where diskspd measures the raw disk or a test file on an NTFS or ReFS volume; supported: ${WINDOWS_GUEST_FILESYSTEMS.join(', ')}; got ${JSON.stringify(f)} (a Linux filesystem)` });
      }
      if (t.guest.os !== 'windows' && !(LINUX_GUEST_FILESYSTEMS as readonly unknown[]).includes(f)) {
        out.push({ axis: 'guest.filesystem', index: i, message: `target "${name}" has a Linux guest, where fio measures the raw disk or a test file on an ext4 or xfs filesystem; supported: ${LINUX_GUEST_FILESYSTEMS.join(', ')}; got ${JSON.stringify(f)} (a Windows file system: set guest.os: windows for a Windows guest)` });
      }
    }
    for (const [i, k] of (values['datastore.kind'] ?? []).entries()) {
      if (String(k).startsWith('vmfs') && !t.vmfsDevice) out.push({ axis: 'datastore.kind', index: i, message: `"${k}" formats a LUN, but target "${name}" names no vmfsDevice` });
      if (k === 'existing' && !t.datastore) out.push({ axis: 'datastore.kind', index: i, message: `"existing" needs target "${name}" to name a datastore` });
      if (k === 'nfs' && !t.nfs) out.push({ axis: 'datastore.kind', index: i, message: `"nfs" needs target "${name}" to give nfs.remoteHost and nfs.remotePath` });
    }
    for (const [i, f] of (values['disk.format'] ?? []).entries()) {
      if (String(f).startsWith('rdm') && !t.rdmDevice) out.push({ axis: 'disk.format', index: i, message: `"${f}" maps a LUN, but target "${name}" names no rdmDevice` });
    }
    for (const [i, c] of (values['disk.controller'] ?? []).entries()) {
      if (c === 'nvme' && t.guest.os !== 'windows') out.push({ axis: 'disk.controller', index: i, message: NVME_LINUX_REFUSED(name) });
    }
    return out;
  },
  planner(t) {
    const cfg = vsphereStepTargetOf(t);
    return (axes, names) => planVsphereSteps(axes, cfg, names);
  },
  // one schema per operation (operations/*.ts): steps.ts builds steps through them, `run --resume` parses them again
  operations: schemasOf(VSPHERE_OPERATIONS),
  // ~5 s a step, a VMFS datastore 15; an eagerly zeroed disk writes itself whole (operations/reconfig-vm.ts)
  estimateSec: (steps, axes) => estimateSteps(VSPHERE_OPERATIONS, steps, axes, 5),
  // the step level: what the retrying round-tripper could not replay itself (retrying.ts)
  isTransient,
  describeDestroyed: () => null,
  sharedResources(t, where) {
    const vc = where.endpoint(VCENTERS, t.vcenter);
    const devices = [...new Set([t.vmfsDevice, t.rdmDevice].filter((d): d is string => d !== undefined))];
    // Keys name the VM and datastore by name on the vCenter, never by an optional field: a target
    // with `datacenter: DC0` and one without (the default datacenter, which may be DC0) must meet.
    // Two datacenters holding a VM of one name then take turns too: the safe side.
    return [
      // one VM reconfigured by two targets at once: two disks on one controller, a unit taken twice
      { key: `vsphere-vm ${vc} ${t.vm}`, what: `VM ${t.vm} on ${vc}` },
      // the VMs a vm.count permutation measures instead of clones: each gets disks of ours too
      ...(t.scaleVms ?? []).filter((v) => v !== t.vm).map((v) => ({ key: `vsphere-vm ${vc} ${v}`, what: `VM ${v} on ${vc}` })),
      // an mpx. LUN is one host's: the host by its name, whether given as a name or an inventory path
      ...devices.map((d) => lunResource(d, `${vc} ${t.host.split('/').pop() ?? t.host}`)),
      // one datastore or NFS export measured by two targets at once: each sees the other's load
      ...(t.datastore ? [{ key: `vsphere-datastore ${vc} ${t.datastore}`, what: `datastore ${t.datastore} on ${vc}` }] : []),
      ...(t.nfs ? [{ key: `nfs ${t.nfs.remoteHost.toLowerCase()}:${t.nfs.remotePath}`, what: `NFS export ${t.nfs.remoteHost}:${t.nfs.remotePath}` }] : []),
      // a guest reached through guest operations is the VM itself (its key above)
      ...(t.guest.via === 'ssh' ? fioGuestResources(t.guest, where) : []),
    ];
  },
  compose,
} satisfies ProviderModule<'vsphere', VsphereTarget>;

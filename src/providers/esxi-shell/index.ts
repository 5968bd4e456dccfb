// The `esxi-shell` provider module: an ESXi host reached over SSH, provisioned with partedUtil,
// vmkfstools and vim-cmd; fio runs on the VM's guest (local or SSH).
import { z } from 'zod';
import type { AxisDiagnostic, ProviderModule, TargetDiagnostic } from '../../contract/provider.ts';
import { intIn, matching } from '../../input/fields.ts';
import { connectSsh } from '../../ssh/ssh-runner.ts';
import { CANONICAL_DEVICE_EXPECTED, isCanonicalDevice } from '../canonical-device.ts';
import { esxiVersionField } from '../esxi-version-field.ts';
import { ATTACHED_DISK_TEST_FILE, guestOpener, guestWorkload, nameField, shellAttachedDiskGuestSchema } from '../guest.ts';
import { estimateSteps, schemasOf } from '../operations.ts';
import { ESXI_SHELL_OPERATIONS } from './operations/index.ts';
import { fioGuestResources, lunResource } from '../shared-resources.ts';
import { ESXI_SHELL_AXES } from './axes.ts';
import type { EsxiShellTargetConfig } from './config.ts';
import { planEsxiShellSteps } from './plan.ts';
import { createEsxiShellProvider } from './provider.ts';
import { stopEsxtopLeftovers } from './esxtop.ts';
import { toolOwner } from '../../ssh/process-group.ts';
import { hostVersionArgv, parseVmwareVersion } from './version.ts';
import { shJoin } from '../../ssh/quote.ts';
import { datastoreVolumePath, ESXI_EXPECTED, isEsxiValue } from './validate.ts';
import { connectionLost } from '../../ssh/connection-lost.ts';
import { lazyPreflight } from '../lazy-preflight.ts';
import { esxiSpaceNeeds } from './space-needs.ts';

const canonicalDevice = () => matching(isCanonicalDevice, CANONICAL_DEVICE_EXPECTED);

const targetSchema = z.strictObject({
  provider: z.literal('esxi-shell'),
  sshHost: nameField().describe('The ESXi host, under sshHosts'),
  vmid: z
    .union([z.number(), z.string()])
    .refine((v) => isEsxiValue('vmid', v), { error: `expected ${ESXI_EXPECTED.vmid}` })
    .describe('vim-cmd VM id that gets the disks (vim-cmd vmsvc/getallvms)'),
  datastore: matching((v) => isEsxiValue('volumePath', datastoreVolumePath(v)), `${ESXI_EXPECTED.label}, or ${ESXI_EXPECTED.volumePath}`)
    .optional()
    .describe('Existing datastore (volume label) for datastore.kind = existing'),
  vmfsDevice: canonicalDevice().optional(),
  rdmDevice: canonicalDevice().optional(),
  allowedDevices: z.array(canonicalDevice()).default([]),
  controllerBus: intIn(0, 3, 'a SCSI controller bus').default(0),
  version: esxiVersionField(),
  // fio measures the disk each permutation attaches, found in the guest by its WWN (../guest-disk.ts)
  guest: shellAttachedDiskGuestSchema,
});

export type EsxiShellTarget = z.output<typeof targetSchema>;

/** The target as the planner and the provider see it: no endpoint, no credentials. */
export function esxiShellConfigOf(t: EsxiShellTarget): EsxiShellTargetConfig {
  return {
    host: t.sshHost,
    vmid: String(t.vmid),
    datastoreVolumePath: t.datastore ? datastoreVolumePath(t.datastore) : undefined,
    vmfsDevice: t.vmfsDevice,
    rdmDevice: t.rdmDevice,
    allowedDevices: t.allowedDevices,
    scsiBus: t.controllerBus,
    version: t.version,
    guestWorkdir: t.guest.workdir,
  };
}

export const esxiShell = {
  name: 'esxi-shell',
  targetSchema,
  secretFields: [],
  axes: ESXI_SHELL_AXES,
  // esxcli, vmkfstools, partedUtil and vim-cmd run as POSIX sh command lines (shJoin); ESXi's sshd
  // rejects the `password` method and asks through keyboard-interactive (config/inventory.ts)
  sshHostsOf: (t) => [{ name: t.sshHost, path: ['sshHost'], shell: 'posix', keyboardInteractive: true }, ...(t.guest.sshHost ? [{ name: t.guest.sshHost, path: ['guest', 'sshHost'], shell: 'posix' as const }] : [])],
  checkInventory(t) {
    const out: TargetDiagnostic[] = [];
    for (const key of ['vmfsDevice', 'rdmDevice'] as const) {
      const dev = t[key];
      if (dev && !t.allowedDevices.includes(dev)) out.push({ path: [key], message: `${dev} is not listed in allowedDevices; a device is formatted or mapped only when the inventory allows it by canonical name` });
    }
    if (t.guest.testFile !== undefined) out.push({ path: ['guest', 'testFile'], message: ATTACHED_DISK_TEST_FILE });
    return out;
  },
  validate(t, values, name) {
    const out: AxisDiagnostic[] = [];
    for (const [i, k] of (values['datastore.kind'] ?? []).entries()) {
      if (String(k).startsWith('vmfs') && !t.vmfsDevice) out.push({ axis: 'datastore.kind', index: i, message: `"${k}" formats a LUN, but target "${name}" names no vmfsDevice` });
      if (k === 'existing' && !t.datastore) out.push({ axis: 'datastore.kind', index: i, message: `"existing" needs target "${name}" to name a datastore` });
    }
    for (const [i, f] of (values['disk.format'] ?? []).entries()) {
      if (String(f).startsWith('rdm') && !t.rdmDevice) out.push({ axis: 'disk.format', index: i, message: `"${f}" maps a LUN, but target "${name}" names no rdmDevice` });
    }
    return out;
  },
  planner(t) {
    const cfg = esxiShellConfigOf(t);
    return (axes, names) => planEsxiShellSteps(axes, cfg, { base: names.prefix });
  },
  // one schema per operation (operations/*.ts): plan.ts builds steps through them, `run --resume` parses them again
  operations: schemasOf(ESXI_SHELL_OPERATIONS),
  // ~5 s a step; an eagerly zeroed disk writes itself whole (operations/create-disk.ts)
  estimateSec: (steps, axes) => estimateSteps(ESXI_SHELL_OPERATIONS, steps, axes, 5),
  isTransient: connectionLost,
  describeDestroyed: () => null,
  sharedResources(t, where) {
    const host = where.machine(t.sshHost);
    const devices = [...new Set([t.vmfsDevice, t.rdmDevice].filter((d): d is string => d !== undefined))];
    return [
      { key: `esxi-vm ${host} ${String(t.vmid)}`, what: `VM ${String(t.vmid)} (vim-cmd vmid) on ${host}` },
      ...devices.map((d) => lunResource(d, host)),
      ...(t.datastore ? [{ key: `esxi-datastore ${host} ${datastoreVolumePath(t.datastore)}`, what: `datastore ${t.datastore} on ${host}` }] : []),
      ...fioGuestResources(t.guest, where),
    ];
  },
  compose(target, ctx) {
    const cfg = esxiShellConfigOf(target);
    const g = guestWorkload(ctx, target.guest);
    return {
      provider: 'esxi-shell',
      planSteps: (axes, names) => planEsxiShellSteps(axes, cfg, { base: names.prefix }),
      connectProvider: async () => createEsxiShellProvider(cfg, await connectSsh(ctx.ssh(target.sshHost)), { guest: { byIdDir: target.guest.byIdDir, sudo: target.guest.sudo, diskWaitSec: target.guest.diskWaitSec, open: guestOpener(ctx, target.guest) } }),
      readHostVersion: async () => {
        const runner = await connectSsh(ctx.ssh(target.sshHost));
        try {
          const r = await runner.run(shJoin(hostVersionArgv()));
          return parseVmwareVersion(r.stdout, `${target.sshHost}: vmware -v`);
        } finally {
          await runner.close().catch(() => undefined);
        }
      },
      workload: g.endpoint,
      // cleanup: the esxtop a dead process of the run left on the host (esxtop.ts)
      stopHostLeftovers: async (runId, name) => {
        const runner = await connectSsh(ctx.ssh(target.sshHost));
        try {
          return await stopEsxtopLeftovers(runner, toolOwner(runId, name));
        } finally {
          await runner.close().catch(() => undefined);
        }
      },
      workloadProvider: g.provider,
      workloadTarget: g.describe,
      insecureEndpoints: [],
      preflight: lazyPreflight(esxiSpaceNeeds, async () => (await import('./preflight.ts')).esxiShellPreflight(() => connectSsh(ctx.ssh(target.sshHost)), { host: target.sshHost, version: target.version, vmid: String(target.vmid), devices: [target.vmfsDevice, target.rdmDevice].filter((d): d is string => d !== undefined) })),
    };
  },
} satisfies ProviderModule<'esxi-shell', EsxiShellTarget>;

// An inventory target as its provider's pure planner sees it: the mapping is here, once, so that
// `validate` (src/plan/check.ts dry-runs the planners) and `plan`/`run` (src/cli/compose.ts) plan
// with the same configuration. No endpoint, no credentials: a planner never receives them.
import type { PlannedStep } from '../contract/provider.ts';
import type { Axes } from '../contract/axis.ts';
import type { EsxiShellTargetConfig } from '../providers/esxi-shell/config.ts';
import { planEsxiShellSteps } from '../providers/esxi-shell/plan.ts';
import type { HypervTargetConfig } from '../providers/hyperv/config.ts';
import { planHypervSteps } from '../providers/hyperv/plan.ts';
import type { VsphereStepTarget } from '../providers/vsphere/config.ts';
import { planVsphereSteps } from '../providers/vsphere/steps.ts';
import { datastoreVolumePath } from '../providers/esxi-shell/validate.ts';
import type { Target } from './inventory.ts';

type Of<P extends Target['provider']> = Extract<Target, { provider: P }>;

export function esxiShellConfigOf(t: Of<'esxi-shell'>): EsxiShellTargetConfig {
  return {
    host: t.sshHost,
    vmid: String(t.vmid),
    datastoreVolumePath: t.datastore ? datastoreVolumePath(t.datastore) : undefined,
    vmfsDevice: t.vmfsDevice,
    rdmDevice: t.rdmDevice,
    allowedDevices: t.allowedDevices,
    scsiBus: t.controllerBus,
    version: t.version,
  };
}

export function hypervConfigOf(t: Of<'hyperv'>): HypervTargetConfig {
  return {
    host: t.sshHost,
    vmName: t.vmName,
    volumes: t.volumes,
    allowedDisks: t.allowedDisks,
    passthroughDisk: t.passthroughDisk,
    scsiController: t.scsiController,
    scsiLocation: t.scsiLocation,
    guestTestPath: t.guestTestPath,
  };
}

/** The vSphere target without its endpoint (the composition root adds that for a real run). */
export function vsphereStepTargetOf(t: Of<'vsphere'>): VsphereStepTarget {
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
  };
}

/** One permutation's provisioning steps on a target; `prefix` is the permutation's owned-name prefix. */
export type TargetStepPlanner = (axes: Axes, names: { prefix: string }) => PlannedStep[];

/** The target's pure step planner; none for local and ssh targets, which provision nothing. */
export function stepPlannerOf(target: Target): TargetStepPlanner | undefined {
  switch (target.provider) {
    case 'local':
    case 'ssh':
      return undefined;
    case 'esxi-shell': {
      const cfg = esxiShellConfigOf(target);
      return (axes, names) => planEsxiShellSteps(axes, cfg, { base: names.prefix });
    }
    case 'hyperv': {
      const cfg = hypervConfigOf(target);
      return (axes, names) => planHypervSteps(axes, cfg, { base: names.prefix });
    }
    case 'vsphere': {
      const cfg = vsphereStepTargetOf(target);
      return (axes, names) => planVsphereSteps(axes, cfg, names);
    }
  }
}

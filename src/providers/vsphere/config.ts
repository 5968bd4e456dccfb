// What the vSphere provider needs to know about one target; the inventory loader maps onto it.
import type { VsphereEndpoint } from './client.ts';

export interface VsphereTargetConfig {
  vcenter: Omit<VsphereEndpoint, 'userAgent'>;
  /** datacenter name or path; optional when the endpoint has exactly one (or for lookups by path) */
  datacenter?: string;
  /** host name or inventory path (DC/host/cluster/host) where datastores are created */
  host: string;
  /** VM name or inventory path that receives the benchmark disks */
  vm: string;
  /** datastore name, for datastore.kind 'existing' */
  datastore?: string;
  /** canonical name of the LUN to format for VMFS permutations */
  vmfsDevice?: string;
  /** canonical name of the LUN to map for RDM permutations */
  rdmDevice?: string;
  /** the only canonical names any step may format or map raw */
  allowedDevices: string[];
  /** `vaaiNas`: the host has a VAAI-NAS plugin for this export (thick disks possible); default no */
  nfs?: { remoteHost: string; remotePath: string; vaaiNas?: boolean };
  /** the host's ESXi release ("8.0"), stated in the inventory or read from the host
   *  (config.product.version); the planner refuses what it cannot create (../esxi-version.ts) */
  version?: string;
  /** the guest's work directory: a guest.filesystem is mounted in `<guestWorkdir>/<owned name>` */
  guestWorkdir?: string;
  /** existing VMs a `vm.count` permutation measures instead of clones, in order (vm-count.ts) */
  scaleVms?: readonly string[];
  /** the guest's OS (default linux): a Windows guest's disk is found by Get-Disk and measured raw */
  guestOs?: 'linux' | 'windows';
}

/**
 * What the pure step planner sees: the target without its endpoint. The planner cannot put the
 * vCenter URL or credentials into a plan (and so into run.sqlite or the ledger) because it never
 * receives them.
 */
export type VsphereStepTarget = Omit<VsphereTargetConfig, 'vcenter'>;

// A planned step and what names it: the plan's unit of data (contract/provider.ts re-exports these;
// a file of its own so contract files that need a step do not import the whole provider contract).
export type ProviderName = 'local' | 'ssh' | 'vsphere' | 'esxi-shell' | 'hyperv';

export interface OwnedObjectRef {
  /** e.g. 'datastore', 'disk', 'rdm', 'disk-attachment', 'vhdx', 'vmfs-partition' */
  kind: string;
  /** deterministic owned name: `ss-<runId>-<permutationId>-<suffix>`; lookups after a crash use it */
  name: string;
}

export interface PlannedStep {
  /** unique within the permutation, e.g. 'datastore', 'disk', 'attach', 'workload' */
  step: string;
  provider: ProviderName;
  /** the API method or command the step amounts to, e.g. 'CreateVmfsDatastore', 'vmkfstools -C' */
  operation: string;
  /** every value the call will use (never a secret) — what `run --dry-run --json` prints */
  arguments: Record<string, unknown>;
  /** true when the step destroys data it did not create (formatting a LUN, offlining a disk) */
  destructive: boolean;
  /**
   * What a destructive step destroys, by canonical name: `naa.*`/`eui.*`/`t10.*`/`mpx.*` for a LUN,
   * `disk<Number>:<SerialNumber or UniqueId>` for a Hyper-V host disk, the path for a raw guest
   * device (`/dev/sdb`) or diskspd physical drive (`#1`). `--confirm-destroy` must list exactly the
   * union over the plan. Empty/absent when `destructive` is false.
   */
  destroys?: string[];
  /** the object this step creates, if any; it is torn down in reverse step order */
  creates?: OwnedObjectRef;
}

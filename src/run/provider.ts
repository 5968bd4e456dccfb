// The contract between the executor and every provider (vsphere, esxi-shell, hyperv, local, ssh).
// A permutation's plan is a list of PlannedStep values (pure data, serializable, secret-free). The
// executor records an intent in the ledger before each step that `creates` an object and calls
// `apply`; apply calls `ctx.sent(data)` once its guards passed, just before its first mutating
// command, and the executor records that as 'sent' with the data; then it records the returned id.
// An intent authorises nothing: teardown destroys only what was sent (or is found by owned name),
// in reverse order, with `destroy` (see docs/architecture.md, "The ledger").
import type { Axes } from '../results/record.ts';

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

/** An object a step created, as recorded in the ledger. `id` is the provider's own id. */
export interface CreatedObject extends OwnedObjectRef {
  provider: ProviderName;
  id: string;
  /** what destroy() needs besides the id (datastore name, VM, device key…); never a secret */
  data: Record<string, unknown>;
}

export interface ProviderContext {
  runId: string;
  permutationId: string;
  axes: Axes;
  signal: AbortSignal;
  /** progress / log events; messages must not contain secrets */
  log(message: string, fields?: Record<string, unknown>): void;
  /**
   * apply() calls this after its guards passed and right before its first mutating command, with
   * everything destroy() will need to prove the object is ours (device and exact layout, path,
   * location, disk serial…). It may be called again with more data (e.g. a computed end sector)
   * before the next mutating command. Without this call the step counts as never sent.
   */
  sent(data: Record<string, unknown>): void;
}

export interface Provider {
  readonly name: ProviderName;
  /** Carry out one planned step. Returns the object created (if the step creates one). */
  apply(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null>;
  /**
   * Remove an object this run created. Idempotent: an object already gone is 'absent'. Uses only
   * `id` and `data` as recorded (never inventory values): `id` is null when the create was sent but
   * its reply never recorded; `data` is then what apply passed to `ctx.sent`. The object must be
   * found carrying the owned name or matching the recorded id/layout exactly; anything else is
   * 'absent' (left alone).
   */
  destroy(obj: OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> }, ctx: ProviderContext): Promise<'removed' | 'absent'>;
  /** Look an owned object up by kind and name (reconciliation after an ambiguous failure). */
  find(ref: OwnedObjectRef): Promise<CreatedObject | null>;
  /** Facts for the run's environment fingerprint (product versions…); never secrets. */
  describe?(): Promise<Record<string, string>>;
  /** Log out, close connections. */
  close(): Promise<void>;
}

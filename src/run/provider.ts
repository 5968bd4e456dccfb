// The contract between the executor and every provider (vsphere, esxi-shell, hyperv, local, ssh).
// A permutation's plan is a list of PlannedStep values (pure data, serializable, secret-free). The
// executor records an intent in the ledger before each step that `creates` an object, calls
// `apply`, records the returned id, and later tears down in reverse order with `destroy`.
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
}

export interface Provider {
  readonly name: ProviderName;
  /** Carry out one planned step. Returns the object created (if the step creates one). */
  apply(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null>;
  /**
   * Remove an object this run created. Idempotent: an object already gone is 'absent'.
   * `id` may be null when only the intent was recorded (crash between call and reply); the
   * provider then looks the object up by its owned name.
   */
  destroy(obj: OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> }, ctx: ProviderContext): Promise<'removed' | 'absent'>;
  /** Look an owned object up by kind and name (reconciliation after an ambiguous failure). */
  find(ref: OwnedObjectRef): Promise<CreatedObject | null>;
  /** Facts for the run's environment fingerprint (product versions…); never secrets. */
  describe?(): Promise<Record<string, string>>;
  /** Log out, close connections. */
  close(): Promise<void>;
}

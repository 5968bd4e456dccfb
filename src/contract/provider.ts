// The provider contract: what the executor, the planner, `validate` and the composition root know of
// a provider (vsphere, esxi-shell, hyperv, local, ssh). A leaf below config/, plan/ and run/: it
// imports nothing of ours but its own files (types only; test/architecture/layers.ts). Each provider is one folder
// under src/providers/ whose index.ts exports one ProviderModule; src/providers/index.ts lists them.
//
// A permutation's plan is a list of PlannedStep values (pure data, serializable, secret-free). The
// executor records an intent in the ledger before each step that `creates` an object and calls
// `apply`; apply calls `ctx.sent(data)` once its guards passed, just before its first mutating
// command, and the executor records that as 'sent' with the data; then it records the returned id.
// An intent authorises nothing: teardown destroys only what was sent (or is found by owned name),
// in reverse order, with `destroy` (see docs/architecture.md, "The ledger").
import type { z } from 'zod';
import type { CommandRunner, SshOptions } from './command-runner.ts';
import type { GroupStop } from './host-process.ts';
import type { OnRaw, PrefillOutcome, ScoredSpan, TestOutcome, WorkloadProfile, WorkloadTest } from './workload.ts';
import type { AxisSpec, Axes, AxisValue } from './axis.ts';
import type { HostObserver } from './host-metrics.ts';
import type { HostProcessStop } from './host-process.ts';
import type { TargetPreflight } from './preflight.ts';
import type { OwnedObjectRef, PlannedStep, ProviderName } from './step.ts';

export type { OwnedObjectRef, PlannedStep, ProviderName } from './step.ts';

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
  /**
   * Whose processes this permutation starts: toolOwner(runId, target) (ssh/process-group.ts). A
   * host-side monitor (esxtop) carries it so that a later process of the run finds it
   * (Provider.stopLeftovers) and another target's leftover-stopper never stops it.
   */
  owner?: string;
  signal: AbortSignal;
  /** progress / log events; messages must not contain secrets */
  log(message: string, fields?: Record<string, unknown>): void;
  /**
   * apply() calls this after its guards passed and right before its first mutating command, with
   * everything destroy() will need to prove the object is ours (device and exact layout, path,
   * location, disk serial…). It may be called again with more data (e.g. a computed end sector)
   * before the next mutating command. Without this call the step counts as never sent. Await it:
   * the executor's record is durable (and a refusal thrown) only once it resolves, and a store
   * may be remote (PostgreSQL: results/pg-store.ts).
   */
  sent(data: Record<string, unknown>): void | Promise<void>;
  /**
   * The one handoff of the disk under test from provisioning to the workload: a step that found
   * the disk it attached in the guest (and prepared it) says here what the permutation's workload
   * measures. A later step may say it again (the filesystem it made on that disk); the last word
   * counts. The executor journals it, hands it to the workload endpoint (`target`) and puts its
   * `facts` in every record. Absent outside a provisioning step.
   */
  measure?(target: MeasuredTarget): void;
  /** What the last ctx.measure said (a later step that tunes the disk found: providers/guest-settings.ts). */
  measured?(): MeasuredTarget | undefined;
  /**
   * What the user confirmed this run may destroy (`--confirm-destroy`, as the run recorded it or a
   * resume confirmed it again): a step that finds something not ours where it would write (a test
   * file storsweep did not create) goes on only when its name is here. Absent: nothing confirmed.
   * A destroy that finds no mark of the run on an object (a bare partition table on a LUN) acts
   * only on a device named here, and only when it was named in this command (`cleanup
   * --confirm-destroy`, `run`, `run --resume`: run/executor.ts `confirmedHere`); a ledger row or a
   * stored confirmation never stands in for it.
   */
  confirmedDestroy?: readonly string[];
}

/**
 * What destroy() will do, decided by reading the host now and changing nothing: 'absent' (nothing
 * of ours there), or 'remove' with `acts`, exactly what the action is carried out on (a device and
 * partition, a datastore and its LUN) — the value `run()` uses, from the same field. A refusal is
 * thrown (UnsafeOperation), with the same text the action would give.
 */
export type DestroyPlan = { outcome: 'absent' } | { outcome: 'remove'; acts: string; run(): Promise<'removed' | 'absent'> };

/** What a permutation's workload measures, as a provisioning step found it in the guest. */
export interface MeasuredTarget {
  /**
   * what the benchmark tool is given: a Linux device node (/dev/sdb), diskspd's physical drive
   * (`#2`), or the test file on the filesystem the step made on that disk
   */
  path: string;
  /** the disk as the guest names it, for messages: /dev/sdb, `guest disk 2` */
  device: string;
  /** the identity it was found by, for messages: `wwn-0x6000c29…`, a Windows serial or unique id */
  identity: string;
  /** `raw`, or the filesystem the step made on the disk (ext4, xfs, NTFS, ReFS) */
  filesystem: string;
  /** what every record says about the disk measured (metadata: device and deviceWwn, guestDisk and guestDiskId, allocationUnitBytes…) */
  facts: Record<string, string | number>;
  /**
   * A `vm.count` permutation's VM this disk is in (1-based `index`, the VM's name): each member's
   * guest-disk step says its own, and the executor runs the workload on every member at once
   * (run/vm-members.ts, through WorkloadEndpoint.connectTo). Absent: the target's own VM.
   */
  member?: { index: number; vm: string };
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
  /**
   * The read-only half of destroy() for the kinds whose ownership the host proves by a mark the
   * run put there (a VMFS label, a datastore name): destroy() of those kinds is this plan's run().
   * `cleanup --dry-run` prints the plan (or the refusal) without running it. Null: this kind has no
   * such plan; the dry run shows the ledger row only. Absent: the same for every kind.
   */
  planDestroy?(obj: OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> }, ctx: ProviderContext): Promise<DestroyPlan | null>;
  /**
   * Look an owned object up by kind and name (reconciliation after an ambiguous failure). `sent` is
   * what apply passed to `ctx.sent` before the failure, when it did: an object that carries no
   * owned name (a Hyper-V pass-through drive) is found by that recorded location and identity.
   */
  find(ref: OwnedObjectRef, sent?: Record<string, unknown>): Promise<CreatedObject | null>;
  /**
   * Check an object against the step that created it, reading it back from the product: the
   * state its axes name (a disk's provisioning format…). The executor calls it for every object a
   * step yields — the one apply() returned and the one find() found after an ambiguous failure —
   * once the object is recorded, so a mismatch fails the permutation and teardown removes it.
   * Throws ProvisionedStateMismatch (or a read error); absent: nothing to check.
   */
  verify?(step: PlannedStep, created: CreatedObject, ctx: ProviderContext): Promise<void>;
  /**
   * Whether a failed apply/find/destroy is worth another attempt of the whole call (the executor
   * retries it with backoff; an apply that had sent is looked up with find() first). Only what
   * the provider's own transport has not already retried (a vSphere round trip retries itself:
   * src/providers/vsphere/retrying.ts). Absent: nothing is retried.
   */
  isTransient?(err: unknown): boolean;
  /** Facts for the run's environment fingerprint (product versions…); never secrets. */
  describe?(): Promise<Record<string, string>>;
  /**
   * How to watch a test of this permutation from the host (vSphere PerformanceManager counters of
   * the disk under test, esxtop on an ESXi host), given what its steps created, as recorded; null
   * when there is nothing to watch (no disk attached). The executor wraps every test in it and
   * stores what it saw as the record's `host`.
   */
  observeHost?(provisioned: readonly CreatedObject[], ctx: ProviderContext): HostObserver | null;
  /**
   * Stops what an earlier process of run `runId` left running on the host for `target` (a monitor
   * observeHost started: esxtop), only where the host still shows it as that process, and removes
   * its files; says per process what was stopped and what was left alone. Called where the
   * workload's stopLeftovers is: `run --resume`, a worker's takeover, `cleanup`.
   */
  stopLeftovers?(runId: string, target: string): Promise<HostProcessStop>;
  /** Log out, close connections. */
  close(): Promise<void>;
}

/** Where a permutation's workload runs and how one test is run there (fio on a guest, diskspd in a Hyper-V VM). */
export interface WorkloadEndpoint {
  /** the benchmark tool, recorded in every record */
  tool: 'fio' | 'diskspd';
  /**
   * True when the endpoint measures the disk a provisioning step found in the guest
   * (ProviderContext.measure), not a path of its own: the executor refuses to run its workload
   * when no step found one.
   */
  measuresAttachedDisk?: boolean;
  /**
   * What preflight checks of the guest besides its tool (src/preflight/guest.ts): `sudo`, the
   * commands that touch the disk and the tool go through `sudo -n` (guest.sudo); `testFile`, the
   * file a file test writes there (absent where the workload measures a raw device or the disk a
   * step attaches).
   */
  guestNeeds?: { sudo?: boolean; testFile?: string };
  /** connects (or reconnects after a loss) to where the workload runs */
  connect(): Promise<CommandRunner>;
  /** connects to the guest of another VM the run made for the target (a `vm.count` clone, MeasuredTarget.member); absent: it makes none */
  connectTo?(vm: string): Promise<CommandRunner>;
  /** facts about the guest for the environment fingerprint (OS, tool version) */
  describe?(runner: CommandRunner): Promise<Record<string, string>>;
  /**
   * Once per permutation, before its first pass: the pre-fill (workloads/prefill.ts) writes the test
   * region with incompressible data when the profile says `prefill` (and a diskspd file target is
   * created); null when nothing was done. Its outcome is journaled and kept in every record.
   */
  prepare?(runner: CommandRunner, profile: WorkloadProfile, opts: { signal: AbortSignal; owner: string; timeoutSlackSec?: number; onStopped?: (stop: GroupStop) => void; target?: MeasuredTarget }): Promise<PrefillOutcome | null>;
  /**
   * one test of a profile: warm-up, measured passes, aggregation (see workloads/passes.ts).
   * `target` is the disk a provisioning step found in the guest and said through
   * ProviderContext.measure (vSphere, ESXi shell, Hyper-V): the workload measures that, never a
   * path fixed in the inventory. `scored` is told when the scored passes start and end (the host
   * watches exactly them).
   */
  runTest(runner: CommandRunner, test: WorkloadTest, profile: WorkloadProfile, opts: { signal: AbortSignal; onRaw: OnRaw; owner: string; timeoutSlackSec?: number; onStopped?: (stop: GroupStop) => void; target?: MeasuredTarget; scored?: ScoredSpan }): Promise<TestOutcome>;
  /**
   * Stops what an earlier process of run `runId` left running there for `target` (it was killed, or
   * lost its connection, while the tool ran), so that a resume neither runs a second one on the same
   * file nor tears down a disk under it. Only that target's: its tools carry `owner` =
   * toolOwner(runId, target) (prepare, runTest); another target of the run on the same machine may
   * be measuring right now (another worker).
   */
  stopLeftovers?(runner: CommandRunner, runId: string, target: string): Promise<GroupStop>;
}

/** One permutation's provisioning steps on a target; `prefix` is the permutation's owned-name prefix. */
export type StepPlanner = (axes: Axes, names: { prefix: string }) => PlannedStep[];

/**
 * A matrix problem of one target, keyed by the axis it is about: `validate` reports it at the
 * axis value's file:line:col (`index` into the axis's values), or at the axis when there is no index.
 */
export interface AxisDiagnostic {
  axis: string;
  index?: number;
  message: string;
  /** a key path inside the target's inventory entry the problem is also about: `validate` reports it there too */
  inventory?: Array<string | number>;
}

/** An inventory problem of one target, at a key path inside the target's entry (e.g. ['vmfsDevice']). */
export interface TargetDiagnostic {
  path: Array<string | number>;
  message: string;
}

/** What one run's compositions share per remote endpoint: a session and a limit on calls in flight. */
export interface EndpointPool {
  /** the session of `key`, connecting on first use; a failed connect is retried by the next caller */
  session<S extends { logout(): Promise<void> }>(key: string, connect: () => Promise<S>): Promise<S>;
  /**
   * `provider` with its apply/destroy queued on the endpoint's limit and a close() that is
   * idempotent and logs the shared session out only when the endpoint's last provider closes.
   * `limitKey`: the limit's own key when several sessions (accounts) share one endpoint's limit
   * (default `key`); the smallest maxConcurrent given for it holds.
   */
  share(key: string, maxConcurrent: number, provider: Provider, o?: { limitKey?: string }): Provider;
  /**
   * Logs out every session still open (idempotent). The composition root calls it on every exit
   * path: a session a read-only check opened (the capacity gate) has no provider to close it when
   * the run is refused before any provider connects.
   */
  close(): Promise<void>;
}

/**
 * What the composition root (src/app/compose.ts) hands a provider to wire a target up: the only
 * place secrets are revealed. A planner never receives this.
 */
export interface ComposeContext {
  /** the inventory file, for messages */
  file: string;
  /** a path from the inventory, resolved against the inventory's directory (`~` expanded) */
  resolvePath(p: string): string;
  /** connection options of `sshHosts.<name>`, secrets revealed; UsageError when there is none */
  ssh(name: string): SshOptions;
  /** the value of a secret reference the inventory holds */
  reveal(ref: string): string | undefined;
  /** the `<section>.<name>` entry of a provider's own endpoint section (ProviderModule.endpointSection), as parsed; undefined when there is none */
  endpoint(section: string, name: string): unknown;
  /** the environment the inventory was loaded with (the CLI's, read once there): an endpoint's defaults (govc's GOVC_*) */
  env: Env;
  /** shared by the compositions of one run: targets on one endpoint share its session and limit */
  pool: EndpointPool;
}

/** A target wired up for a run: its planner, how to connect its provider, where its workload runs. */
export interface Composition {
  provider: ProviderName;
  planSteps?: StepPlanner;
  /** connects the provider (SOAP session, SSH) — only for a real run, never for plan/dry-run */
  connectProvider(): Promise<Provider | null>;
  /**
   * The host's ESXi release read from the host (read-only: a property read, `vmware -v`), for a
   * target whose inventory states no `version`; a run asks it before anything is changed.
   */
  readHostVersion?(): Promise<string>;
  /**
   * Read-only checks of the plan's axes against what the endpoint has now (vSphere: the storage
   * policies `disk.policy` names exist and the target's datastore satisfies them); a run asks it
   * before anything is created and throws its refusal. `axes`: every permutation of this target.
   */
  checkOnline?(axes: readonly Axes[]): Promise<void>;
  workload: WorkloadEndpoint;
  /**
   * Provider.stopLeftovers through a connection of its own (cleanup: no provider session is
   * opened just for this); absent where the provider starts nothing on the host.
   */
  stopHostLeftovers?(runId: string, target: string): Promise<HostProcessStop>;
  /** where the workload step runs: the guest's transport, or the provider itself (Hyper-V) */
  workloadProvider: ProviderName;
  /** secret-free description of where the workload runs */
  workloadTarget: Record<string, unknown>;
  /** endpoints of this target whose certificate or host key is not verified (reported) */
  insecureEndpoints: string[];
  /** what it shares with other targets (the module's `sharedResources`), filled in by the composition root */
  sharedResources?: SharedResource[];
  /** the test file its workload writes, when a file storsweep did not create may already be there (local, ssh) */
  testFile?: TestFileCheck;
  /** what `preflight` and the run's capacity check ask of the target (contract/preflight.ts) */
  preflight?: TargetPreflight;
}

/** A target's test file, looked at before a run writes anything (`run`, `submit`; `validate` on this machine). */
export interface TestFileCheck {
  path: string;
  /** the inventory key it comes from: `testFile`, or `workdir` for the default file in it */
  key: 'testFile' | 'workdir';
  /** on this machine: `validate` looks too (it connects nowhere) */
  local: boolean;
  /** reads the guest now (read-only): what is there when it is a file storsweep did not create, else null */
  look(): Promise<ForeignFile | null>;
}

/** A file at a test file's path that carries no mark of storsweep: overwritten only when confirmed by its path. */
export interface ForeignFile {
  /** the name `--confirm-destroy` takes: the path */
  path: string;
  /** where it was found, for messages (`local`, `user@host:22`) */
  where: string;
  /** what was found there, in words */
  found: string;
}

/**
 * Something a target's permutations use that another listed target may use too: a VM, a guest's
 * test file or work directory, a LUN, a Hyper-V VM or host disk, a datastore or volume. Targets
 * that share one never run at the same time (the executor serialises them on `key`; `plan` says so).
 */
export interface SharedResource {
  /** the same text for the same resource, whichever target or provider names it (normalised) */
  key: string;
  /** the resource in words, for `plan` and the run's progress (e.g. `guest test file /x on this machine`) */
  what: string;
}

/** What `sharedResources` learns of the inventory around a target: which machine an endpoint is. */
export interface ResourceContext {
  /**
   * The machine an `sshHosts` entry reaches, normalised: `this machine` for none (the target runs
   * here) and for a loopback address (127.0.0.0/8, ::1, localhost: a port there is a process on
   * this machine), else `host:port`. Two entries reaching one machine give the same text.
   */
  machine(sshHost: string | undefined): string;
  /**
   * The endpoint an entry of a provider's endpoint section reaches, normalised (EndpointReach.identity:
   * a vCenter's URL's host:port); two entries naming one endpoint give the same text.
   */
  endpoint(section: string, name: string): string;
}

/** What the inventory around a target offers, for a provider's inventory checks. */
export interface InventoryNames {
  sshHosts: readonly string[];
  /** the entry names of each provider's own endpoint section (ProviderModule.endpointSection), by its key */
  endpoints: Readonly<Record<string, readonly string[]>>;
  env: Env;
}

/** The process environment as a value (read once, by the CLI). */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * A provider's own top-level inventory section of named endpoints (vSphere's vCenter entries). The
 * core knows it only through these members: the schema and layering (config/), its secrets
 * (config/index.ts), and what an entry reaches (app/compose.ts, app/queue/queue-meta.ts).
 */
export interface EndpointSection {
  /** the top-level key (vSphere's is in providers/vsphere/endpoint.ts) */
  readonly key: string;
  /** one entry's schema */
  readonly schema: z.ZodType;
  /** the section's description in the JSON Schema; absent: none (the entries describe themselves) */
  readonly description?: string;
  /** key paths inside an entry holding secret references (resolved, masked, never recorded) */
  readonly secretFields?: ReadonlyArray<readonly string[]>;
  /** keys of an entry naming a file on this machine, relative to its inventory file (several `-i`: made absolute) */
  readonly pathFields?: readonly string[];
  /** what an entry reaches (undefined: no entry by that name), with the environment's defaults */
  reach?(name: string, entry: unknown, env: Env): EndpointReach;
  /**
   * A secret an entry falls back to from the environment when it gives none (govc's GOVC_PASSWORD):
   * a secret of the inventory too (masked, held to the minimum length). Undefined: none.
   */
  envSecret?(entry: unknown, env: Env): EnvSecret | undefined;
}

/** What an endpoint entry reaches. */
export interface EndpointReach {
  /** the endpoint normalised (a URL's host:port): equal for two spellings of one endpoint; else a text naming the entry */
  identity: string;
  /** its host name, when it has one: a loopback host makes a target bound to the machine that runs it */
  host?: string;
  /** what a measurement depends on (`url`), recorded as `<section>.<name>.<key>`; never a secret */
  facts?: Readonly<Record<string, string>>;
  /** provisioning calls sent to the endpoint `key` at once: workers must agree on it */
  limit?: { key: string; max: number };
}

/** A secret taken from the environment for an endpoint entry. */
export interface EnvSecret {
  /** where it comes from, for messages and masking (`GOVC_PASSWORD`) */
  where: string;
  /** the reference it prints as (`$GOVC_PASSWORD`) */
  ref: string;
  /** the words before a refusal (`the password from GOVC_PASSWORD/GOVC_URL`) */
  what: string;
  value: string;
}

/**
 * A provider, as one folder `src/providers/<name>/` whose `index.ts` exports one of these and
 * `src/providers/index.ts` lists it. `T` is its inventory target (the output of `targetSchema`).
 */
export interface ProviderModule<N extends ProviderName = ProviderName, T extends { provider: N } = { provider: N }> {
  readonly name: N;
  /**
   * The provider's own top-level inventory section of named endpoints (vSphere has one for its vCenters),
   * when it has one: the registry adds `<key>: { <name>: <schema> }` to the inventory schema;
   * checkInventory sees its names (InventoryNames.endpoints), compose its entries
   * (ComposeContext.endpoint). See EndpointSection for what the core does with it.
   */
  readonly endpointSection?: EndpointSection;
  /**
   * The entry of its endpointSection the target uses, and where the target names it (a key path in
   * the target): its facts and limit are the target's, its environment secret is the target's.
   */
  endpointOf?(target: T): { name: string; path: string[] } | undefined;
  /** the inventory target's schema: a strict object whose `provider` is the literal `name` */
  readonly targetSchema: z.ZodType<T> & z.ZodObject;
  /** key paths inside a target that hold secret references (resolved, masked, never recorded) */
  readonly secretFields: ReadonlyArray<readonly string[]>;
  /** the matrix axes its planner reads, with the values each takes (`workload.profile` is everyone's) */
  readonly axes: readonly AxisSpec[];
  /**
   * The `sshHosts` entries the target uses, with where (a key path in the target) and the login
   * shell its commands need there: `posix` (sh command lines) or `any` (an explicit powershell.exe).
   */
  sshHostsOf(target: T): Array<{ name: string; path: string[]; shell: 'posix' | 'any'; /** answer keyboard-interactive with the password unless the inventory says otherwise (ESXi) */ keyboardInteractive?: boolean }>;
  /** inventory problems of the target (an entry it names that is missing, a device not allowed…) */
  checkInventory(target: T, names: InventoryNames): TargetDiagnostic[];
  /**
   * Matrix problems of the target that its declared axes cannot say (a value the target's inventory
   * entry gives nothing for); the planner dry-run (src/plan/check.ts) finds the rest.
   * `values` holds each matrix axis's values by flat name; `name` is the target's name for messages.
   */
  validate(target: T, values: Readonly<Record<string, readonly AxisValue[]>>, name: string): AxisDiagnostic[];
  /**
   * The benchmark tool the target's workload runs (default fio): `validate` refuses a custom
   * workload written for the other tool (fio options on a diskspd target, diskspd parameters on a
   * fio one) at the profile value's line.
   */
  workloadTool?(target: T): 'fio' | 'diskspd';
  /** the pure step planner of the target; none when the provider provisions nothing */
  planner(target: T): StepPlanner | undefined;
  /**
   * One schema per operation this provider's steps carry (incl. a workload step it runs): the
   * planner's arguments parse with it, and `run --resume` parses the stored plan's arguments again.
   */
  readonly operations: Readonly<Record<string, z.ZodType>>;
  /** rough seconds the permutation's provisioning takes (create + teardown), from its steps and axes */
  estimateSec(steps: readonly PlannedStep[], axes: Axes): number;
  /**
   * Whether an error of this provider's steps is worth retrying the step for (a task that ended
   * busy, a dropped connection): the rule its Provider's `isTransient` applies, here for callers
   * without a connected provider (tests, docs).
   */
  readonly isTransient: (err: unknown) => boolean;
  /**
   * A `destroys` name of this provider in words for the confirmation message (a Hyper-V
   * `disk2:S4E…` is host disk 2 with that serial), or null when it is not one of its names.
   */
  readonly describeDestroyed: (name: string) => string | null;
  /**
   * What the target's permutations use that another target may use too (its VM, guest test file and
   * work directory, LUNs, host disks, datastores, volumes), by a key equal across targets and
   * providers: listed targets sharing one run one after the other, never at once. Pure: from the
   * inventory entry, with `where` naming the machines and vCenters it reaches.
   */
  sharedResources(target: T, where: ResourceContext): SharedResource[];
  /** wires the target up for a run; secrets are revealed through `ctx` only */
  compose(target: T, ctx: ComposeContext): Composition;
}

// The Linux guest that runs fio, as the local, ssh, vsphere and esxi-shell targets describe it in
// the inventory (its schema), and wired up as their workload endpoint (this machine, or SSH).
import { z } from 'zod';
import type { ComposeContext, Composition, ProviderName, ResourceContext, SharedResource, StepPlanner, WorkloadEndpoint } from '../contract/provider.ts';
import { plainText } from '../input/fields.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { createLocalRunner } from '../ssh/local-runner.ts';
import { connectionLost } from '../ssh/connection-lost.ts';
import { connectSsh } from '../ssh/ssh-runner.ts';
import { fioEndpoint, fioTestFile } from '../workloads/fio-endpoint.ts';
import { linuxTestPathProblem } from '../workloads/test-target.ts';
import { guestDiskFields } from './guest-disk.ts';
import { DISKSPD_PATH_HINT, DISKSPD_PATH_PATTERN, FIO_IOENGINES, FIO_PATH_HINT, FIO_PATH_PATTERN } from '../workloads/tool-settings.ts';
import { secretRefSchema } from '../input/secrets.ts';
import { fioGuestResources } from './shared-resources.ts';
import { markStepSchema, testFileCheck, testFileProvider, testFileSteps } from './test-file.ts';
import { MARK_OPERATION } from './test-file-mark.ts';

/** A required name (an inventory key, host or user name): text without control characters. */
export const nameField = () => plainText().min(1);

// A Linux guest's work directory or test file: absolute, normalised, not under /proc or /sys
// (workloads/test-target.ts says why); anything under /dev but /dev/shm is a raw device.
const guestPath = () =>
  plainText()
    .min(1)
    .superRefine((v, ctx) => {
      // one message per value: a control character is already refused by plainText
      // eslint-disable-next-line no-control-regex
      const problem = /[\x00-\x1f\x7f-\x9f]/.test(v) ? null : linuxTestPathProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

/** The fields of a target that runs fio itself (local, ssh): work directory, test file, tool settings. */
export const fioFields = {
  workdir: guestPath().describe('Directory for the test file (absolute)'),
  testFile: guestPath().optional().describe('Test file, absolute; default <workdir>/storsweep-test.dat. A path under /dev (but /dev/shm) is a raw device: the run needs --confirm-destroy naming it'),
  // the same allow-lists the playbook and the fio builders use (workloads/tool-settings.ts)
  fioPath: z.string().regex(FIO_PATH_PATTERN, { error: FIO_PATH_HINT }).default('fio').describe('fio, or an absolute path to it'),
  ioengine: z.enum(FIO_IOENGINES).default('libaio').describe('fio I/O engine (built-in engines only)'),
};

/** How storsweep reaches a guest: over SSH (or on this machine), or through VMware Tools guest operations. */
export const GUEST_VIA = ['ssh', 'tools'] as const;
export type GuestVia = (typeof GUEST_VIA)[number];
/** The guest's operating system: Linux runs fio, Windows runs diskspd. */
export const GUEST_OS = ['linux', 'windows'] as const;
export type GuestOs = (typeof GUEST_OS)[number];

/** Why `via: tools` is refused on a target whose provider is not vSphere (said at its line). */
export const VIA_TOOLS_ONLY_VSPHERE = 'guest operations (via: tools) go through vCenter/ESXi (GuestOperationsManager): only a vsphere target\'s guest takes them; allowed here: ssh';

/** Where the workload of a provisioning target runs: this machine (no sshHost) or a Linux guest over SSH. */
export const guestSchema = z.strictObject({
  via: z.string().refine((v) => v === 'ssh', { error: VIA_TOOLS_ONLY_VSPHERE }).optional().describe('ssh (the only way here; via: tools needs a vsphere target)'),
  sshHost: nameField().optional().describe('Name under sshHosts; absent = this machine'),
  ...fioFields,
});

export type Guest = z.output<typeof guestSchema>;

/** What the workload step says it measures when the target's provider attaches the disk. */
export const ATTACHED_DISK = 'the disk this permutation attaches, found in the guest by its WWN';

/**
 * The guest of a target whose provider attaches the disk under test (vsphere): fio measures that
 * disk, found by its WWN under byIdDir (providers/guest-disk.ts), never a path from the inventory.
 */
export const attachedDiskGuestSchema = z.strictObject({
  via: z.enum(GUEST_VIA).default('ssh').describe('ssh: the guest is reached over SSH (sshHost) or is this machine; tools: through VMware Tools guest operations on the vCenter/ESXi (StartProgramInGuest, file transfer), with guest.credential — no network path to the guest needed'),
  os: z.enum(GUEST_OS).default('linux').describe('linux: fio measures; windows: diskspd measures (the CrystalDiskMark profiles as diskspd runs them); windows needs via: tools'),
  credential: z
    .strictObject({ username: nameField(), password: secretRefSchema })
    .optional()
    .describe('The guest account guest operations log in with (NamePasswordAuthentication); only with via: tools. The password by reference, never in a file'),
  sshHost: nameField().optional().describe('Name under sshHosts; absent = this machine'),
  // checked per guest.os by the provider's checkInventory (a Linux or a Windows directory)
  workdir: plainText().min(1).describe('Work directory in the guest (absolute): fio control files / the job and output files of guest operations; a Linux path, or on Windows a drive-rooted folder like C:\\storsweep'),
  // refused by the provider's checkInventory (ATTACHED_DISK_TEST_FILE), at its line
  testFile: plainText().optional().describe('Not used: the disk each permutation attaches is found in the guest by its WWN; validate refuses it'),
  fioPath: fioFields.fioPath,
  ioengine: fioFields.ioengine,
  diskspdPath: z.string().regex(DISKSPD_PATH_PATTERN, { error: DISKSPD_PATH_HINT }).optional().describe('os: windows: diskspd.exe in the guest (default C:\\Tools\\diskspd.exe)'),
  ...guestDiskFields,
});

/**
 * The guest of an esxi-shell target: a Linux guest reached over SSH (or this machine) that
 * measures the disk each permutation attaches, found by its WWN. No VMware Tools guest operations
 * (`via: tools`, a Windows guest): they need a vCenter/hostd API session, which the shell provider
 * has not: `via: tools` is refused at its line (VIA_TOOLS_ONLY_VSPHERE), `os`/`credential` are no keys here.
 */
export const shellAttachedDiskGuestSchema = z.strictObject({
  via: guestSchema.shape.via,
  sshHost: nameField().optional().describe('Name under sshHosts; absent = this machine'),
  workdir: fioFields.workdir,
  // refused by the provider's checkInventory (ATTACHED_DISK_TEST_FILE), at its line
  testFile: plainText().optional().describe('Not used: the disk each permutation attaches is found in the guest by its WWN; validate refuses it'),
  fioPath: fioFields.fioPath,
  ioengine: fioFields.ioengine,
  ...guestDiskFields,
});

export type ShellAttachedDiskGuest = z.output<typeof shellAttachedDiskGuestSchema>;

/** Why a testFile is refused on a guest whose provider attaches the disk under test. */
export const ATTACHED_DISK_TEST_FILE = 'not used here: this target measures the disk each permutation attaches, found in the guest by its WWN under guest.byIdDir (a fixed path could name another disk); remove testFile';

export type AttachedDiskGuest = z.output<typeof attachedDiskGuestSchema>;

/** How to reach the guest: SSH when it names an sshHost, else this machine. */
export function guestOpener(ctx: ComposeContext, g: { sshHost?: string | undefined }): () => Promise<CommandRunner> {
  const sshHost = g.sshHost;
  return sshHost ? () => connectSsh(ctx.ssh(sshHost)) : async () => createLocalRunner(ctx.env);
}

/** The guest wired up: its fio endpoint, where it runs (the workload step's provider) and a secret-free description. */
export function guestWorkload(ctx: ComposeContext, g: Guest | AttachedDiskGuest | ShellAttachedDiskGuest): { endpoint: WorkloadEndpoint; describe: Record<string, unknown>; provider: ProviderName } {
  const sshHost = g.sshHost;
  const open = guestOpener(ctx, g);
  const attached = 'byIdDir' in g;
  return {
    endpoint: attached ? fioEndpoint({ ...g, sudo: g.sudo }, open, { attachedDisk: true }) : fioEndpoint(g, open),
    describe: { runsOn: sshHost ? `ssh:${sshHost}` : 'local', ...(attached ? { measures: ATTACHED_DISK } : { testFile: fioTestFile(g) }) },
    provider: sshHost ? 'ssh' : 'local',
  };
}

/**
 * The workload step's arguments (src/plan/plan.ts): the profile, its test ids, the repetitions and
 * where it runs (the composition's workloadTarget). The same for fio and diskspd.
 */
export const workloadStepSchema = z.strictObject({
  profile: z.string().min(1),
  // absent in plans made before the pre-fill existed
  prefill: z.boolean().optional(),
  warmupPass: z.boolean().optional(),
  tests: z.array(z.string().min(1)),
  repetitions: z.number().int().min(1),
  runsOn: z.string().min(1),
  // a path of the inventory; or, where the provider attaches the disk, `measures` (ATTACHED_DISK)
  testFile: z.string().min(1).optional(),
  measures: z.literal(ATTACHED_DISK).optional(),
});

/** The planner of a guest's test file: one marking step per permutation (none for a raw device). */
function testFilePlanner(name: ProviderName, file: string): StepPlanner | undefined {
  return testFileSteps(name, file, '').length ? (_axes, { prefix }) => testFileSteps(name, file, prefix) : undefined;
}

/**
 * What a provider that provisions nothing and runs fio on one guest (`local`: this machine; `ssh`:
 * an `sshHosts` entry) declares besides its name, target schema and ssh hosts: no axis but the
 * workload, no planner, no secrets, no estimate; `guestOf` is the guest its target names.
 */
export function fioGuestModule<N extends ProviderName, T>(name: N, guestOf: (t: T) => Guest) {
  return {
    name,
    secretFields: [],
    axes: [],
    checkInventory: () => [],
    validate: () => [],
    // its one object: the test file, marked before the pre-fill creates it (providers/test-file.ts)
    planner: (t: T): StepPlanner | undefined => testFilePlanner(name, fioTestFile(guestOf(t))),
    operations: { fio: workloadStepSchema, [MARK_OPERATION]: markStepSchema },
    estimateSec: () => 0,
    isTransient: connectionLost,
    describeDestroyed: () => null,
    sharedResources: (t: T, where: ResourceContext): SharedResource[] => fioGuestResources(guestOf(t), where),
    compose(target: T, ctx: ComposeContext): Composition {
      const guest = guestOf(target);
      const g = guestWorkload(ctx, guest);
      const file = fioTestFile(guest);
      const open = guestOpener(ctx, guest);
      const check = testFileCheck(open, file, { local: guest.sshHost === undefined, key: guest.testFile === undefined ? 'workdir' : 'testFile' });
      return {
        provider: name,
        planSteps: testFilePlanner(name, file),
        // a test file to mark, remove and prove ours (none for a raw device: its workload step is confirmed)
        connectProvider: async () => (check ? testFileProvider(name, open, file) : null),
        workload: g.endpoint,
        workloadProvider: g.provider,
        workloadTarget: g.describe,
        insecureEndpoints: [],
        ...(check ? { testFile: check } : {}),
      };
    },
  } as const;
}

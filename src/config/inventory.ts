// The inventory: where a playbook runs. Endpoints (vCenters, SSH hosts), and targets that combine
// them: which VM gets the disks, which LUNs may be formatted, where the workload runs.
//
// Every value a provider checks before it sends anything (src/providers/*/validate.ts) is checked here
// with the same predicate, so `validate` refuses at file:line:col what `run` would refuse later.
import { z } from 'zod';
import { DISKSPD_PATH_HINT, DISKSPD_PATH_PATTERN, FIO_IOENGINES, FIO_PATH_HINT, FIO_PATH_PATTERN } from '../workloads/tool-settings.ts';
import { datastoreVolumePath, ESXI_EXPECTED, ESXI_PATTERNS, isEsxiValue } from '../providers/esxi-shell/validate.ts';
import { HYPERV_DISK_NUMBER, HYPERV_EXPECTED, isHypervValue, type HypervValueKind } from '../providers/hyperv/validate.ts';
import { diskspdTargetProblem } from '../workloads/diskspd.ts';
import { linuxTestPathProblem } from '../workloads/test-target.ts';
import { intIn, matching, plainText } from './fields.ts';
import { ESXI_VERSION_EXPECTED, ESXI_VERSION_PATTERN } from '../providers/esxi-version.ts';
import { secretRefSchema } from './secrets.ts';

const text = plainText();
const name = plainText().min(1);

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
const workdir = guestPath().describe('Directory for the test file (absolute)');
const testFile = guestPath().optional().describe('Test file, absolute; default <workdir>/storsweep-test.dat. A path under /dev (but /dev/shm) is a raw device: the run needs --confirm-destroy naming it');

// The tool settings an inventory may give: the same allow-lists the playbook and the fio/diskspd
// builders use (workloads/tool-settings.ts).
const fioPath = z.string().regex(FIO_PATH_PATTERN, { error: FIO_PATH_HINT }).default('fio').describe('fio, or an absolute path to it');
const ioengine = z.enum(FIO_IOENGINES).default('libaio').describe('fio I/O engine (built-in engines only)');

export const CANONICAL_DEVICE = ESXI_PATTERNS.device;
const canonicalDevice = matching((v) => isEsxiValue('device', v), ESXI_EXPECTED.device);
const hyperv = (kind: HypervValueKind) => matching((v) => isHypervValue(kind, v), HYPERV_EXPECTED[kind]);

// The host's ESXi release. YAML reads an unquoted 8.0 as the number 8 and 6.50 as 6.5, so a number
// is taken as the release it was meant to be; what the planners do with it: providers/esxi-version.ts.
const esxiVersion = z
  .union([z.string(), z.number()])
  .transform((v) => (typeof v === 'number' ? (Number.isInteger(v) ? v.toFixed(1) : String(v)) : v))
  .refine((v) => ESXI_VERSION_PATTERN.test(v), { error: `expected ${ESXI_VERSION_EXPECTED}` })
  .optional()
  .describe('ESXi release of the host, e.g. "8.0": validate refuses what it cannot create (VMFS3 needs 5.x, VMFS6 6.5+); when absent, run reads it from the host before any change');

/** The sanity cap on provisioning calls sent to one vCenter at once. */
const MAX_VCENTER_CONCURRENCY = 64;

export const vcenterSchema = z
  .strictObject({
    url: z.url({ error: 'expected a URL like https://vcenter.example.com/sdk' }).optional().describe('SDK URL; default $GOVC_URL'),
    username: name.optional().describe('default $GOVC_USERNAME'),
    password: secretRefSchema.optional().describe('default $GOVC_PASSWORD'),
    thumbprint: z
      .string()
      .regex(/^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$/, { error: 'expected a SHA-256 thumbprint: 32 colon-separated hex bytes' })
      .optional()
      .describe('Pinned SHA-256 certificate thumbprint for a self-signed host'),
    caFile: text.optional().describe('PEM bundle of CAs to trust'),
    insecure: z.boolean().optional().describe('Skip TLS verification (reported in every report)'),
    maxConcurrent: intIn(1, MAX_VCENTER_CONCURRENCY, 'a number of steps', 'a sanity cap').optional().describe('Provisioning steps sent to this endpoint at once when several targets use it (default 2)'),
  })
  .describe('A vCenter or ESXi SOAP endpoint');

export const sshHostSchema = z
  .strictObject({
    host: name,
    port: intIn(1, 65535, 'a TCP port').default(22),
    user: name,
    privateKeyFile: text.optional(),
    passphrase: secretRefSchema.optional(),
    password: secretRefSchema.optional(),
    keyboardInteractive: z
      .boolean()
      .optional()
      .describe('Answer keyboard-interactive prompts with the password; default: yes for a host with a password that an esxi-shell target drives (ESXi\'s sshd offers only keyboard-interactive)'),
    knownHostsFile: text.optional().describe('known_hosts file the host key must be in'),
    insecure: z.boolean().optional().describe('Accept any host key (must be explicit)'),
    shell: z.enum(['posix', 'powershell']).default('posix'),
  })
  .superRefine((h, ctx) => {
    if (!h.privateKeyFile && !h.password) ctx.addIssue({ code: 'custom', path: [], message: 'needs privateKeyFile or password' });
    if (!h.knownHostsFile && !h.insecure) ctx.addIssue({ code: 'custom', path: [], message: 'needs knownHostsFile (or insecure: true to skip host key verification)' });
  });

/** Where the workload runs: this machine (no sshHost) or a Linux guest over SSH. */
export const guestSchema = z.strictObject({
  sshHost: name.optional().describe('Name under sshHosts; absent = this machine'),
  workdir,
  testFile,
  fioPath,
  ioengine,
});

const localTarget = z.strictObject({
  provider: z.literal('local'),
  workdir,
  testFile,
  fioPath,
  ioengine,
});

const sshTarget = z.strictObject({
  provider: z.literal('ssh'),
  sshHost: name,
  workdir,
  testFile,
  fioPath,
  ioengine,
});

const vsphereTarget = z.strictObject({
  provider: z.literal('vsphere'),
  vcenter: name.describe('Name under vcenters'),
  datacenter: text.optional(),
  host: name.describe('ESXi host name or inventory path'),
  vm: name.describe('VM name or inventory path that gets the disks'),
  datastore: name.optional().describe('Existing datastore for datastore.kind = existing'),
  vmfsDevice: canonicalDevice.optional().describe('LUN to format for VMFS permutations (must be in allowedDevices)'),
  rdmDevice: canonicalDevice.optional().describe('LUN to map for RDM permutations (must be in allowedDevices)'),
  allowedDevices: z.array(canonicalDevice).default([]).describe('LUNs that may be formatted or mapped, by canonical name'),
  nfs: z
    .strictObject({
      remoteHost: name,
      remotePath: name,
      vaaiNas: z.boolean().default(false).describe('The host has a VAAI-NAS plugin for this export that reserves space: only then are thick disks possible on it (without, NFS has thin disks only)'),
    })
    .optional(),
  version: esxiVersion,
  guest: guestSchema,
});

const esxiShellTarget = z.strictObject({
  provider: z.literal('esxi-shell'),
  sshHost: name.describe('The ESXi host, under sshHosts'),
  vmid: z
    .union([z.number(), z.string()])
    .refine((v) => isEsxiValue('vmid', v), { error: `expected ${ESXI_EXPECTED.vmid}` })
    .describe('vim-cmd VM id that gets the disks (vim-cmd vmsvc/getallvms)'),
  datastore: matching((v) => isEsxiValue('volumePath', datastoreVolumePath(v)), `${ESXI_EXPECTED.label}, or ${ESXI_EXPECTED.volumePath}`)
    .optional()
    .describe('Existing datastore (volume label) for datastore.kind = existing'),
  vmfsDevice: canonicalDevice.optional(),
  rdmDevice: canonicalDevice.optional(),
  allowedDevices: z.array(canonicalDevice).default([]),
  controllerBus: intIn(0, 3, 'a SCSI controller bus').default(0),
  version: esxiVersion,
  guest: guestSchema,
});

const diskNumber = intIn(HYPERV_DISK_NUMBER.min, HYPERV_DISK_NUMBER.max, 'a Get-Disk number');

const hypervTarget = z.strictObject({
  provider: z.literal('hyperv'),
  sshHost: name.describe('The Hyper-V host (Windows OpenSSH), under sshHosts'),
  vmName: hyperv('vmName'),
  volumes: z.record(z.string(), hyperv('folder')).default({}).describe('volume.sizeGb value → directory on the host for the VHDX, e.g. {"2000": "E:\\\\bench"}'),
  allowedDisks: z
    .array(
      z
        .strictObject({ number: diskNumber, serialNumber: hyperv('serial').optional(), uniqueId: hyperv('serial').optional() })
        .refine((d) => d.serialNumber !== undefined || d.uniqueId !== undefined, { error: 'needs serialNumber or uniqueId (a disk number alone can change between boots)' }),
    )
    .default([])
    .describe('Host disks a pass-through permutation may take offline, by number AND serial/unique id'),
  passthroughDisk: diskNumber.optional().describe('Get-Disk number used for disk.format passthrough (must be in allowedDisks)'),
  scsiController: intIn(0, 3, 'a SCSI controller number').default(0),
  scsiLocation: intIn(0, 63, 'a SCSI location').default(1).describe('SCSI location the test disk is attached at (the disk guestTestPath names). If a drive already sits there the step is refused: free it or point scsiLocation and guestTestPath at a free location'),
  guestCredential: z.strictObject({ username: name, password: secretRefSchema }),
  guestTestPath: z
    .string()
    .superRefine((v, ctx) => {
      const problem = diskspdTargetProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: `a diskspd target ${problem}` });
    })
    .describe('Test file or disk inside the guest, e.g. D:\\storsweep.dat; a partition (E:), a physical drive (#1) or a device path (\\\\.\\…) is a raw device: the run needs --confirm-destroy naming it. Every disk.format needs a physical drive (#1 or \\\\.\\PhysicalDrive1): a new VHDX and a pass-through disk reach the guest blank (no partition, no volume; storsweep formats nothing in the guest yet)'),
  diskspdPath: z.string().regex(DISKSPD_PATH_PATTERN, { error: DISKSPD_PATH_HINT }).default('C:\\Tools\\diskspd.exe'),
});

export const targetSchema = z.discriminatedUnion('provider', [localTarget, sshTarget, vsphereTarget, esxiShellTarget, hypervTarget]);

export const inventorySchema = z
  .strictObject({
    $schema: z.string().optional(),
    vcenters: z.record(z.string(), vcenterSchema).default({}),
    sshHosts: z.record(z.string(), sshHostSchema).default({}),
    targets: z.record(z.string(), targetSchema),
  })
  .describe('storsweep inventory');

export type Inventory = z.output<typeof inventorySchema>;

/**
 * Whether SSH to sshHosts[name] answers keyboard-interactive prompts with its password: as the
 * inventory says, else yes when it has a password and an esxi-shell target drives it. ESXi's sshd
 * rejects the `password` method and asks for the password through keyboard-interactive (hashicorp/
 * packer issue #121; josenk/terraform-provider-esxi PR #2, ESXi 5.1–6.5). Key-only hosts keep it
 * off: there is nothing to answer a prompt with.
 */
export function sshKeyboardInteractive(inv: Pick<Inventory, 'sshHosts' | 'targets'>, name: string): boolean {
  const h = inv.sshHosts[name];
  if (!h) return false;
  if (h.keyboardInteractive !== undefined) return h.keyboardInteractive;
  return h.password !== undefined && Object.values(inv.targets).some((t) => t.provider === 'esxi-shell' && t.sshHost === name);
}
export type Target = z.output<typeof targetSchema>;
export type SshHost = z.output<typeof sshHostSchema>;
export type VcenterEndpoint = z.output<typeof vcenterSchema>;
export type Guest = z.output<typeof guestSchema>;

// The inventory: where a playbook runs. Endpoints (vCenters, SSH hosts), and targets that combine
// them: which VM gets the disks, which LUNs may be formatted, where the workload runs.
import { z } from 'zod';
import { DISKSPD_PATH_HINT, DISKSPD_PATH_PATTERN, FIO_IOENGINES, FIO_PATH_HINT, FIO_PATH_PATTERN } from '../workloads/tool-settings.ts';
import { secretRefSchema } from './secrets.ts';

const name = z.string().min(1);

// The tool settings an inventory may give: the same allow-lists the playbook and the fio/diskspd
// builders use (workloads/tool-settings.ts).
const fioPath = z.string().regex(FIO_PATH_PATTERN, { error: FIO_PATH_HINT }).default('fio').describe('fio, or an absolute path to it');
const ioengine = z.enum(FIO_IOENGINES).default('libaio').describe('fio I/O engine (built-in engines only)');

export const CANONICAL_DEVICE = /^(naa|t10|eui|mpx)\.[\w.:-]+$/;
const canonicalDevice = z.string().regex(CANONICAL_DEVICE, { error: 'expected a canonical device name like naa.600508b1001c3a4f (naa./t10./eui./mpx.)' });

export const vcenterSchema = z
  .strictObject({
    url: z.url({ error: 'expected a URL like https://vcenter.example.com/sdk' }).optional().describe('SDK URL; default $GOVC_URL'),
    username: z.string().min(1).optional().describe('default $GOVC_USERNAME'),
    password: secretRefSchema.optional().describe('default $GOVC_PASSWORD'),
    thumbprint: z
      .string()
      .regex(/^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$/, { error: 'expected a SHA-256 thumbprint: 32 colon-separated hex bytes' })
      .optional()
      .describe('Pinned SHA-256 certificate thumbprint for a self-signed host'),
    caFile: z.string().optional().describe('PEM bundle of CAs to trust'),
    insecure: z.boolean().optional().describe('Skip TLS verification (reported in every report)'),
    maxConcurrent: z.number().int().min(1).optional().describe('Provisioning steps sent to this endpoint at once when several targets use it (default 2)'),
  })
  .describe('A vCenter or ESXi SOAP endpoint');

export const sshHostSchema = z
  .strictObject({
    host: z.string().min(1),
    port: z.number().int().min(1).max(65535).default(22),
    user: z.string().min(1),
    privateKeyFile: z.string().optional(),
    passphrase: secretRefSchema.optional(),
    password: secretRefSchema.optional(),
    keyboardInteractive: z.boolean().optional().describe('Answer keyboard-interactive prompts with the password (ESXi)'),
    knownHostsFile: z.string().optional().describe('known_hosts file the host key must be in'),
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
  workdir: z.string().min(1).describe('Directory for the test file'),
  testFile: z.string().optional().describe('Test file or raw device; default <workdir>/storsweep-test.dat'),
  fioPath,
  ioengine,
});

const localTarget = z.strictObject({
  provider: z.literal('local'),
  workdir: z.string().min(1),
  testFile: z.string().optional(),
  fioPath,
  ioengine,
});

const sshTarget = z.strictObject({
  provider: z.literal('ssh'),
  sshHost: name,
  workdir: z.string().min(1),
  testFile: z.string().optional(),
  fioPath,
  ioengine,
});

const vsphereTarget = z.strictObject({
  provider: z.literal('vsphere'),
  vcenter: name.describe('Name under vcenters'),
  datacenter: z.string().optional(),
  host: z.string().min(1).describe('ESXi host name or inventory path'),
  vm: z.string().min(1).describe('VM name or inventory path that gets the disks'),
  datastore: z.string().optional().describe('Existing datastore for datastore.kind = existing'),
  vmfsDevice: canonicalDevice.optional().describe('LUN to format for VMFS permutations (must be in allowedDevices)'),
  rdmDevice: canonicalDevice.optional().describe('LUN to map for RDM permutations (must be in allowedDevices)'),
  allowedDevices: z.array(canonicalDevice).default([]).describe('LUNs that may be formatted or mapped, by canonical name'),
  nfs: z.strictObject({ remoteHost: z.string().min(1), remotePath: z.string().min(1) }).optional(),
  guest: guestSchema,
});

const esxiShellTarget = z.strictObject({
  provider: z.literal('esxi-shell'),
  sshHost: name.describe('The ESXi host, under sshHosts'),
  vmid: z.union([z.number().int(), z.string()]).describe('vim-cmd VM id (or name) that gets the disks'),
  datastore: z.string().optional().describe('Existing datastore (volume label) for datastore.kind = existing'),
  vmfsDevice: canonicalDevice.optional(),
  rdmDevice: canonicalDevice.optional(),
  allowedDevices: z.array(canonicalDevice).default([]),
  controllerBus: z.number().int().min(0).max(3).default(0),
  guest: guestSchema,
});

const hypervTarget = z.strictObject({
  provider: z.literal('hyperv'),
  sshHost: name.describe('The Hyper-V host (Windows OpenSSH), under sshHosts'),
  vmName: z.string().min(1),
  volumes: z.record(z.string(), z.string()).default({}).describe('volume.sizeGb value → directory on the host for the VHDX, e.g. {"2000": "E:\\\\bench"}'),
  allowedDisks: z
    .array(
      z
        .strictObject({ number: z.number().int().min(0), serialNumber: z.string().min(1).optional(), uniqueId: z.string().min(1).optional() })
        .refine((d) => d.serialNumber !== undefined || d.uniqueId !== undefined, { error: 'needs serialNumber or uniqueId (a disk number alone can change between boots)' }),
    )
    .default([])
    .describe('Host disks a pass-through permutation may take offline, by number AND serial/unique id'),
  passthroughDisk: z.number().int().min(0).optional().describe('Get-Disk number used for disk.format passthrough (must be in allowedDisks)'),
  scsiController: z.number().int().min(0).max(3).default(0),
  scsiLocation: z.number().int().min(0).max(63).default(1),
  guestCredential: z.strictObject({ username: z.string().min(1), password: secretRefSchema }),
  guestTestPath: z.string().min(1).describe('Test file or disk inside the guest, e.g. D:\\storsweep.dat'),
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
export type Target = z.output<typeof targetSchema>;
export type SshHost = z.output<typeof sshHostSchema>;
export type VcenterEndpoint = z.output<typeof vcenterSchema>;
export type Guest = z.output<typeof guestSchema>;

// The inventory: where a playbook runs. Endpoints (vCenters, SSH hosts), and targets that combine
// them: which VM gets the disks, which LUNs may be formatted, where the workload runs. A target's
// schema is its provider's (src/providers/<name>/index.ts, listed in src/providers/index.ts).
//
// Every value a provider checks before it sends anything (src/providers/*/validate.ts) is checked by
// its target schema with the same predicate, so `validate` refuses at file:line:col what `run` would
// refuse later.
import { storeUrlSchema } from './store.ts';
import { z } from 'zod';
import { endpointSections, moduleOf, targetSchema } from '../providers/index.ts';
import { intIn, plainText } from '../input/fields.ts';
import { secretRefSchema } from '../input/secrets.ts';
import { lazy } from '../lazy.ts';

/** The sanity cap on provisioning calls sent to one vCenter at once. */
const MAX_VCENTER_CONCURRENCY = 64;

function vcenterSchemaOf(text: z.ZodString, name: z.ZodString) {
  return z
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
}

function sshHostSchemaOf(text: z.ZodString, name: z.ZodString) {
  return z
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
      shell: z
        .enum(['posix', 'powershell'])
        .default('posix')
        .describe("The host's login shell. fio guests and ESXi hosts get POSIX sh command lines, so they must be posix; a Hyper-V host takes either (storsweep runs powershell.exe explicitly)"),
    })
    .superRefine((h, ctx) => {
      if (!h.privateKeyFile && !h.password) ctx.addIssue({ code: 'custom', path: [], message: 'needs privateKeyFile or password' });
      if (!h.knownHostsFile && !h.insecure) ctx.addIssue({ code: 'custom', path: [], message: 'needs knownHostsFile (or insecure: true to skip host key verification)' });
    });
}

/**
 * The inventory's schema, built on first use (src/lazy.ts): `validate` of a playbook alone loads
 * this file and reads no inventory.
 */
export const inventorySchema = lazy(() => {
  const text = plainText();
  const name = plainText().min(1);
  return z
    .strictObject({
      $schema: z.string().optional(),
      vcenters: z.record(z.string(), vcenterSchemaOf(text, name)).default({}),
      sshHosts: z.record(z.string(), sshHostSchemaOf(text, name)).default({}),
      // a provider's own section of named endpoints (ProviderModule.endpointSection), as its folder declares it
      ...Object.fromEntries(endpointSections().map((e) => [e.key, z.record(z.string(), e.schema).default({}).describe(e.description)])),
      targets: z.record(z.string(), targetSchema()),
      /** where runs against this inventory are stored (default: each run directory's run.sqlite) */
      store: storeUrlSchema.optional(),
    })
    .describe('storsweep inventory');
});

export type Inventory = z.output<ReturnType<typeof inventorySchema>>;

/**
 * Whether SSH to sshHosts[name] answers keyboard-interactive prompts with its password: as the
 * inventory says, else yes when it has a password and a target drives it as an ESXi host
 * (ProviderModule.sshHostsOf says so: the esxi-shell provider). ESXi's sshd
 * rejects the `password` method and asks for the password through keyboard-interactive (hashicorp/
 * packer issue #121; josenk/terraform-provider-esxi PR #2, ESXi 5.1–6.5). Key-only hosts keep it
 * off: there is nothing to answer a prompt with.
 */
export function sshKeyboardInteractive(inv: Pick<Inventory, 'sshHosts' | 'targets'>, name: string): boolean {
  const h = inv.sshHosts[name];
  if (!h) return false;
  if (h.keyboardInteractive !== undefined) return h.keyboardInteractive;
  return h.password !== undefined && Object.values(inv.targets).some((t) => moduleOf(t).sshHostsOf(t).some((r) => r.name === name && r.keyboardInteractive === true));
}
export type SshHost = z.output<ReturnType<typeof sshHostSchemaOf>>;
export type VcenterEndpoint = z.output<ReturnType<typeof vcenterSchemaOf>>;

// The inventory: where a playbook runs. Endpoints (SSH hosts, and each provider's own section of
// named endpoints: vSphere's vCenter entries), and targets that combine them: which VM gets the disks,
// which LUNs may be formatted, where the workload runs. A target's schema and an endpoint section
// are their provider's (src/providers/<name>/index.ts, listed in src/providers/index.ts).
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

/** An `sshHosts:` entry's schema (built on first use). */
export const sshHostSchema = lazy(() => sshHostSchemaOf(plainText(), plainText().min(1)));

/** `<key>: { <name>: <entry> }` for each provider's endpoint section, as its folder declares it. */
function endpointSectionShape(): Record<string, z.ZodType> {
  return Object.fromEntries(
    endpointSections().map((e) => {
      const section = z.record(z.string(), e.schema).default({});
      return [e.key, e.description === undefined ? section : section.describe(e.description)];
    }),
  );
}

/**
 * The inventory's schema, built on first use (src/lazy.ts): `validate` of a playbook alone loads
 * this file and reads no inventory; a provider registered before the first use is in it.
 */
export const inventorySchema = lazy(() =>
  z
    .strictObject({
      $schema: z.string().optional(),
      // each provider's own section of named endpoints (ProviderModule.endpointSection: vSphere's vCenter entries)
      ...endpointSectionShape(),
      sshHosts: z.record(z.string(), sshHostSchema()).default({}),
      targets: z.record(z.string(), targetSchema()),
      /** where runs against this inventory are stored (default: each run directory's run.sqlite) */
      store: storeUrlSchema.optional(),
    })
    .describe('storsweep inventory'),
);

type ParsedInventory = z.output<ReturnType<typeof inventorySchema>>;
/**
 * An inventory as parsed. Its endpoint sections are its providers' (endpointEntries reads one);
 * the core names none of them.
 */
export type Inventory = Omit<ParsedInventory, string> & {
  $schema?: string;
  sshHosts: Record<string, SshHost>;
  targets: ParsedInventory['targets'];
  store?: ParsedInventory['store'];
};

/** The entries of a provider's endpoint section (vSphere's vCenter entries), by name; empty when the inventory has none. */
export function endpointEntries(inv: Inventory, section: string): Record<string, unknown> {
  const v = (inv as Record<string, unknown>)[section];
  return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

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

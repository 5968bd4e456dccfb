// vSphere's endpoint section: `vcenters:` of the inventory, one entry per vCenter (or ESXi SOAP
// endpoint) that targets name by `vcenter:`. The core sees it only as an EndpointSection
// (contract/provider.ts): its schema, its secret and file fields, and what an entry reaches —
// the entry's URL, else govc's GOVC_URL from the environment the CLI read.
import { z } from 'zod';
import type { EndpointReach, EndpointSection, Env, EnvSecret } from '../../contract/provider.ts';
import { intIn, plainText } from '../../input/fields.ts';
import { secretRefSchema } from '../../input/secrets.ts';
import { DEFAULT_ENDPOINT_CONCURRENCY } from '../endpoint-pool.ts';
import { sdkEndpointKey } from './client.ts';

/** The inventory's top-level key of vSphere's endpoints. */
export const VCENTERS = 'vcenters';

/** The sanity cap on provisioning calls sent to one vCenter at once. */
const MAX_VCENTER_CONCURRENCY = 64;

export const vcenterSchema = z
  .strictObject({
    url: z.url({ error: 'expected a URL like https://vcenter.example.com/sdk' }).optional().describe('SDK URL; default $GOVC_URL'),
    username: plainText().min(1).optional().describe('default $GOVC_USERNAME'),
    password: secretRefSchema.optional().describe('default $GOVC_PASSWORD'),
    thumbprint: z
      .string()
      .regex(/^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$/, { error: 'expected a SHA-256 thumbprint: 32 colon-separated hex bytes' })
      .optional()
      .describe('Pinned SHA-256 certificate thumbprint for a self-signed host'),
    caFile: plainText().optional().describe('PEM bundle of CAs to trust'),
    insecure: z.boolean().optional().describe('Skip TLS verification (reported in every report)'),
    maxConcurrent: intIn(1, MAX_VCENTER_CONCURRENCY, 'a number of steps', 'a sanity cap').optional().describe('Provisioning steps sent to this endpoint at once when several targets use it (default 2)'),
  })
  .describe('A vCenter or ESXi SOAP endpoint');

/** A `vcenters:` entry as parsed (its password is a secret reference, not a value). */
export type VcenterEntry = z.output<typeof vcenterSchema>;

/** A URL without user:password@, query or fragment: the endpoint's identity and nothing secret. */
function endpointUrl(raw: string): string {
  try {
    const u = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `https://${raw}`);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

/** The vCenter an entry names: its URL, else GOVC_URL; by its host:port, and its limit by sdkEndpointKey. */
function reach(name: string, entry: unknown, env: Env): EndpointReach {
  const vc = entry as VcenterEntry | undefined;
  const url = vc?.url ?? env.GOVC_URL;
  if (!url) return { identity: `vcenter ${name}` };
  const facts = { url: endpointUrl(url) };
  let u: URL;
  try {
    u = new URL(/^[a-z]+:\/\//i.test(url) ? url : `https://${url}`);
  } catch {
    return { identity: `vcenter ${name}`, facts };
  }
  let limit: EndpointReach['limit'];
  try {
    limit = { key: sdkEndpointKey(url), max: vc?.maxConcurrent ?? DEFAULT_ENDPOINT_CONCURRENCY };
  } catch {
    limit = undefined; // refused where it is connected to
  }
  return { identity: u.host.toLowerCase(), host: u.hostname, facts, ...(limit ? { limit } : {}) };
}

/** govc's password: GOVC_PASSWORD, else the password part of GOVC_URL (as endpointFromEnv reads them). */
function govcPassword(env: Env): string | undefined {
  if (env.GOVC_PASSWORD) return env.GOVC_PASSWORD;
  const raw = env.GOVC_URL;
  if (!raw) return undefined;
  try {
    const u = new URL(/^https?:\/\//i.test(raw) ? raw : `https://${raw}`);
    return u.password ? decodeURIComponent(u.password) : undefined;
  } catch {
    return undefined;
  }
}

/** An entry without a password (or no entry) falls back to govc's: a secret of the inventory too. */
function envSecret(entry: unknown, env: Env): EnvSecret | undefined {
  if ((entry as VcenterEntry | undefined)?.password) return undefined;
  const value = govcPassword(env);
  return value === undefined ? undefined : { where: 'GOVC_PASSWORD', ref: '$GOVC_PASSWORD', what: 'the password from GOVC_PASSWORD/GOVC_URL', value };
}

export const vcenterSection: EndpointSection = {
  key: VCENTERS,
  schema: vcenterSchema,
  secretFields: [['password']],
  pathFields: ['caFile'],
  reach,
  envSecret,
};

// The composition root's wiring: an inventory target becomes a step planner (pure), a provider
// and a workload endpoint — each provider wires its own (ProviderModule.compose); this file hands it
// the inventory's endpoints and secrets (ComposeContext), the only place they are revealed.
import { randomInt } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { LoadedInventory } from '../config/index.ts';
import { endpointEntries, sshKeyboardInteractive, type SshHost } from '../config/inventory.ts';
import { UsageError } from '../errors.ts';
import type { Playbook } from '../config/playbook.ts';
import { buildPlan, type TargetPlanOptions } from '../plan/plan.ts';
import type { RunPlan } from '../contract/plan.ts';
import type { Axes } from '../contract/axis.ts';
import type { SshOptions } from '../ssh/ssh-runner.ts';
import type { ComposeContext, Composition, EndpointPool, EndpointReach, ResourceContext } from '../contract/provider.ts';
import { createEndpointPool } from '../providers/endpoint-pool.ts';
import { endpointSections, moduleOf, providerModule, type Target } from '../providers/index.ts';

export type { Composition } from '../contract/provider.ts';

function sshOptions(inv: LoadedInventory, name: string): SshOptions {
  const h: SshHost | undefined = inv.inventory.sshHosts[name];
  if (!h) throw new UsageError(`${inv.file}: no sshHosts entry named "${name}"`);
  return {
    host: h.host,
    port: h.port,
    username: h.user,
    privateKeyPath: h.privateKeyFile ? resolvePath(inv, h.privateKeyFile) : undefined,
    passphrase: h.passphrase ? inv.secrets.get(h.passphrase)?.reveal() : undefined,
    password: h.password ? inv.secrets.get(h.password)?.reveal() : undefined,
    keyboardInteractive: sshKeyboardInteractive(inv.inventory, name),
    knownHostsFile: h.knownHostsFile ? resolvePath(inv, h.knownHostsFile) : undefined,
    insecure: h.insecure,
  };
}

function resolvePath(inv: LoadedInventory, f: string): string {
  return path.resolve(path.dirname(path.resolve(inv.file)), f.replace(/^~(?=\/|$)/, os.homedir()));
}

/**
 * What an entry of a provider's endpoint section reaches (EndpointSection.reach), with the
 * environment the inventory was loaded with; undefined for a section no provider declares.
 */
export function endpointReach(inv: LoadedInventory, section: string, name: string): EndpointReach | undefined {
  const s = endpointSections().find((e) => e.key === section);
  if (!s) return undefined;
  return s.reach?.(name, endpointEntries(inv.inventory, section)[name], inv.env) ?? { identity: `${section}.${name}` };
}

/** The endpoint entry a target uses (ProviderModule.endpointOf), with what it reaches. */
function targetEndpoint(target: Target, inv: LoadedInventory): { section: string; name: string; reach: EndpointReach } | undefined {
  const m = moduleOf(target);
  const ref = m.endpointOf?.(target);
  const section = m.endpointSection?.key;
  const reach = ref && section ? endpointReach(inv, section, ref.name) : undefined;
  return reach && section && ref ? { section, name: ref.name, reach } : undefined;
}

/** What a provider's compose() gets from the inventory: endpoints, secrets revealed on request. */
export function composeContext(inv: LoadedInventory, pool: EndpointPool): ComposeContext {
  return {
    file: inv.file,
    resolvePath: (p) => resolvePath(inv, p),
    ssh: (name) => sshOptions(inv, name),
    reveal: (ref) => inv.secrets.get(ref)?.reveal(),
    endpoint: (section, name) => endpointEntries(inv.inventory, section)[name],
    env: inv.env,
    pool,
  };
}

// 127.0.0.0/8 and ::1 (RFC 1122 3.2.1.3, RFC 4291 2.5.3), also as an IPv4-mapped address
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** A loopback address or name: a port there is a process on this machine (a forwarded port is taken for one too: the safe side). */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const family = isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Which machine an endpoint of the inventory is, for ProviderModule.sharedResources: `this machine`
 * for no sshHost and for loopback, else `host:port` (lower case); a provider's endpoint (a vCenter)
 * as its section says (EndpointReach.identity: its URL's host:port).
 */
export function resourceContext(inv: LoadedInventory): ResourceContext {
  return {
    machine(name) {
      if (name === undefined) return 'this machine';
      const h = inv.inventory.sshHosts[name];
      if (!h) return `sshHosts.${name}`;
      return isLoopback(h.host) ? 'this machine' : `${h.host.toLowerCase()}:${h.port}`;
    },
    endpoint: (section, name) => endpointReach(inv, section, name)?.identity ?? `${section}.${name}`,
  };
}

/**
 * `pool` is shared by the compositions of one run (several targets): targets on one vCenter then
 * share its session and its provisioning limit.
 */
export function compose(target: Target, inv: LoadedInventory, pool: EndpointPool = createEndpointPool()): Composition {
  const insecure: string[] = Object.entries(inv.inventory.sshHosts)
    .filter(([, h]) => h.insecure)
    .map(([n]) => `ssh:${n}`);
  const m = moduleOf(target);
  const c = m.compose(target, composeContext(inv, pool));
  return { ...c, insecureEndpoints: [...insecure, ...c.insecureEndpoints], sharedResources: m.sharedResources(target, resourceContext(inv)) };
}

/**
 * The compositions of every target of a run (in the given order), sharing one endpoint pool: two
 * targets on one vCenter share its session and its provisioning limit.
 */
export function composeTargets(names: readonly string[], inv: LoadedInventory, where = inv.file, pool: EndpointPool = createEndpointPool()): Map<string, Composition> {
  const out = new Map<string, Composition>();
  for (const name of names) {
    const target = inv.inventory.targets[name];
    if (!target) throw new UsageError(`${where}: target "${name}" is not in ${inv.file}`);
    out.set(name, compose(target, inv, pool));
  }
  return out;
}

function planOptionsOf(c: Composition): TargetPlanOptions {
  return {
    provider: c.provider,
    planSteps: c.planSteps,
    workloadTarget: c.workloadTarget,
    workloadTool: c.workload.tool,
    workloadProvider: c.workloadProvider,
    resources: c.sharedResources ?? [],
    axes: providerModule(c.provider).axes.map((a) => a.name),
  };
}

/**
 * The plan of a playbook over its composed targets (see buildPlan: a list of targets adds the
 * `target` axis); `overrides`: the `--set key=value` texts already applied to `pb`, recorded in it.
 */
export function planRun(pb: Playbook, comps: Map<string, Composition>, runId: string, overrides: readonly string[] = []): RunPlan {
  const first = comps.values().next().value;
  if (!first) throw new UsageError(`playbook ${pb.name} names no target`);
  const targets = typeof pb.target === 'string' ? undefined : Object.fromEntries([...comps].map(([n, c]) => [n, planOptionsOf(c)]));
  // rounds in an order no one chose: a seed drawn now, recorded in the plan (resume keeps it)
  const seed = pb.repeat.order === 'rounds' && pb.repeat.seed === null ? randomInt(2 ** 32) : undefined;
  const plan = buildPlan(pb, pb.target, { runId, ...planOptionsOf(first), ...(targets ? { targets } : {}), ...(seed !== undefined ? { seed } : {}) });
  return overrides.length ? { ...plan, overrides: [...overrides] } : plan;
}

// Keys of an inventory entry that never describe what is measured: credentials (never recorded),
// the allow-lists, which guard destructive steps but do not change a measurement, and how long to
// wait for a disk to appear (a run recorded before guest.diskWaitSec existed resumes as it was).
const NOT_MEASURED = new Set(['environment', 'password', 'passphrase', 'guestCredential', 'allowedDevices', 'allowedDisks', 'maxConcurrent', 'diskWaitSec']);

function flatten(value: unknown, key: string, out: Record<string, string>): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) out[key] = JSON.stringify(value);
  else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value).sort(([a], [b]) => a.localeCompare(b))) if (!NOT_MEASURED.has(k)) flatten(v, key ? `${key}.${k}` : k, out);
  } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') out[key] = String(value);
}

/**
 * What a run's measurements depend on in the inventory, per target, as flat `key → text`: the
 * target's entry (VM, host, datastore, devices, the guest, its test file, workdir, fio path and
 * ioengine…), the SSH endpoint it reaches (host, port, user) and its provider's endpoint (a
 * vCenter's URL: EndpointReach.facts). Recorded at run start; `run --resume` recomputes it from
 * the inventory it is given and refuses a difference. Never a secret: credentials and references to them are left out. With the run's plan, only what
 * its permutations use (usedFacts): an NFS export of a run without NFS permutations, or a Hyper-V
 * volume for a size it does not measure, is no part of it.
 */
export function measurementFacts(names: readonly string[], inv: LoadedInventory, plan?: Pick<RunPlan, 'permutations' | 'targets'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const target = inv.inventory.targets[name];
    if (!target) continue;
    flatten(target, `targets.${name}`, out);
    const sshNames = new Set<string>();
    if ('sshHost' in target && target.sshHost) sshNames.add(target.sshHost);
    if ('guest' in target && target.guest.sshHost) sshNames.add(target.guest.sshHost);
    for (const s of sshNames) {
      const h = inv.inventory.sshHosts[s];
      if (h) Object.assign(out, { [`sshHosts.${s}.host`]: h.host, [`sshHosts.${s}.port`]: String(h.port), [`sshHosts.${s}.user`]: h.user });
    }
    // the endpoint it reaches (a vCenter's URL), as its section says (EndpointReach.facts)
    const ep = targetEndpoint(target, inv);
    for (const [k, v] of Object.entries(ep?.reach.facts ?? {})) out[`${ep!.section}.${ep!.name}.${k}`] = v;
  }
  return plan ? usedFacts(out, names, plan) : out;
}

/**
 * The provisioning limit (a vCenter's maxConcurrent) of every endpoint `names` use, by endpoint
 * (EndpointReach.limit: a vCenter by sdkEndpointKey; the smallest where two entries name one
 * endpoint). Workers count the same slots 0..max-1 in PostgreSQL, so they must agree on it:
 * `submit` records it, and a worker whose inventory says otherwise does not work the run.
 */
export function endpointLimits(names: readonly string[], inv: LoadedInventory): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of names) {
    const target = inv.inventory.targets[name];
    const limit = target ? targetEndpoint(target, inv)?.reach.limit : undefined;
    if (!limit) continue;
    out[limit.key] = Math.min(out[limit.key] ?? limit.max, limit.max);
  }
  return out;
}

/**
 * Inventory fields a permutation uses only for some axis values: kept in the facts only when one
 * of the target's permutations has that value. Other fields are always kept.
 */
const AXIS_DEPENDENT: Array<{ field: RegExp; used: (axes: Axes, m: RegExpExecArray) => boolean }> = [
  // vSphere: the NFS export is mounted only for datastore.kind nfs
  { field: /^nfs(\.|$)/, used: (a) => a['datastore.kind'] === 'nfs' },
  // Hyper-V: volumes.<sizeGb> is the folder for that volume.sizeGb value only
  { field: /^volumes\.([^.]+)$/, used: (a, m) => a['volume.sizeGb'] !== undefined && String(a['volume.sizeGb']) === m[1] },
  // Hyper-V: the pass-through disk is taken only for disk.format passthrough
  { field: /^passthroughDisk$/, used: (a) => a['disk.format'] === 'passthrough' },
];

/**
 * `facts` restricted to what the plan's permutations use (see AXIS_DEPENDENT). Applied to both
 * sides of a resume's comparison, so a run recorded with every field compares the same way.
 */
export function usedFacts(facts: Record<string, string>, names: readonly string[], plan: Pick<RunPlan, 'permutations' | 'targets'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(facts)) {
    const name = names.find((n) => key.startsWith(`targets.${n}.`));
    const rest = name === undefined ? null : key.slice(`targets.${name}.`.length);
    const rule = rest === null ? undefined : AXIS_DEPENDENT.map((r) => ({ r, m: r.field.exec(rest) })).find((x) => x.m);
    if (rule) {
      const perms = plan.targets ? plan.permutations.filter((p) => String(p.axes.target) === name) : plan.permutations;
      if (!perms.some((p) => rule.r.used(p.axes, rule.m!))) continue;
    }
    out[key] = value;
  }
  return out;
}

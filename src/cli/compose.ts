// The composition root's wiring: an inventory target becomes a step planner (pure), a provider
// and a workload endpoint. Secrets are revealed here and nowhere above.
import os from 'node:os';
import path from 'node:path';
import type { LoadedInventory } from '../config/index.ts';
import { sshKeyboardInteractive, type SshHost, type Target } from '../config/inventory.ts';
import { esxiShellConfigOf, hypervConfigOf, stepPlannerOf, vsphereStepTargetOf } from '../config/provider-targets.ts';
import { UnsafeOperation, UsageError } from '../errors.ts';
import type { Playbook } from '../config/playbook.ts';
import { buildPlan, rawTestTarget, type StepPlanner, type TargetPlanOptions } from '../plan/plan.ts';
import type { RunPlan } from '../contract/plan.ts';
import type { Axes } from '../contract/axis.ts';
import { LATENCY_SPAN } from '../results/record.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { createLocalRunner } from '../ssh/local-runner.ts';
import { connectSsh, type SshOptions } from '../ssh/ssh-runner.ts';
import { stopRunGroups } from '../ssh/process-group.ts';
import { shJoin } from '../ssh/quote.ts';
import type { WorkloadEndpoint } from '../run/executor.ts';
import type { Provider, ProviderName } from '../contract/provider.ts';
import { createEsxiShellProvider } from '../providers/esxi-shell/provider.ts';
import { hostVersionArgv, parseVmwareVersion } from '../providers/esxi-shell/version.ts';
import { endpointFromEnv, VsphereClient } from '../providers/vsphere/client.ts';
import type { VsphereTargetConfig } from '../providers/vsphere/config.ts';
import { createVsphereProvider } from '../providers/vsphere/provider.ts';
import { createHypervProvider, runGuestDiskspd, runGuestDiskspdArgv } from '../providers/hyperv/provider.ts';
import { registerSecretValue, shortSecretMessage } from '../config/secrets.ts';
import { runFioPrefill, runFioTest } from '../workloads/run-fio.ts';
import { diskspdCreateOnlyArgs, runDiskspdFill } from '../workloads/prefill.ts';
import { runPasses } from '../workloads/passes.ts';
import { parseDiskspdXml } from '../workloads/diskspd.ts';
import { ParseError } from '../errors.ts';
import { createEndpointPool, DEFAULT_VCENTER_CONCURRENCY, type EndpointPool } from './endpoint-pool.ts';

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
  workload: WorkloadEndpoint;
  /** where the workload step runs: the guest's transport, or the provider itself (Hyper-V) */
  workloadProvider: ProviderName;
  /** secret-free description of where the workload runs */
  workloadTarget: Record<string, unknown>;
  insecureEndpoints: string[];
}

function sshOptions(inv: LoadedInventory, name: string): SshOptions {
  const h: SshHost | undefined = inv.inventory.sshHosts[name];
  if (!h) throw new UsageError(`${inv.file}: no sshHosts entry named "${name}"`);
  const base = path.dirname(path.resolve(inv.file));
  const file = (f: string) => path.resolve(base, f.replace(/^~(?=\/|$)/, os.homedir()));
  return {
    host: h.host,
    port: h.port,
    username: h.user,
    privateKeyPath: h.privateKeyFile ? file(h.privateKeyFile) : undefined,
    passphrase: h.passphrase ? inv.secrets.get(h.passphrase)?.reveal() : undefined,
    password: h.password ? inv.secrets.get(h.password)?.reveal() : undefined,
    keyboardInteractive: sshKeyboardInteractive(inv.inventory, name),
    knownHostsFile: h.knownHostsFile ? file(h.knownHostsFile) : undefined,
    insecure: h.insecure,
  };
}

function guestEndpoint(inv: LoadedInventory, g: { sshHost?: string; workdir: string; testFile?: string; fioPath: string; ioengine: string }): { endpoint: WorkloadEndpoint; describe: Record<string, unknown>; provider: ProviderName } {
  const filename = g.testFile ?? path.posix.join(g.workdir, 'storsweep-test.dat');
  const connect = async (): Promise<CommandRunner> => {
    const runner = g.sshHost ? await connectSsh(sshOptions(inv, g.sshHost)) : createLocalRunner();
    await runner.run(shJoin(['mkdir', '-p', '--', g.workdir]));
    // A test file the plan takes for a file must not be a device on the guest: a link to /dev/sdb,
    // or a device node outside /dev, would be overwritten without --confirm-destroy. Checked on
    // the guest itself (`test -b`/`-c` follow links), before anything is measured.
    if (rawTestTarget(filename, 'fio') === undefined) {
      const r = await runner.run(`${shJoin(['test', '-b', filename])} || ${shJoin(['test', '-c', filename])}`);
      if (r.exitCode === 0) {
        await runner.close().catch(() => undefined);
        throw new UnsafeOperation(
          `${runner.target}: the test file ${filename} is a device on the guest (a block or character device, or a link to one); storsweep writes to a device only when the inventory names it by its path under /dev and --confirm-destroy names it`,
          { operation: 'workload', target: filename },
        );
      }
    }
    return runner;
  };
  return {
    endpoint: {
      tool: 'fio',
      connect,
      describe: async (runner) => {
        const os = (await runner.run('uname -sr')).stdout.trim();
        const fio = (await runner.run(shJoin([g.fioPath, '--version']))).stdout.trim();
        return { 'guest.os': os, 'guest.tool': fio };
      },
      prepare: (runner, profile, o) => (profile.prefill === false ? Promise.resolve(null) : runFioPrefill(runner, profile, { filename, fioPath: g.fioPath, ioengine: g.ioengine, controlDir: g.workdir, ...o })),
      runTest: (runner, test, profile, o) => runFioTest(runner, test, profile, { filename, fioPath: g.fioPath, ioengine: g.ioengine, controlDir: g.workdir, ...o }),
      stopLeftovers: (runner, runId) => stopRunGroups(runner, g.workdir, runId),
    },
    describe: { runsOn: g.sshHost ? `ssh:${g.sshHost}` : 'local', testFile: filename },
    provider: g.sshHost ? 'ssh' : 'local',
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
  switch (target.provider) {
    case 'local':
    case 'ssh': {
      const g = guestEndpoint(inv, { ...target, sshHost: target.provider === 'ssh' ? target.sshHost : undefined });
      return { provider: target.provider, connectProvider: async () => null, workload: g.endpoint, workloadProvider: g.provider, workloadTarget: g.describe, insecureEndpoints: insecure };
    }
    case 'esxi-shell': {
      const cfg = esxiShellConfigOf(target);
      const g = guestEndpoint(inv, target.guest);
      return {
        provider: 'esxi-shell',
        planSteps: stepPlannerOf(target),
        connectProvider: async () => createEsxiShellProvider(cfg, await connectSsh(sshOptions(inv, target.sshHost))),
        readHostVersion: async () => {
          const runner = await connectSsh(sshOptions(inv, target.sshHost));
          try {
            const r = await runner.run(shJoin(hostVersionArgv()));
            return parseVmwareVersion(r.stdout, `${target.sshHost}: vmware -v`);
          } finally {
            await runner.close().catch(() => undefined);
          }
        },
        workload: g.endpoint,
        workloadProvider: g.provider,
        workloadTarget: g.describe,
        insecureEndpoints: insecure,
      };
    }
    case 'vsphere': {
      const vc = inv.inventory.vcenters[target.vcenter];
      // govc's variables fill in only what the inventory leaves out; GOVC_PASSWORD is a secret of
      // this run (masked in messages, held to the same minimum length) only when this target uses
      // it — masking an unused "1" would garble every message and tell the password.
      const fromEnv = !vc?.url || !vc.username || !vc.password ? endpointFromEnv(process.env) : undefined;
      if (fromEnv && !vc?.password) {
        const short = shortSecretMessage(fromEnv.password);
        if (short) throw new UsageError(`${inv.file}: the password from GOVC_PASSWORD/GOVC_URL that vcenter "${target.vcenter}" falls back to: ${short}`);
        registerSecretValue(fromEnv.password);
      }
      const url = vc?.url ?? fromEnv?.url;
      const username = vc?.username ?? fromEnv?.username;
      const password = vc?.password ? inv.secrets.get(vc.password)?.reveal() : fromEnv?.password;
      if (!url || !username || password === undefined) throw new UsageError(`${inv.file}: vcenter "${target.vcenter}" needs url, username and password (or GOVC_URL, GOVC_USERNAME, GOVC_PASSWORD)`);
      const base = path.dirname(path.resolve(inv.file));
      const cfg: VsphereTargetConfig = {
        vcenter: {
          url,
          username,
          password,
          thumbprint: vc?.thumbprint,
          caFile: vc?.caFile ? path.resolve(base, vc.caFile) : fromEnv?.caFile,
          insecure: vc ? vc.insecure : fromEnv?.insecure,
        },
        ...vsphereStepTargetOf(target),
      };
      if (cfg.vcenter.insecure) insecure.push(`vcenter:${target.vcenter}`);
      const g = guestEndpoint(inv, target.guest);
      return {
        provider: 'vsphere',
        planSteps: stepPlannerOf(target),
        connectProvider: async () => {
          const key = `${url}|${username}`;
          const connect = () => pool.client(key, () => VsphereClient.connect(cfg.vcenter));
          return pool.share(key, vc?.maxConcurrent ?? DEFAULT_VCENTER_CONCURRENCY, createVsphereProvider(cfg, { connect }));
        },
        readHostVersion: async () => {
          // HostSystem.config.product (AboutInfo) is the host's own release, also through vCenter
          const c = await VsphereClient.connect(cfg.vcenter);
          try {
            const p = await c.readProps(await c.findHost(cfg.host), ['config.product.version']);
            const v = p['config.product.version'];
            if (typeof v !== 'string') throw new UsageError(`${target.vcenter}: host ${cfg.host} reports no config.product.version`);
            return v;
          } finally {
            await c.logout().catch(() => undefined);
          }
        },
        workload: g.endpoint,
        workloadProvider: g.provider,
        workloadTarget: g.describe,
        insecureEndpoints: insecure,
      };
    }
    case 'hyperv': {
      const cfg = hypervConfigOf(target);
      const credential = { user: target.guestCredential.username, password: inv.secrets.get(target.guestCredential.password)?.reveal() ?? '' };
      const workload: WorkloadEndpoint = {
        tool: 'diskspd',
        connect: () => connectSsh(sshOptions(inv, target.sshHost)),
        prepare: async (runner, profile) => {
          const pass = (argv: string[]) => runGuestDiskspdArgv(runner, cfg, credential, argv, { diskspdPath: target.diskspdPath });
          if (profile.prefill !== false) return runDiskspdFill(profile, target.guestTestPath, pass);
          // not filled: a file target is still created (no measured pass carries -c)
          const create = diskspdCreateOnlyArgs(profile, target.guestTestPath);
          if (!create) return null;
          await pass(create);
          return { filled: false, bytes: 0, seconds: 0, passes: 1, method: 'diskspd -c (file created, no data written)' };
        },
        runTest: (runner, test, profile, o) =>
          runPasses(
            test,
            profile,
            async () => {
              const raw = await runGuestDiskspd(runner, cfg, credential, test, profile, { guestTarget: target.guestTestPath, diskspdPath: target.diskspdPath });
              const parsed = parseDiskspdXml(raw, `${runner.target} diskspd ${test.id}`);
              const span = parsed.timeSpans[0];
              if (!span) throw new ParseError(`${runner.target}: diskspd printed no result for ${test.id}`, { source: runner.target });
              return { raw, toolVersion: parsed.version, iops: span.total.iops, bytesPerSecond: span.total.bytesPerSecond, latencyUs: span.total.latencyUs, cpuPercent: span.cpuPercent, metadata: { latencySpan: LATENCY_SPAN } };
            },
            o.onRaw,
          ),
      };
      return {
        provider: 'hyperv',
        planSteps: stepPlannerOf(target),
        connectProvider: async () => createHypervProvider(cfg, await connectSsh(sshOptions(inv, target.sshHost))),
        workload,
        workloadProvider: 'hyperv',
        workloadTarget: { runsOn: `hyperv:${target.sshHost}/${target.vmName}`, testFile: target.guestTestPath },
        insecureEndpoints: insecure,
      };
    }
  }
}

/**
 * The compositions of every target of a run (in the given order), sharing one endpoint pool: two
 * targets on one vCenter share its session and its provisioning limit.
 */
export function composeTargets(names: readonly string[], inv: LoadedInventory, where = inv.file): Map<string, Composition> {
  const pool = createEndpointPool();
  const out = new Map<string, Composition>();
  for (const name of names) {
    const target = inv.inventory.targets[name];
    if (!target) throw new UsageError(`${where}: target "${name}" is not in ${inv.file}`);
    out.set(name, compose(target, inv, pool));
  }
  return out;
}

function planOptionsOf(c: Composition): TargetPlanOptions {
  return { provider: c.provider, planSteps: c.planSteps, workloadTarget: c.workloadTarget, workloadTool: c.workload.tool, workloadProvider: c.workloadProvider };
}

/** The plan of a playbook over its composed targets (see buildPlan: a list of targets adds the `target` axis). */
export function planRun(pb: Playbook, comps: Map<string, Composition>, runId: string): RunPlan {
  const first = comps.values().next().value;
  if (!first) throw new UsageError(`playbook ${pb.name} names no target`);
  const targets = typeof pb.target === 'string' ? undefined : Object.fromEntries([...comps].map(([n, c]) => [n, planOptionsOf(c)]));
  return buildPlan(pb, pb.target, { runId, ...planOptionsOf(first), ...(targets ? { targets } : {}) });
}

// Keys of an inventory entry that never describe what is measured: credentials (never recorded)
// and the allow-lists, which guard destructive steps but do not change a measurement.
const NOT_MEASURED = new Set(['password', 'passphrase', 'guestCredential', 'allowedDevices', 'allowedDisks', 'maxConcurrent']);

function flatten(value: unknown, key: string, out: Record<string, string>): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) out[key] = JSON.stringify(value);
  else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value).sort(([a], [b]) => a.localeCompare(b))) if (!NOT_MEASURED.has(k)) flatten(v, key ? `${key}.${k}` : k, out);
  } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') out[key] = String(value);
}

/** A URL without user:password@, query or fragment: the endpoint's identity and nothing secret. */
function endpointUrl(raw: string): string {
  try {
    const u = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `https://${raw}`);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * What a run's measurements depend on in the inventory, per target, as flat `key → text`: the
 * target's entry (VM, host, datastore, devices, the guest, its test file, workdir, fio path and
 * ioengine…), the SSH endpoint it reaches (host, port, user) and the vCenter's URL. Recorded at
 * run start; `run --resume` recomputes it from the inventory it is given and refuses a difference.
 * Never a secret: credentials and references to them are left out. With the run's plan, only what
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
    if (target.provider === 'vsphere') {
      const url = inv.inventory.vcenters[target.vcenter]?.url ?? process.env.GOVC_URL;
      if (url) out[`vcenters.${target.vcenter}.url`] = endpointUrl(url);
    }
  }
  return plan ? usedFacts(out, names, plan) : out;
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

// The composition root's wiring: an inventory target becomes a step planner (pure), a provider
// and a workload endpoint. Secrets are revealed here and nowhere above.
import path from 'node:path';
import type { LoadedInventory } from '../config/index.ts';
import type { SshHost, Target } from '../config/inventory.ts';
import { UsageError } from '../errors.ts';
import type { StepPlanner } from '../plan/plan.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { createLocalRunner } from '../ssh/local-runner.ts';
import { connectSsh, type SshOptions } from '../ssh/ssh-runner.ts';
import type { WorkloadEndpoint } from '../run/executor.ts';
import type { Provider, ProviderName } from '../run/provider.ts';
import { createEsxiShellProvider } from '../providers/esxi-shell/provider.ts';
import { planEsxiShellSteps } from '../providers/esxi-shell/plan.ts';
import type { EsxiShellTargetConfig } from '../providers/esxi-shell/config.ts';

export interface Composition {
  provider: ProviderName;
  planSteps?: StepPlanner;
  /** connects the provider (SOAP session, SSH) — only for a real run, never for plan/dry-run */
  connectProvider(): Promise<Provider | null>;
  workload: WorkloadEndpoint;
  /** secret-free description of where the workload runs */
  workloadTarget: Record<string, unknown>;
  insecureEndpoints: string[];
}

function sshOptions(inv: LoadedInventory, name: string): SshOptions {
  const h: SshHost | undefined = inv.inventory.sshHosts[name];
  if (!h) throw new UsageError(`${inv.file}: no sshHosts entry named "${name}"`);
  const base = path.dirname(path.resolve(inv.file));
  return {
    host: h.host,
    port: h.port,
    username: h.user,
    privateKeyPath: h.privateKeyFile ? path.resolve(base, h.privateKeyFile) : undefined,
    passphrase: h.passphrase ? inv.secrets.get(h.passphrase)?.reveal() : undefined,
    password: h.password ? inv.secrets.get(h.password)?.reveal() : undefined,
    keyboardInteractive: h.keyboardInteractive,
    knownHostsFile: h.knownHostsFile ? path.resolve(base, h.knownHostsFile) : undefined,
    insecure: h.insecure,
  };
}

function guestEndpoint(inv: LoadedInventory, g: { sshHost?: string; workdir: string; testFile?: string; fioPath: string; ioengine: string }): { endpoint: WorkloadEndpoint; describe: Record<string, unknown> } {
  const filename = g.testFile ?? path.posix.join(g.workdir, 'storsweep-test.dat');
  const connect = async (): Promise<CommandRunner> => {
    const runner = g.sshHost ? await connectSsh(sshOptions(inv, g.sshHost)) : createLocalRunner();
    await runner.run(`mkdir -p '${g.workdir.replace(/'/g, `'\\''`)}'`);
    return runner;
  };
  return {
    endpoint: { connect, filename, fioPath: g.fioPath, ioengine: g.ioengine },
    describe: { runsOn: g.sshHost ? `ssh:${g.sshHost}` : 'local', testFile: filename },
  };
}

export function compose(target: Target, inv: LoadedInventory): Composition {
  const insecure: string[] = Object.entries(inv.inventory.sshHosts)
    .filter(([, h]) => h.insecure)
    .map(([n]) => `ssh:${n}`);
  switch (target.provider) {
    case 'local':
    case 'ssh': {
      const g = guestEndpoint(inv, { ...target, sshHost: target.provider === 'ssh' ? target.sshHost : undefined });
      return { provider: target.provider, connectProvider: async () => null, workload: g.endpoint, workloadTarget: g.describe, insecureEndpoints: insecure };
    }
    case 'esxi-shell': {
      const cfg: EsxiShellTargetConfig = {
        host: target.sshHost,
        vmid: String(target.vmid),
        datastoreVolumePath: target.datastore ? (target.datastore.startsWith('/') ? target.datastore : `/vmfs/volumes/${target.datastore}`) : undefined,
        vmfsDevice: target.vmfsDevice,
        rdmDevice: target.rdmDevice,
        allowedDevices: target.allowedDevices,
        scsiBus: target.controllerBus,
      };
      const g = guestEndpoint(inv, target.guest);
      return {
        provider: 'esxi-shell',
        planSteps: (axes, names) => planEsxiShellSteps(axes, cfg, { base: names.prefix }),
        connectProvider: async () => createEsxiShellProvider(cfg, await connectSsh(sshOptions(inv, target.sshHost))),
        workload: g.endpoint,
        workloadTarget: g.describe,
        insecureEndpoints: insecure,
      };
    }
    case 'vsphere':
    case 'hyperv':
      throw new UsageError(`target provider "${target.provider}" is not wired into this build yet`);
  }
}

// The ESXi-shell provider: carries out planned steps with partedUtil, vmkfstools, esxcli and vim-cmd
// over a CommandRunner (SSH to the ESXi shell), one operation each (operations/*.ts). Every
// destructive command is preceded by a guard that asks the host itself whether the device is
// unused (host.ts); the guard sends nothing destructive on refusal.
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { connectionLost } from '../../ssh/connection-lost.ts';
import { toolOwner } from '../../ssh/process-group.ts';
import type { Provider } from '../../contract/provider.ts';
import type { GuestAccess } from '../guest-disk.ts';
import { operationsProvider } from '../operations.ts';
import { checkEsxiShellTarget, type EsxiShellTargetConfig } from './config.ts';
import { esxtopObserver, stopEsxtopLeftovers } from './esxtop.ts';
import { describeEsxiHost } from './fingerprint.ts';
import { esxiHost } from './host.ts';
import { ESXI_SHELL_OPERATIONS } from './operations/index.ts';

export interface EsxiShellProviderOptions {
  /** the VM's Linux guest, where the guest-disk step finds the disk attached (absent: a provider that only provisions, e.g. cleanup without a guest) */
  guest?: GuestAccess;
}

export function createEsxiShellProvider(targetIn: EsxiShellTargetConfig, runner: CommandRunner, opts: EsxiShellProviderOptions = {}): Provider {
  const target = checkEsxiShellTarget(targetIn);
  const host = esxiHost(target, runner, opts.guest);
  // a lost SSH connection is worth another attempt (the executor looks before reissuing a create)
  return {
    name: 'esxi-shell',
    ...operationsProvider('esxi-shell', ESXI_SHELL_OPERATIONS, host),
    isTransient: connectionLost,
    close: () => runner.close(),
    // the run's fingerprint and the host's view of each test (fingerprint.ts, esxtop.ts)
    describe: () => describeEsxiHost(runner, target.vmid),
    observeHost: (provisioned, ctx) => esxtopObserver(runner, provisioned, ctx),
    // the esxtop a dead process of the run left for this target (resume, takeover)
    stopLeftovers: (runId, name) => stopEsxtopLeftovers(runner, toolOwner(runId, name)),
  };
}

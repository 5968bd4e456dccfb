// The Hyper-V provider: planned steps → PowerShell cmdlet calls over a CommandRunner (Windows
// OpenSSH), one operation each (operations/*.ts). Teardown removes only what this run created: the
// drive it added, the VHDX it created (by exact path), and a pass-through disk goes back online.
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { connectionLost } from '../../ssh/connection-lost.ts';
import type { Provider } from '../../contract/provider.ts';
import { operationsProvider } from '../operations.ts';
import { checkHypervTarget, type HypervTargetConfig } from './config.ts';
import { describeHypervHost } from './fingerprint.ts';
import { hypervHost, type GuestAccess } from './host.ts';
import { HYPERV_OPERATIONS } from './operations/index.ts';

export type { GuestAccess };
export { guestDiskTarget, guestVolumeTarget } from './operations/guest-disk.ts';
export { cimDateMs, processCall, runGuestDiskspd, runGuestDiskspdArgv, stopOwnedInGuest } from './guest-diskspd.ts';

export function createHypervProvider(targetIn: HypervTargetConfig, runner: CommandRunner, guest?: GuestAccess): Provider {
  const h = hypervHost(checkHypervTarget(targetIn), runner, guest);
  // a lost SSH connection is worth another attempt (the executor looks before reissuing a create)
  return { name: 'hyperv', ...operationsProvider('hyperv', HYPERV_OPERATIONS, h), isTransient: connectionLost, close: () => runner.close(), describe: () => describeHypervHost(runner) };
}

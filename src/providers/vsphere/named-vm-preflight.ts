// Preflight of the existing VMs a target names for `vm.count` (`scaleVms`, vm-count.ts), for the
// VMs a plan's steps use: each must exist, be powered on (storsweep never powers a named VM on or
// off), run VMware Tools (its guest is reached through guest operations: vim.vm.guest.ProcessManager
// faults GuestOperationsUnavailable "if the VM agent for guest operations is not running" and
// InvalidPowerState "if the VM is not powered on"), have disk.EnableUUID where the guest finds its
// disk by WWN, and accept the guest login. Every ✗ names the VM. Read-only; the login runs `true`.
import type { PreflightCheck } from '../../contract/preflight.ts';
import { errorMessage } from '../../errors.ts';
import { redact } from '../../input/secrets.ts';
import type { VsphereClient } from './client.ts';
import type { MoRef } from './soap.ts';
import { arr } from './types.ts';

/** Logs in to the guest of a named VM and runs a no-op there (the target's guest wiring, for another VM). */
export type GuestLogin = (vm: string) => Promise<void>;

/** The named VMs found, by name (for the privilege checks), and the checks of each. */
export async function namedVmChecks(c: VsphereClient, datacenter: MoRef, vms: readonly string[], o: { byUuid: boolean; login?: GuestLogin | undefined }): Promise<{ found: Map<string, MoRef>; checks: PreflightCheck[] }> {
  const found = new Map<string, MoRef>();
  const checks: PreflightCheck[] = [];
  for (const vm of vms) {
    let ref: MoRef;
    try {
      ref = await c.findVm(vm, datacenter);
    } catch (err) {
      checks.push({ check: `VM ${vm}`, status: 'fail', detail: `not found: ${redact(errorMessage(err))}`, remedy: `name an existing VM in the target's scaleVms, or remove ${vm} from it` });
      continue;
    }
    found.set(vm, ref);
    checks.push(...(await stateChecks(c, vm, ref, o.byUuid)));
    if (o.login) checks.push(await loginCheck(vm, o.login));
  }
  return { found, checks };
}

async function stateChecks(c: VsphereClient, vm: string, ref: MoRef, byUuid: boolean): Promise<PreflightCheck[]> {
  const p = await c.readProps(ref, ['runtime.powerState', 'guest.toolsRunningStatus', 'config.extraConfig']);
  const text = (v: unknown) => (typeof v === 'string' ? v : 'unknown');
  const power = text(p['runtime.powerState']);
  const tools = text(p['guest.toolsRunningStatus']);
  const out: PreflightCheck[] = [
    power === 'poweredOn'
      ? { check: `VM ${vm}: power`, status: 'ok', detail: 'powered on' }
      : { check: `VM ${vm}: power`, status: 'fail', detail: `${power}: storsweep never powers a VM the inventory names on or off`, remedy: `power ${vm} on (and start its guest) before the run` },
    tools === 'guestToolsRunning'
      ? { check: `VM ${vm}: VMware Tools`, status: 'ok', detail: 'running' }
      : { check: `VM ${vm}: VMware Tools`, status: 'fail', detail: `not running (${tools}): its guest is reached through guest operations only`, remedy: `start VMware Tools in ${vm}'s guest` },
  ];
  if (byUuid) {
    const v = [...arr(p['config.extraConfig'] as Array<{ key: string; value: unknown }> | undefined)].reverse().find((e) => e.key.toLowerCase() === 'disk.enableuuid')?.value;
    const on = typeof v === 'string' && (v.toUpperCase() === 'TRUE' || v === '1');
    out.push(on ? { check: `VM ${vm}: disk.EnableUUID`, status: 'ok', detail: 'TRUE' } : { check: `VM ${vm}: disk.EnableUUID`, status: 'fail', detail: `${v === undefined ? 'not set' : JSON.stringify(v)}: the guest gets no wwn-0x link for an attached disk`, remedy: `set disk.EnableUUID = TRUE in ${vm}'s advanced configuration (VM powered off), then power it on` });
  }
  return out;
}

async function loginCheck(vm: string, login: GuestLogin): Promise<PreflightCheck> {
  try {
    await login(vm);
    return { check: `VM ${vm}: guest login`, status: 'ok', detail: 'the guest credential runs programs through guest operations' };
  } catch (err) {
    return { check: `VM ${vm}: guest login`, status: 'fail', detail: redact(errorMessage(err)), remedy: `check that VMware Tools runs in ${vm}'s guest and that it has the target's guest account (guest.credential), or remove ${vm} from scaleVms` };
  }
}

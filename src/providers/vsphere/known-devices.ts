// What a session knows of a VM's devices from its own last disk operation on that VM, so that
// the next disk create can choose its controller and unit without reading them first
// (docs/decisions.md, "A disk create places from what its session last saw").
//
// Only a create's PLACEMENT uses this, never a decision about what to remove: a stale list can
// only make the server refuse the reconfigure (the unit is taken, the controller is gone), never
// make it remove or overwrite anything, and the create then reads the devices and tries once more
// (disks.ts createDisk). What it holds:
//  - after a disk create: the devices reported with the task's success (the task's own filter
//    carries config.hardware.device, task.ts waitForTaskWatching);
//  - after a disk detach: the devices read before it (the ownership read) minus the removed key;
//  - with either, the VM's hardware version (config.version) as last read.
// It is given up — the next create reads — when:
//  - any ReconfigVM_Task of the VM is sent through this session (methods.ts reconfigVMTask): a
//    controller added or removed, an RDM, an edit, or a failed or unknown disk operation leaves
//    nothing remembered;
//  - a create takes it (one use; the create remembers what its own success reported);
//  - the session logged in again since (its generation, session-scoped.ts).
// What other clients do to the VM meanwhile is not known here; the server's refusal is what
// tells, and the create reads then.
import { generationOf } from './session-scoped.ts';
import type { MoRef, RoundTripper } from './soap.ts';
import type { VirtualDevice } from './types.ts';

export interface KnownDevices {
  devices: VirtualDevice[];
  /** hardware version (controllers.ts hardwareVersion), 0 when unknown */
  hw: number;
}

interface Entry extends KnownDevices {
  /** the session's login count when the operation that saw the devices began */
  generation: number | undefined;
}

const perSession = new WeakMap<RoundTripper, Map<string, Entry>>();

function key(vm: MoRef): string {
  return `${vm.type}:${vm.value}`;
}

/**
 * Remembers `devices` as the VM's devices after an operation of this session that began at login
 * `generation` (generationOf(rt) taken before its first call): a re-login during it leaves the
 * entry already stale.
 */
export function rememberDevices(rt: RoundTripper, vm: MoRef, known: KnownDevices, generation: number | undefined): void {
  let m = perSession.get(rt);
  if (!m) perSession.set(rt, (m = new Map<string, Entry>()));
  m.set(key(vm), { devices: known.devices, hw: known.hw, generation });
}

/** The VM's devices as this session last saw them, given up in the taking; undefined when none, or of an earlier login. */
export function takeKnownDevices(rt: RoundTripper, vm: MoRef): KnownDevices | undefined {
  const m = perSession.get(rt);
  const e = m?.get(key(vm));
  if (!e) return undefined;
  m!.delete(key(vm));
  if (e.generation !== generationOf(rt)) return undefined;
  return { devices: e.devices, hw: e.hw };
}

/** Forgets what this session knew of the VM's devices (any reconfigure of it makes that stale). */
export function forgetDevices(rt: RoundTripper, vm: MoRef): void {
  perSession.get(rt)?.delete(key(vm));
}

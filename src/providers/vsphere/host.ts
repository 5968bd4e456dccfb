// The vCenter/ESXi endpoint as the vSphere operations (operations/*.ts) reach it: one session for
// the provider's lifetime (connected on first use, a failed connect retried by the next caller),
// the target's host, VMs and datastores looked up once, and the read-only checks a step makes
// before it sends anything.
import { InvalidArgument, UnsafeOperation } from '../../errors.ts';
import type { RecordedObject } from '../../contract/operation.ts';
import type { GuestAccess } from '../guest-disk.ts';
import type { WindowsGuestRunner } from '../windows-guest.ts';
import { operationFactory } from '../operations.ts';
import { VsphereClient, type MoRef } from './client.ts';
import type { VsphereTargetConfig } from './config.ts';
import { isFault, isNotFoundHere } from './fault.ts';
import { diskUuidEnabled } from './guest-identity.ts';

export interface VsphereProviderOptions {
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** for tests: reuse an open client instead of connecting */
  connect?: () => Promise<VsphereClient>;
  /**
   * The Linux guest that measures the disks (the target's guest): the `guest-disk` step finds each
   * attached disk there by its WWN. Without it, the VM's disk.EnableUUID is not checked either.
   */
  guest?: GuestAccess;
  /** The Linux guest of a clone of the target's VM (`vm.count`), by the clone's name: reached like the target's, through guest operations */
  guestFor?: (vm: string) => GuestAccess;
  /** how often the host's counters are asked again while waiting for the sample covering a test's end (ms; default 5000) */
  perfPollMs?: number;
  /** A Windows guest (guest.os: windows, through guest operations): the `guest-disk` step finds each disk there by Get-Disk */
  windowsGuest?: { open: () => Promise<WindowsGuestRunner> };
}

export interface VsphereHost {
  target: VsphereTargetConfig;
  opts: VsphereProviderOptions;
  client: () => Promise<VsphereClient>;
  host: (name: string) => Promise<MoRef>;
  vm: (name: string) => Promise<MoRef>;
  /** forgets the lookup of a VM this run made or removed (a clone made again under its owned name is another VM) */
  forgetVm: (name: string) => void;
  findDatastore: (name: string) => Promise<MoRef | undefined>;
  /** logs out and forgets every lookup */
  close: () => Promise<void>;
}

/** One vSphere operation (operations/*.ts). */
export const vsphereOperation = operationFactory<VsphereHost>('vsphere');

export function vsphereHost(target: VsphereTargetConfig, opts: VsphereProviderOptions): VsphereHost {
  const log = opts.log ?? (() => undefined);
  let clientP: Promise<VsphereClient> | undefined;
  const refs = new Map<string, Promise<MoRef>>();
  const connect =
    opts.connect ??
    (() =>
      VsphereClient.connect({
        ...target.vcenter,
        onRelogin: (i) => log('vSphere session expired; logged in again', { host: i.host, method: i.method }),
        onRetry: (i) => log(`vSphere ${i.method} retried (attempt ${i.attempt}): ${i.reason}`, { host: i.host, method: i.method, attempt: i.attempt }),
      }));
  function client(): Promise<VsphereClient> {
    clientP ??= connect();
    // A failed connect must not poison later attempts.
    clientP.catch(() => {
      clientP = undefined;
    });
    return clientP;
  }
  /** a lookup made once; a failed one is asked again next time */
  function cached(key: string, fn: () => Promise<MoRef>): Promise<MoRef> {
    let p = refs.get(key);
    if (!p) {
      p = fn();
      p.catch(() => refs.delete(key));
      refs.set(key, p);
    }
    return p;
  }
  const datacenter = () => cached('dc', async () => (await client()).findDatacenter(target.datacenter));
  const dc = async () => (target.datacenter ? datacenter() : undefined);
  return {
    target,
    opts,
    client,
    host: (name) => cached(`host:${name}`, async () => (await client()).findHost(name, await dc())),
    vm: (name) => cached(`vm:${name}`, async () => (await client()).findVm(name, await dc())),
    forgetVm: (name) => void refs.delete(`vm:${name}`),
    findDatastore: async (name) => (await client()).findDatastoreOrNone(name, await dc()),
    close: async () => {
      const p = clientP;
      clientP = undefined;
      refs.clear();
      if (!p) return;
      const c = await p.catch(() => undefined);
      await c?.logout();
    },
  };
}

/**
 * The datastore this run created, or undefined. A recorded id is trusted only while the object
 * behind it still has our owned name: ids can be reused (the simulator derives them from the
 * LUN), and a later run's datastore on the same LUN must never be removed by an earlier cleanup.
 */
export async function ownedDatastore(h: VsphereHost, obj: RecordedObject): Promise<MoRef | undefined> {
  if (obj.id) {
    const ref: MoRef = { type: 'Datastore', value: obj.id };
    try {
      const p = await (await h.client()).readProps(ref, ['name']);
      if (p.name === obj.name) return ref;
    } catch (err) {
      // gone: the server's fault, or no object in the reply
      if (!isFault(err, 'ManagedObjectNotFound') && !isNotFoundHere(err)) throw err;
    }
  }
  return h.findDatastore(obj.name);
}

/**
 * Without disk.EnableUUID = TRUE a virtual disk answers no VPD 0x80/0x83 and the guest lists it
 * by no WWN (real-product-rules.md §3.4): the disk this run attaches could not be told from the
 * guest's others. The option takes effect at power-on, and the VM is the running benchmark
 * guest, so it is checked, not set: refused before anything is sent.
 */
export async function checkDiskUuid(h: VsphereHost, v: MoRef, vmName: string): Promise<void> {
  const p = await (await h.client()).readProps(v, ['config.extraConfig']);
  if (diskUuidEnabled(p['config.extraConfig'])) return;
  throw new UnsafeOperation(
    `VM ${vmName} does not have disk.EnableUUID = TRUE: its virtual disks report no WWN to the guest, so the disk this run attaches could not be found there by identity (only a fixed path, which may name another disk). Power the VM off, add the configuration parameter disk.EnableUUID = TRUE (VM Options > Advanced > Configuration Parameters), and power it on again; storsweep does not change it (it takes effect only at power-on)`,
    { operation: 'ReconfigVM_Task', target: vmName },
  );
}

/** A VM name the ledger recorded for `obj`: refused (nothing guessed) when there is none. */
export function recordedVm(obj: RecordedObject, what: string = obj.kind): string {
  if (typeof obj.data.vm !== 'string') throw new InvalidArgument(`the ledger records no VM for ${what} ${obj.name}; refusing to guess one`, { name: 'vm', value: '' });
  return obj.data.vm;
}

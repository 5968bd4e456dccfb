// The vSphere Provider: carries out planned steps (steps.ts) on one vCenter/ESXi endpoint, with
// one session for the provider's lifetime, and tears down exactly what the run created.
import { InternalError, InvalidArgument, ProvisionedStateMismatch, UnsafeOperation } from '../../errors.ts';
import type { CreatedObject, DestroyPlan, MeasuredTarget, OwnedObjectRef, PlannedStep, Provider, ProviderContext, ProviderName } from '../../contract/provider.ts';
import { applyGuestDiskStep, destroyGuestFilesystem, wwnOfDiskUuid, wwnOfLun, type AttachedDiskIdentity, type GuestAccess } from '../guest-disk.ts';
import { VsphereClient, type MoRef } from './client.ts';
import type { VsphereTargetConfig } from './config.ts';
import { diskCapacityBytes, provisionedFormat, splitDatastorePath, type DiskFormat, type RdmCompatibility } from './disks.ts';
import { CONTROLLER_KINDS, CONTROLLER_TYPES, pickController, type ControllerKind } from './controllers.ts';
import { isFault, isNotFoundHere } from './fault.ts';
import { isTransient } from './retrying.ts';
import { GUEST_DISK_OPERATION, GUEST_FS_OPERATION, GUEST_WINDOWS_DISK_OPERATION, GUEST_WINDOWS_VOLUME_OPERATION } from './steps.ts';
import { perfObserver } from './perf.ts';
import { getGuestDiskCall, guestDiskFacts, listGuestDisksCall, pickGuestDiskByWwn, setGuestDiskOnlineCall, setGuestDiskWritableCall, type GuestDisk } from '../hyperv/guest-disk.ts';
import type { WindowsGuestRunner } from '../windows-guest.ts';
import { clearGuestVolume, formatGuestVolume, guestVolumeMeasure, volumeSpecOf, type GuestVolumeIo } from '../hyperv/windows-guest-volume.ts';
import type { GuestCall } from '../hyperv/powershell.ts';

const idHex = (v: unknown): string => (typeof v === 'string' ? v.replace(/[\s:-]/g, '').toLowerCase() : '');
import type { DatastoreInfo, VirtualDevice } from './types.ts';
import { policyForDisk, verifyDiskPolicy, withMeasureFacts } from './storage-policy.ts';

export interface VsphereProviderOptions {
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** for tests: reuse an open client instead of connecting */
  connect?: () => Promise<VsphereClient>;
  /**
   * The Linux guest that measures the disks (the target's guest): the `guest-disk` step finds each
   * attached disk there by its WWN. Without it, the VM's disk.EnableUUID is not checked either.
   */
  guest?: GuestAccess;
  /** how often the host's counters are asked again while waiting for the sample covering a test's end (ms; default 5000) */
  perfPollMs?: number;
  /** A Windows guest (guest.os: windows, through guest operations): the `guest-disk` step finds each disk there by Get-Disk */
  windowsGuest?: { open: () => Promise<WindowsGuestRunner> };
}


/**
 * What the guest will call a disk: a flat VMDK (and a virtual-mode RDM, which the host virtualizes)
 * by its backing uuid, seen only with the VM's disk.EnableUUID = TRUE; a physical-mode RDM by the
 * LUN's own NAA id, which it passes through (guest-disk.ts has the sources). Null: none.
 */
export function guestIdentity(d: VirtualDevice): AttachedDiskIdentity | null {
  const b = d.backing;
  if (!b) return null;
  const source = typeof b.fileName === 'string' ? b.fileName : `disk ${d.key}`;
  const sizeBytes = diskCapacityBytes(d);
  if (b._type === 'VirtualDiskRawDiskMappingVer1BackingInfo' && b.compatibilityMode === 'physicalMode') {
    const lun = typeof b.deviceName === 'string' ? b.deviceName.split('/').pop() ?? '' : '';
    const wwn = wwnOfLun(lun);
    return wwn ? { wwn, sizeBytes, source: `${source} (LUN ${lun})` } : null;
  }
  const wwn = wwnOfDiskUuid(b.uuid);
  return wwn ? { wwn, sizeBytes, source } : null;
}

/**
 * Whether a disk.EnableUUID value turns the option on: `TRUE` in any case, or `1` — the form the
 * Kubernetes vSphere Cloud Provider docs set (`govc vm.change -e="disk.enableUUID=1"`,
 * kubernetes/website PR #2989) and that clusters run with; the lab's stand-ins read it alike.
 */
export function enableUuidValueOn(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const v = value.trim().toUpperCase();
  return v === 'TRUE' || v === '1';
}

/** The VM's disk.EnableUUID as its extraConfig says (the last value wins). */
export function diskUuidEnabled(extraConfig: unknown): boolean {
  const list = Array.isArray(extraConfig) ? extraConfig : extraConfig ? [extraConfig] : [];
  let on = false;
  for (const o of list as Array<{ key?: unknown; value?: unknown }>) {
    if (typeof o.key === 'string' && o.key.toLowerCase() === 'disk.enableuuid') on = enableUuidValueOn(o.value);
  }
  return on;
}

type DestroyRef = OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> };

function str(args: Record<string, unknown>, key: string, step: string): string {
  const v = args[key];
  if (typeof v !== 'string' || v === '') throw new InvalidArgument(`vsphere step ${step}: argument ${key} must be a non-empty string`, { name: key, value: String(v) });
  return v;
}

function int(args: Record<string, unknown>, key: string, step: string): number {
  const v = args[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidArgument(`vsphere step ${step}: argument ${key} must be a number`, { name: key, value: String(v) });
  return v;
}

function controllerKind(v: unknown, step: string): ControllerKind {
  if (typeof v !== 'string' || !(CONTROLLER_KINDS as string[]).includes(v)) {
    throw new InvalidArgument(`vsphere step ${step}: argument controller must be one of ${CONTROLLER_KINDS.join(', ')}`, { name: 'controller', value: String(v) });
  }
  return v as ControllerKind;
}

function optInt(args: Record<string, unknown>, key: string): number | undefined {
  return typeof args[key] === 'number' ? args[key] : undefined;
}

/** The disk whose file is `<owned name>.vmdk` (ESXi may add a suffix like _1 on clashes, not here). */
function diskByOwnedName(devices: VirtualDevice[], name: string): VirtualDevice | undefined {
  return devices.find((d) => d._type === 'VirtualDisk' && typeof d.backing?.fileName === 'string' && d.backing.fileName.endsWith(`] ${name}.vmdk`));
}

export function createVsphereProvider(target: VsphereTargetConfig, opts: VsphereProviderOptions = {}): Provider {
  const log = opts.log ?? (() => undefined);
  let clientP: Promise<VsphereClient> | undefined;
  const refs = new Map<string, Promise<MoRef>>();
  /** a disk's storage policy facts (owned name → facts), read back by verify() for its records */
  const policyFacts = new Map<string, Record<string, string>>();

  function client(): Promise<VsphereClient> {
    clientP ??= (
      opts.connect ??
      (() =>
        VsphereClient.connect({
          ...target.vcenter,
          onRelogin: (i) => log('vSphere session expired; logged in again', { host: i.host, method: i.method }),
          onRetry: (i) => log(`vSphere ${i.method} retried (attempt ${i.attempt}): ${i.reason}`, { host: i.host, method: i.method, attempt: i.attempt }),
        }))
    )();
    // A failed connect must not poison later attempts.
    clientP.catch(() => {
      clientP = undefined;
    });
    return clientP;
  }

  function cached(key: string, fn: (c: VsphereClient, dc: MoRef | undefined) => Promise<MoRef>): Promise<MoRef> {
    let p = refs.get(key);
    if (!p) {
      p = (async () => {
        const c = await client();
        const dc = target.datacenter ? await datacenter() : undefined;
        return fn(c, dc);
      })();
      p.catch(() => refs.delete(key));
      refs.set(key, p);
    }
    return p;
  }
  const datacenter = (): Promise<MoRef> => {
    let p = refs.get('dc');
    if (!p) {
      p = client().then((c) => c.findDatacenter(target.datacenter));
      p.catch(() => refs.delete('dc'));
      refs.set('dc', p);
    }
    return p;
  };
  const host = (name: string) => cached(`host:${name}`, (c, dc) => c.findHost(name, dc));
  const vm = (name: string) => cached(`vm:${name}`, (c, dc) => c.findVm(name, dc));

  async function findDatastore(name: string): Promise<MoRef | undefined> {
    const c = await client();
    return c.findDatastoreOrNone(name, target.datacenter ? await datacenter() : undefined);
  }

  /**
   * A flat disk must fit where it goes, checked before anything is sent: its size within the
   * datastore's maxFileSize (a VMFS3 volume caps files by its block size: 256 GB per MB of block,
   * 2 TB − 512 B at 8 MB; an existing VMFS3 datastore is only known here) and within its free space
   * (a benchmark writes the disk; a thin one bigger than the free space fails mid-measurement).
   */
  async function checkRoom(datastore: string, sizeBytes: number): Promise<void> {
    const ref = await findDatastore(datastore);
    if (!ref) return; // the create meets the host's own fault
    const { summary, info } = await (await client()).readDatastore(ref);
    const gib = (n: number) => `${(n / 1024 ** 3).toFixed(n % 1024 ** 3 ? 2 : 0)} GiB`;
    const maxFile = Number(info.maxFileSize);
    if (Number.isFinite(maxFile) && maxFile > 0 && sizeBytes > maxFile) {
      throw new InvalidArgument(`disk.sizeGb: a ${gib(sizeBytes)} disk is larger than the largest file datastore ${datastore} stores (maxFileSize ${maxFile} bytes${info.vmfs?.majorVersion === 3 ? `: VMFS3 with ${info.vmfs.blockSizeMb} MB blocks` : ''})`, { name: 'disk.sizeGb', value: String(sizeBytes / 1024 ** 3) });
    }
    const free = Number(summary.freeSpace);
    if (Number.isFinite(free) && sizeBytes > free) {
      throw new InvalidArgument(`disk.sizeGb: a ${gib(sizeBytes)} disk does not fit datastore ${datastore} (${gib(free)} free)`, { name: 'disk.sizeGb', value: String(sizeBytes / 1024 ** 3) });
    }
  }

  /**
   * A thick disk on an NFS datastore (one this run did not create: datastore.kind existing) only
   * where the host's mount offers hardware acceleration: "On NFS datastores that do not support
   * Hardware Acceleration, only thin format is available" (vSphere Storage, "Virtual Disk
   * Provisioning Policies"). The mount says so in HostFileSystemMountInfo.vStorageSupport (API 4.1+,
   * 'vStorageSupported'); the inventory's nfs.vaaiNas vouches for it too. Checked before any
   * mutating call, so a refusal creates nothing (no thin disk made and then deleted).
   */
  async function checkNfsThick(datastore: string, format: string): Promise<void> {
    if (format !== 'lazyzeroedthick' && format !== 'eagerzeroedthick') return;
    const ref = await findDatastore(datastore);
    if (!ref) return;
    const c = await client();
    const { summary } = await c.readDatastore(ref);
    const rawType = (summary as { type?: unknown }).type;
    const type = typeof rawType === 'string' ? rawType : '';
    if (type !== 'NFS' && type !== 'NFS41') return;
    if (target.nfs?.vaaiNas) return;
    const mounts = ((await c.readProps(ref, ['host'])).host ?? []) as Array<{ mountInfo?: { vStorageSupport?: unknown } }>;
    const list = Array.isArray(mounts) ? mounts : [mounts];
    if (list.length > 0 && list.every((m) => m.mountInfo?.vStorageSupport === 'vStorageSupported')) return;
    throw new InvalidArgument(
      `disk.format ${format}: datastore ${datastore} is ${type} and its host mount reports no hardware acceleration (vStorageSupport ${JSON.stringify(list[0]?.mountInfo?.vStorageSupport ?? null)}); an NFS datastore without VAAI-NAS has thin disks only. Use disk.format thin, or set nfs.vaaiNas: true in the inventory if the host has a VAAI-NAS plugin for it`,
      { name: 'disk.format', value: format },
    );
  }

  /**
   * The datastore this run created, or undefined. A recorded id is trusted only while the object
   * behind it still has our owned name: ids can be reused (the simulator derives them from the
   * LUN), and a later run's datastore on the same LUN must never be removed by an earlier cleanup.
   */
  async function ownedDatastore(obj: DestroyRef): Promise<MoRef | undefined> {
    if (obj.id) {
      const ref: MoRef = { type: 'Datastore', value: obj.id };
      try {
        const p = await (await client()).readProps(ref, ['name']);
        if (p.name === obj.name) return ref;
      } catch (err) {
        // gone: the server's fault, or no object in the reply
        if (!isFault(err, 'ManagedObjectNotFound') && !isNotFoundHere(err)) throw err;
      }
    }
    return findDatastore(obj.name);
  }

  async function apply(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
    const a = step.arguments;
    const c = await client();
    ctx.signal.throwIfAborted();
    switch (step.operation) {
      case 'CreateVmfsDatastore': {
        const name = str(a, 'name', step.step);
        const h = await host(str(a, 'host', step.step));
        const blockSizeMb = optInt(a, 'blockSizeMb');
        const blockSizeKb = optInt(a, 'blockSizeKb');
        ctx.log(`creating VMFS ${String(a.vmfsMajorVersion)} datastore ${name} on ${String(a.device)}`, { device: a.device, blockSizeMb, blockSizeKb });
        const ds = await c.createVmfsDatastore(h, {
          deviceCanonicalName: str(a, 'device', step.step),
          vmfsMajorVersion: int(a, 'vmfsMajorVersion', step.step),
          ...(blockSizeMb !== undefined ? { blockSizeMb } : {}),
          ...(blockSizeKb !== undefined ? { blockSizeKb } : {}),
          name,
          allowedDevices: target.allowedDevices,
          beforeSend: () => ctx.sent({ datastore: name, host: a.host, type: 'vmfs', device: a.device }),
        });
        return { kind: 'datastore', name, provider: 'vsphere', id: ds.value, data: { datastore: name, host: a.host, type: 'vmfs', device: a.device } };
      }
      case 'CreateNasDatastore': {
        const name = str(a, 'name', step.step);
        const h = await host(str(a, 'host', step.step));
        ctx.log(`mounting NFS ${String(a.remoteHost)}:${String(a.remotePath)} as ${name}`);
        const ds = await c.createNasDatastore(h, {
          remoteHost: str(a, 'remoteHost', step.step),
          remotePath: str(a, 'remotePath', step.step),
          name,
          ...(a.type === 'NFS41' ? { type: 'NFS41' as const } : {}),
          beforeSend: () => ctx.sent({ datastore: name, host: a.host, type: 'nfs' }),
        });
        return { kind: 'datastore', name, provider: 'vsphere', id: ds.value, data: { datastore: name, host: a.host, type: 'nfs' } };
      }
      case 'ReconfigVM_Task': {
        if (step.creates?.kind === 'controller') return applyController(step, ctx);
        const v = await vm(str(a, 'vm', step.step));
        const fileName = str(a, 'fileName', step.step);
        const datastore = str(a, 'datastore', step.step);
        const owned = step.creates?.name ?? fileName.replace(/\.vmdk$/, '');
        let controllerKey = optInt(a, 'controllerKey');
        if (controllerKey === undefined && typeof a.controller === 'string') {
          // disk.controller: the controller of that type with a free unit (the controller step
          // made sure there is one)
          const kind = controllerKind(a.controller, step.step);
          const { devices, hw } = await c.vmHardware(v);
          const ctl = pickController(devices, kind, hw);
          if (!ctl) throw new InvalidArgument(`VM ${String(a.vm)} has no ${CONTROLLER_TYPES[kind]} with a free unit for disk.controller ${kind}`, { name: 'disk.controller', value: kind });
          controllerKey = ctl.key;
        }
        const unitNumber = optInt(a, 'unitNumber');
        const placement = { ...(controllerKey !== undefined ? { controllerKey } : {}), ...(unitNumber !== undefined ? { unitNumber } : {}), beforeSend: () => ctx.sent({ vm: a.vm, fileName: `[${datastore}] ${fileName}` }) };
        if (a.backing !== 'rdm') {
          await checkNfsThick(datastore, str(a, 'format', step.step));
          await checkRoom(datastore, int(a, 'sizeBytes', step.step));
        }
        if ((opts.guest || opts.windowsGuest) && a.compatibilityMode !== 'physicalMode') await checkDiskUuid(v, str(a, 'vm', step.step));
        const policy = typeof a.policy === 'string' ? await policyForDisk(c, a.policy, datastore, await findDatastore(datastore)) : undefined;
        const disk =
          a.backing === 'rdm'
            ? await c.attachRdm(v, {
                deviceCanonicalName: str(a, 'device', step.step),
                compatibilityMode: str(a, 'compatibilityMode', step.step) as RdmCompatibility,
                datastore,
                fileName,
                allowedDevices: target.allowedDevices,
                ...placement,
              })
            : await c.createDisk(v, {
                datastore,
                fileName,
                sizeBytes: int(a, 'sizeBytes', step.step),
                format: str(a, 'format', step.step) as DiskFormat,
                ...placement,
                ...(policy ? { profileId: policy.id } : {}),
              });
        ctx.log(`attached ${disk.fileName} to ${String(a.vm)} at ${disk.controllerKey}:${disk.unitNumber}`);
        return {
          kind: step.creates?.kind ?? (a.backing === 'rdm' ? 'rdm' : 'disk'),
          name: owned,
          provider: 'vsphere',
          id: String(disk.key),
          data: { vm: a.vm, fileName: disk.fileName, controllerKey: disk.controllerKey, unitNumber: disk.unitNumber },
        };
      }
      case GUEST_DISK_OPERATION:
      case GUEST_WINDOWS_DISK_OPERATION:
      case GUEST_WINDOWS_VOLUME_OPERATION:
      case GUEST_FS_OPERATION:
        return applyGuestDisk(step, ctx);
      default:
        throw new InvalidArgument(`vsphere provider cannot apply operation ${step.operation} (step ${step.step})`, { name: 'operation', value: step.operation });
    }
  }

  /**
   * Without disk.EnableUUID = TRUE a virtual disk answers no VPD 0x80/0x83 and the guest lists it
   * by no WWN (real-product-rules.md §3.4): the disk this run attaches could not be told from the
   * guest's others. The option takes effect at power-on, and the VM is the running benchmark
   * guest, so it is checked, not set: refused before anything is sent.
   */
  async function checkDiskUuid(v: MoRef, vmName: string): Promise<void> {
    const p = await (await client()).readProps(v, ['config.extraConfig']);
    if (diskUuidEnabled(p['config.extraConfig'])) return;
    throw new UnsafeOperation(
      `VM ${vmName} does not have disk.EnableUUID = TRUE: its virtual disks report no WWN to the guest, so the disk this run attaches could not be found there by identity (only a fixed path, which may name another disk). Power the VM off, add the configuration parameter disk.EnableUUID = TRUE (VM Options > Advanced > Configuration Parameters), and power it on again; storsweep does not change it (it takes effect only at power-on)`,
      { operation: 'ReconfigVM_Task', target: vmName },
    );
  }

  /**
   * The disk a guest-disk step's disk step attached (found on the VM by its owned name) and what the
   * guest knows it by (WWN, size, source: guest-disk.ts); refused when the VM has no such disk or it
   * reports no uuid / NAA id, before anything is asked of the guest.
   */
  async function attachedDiskIdentity(step: PlannedStep, operation: string): Promise<{ vmName: string; owned: string; disk: VirtualDevice; identity: AttachedDiskIdentity }> {
    const vmName = str(step.arguments, 'vm', step.step);
    const owned = str(step.arguments, 'disk', step.step);
    const d = diskByOwnedName(await (await client()).devices(await vm(vmName)), owned);
    if (!d) throw new InvalidArgument(`VM ${vmName} has no disk ${owned}.vmdk to find in the guest`, { name: 'disk', value: owned });
    const identity = guestIdentity(d);
    if (!identity) throw new UnsafeOperation(`${String(d.backing?.fileName)} on VM ${vmName} reports no uuid or NAA id, so the guest cannot name it by WWN; nothing is measured`, { operation, target: owned });
    return { vmName, owned, disk: d, identity };
  }

  /**
   * The guest-disk step: the disk the disk step attached (found on the VM by its owned name), found
   * in the guest by its WWN and checked (guest-disk.ts); the workload measures what it found.
   */
  async function applyGuestDisk(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
    ctx = withMeasureFacts(ctx, policyFacts.get(String(step.arguments.disk))); // the disk's storage policy in its records
    if (step.operation === GUEST_WINDOWS_DISK_OPERATION || step.operation === GUEST_WINDOWS_VOLUME_OPERATION) return applyWindowsGuestDisk(step, ctx);
    const a = step.arguments;
    const g = opts.guest;
    if (!g) throw new InternalError(`vsphere step ${step.step}: the provider was composed without the target's guest`);
    const { identity } = await attachedDiskIdentity(step, GUEST_DISK_OPERATION);
    return applyGuestDiskStep(g, identity, { provider: 'vsphere', filesystem: str(a, 'filesystem', step.step), mountpoint: a.mountpoint, ...(step.creates ? { name: step.creates.name } : {}) }, ctx);
  }

  /**
   * The guest-disk step in a Windows guest: the attached disk found by Get-Disk (its serial number or
   * unique id is the disk's WWN, the size the provisioned one: hyperv/guest-disk.ts), refused unless
   * blank and not the system or boot disk, then brought online and writable (a new SCSI disk stays
   * offline and read-only under Windows Server's default SAN policy, real-product-rules.md §6).
   * Raw: diskspd measures it (`#N`); nothing of it outlives the disk, no ledger row. With a volume
   * (GUEST_WINDOWS_VOLUME_OPERATION): GPT, one partition, NTFS/ReFS as the Hyper-V guest makes it
   * (../hyperv/windows-guest-volume.ts), a `guest-volume` row that teardown clears; diskspd measures a test file on it.
   */
  async function applyWindowsGuestDisk(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
    const a = step.arguments;
    const g = opts.windowsGuest;
    if (!g) throw new InternalError(`vsphere step ${step.step}: the provider was composed without the target's Windows guest`);
    const volume = step.operation === GUEST_WINDOWS_VOLUME_OPERATION;
    if (volume) volumeSpecOf(a); // refused before anything is asked of the guest
    const { vmName, owned, disk: d, identity } = await attachedDiskIdentity(step, step.operation);
    const runner = await g.open();
    try {
      const disks = (await runner.calls([listGuestDisksCall()])) as unknown as GuestDisk[];
      const found = pickGuestDiskByWwn(runner.target, disks, { vmName, wwn: identity.wwn, sizeBytes: identity.sizeBytes, source: identity.source });
      ctx.signal.throwIfAborted();
      if (found.IsOffline) await runner.calls([setGuestDiskOnlineCall(found.Number)]);
      if (found.IsReadOnly || found.IsOffline) await runner.calls([setGuestDiskWritableCall(found.Number)]);
      const [now] = (await runner.calls([getGuestDiskCall(found.Number)])) as unknown as GuestDisk[];
      if (!now || now.IsOffline || now.IsReadOnly || idHex(now.SerialNumber ?? now.UniqueId) !== idHex(found.SerialNumber ?? found.UniqueId)) {
        throw new UnsafeOperation(`${runner.target}: guest disk ${found.Number} of ${vmName} is not online and writable after Set-Disk (or is no longer the disk found); nothing is measured`, { operation: step.operation, target: `disk ${found.Number}` });
      }
      const facts = guestDiskFacts(now);
      ctx.log(`found ${identity.source} in the guest as disk ${now.Number} (wwn ${identity.wwn})`, { guestDisk: now.Number, wwn: identity.wwn });
      const raw: MeasuredTarget = {
        path: `#${now.Number}`,
        device: `guest disk ${now.Number}`,
        identity: `wwn-0x${identity.wwn}`,
        filesystem: 'raw',
        facts: { guestDisk: now.Number, ...(facts.serialNumber ?? facts.uniqueId ? { guestDiskId: (facts.serialNumber ?? facts.uniqueId)! } : {}), deviceWwn: identity.wwn, filesystem: 'raw' },
      };
      if (!volume) {
        ctx.measure?.(raw);
        return null;
      }
      ctx.signal.throwIfAborted();
      // what teardown needs besides the guest's own ids: the VMware disk it is on (an RDM's LUN keeps
      // what was written on it when the disk leaves the VM; a VMDK of ours is deleted with it)
      const where = `${vmName} ${identity.source}`;
      const base = { disk: owned, fileName: typeof d.backing?.fileName === 'string' ? d.backing.fileName : null, backing: d.backing?._type === 'VirtualDiskRawDiskMappingVer1BackingInfo' ? 'rdm' : 'flat', wwn: identity.wwn, sizeBytes: identity.sizeBytes };
      const { id, data } = await formatGuestVolume(windowsIo(runner, vmName), now, a, base, ctx, { operation: step.operation, where });
      ctx.measure?.(guestVolumeMeasure(raw, data, where));
      return { ...step.creates!, provider: 'vsphere', id, data };
    } finally {
      await runner.close().catch(() => undefined);
    }
  }

  function windowsIo(runner: WindowsGuestRunner, vmName: string): GuestVolumeIo {
    return { host: runner.target, vmName, calls: (calls: GuestCall[]) => runner.calls(calls) };
  }

  /**
   * A volume the Windows guest-disk step made: cleared (Clear-Disk) on the guest disk carrying the
   * recorded location and ids, only when it holds nothing but the GPT table and partition this run
   * made (../hyperv/windows-guest-volume.ts). A disk no longer in the guest: a VMDK of ours takes the volume
   * along (the disk row deletes it); an RDM's LUN keeps it, and the row stays open.
   */
  async function destroyWindowsVolume(obj: DestroyRef, ctx: ProviderContext): Promise<'removed' | 'absent'> {
    const d = obj.data;
    if (!opts.windowsGuest) throw new InternalError(`vsphere: teardown of ${obj.name} needs the target's Windows guest`);
    if (typeof d.vmName !== 'string' || d.vmName === '') throw new InvalidArgument(`the ledger records no VM for guest-volume ${obj.name}; refusing to guess one`, { name: 'vmName', value: '' });
    const vmName = d.vmName;
    const keepOpen = (what: string, why: string): never => {
      throw new UnsafeOperation(`left alone: ${why}`, { operation: 'destroy', target: what });
    };
    const runner = await opts.windowsGuest.open();
    try {
      return await clearGuestVolume(windowsIo(runner, vmName), d, ctx, {
        keepOpen,
        whenGone: (what) => {
          if (d.backing === 'flat') {
            ctx.log(`${what} is no longer in the guest; the volume this run made goes with ${String(d.fileName)}`);
            return 'absent';
          }
          return keepOpen(what, `${what} is no longer in the guest, and the LUN of ${String(d.fileName)} may still carry the partition this run made (${String(d.partitionGuid)}); clear it by hand where it is attached (Clear-Disk) if so`);
        },
      });
    } finally {
      await runner.close().catch(() => undefined);
    }
  }

  /**
   * disk.controller: nothing is created when the VM already has a controller of that type with a
   * free unit; otherwise one is added on the lowest free bus, recorded (vm, type, bus) before the
   * call goes out and by key after it.
   */
  async function applyController(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
    const a = step.arguments;
    const c = await client();
    const vmName = str(a, 'vm', step.step);
    const kind = controllerKind(a.controller, step.step);
    const v = await vm(vmName);
    const { devices, hw } = await c.vmHardware(v);
    const existing = pickController(devices, kind, hw);
    if (existing) {
      ctx.log(`${vmName} has a ${CONTROLLER_TYPES[kind]} on bus ${String(existing.busNumber)} with a free unit; adding none`);
      return null;
    }
    const type = CONTROLLER_TYPES[kind];
    const added = await c.addController(v, kind, (busNumber) => ctx.sent({ vm: vmName, controller: kind, type, busNumber }));
    ctx.log(`added ${type} to ${vmName} on bus ${added.busNumber} (key ${added.key})`);
    return { kind: 'controller', name: step.creates!.name, provider: 'vsphere', id: String(added.key), data: { vm: vmName, controller: kind, type, busNumber: added.busNumber } };
  }

  /**
   * The read-only half of a datastore's destroy: the host shows it by our owned name (ownedDatastore:
   * the name carries the run's id, run/teardown.ts), and says which LUNs its VMFS extents are on —
   * what RemoveDatastore destroys with it. Null for other kinds.
   */
  async function planDestroy(obj: DestroyRef, ctx: ProviderContext): Promise<DestroyPlan | null> {
    if (obj.kind !== 'datastore') return null;
    // recorded host only; the datastore itself is found by its owned name
    const hostName = typeof obj.data.host === 'string' ? obj.data.host : undefined;
    if (!hostName) throw new InvalidArgument(`the ledger records no host for datastore ${obj.name}; refusing to guess one`, { name: 'host', value: '' });
    const ds = await ownedDatastore(obj);
    if (!ds) return { outcome: 'absent' };
    const c = await client();
    const info = (await c.readProps(ds, ['info'])).info as DatastoreInfo | undefined;
    const luns = (info?.vmfs?.extent ?? []).map((e) => `${e.diskName}:${e.partition}`);
    const on = luns.length ? ` on ${luns.join(', ')}` : info?.nas ? ` (NFS ${info.nas.remoteHost}:${info.nas.remotePath})` : '';
    return {
      outcome: 'remove',
      acts: `datastore ${obj.name} (${ds.value})${on}`,
      run: async () => {
        ctx.log(`removing datastore ${obj.name}`);
        return c.removeDatastore(await host(hostName), ds);
      },
    };
  }

  async function destroy(obj: DestroyRef, ctx: ProviderContext): Promise<'removed' | 'absent'> {
    const c = await client();
    if (obj.kind === 'controller') {
      // A controller has no name: ours is the one with the recorded type and bus number (and key,
      // once one came back), and it is removed only when empty (controllers.ts removeController).
      const d = obj.data;
      if (typeof d.vm !== 'string' || typeof d.type !== 'string' || typeof d.busNumber !== 'number') {
        throw new InvalidArgument(`the ledger records no VM, type and bus number for controller ${obj.name}; refusing to guess one`, { name: 'controller', value: obj.name });
      }
      const key = obj.id !== null && /^-?\d+$/.test(obj.id) ? Number(obj.id) : undefined;
      ctx.log(`removing ${d.type} on bus ${d.busNumber} of ${d.vm}`);
      return c.removeController(await vm(d.vm), { type: d.type, busNumber: d.busNumber, ...(key !== undefined ? { key } : {}) });
    }
    if (obj.kind === 'datastore') {
      const plan = (await planDestroy(obj, ctx))!;
      return plan.outcome === 'absent' ? 'absent' : plan.run();
    }
    if (obj.kind === 'disk' || obj.kind === 'rdm') {
      if (typeof obj.data.vm !== 'string') throw new InvalidArgument(`the ledger records no VM for ${obj.kind} ${obj.name}; refusing to guess one`, { name: 'vm', value: '' });
      const v = await vm(obj.data.vm);
      const devices = await c.devices(v);
      const byKey = obj.id !== null ? devices.find((d) => d.key === Number(obj.id) && d._type === 'VirtualDisk') : undefined;
      // A key can be reused after a detach; only trust it if the file is still ours.
      const device = byKey && typeof byKey.backing?.fileName === 'string' && byKey.backing.fileName.endsWith(`] ${obj.name}.vmdk`) ? byKey : diskByOwnedName(devices, obj.name);
      if (device) {
        ctx.log(`detaching and deleting ${String(device.backing?.fileName)}`);
        await c.detachDisk(v, device.key, { deleteFile: true });
        return 'removed';
      }
      // Detached but the file survived (crash between the two): delete the file alone, if ours.
      const fileName = typeof obj.data.fileName === 'string' && obj.data.fileName.endsWith(`] ${obj.name}.vmdk`) ? obj.data.fileName : undefined;
      if (fileName) {
        // Looked up, never assumed: the datastore by the name in the recorded path (gone → so is
        // every file on it), then the file itself on that datastore (deleteVirtualDisk).
        const dsName = splitDatastorePath(fileName)?.datastore;
        const ds = dsName ? await findDatastore(dsName) : undefined;
        if (!ds) {
          ctx.log(`datastore ${String(dsName)} of ${fileName} is not in the inventory any more; the file went with it`);
          return 'absent';
        }
        ctx.log(`deleting detached ${fileName}`);
        return c.deleteVirtualDisk(fileName, ds);
      }
      return 'absent';
    }
    if (obj.kind === 'guest-volume') return destroyWindowsVolume(obj, ctx);
    if (obj.kind === 'guest-filesystem') {
      if (!opts.guest) throw new InternalError(`vsphere: teardown of ${obj.name} needs the target's guest`);
      return destroyGuestFilesystem(opts.guest, obj, ctx);
    }
    throw new InvalidArgument(`vsphere provider cannot destroy objects of kind ${obj.kind}`, { name: 'kind', value: obj.kind });
  }

  async function find(ref: OwnedObjectRef): Promise<CreatedObject | null> {
    const c = await client();
    if (ref.kind === 'datastore') {
      const ds = await findDatastore(ref.name);
      return ds ? { ...ref, provider: 'vsphere', id: ds.value, data: { datastore: ref.name, host: target.host } } : null;
    }
    if (ref.kind === 'disk' || ref.kind === 'rdm') {
      const d = diskByOwnedName(await c.devices(await vm(target.vm)), ref.name);
      if (!d) return null;
      return { ...ref, provider: 'vsphere', id: String(d.key), data: { vm: target.vm, fileName: d.backing?.fileName, controllerKey: d.controllerKey, unitNumber: d.unitNumber } };
    }
    return null;
  }

  /**
   * Read back, never assumed: on NFS without VAAI-NAS a thick disk is created thin, and results
   * labelled with the asked-for format would be wrong. Run for the disk apply() made and for the
   * one find() found after a dropped connection alike (the executor calls it for both).
   */
  async function verify(step: PlannedStep, created: CreatedObject): Promise<void> {
    const a = step.arguments;
    if (step.operation !== 'ReconfigVM_Task' || created.kind !== 'disk' || a.backing === 'rdm') return;
    const c = await client();
    const asked = str(a, 'format', step.step);
    const vmName = typeof created.data.vm === 'string' ? created.data.vm : str(a, 'vm', step.step);
    const devices = await c.devices(await vm(vmName));
    const byKey = created.id !== null ? devices.find((d) => d.key === Number(created.id) && d._type === 'VirtualDisk' && typeof d.backing?.fileName === 'string' && d.backing.fileName.endsWith(`] ${created.name}.vmdk`)) : undefined;
    const disk = byKey ?? diskByOwnedName(devices, created.name);
    if (!disk?.backing) {
      throw new ProvisionedStateMismatch(`disk ${created.name} is not attached to ${vmName} on ${c.endpoint} after it was created; its format ${asked} cannot be read back`, { axis: 'disk.format', asked, got: 'missing', object: created.name });
    }
    const got = provisionedFormat(disk.backing);
    if (got !== asked) {
      throw new ProvisionedStateMismatch(
        `disk.format ${asked} was asked for, but ${c.endpoint} created ${String(disk.backing.fileName)} as ${got} (thinProvisioned=${JSON.stringify(disk.backing.thinProvisioned ?? false)}, eagerlyScrub=${JSON.stringify(disk.backing.eagerlyScrub ?? false)}); a permutation is measured only in the state its axes name`,
        { axis: 'disk.format', asked, got, object: String(disk.backing.fileName) },
      );
    }
    if (typeof a.policy === 'string') policyFacts.set(created.name, await verifyDiskPolicy(c, a.policy, await vm(vmName), disk.key, String(disk.backing.fileName)));
  }

  async function close(): Promise<void> {
    const p = clientP;
    clientP = undefined;
    refs.clear();
    if (!p) return;
    const c = await p.catch(() => undefined);
    await c?.logout();
  }

  async function describe(): Promise<Record<string, string>> {
    const c = await client();
    const about = c.serviceContent.about;
    const facts: Record<string, string> = { 'vsphere.product': about.fullName, 'vsphere.apiType': about.apiType, 'vsphere.apiVersion': about.apiVersion };
    const host = await c.readProps(await c.findHost(target.host), ['summary.config.product.fullName']).catch((): Record<string, unknown> => ({}));
    const product = host['summary.config.product.fullName'];
    if (typeof product === 'string') facts['esxi.product'] = product;
    // the VM as VMware Tools reports it (GuestInfo): the guest's OS and the Tools version running there
    {
      const g = await c.readProps(await vm(target.vm), ['guest.guestFullName', 'guest.toolsVersion', 'guest.toolsRunningStatus']).catch((): Record<string, unknown> => ({}));
      if (typeof g['guest.guestFullName'] === 'string' && g['guest.guestFullName']) facts['vm.guestFullName'] = g['guest.guestFullName'];
      if (typeof g['guest.toolsVersion'] === 'string' && g['guest.toolsVersion']) facts['vmwareTools.version'] = g['guest.toolsVersion'];
      if (typeof g['guest.toolsRunningStatus'] === 'string' && g['guest.toolsRunningStatus']) facts['vmwareTools.runningStatus'] = g['guest.toolsRunningStatus'];
    }
    return facts;
  }

  const observeHost = (provisioned: readonly CreatedObject[]) => perfObserver(client, { vm, datastore: findDatastore }, provisioned, opts.perfPollMs !== undefined ? { pollMs: opts.perfPollMs } : {});

  return { name: 'vsphere', apply, destroy, planDestroy, find, verify, isTransient, close, describe, observeHost };
}

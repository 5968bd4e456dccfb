// The ESXi-shell provider: carries out planned steps with partedUtil, vmkfstools, esxcli and vim-cmd
// over a CommandRunner (SSH to the ESXi shell). Every destructive command is preceded by a guard that
// asks the host itself whether the device is unused; the guard sends nothing destructive on refusal.
import { InvalidArgument, ProvisionedStateMismatch, RemoteCommandFailed, UnsafeOperation } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { connectionLost } from '../../ssh/connection-lost.ts';
import { shJoin } from '../../ssh/quote.ts';
import { runChecked } from '../../ssh/run-checked.ts';
import { toolOwner } from '../../ssh/process-group.ts';
import type { CreatedObject, DestroyPlan, OwnedObjectRef, PlannedStep, Provider, ProviderContext, ProviderName } from '../../contract/provider.ts';
import { checkEsxiShellTarget, type EsxiShellTargetConfig } from './config.ts';
import { deviceListArgv, filesystemListArgv, parseDeviceList, parseFilesystemList, parseVmfsExtentList, vmfsExtentListArgv } from './esxcli.ts';
import { getptblArgv, getUsableSectorsArgv, mklabelArgv, parseGetptbl, parseUsableSectors, setptblArgv, VMFS_GPT_GUID, VMFS_MBR_TYPE, vmfsPartitionLayout, type VmfsKind } from './partedutil.ts';
import { checkEsxi, checkInt, ESXI_MAX_DISK_GB } from './validate.ts';
import { diskAddExistingArgv, diskRemoveArgv, getDevicesArgv, parseDiskDevices } from './vimcmd.ts';
import { createDiskArgv, createRdmArgv, createVmfsArgv, deleteDiskArgv, getDiskUuidArgv, parseCreateVmfs, parseDiskUuid, parseQueryFs, queryFsArgv, type VmdkFormat } from './vmkfstools.ts';
import { applyGuestDiskStep, destroyGuestFilesystem, GUEST_DISK_OPERATION, GUEST_FS_OPERATION, wwnOfLun, type AttachedDiskIdentity, type GuestAccess } from '../guest-disk.ts';
import { esxtopObserver, stopEsxtopLeftovers } from './esxtop.ts';
import { ownLabelOf, planDatastoreDestroy, planPartitionDestroy, type VmfsHost } from './vmfs-ownership.ts';
import { describeEsxiHost } from './fingerprint.ts';

type DestroyRef = OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> };

const str = (v: unknown, name: string): string => {
  if (typeof v !== 'string') throw new InvalidArgument(`step argument ${name}: expected a string, got ${JSON.stringify(v)}`, { name, value: String(v) });
  return v;
};

export interface EsxiShellProviderOptions {
  /** the VM's Linux guest, where the guest-disk step finds the disk attached (absent: a provider that only provisions, e.g. cleanup without a guest) */
  guest?: GuestAccess;
}

export function createEsxiShellProvider(targetIn: EsxiShellTargetConfig, runner: CommandRunner, opts: EsxiShellProviderOptions = {}): Provider {
  const target = checkEsxiShellTarget(targetIn);
  const exec = (argv: string[]) => runChecked(runner, shJoin(argv));

  async function extents() {
    return parseVmfsExtentList((await exec(vmfsExtentListArgv())).stdout);
  }

  /**
   * The device must be allowed by the inventory, known to the host as a disk that is not the boot
   * device, carry no VMFS extent and have no partitions. Reads only.
   */
  async function guardUnused(device: string, operation: string): Promise<void> {
    const refuse = (why: string) => {
      throw new UnsafeOperation(`${target.host}: refusing ${operation} on ${device}: ${why}`, { operation, target: device });
    };
    checkEsxi('device', device);
    if (!target.allowedDevices.includes(device)) refuse(`not in allowedDevices of the inventory (${target.allowedDevices.join(', ') || 'none'})`);
    const listed = await runner.run(shJoin(deviceListArgv(device)));
    // A listing that failed proves nothing about the device: refuse, and say why it failed.
    if (listed.exitCode !== 0) refuse(`esxcli storage core device list failed (exit ${listed.exitCode}): ${(listed.stderr || listed.stdout).trim().split('\n').slice(-2).join(' | ')}`);
    const dev = parseDeviceList(listed.stdout).find((d) => d.name === device);
    if (!dev) refuse('the host does not list this device (esxcli storage core device list)');
    if (dev!.deviceType !== 'Direct-Access') refuse(`device type is ${dev!.deviceType}, not Direct-Access`);
    if (dev!.isBootDevice) refuse('it is the boot device');
    if (dev!.isOffline) refuse('the device is offline');
    const ext = (await extents()).find((e) => e.deviceName === device);
    if (ext) refuse(`it holds VMFS volume ${ext.volumeName} (extent ${ext.extentNumber}, partition ${ext.partition})`);
    const table = parseGetptbl((await exec(getptblArgv(device))).stdout);
    if (table.partitions.length > 0) refuse(`it has ${table.partitions.length} partition(s) (${table.label} label)`);
  }

  /** Before formatting partition 1: still allowed, still not a VMFS extent, partition 1 is VMFS-typed. */
  async function guardOwnPartition(device: string, operation: string): Promise<void> {
    const refuse = (why: string) => {
      throw new UnsafeOperation(`${target.host}: refusing ${operation} on ${device}:1: ${why}`, { operation, target: `${device}:1` });
    };
    if (!target.allowedDevices.includes(device)) refuse('device not in allowedDevices of the inventory');
    const ext = (await extents()).find((e) => e.deviceName === device);
    if (ext) refuse(`it holds VMFS volume ${ext.volumeName}`);
    const table = parseGetptbl((await exec(getptblArgv(device))).stdout);
    const p = table.partitions;
    if (p.length !== 1 || p[0]!.number !== 1 || (p[0]!.type !== VMFS_GPT_GUID && p[0]!.type !== VMFS_MBR_TYPE)) {
      refuse('expected exactly one VMFS partition (created by the partition step)');
    }
  }

  async function createdObject(step: PlannedStep, id: string, data: Record<string, unknown>): Promise<CreatedObject> {
    if (!step.creates) throw new InvalidArgument(`step ${step.step} creates nothing`, { name: 'step', value: step.step });
    return { ...step.creates, provider: 'esxi-shell', id, data };
  }

  async function apply(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
    const a = step.arguments;
    switch (step.operation) {
      case 'partedUtil setptbl': {
        const device = str(a.device, 'device');
        const kind = str(a.vmfsVersion, 'vmfsVersion') as VmfsKind;
        if (!['vmfs3', 'vmfs5', 'vmfs6'].includes(kind)) throw new InvalidArgument(`step argument vmfsVersion: expected vmfs3, vmfs5 or vmfs6, got ${kind}`, { name: 'vmfsVersion', value: kind });
        await guardUnused(device, 'partitioning');
        ctx.log(`partitioning ${device} for ${kind}`, { device });
        // A partition has no name: what proves it ours later is the exact layout recorded here,
        // before mklabel (no endSector yet: nothing of ours exists) and again before setptbl.
        const labelKind = kind === 'vmfs3' ? 'msdos' : 'gpt';
        // What the partition will hold: teardown deletes it only after this run removed that
        // datastore itself (run/teardown.ts), since an unmounted VMFS is not in `vmfs extent list`.
        const holds = { kind: 'datastore', name: (step.creates?.name ?? '').replace(/-part$/, '-ds') };
        await ctx.sent({ device, partition: 1, label: labelKind, vmfsVersion: kind, holds });
        await exec(mklabelArgv(device, labelKind));
        const usable = parseUsableSectors((await exec(getUsableSectorsArgv(device))).stdout);
        const { label, partition } = vmfsPartitionLayout(kind, usable);
        const layout = { device, partition: 1, label, vmfsVersion: kind, startSector: partition.startSector, endSector: partition.endSector, type: partition.type, holds };
        await ctx.sent(layout);
        await exec(setptblArgv(device, label, [partition]));
        return createdObject(step, `${device}:1`, layout);
      }
      case 'vmkfstools -C': {
        const device = str(a.device, 'device');
        const version = str(a.vmfsVersion, 'vmfsVersion') as VmfsKind;
        const label = str(a.label, 'label');
        const blockSizeMb = checkInt(a.blockSizeMb, 'blockSizeMb', 1, 8);
        const argv = createVmfsArgv(version, blockSizeMb, label, device, 1);
        await guardOwnPartition(device, 'creating a VMFS');
        await ctx.sent({ label, device, volumePath: `/vmfs/volumes/${label}` });
        ctx.log(`creating ${version} (${blockSizeMb} MiB blocks) on ${device}:1 as ${label}`, { device, label });
        const uuid = parseCreateVmfs((await exec(argv)).stdout);
        const volumePath = `/vmfs/volumes/${label}`;
        const q = parseQueryFs((await exec(queryFsArgv(volumePath))).stdout);
        if (q.blockSizeBytes !== blockSizeMb * 1048576) {
          throw new ProvisionedStateMismatch(`${target.host}: ${label} reports ${q.blockSizeBytes}-byte blocks, ${blockSizeMb} MiB requested; a permutation is measured only in the state its axes name`, { axis: 'datastore.blockSizeMb', asked: `${blockSizeMb * 1048576}`, got: `${q.blockSizeBytes}`, object: volumePath });
        }
        return createdObject(step, uuid, { label, device, volumePath, blockSizeBytes: q.blockSizeBytes, version: q.version });
      }
      case 'vmkfstools -c': {
        const path = str(a.path, 'path');
        const argv = createDiskArgv(checkInt(a.sizeGb, 'sizeGb', 1, ESXI_MAX_DISK_GB), str(a.format, 'format') as VmdkFormat, path);
        await ctx.sent({ path });
        await exec(argv);
        return createdObject(step, path, { path });
      }
      case 'vmkfstools -z':
      case 'vmkfstools -r': {
        const device = str(a.device, 'device');
        const path = str(a.path, 'path');
        const mode = step.operation === 'vmkfstools -z' ? 'physical' : 'virtual';
        const argv = createRdmArgv(mode, device, path);
        await guardUnused(device, `mapping as ${mode} RDM`);
        await ctx.sent({ path, device, mode });
        await exec(argv);
        return createdObject(step, path, { path, device, mode });
      }
      case 'vim-cmd vmsvc/device.diskaddexisting': {
        const vmid = str(a.vmid, 'vmid');
        const path = str(a.path, 'path');
        const bus = checkInt(a.bus, 'bus', 0, 3);
        // the lowest free unit of the bus (7 is the controller, real-product-rules.md §3.1): the
        // guest-disk step finds the disk by its identity, wherever it lands, so another disk at any
        // unit is left alone and never measured
        const taken = new Set((await disksOf(vmid)).filter((d) => d.controllerKey === 1000 + bus).map((d) => d.unitNumber));
        const unit = [...Array(16).keys()].find((u) => u !== 7 && !taken.has(u));
        if (unit === undefined) throw new UnsafeOperation(`${target.host}: SCSI controller ${bus} of VM ${vmid} has no free unit (0-15 but 7 all taken); nothing attached`, { operation: step.operation, target: `VM ${vmid} SCSI ${bus}` });
        const argv = diskAddExistingArgv(vmid, path, bus, unit);
        await ctx.sent({ vmid, path, bus, unit });
        await exec(argv);
        ctx.log(`attached ${path} to VM ${vmid} at SCSI ${bus}:${unit}`, { bus, unit });
        return createdObject(step, `${vmid}:${bus}:${unit}`, { vmid, path, bus, unit });
      }
      case GUEST_DISK_OPERATION:
      case GUEST_FS_OPERATION:
        return applyGuestDisk(step, ctx);
      default:
        throw new InvalidArgument(`esxi-shell provider cannot apply operation ${JSON.stringify(step.operation)}`, { name: 'operation', value: step.operation });
    }
  }

  const disksOf = async (vmid: string) => parseDiskDevices((await exec(getDevicesArgv(vmid))).stdout);

  /**
   * The guest-disk step: the disk the attach step put on the VM, by what the guest will call it —
   * a VMDK's or virtual RDM's uuid as `vmkfstools -J getuuid` prints it, a physical RDM's LUN NAA
   * id — and its size (the VMDK's, or the LUN's as esxcli lists it); then found in the guest and
   * checked (../guest-disk.ts), made into ext4/xfs when the axis says so.
   */
  async function applyGuestDisk(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
    const a = step.arguments;
    const g = opts.guest;
    if (!g) throw new InvalidArgument(`esxi-shell step ${step.step}: the provider was composed without the target's guest`, { name: 'guest', value: '' });
    const vmid = checkEsxi('vmid', a.vmid, 'vmid');
    const path = checkEsxi('vmdkPath', a.path, 'path');
    // the disk this permutation attached, on this VM: nothing else is looked for in the guest
    if ((await attachedUnits(vmid, path)).length === 0) throw new UnsafeOperation(`${target.host}: ${path} is not attached to VM ${vmid}; nothing to find in the guest, nothing measured`, { operation: step.operation, target: path });
    let sizeBytes: number;
    if (typeof a.lun === 'string') {
      const lun = checkEsxi('device', a.lun, 'lun');
      const dev = parseDeviceList((await exec(deviceListArgv(lun))).stdout).find((d) => d.name === lun);
      if (!dev) throw new UnsafeOperation(`${target.host}: the host no longer lists ${lun}; nothing measured`, { operation: step.operation, target: lun });
      sizeBytes = dev.sizeMb * 1024 * 1024;
    } else sizeBytes = checkInt(a.sizeBytes, 'sizeBytes', 1, ESXI_MAX_DISK_GB * 1024 ** 3);
    let identity: AttachedDiskIdentity;
    if (a.by === 'LUN id') {
      const lun = str(a.lun, 'lun');
      const wwn = wwnOfLun(lun);
      if (!wwn) throw new UnsafeOperation(`${target.host}: ${lun} has no NAA id, so the guest cannot name the physical RDM by WWN; nothing measured`, { operation: step.operation, target: lun });
      identity = { wwn, sizeBytes, source: `${path} (LUN ${lun})` };
    } else if (a.by === 'disk uuid') {
      const wwn = parseDiskUuid((await exec(getDiskUuidArgv(path))).stdout, `${target.host}: vmkfstools -J getuuid ${path}`);
      identity = { wwn, sizeBytes, source: path };
    } else throw new InvalidArgument(`esxi-shell step ${step.step}: expected by "disk uuid" or "LUN id", got ${JSON.stringify(a.by)}`, { name: 'by', value: String(a.by) });
    return applyGuestDiskStep(g, identity, { provider: 'esxi-shell', filesystem: str(a.filesystem, 'filesystem'), mountpoint: a.mountpoint, ...(step.creates ? { name: step.creates.name } : {}) }, ctx);
  }

  async function attachedUnits(vmid: string, path: string) {
    const m = /^\/vmfs\/volumes\/([^/]+)\/(.+)$/.exec(path);
    const dsPath = m ? `[${m[1]}] ${m[2]}` : path;
    return (await disksOf(vmid)).filter((d) => d.fileName === dsPath || d.fileName === path);
  }

  /** A recorded path is ours only if its file carries the owned name (`<name>.vmdk`). */
  const ownedPath = (path: string, name: string, what: string): string => {
    if (!path.endsWith(`/${name}.vmdk`)) throw new UnsafeOperation(`${target.host}: refusing to remove ${what} ${path}: it does not carry the owned name ${name}`, { operation: 'destroy', target: path });
    return path;
  };

  async function destroy(obj: DestroyRef, ctx: ProviderContext): Promise<'removed' | 'absent'> {
    // Only what the ledger recorded: never the inventory's vmfsDevice, vmid or SCSI unit.
    const d = obj.data;
    switch (obj.kind) {
      case 'disk-attachment': {
        const vmid = checkEsxi('vmid', d.vmid, 'recorded vmid');
        const path = ownedPath(str(d.path, 'recorded path'), obj.name.replace(/-attach$/, '-disk'), 'the attachment of');
        const bus = checkInt(d.bus, 'recorded bus', 0, 3);
        // the unit that holds OUR disk now, on the recorded controller — not a remembered number
        const units = (await attachedUnits(vmid, path)).filter((u) => u.controllerKey === 1000 + bus);
        if (units.length === 0) return 'absent';
        for (const u of units) await exec(diskRemoveArgv(vmid, bus, u.unitNumber));
        return 'removed';
      }
      case 'disk':
      case 'rdm': {
        const path = ownedPath(str(d.path, 'recorded path'), obj.name, obj.kind);
        const r = await runner.run(shJoin(deleteDiskArgv(path)));
        if (r.exitCode === 0) return 'removed';
        // the file, or its whole datastore, is already gone
        if (/cannot find the file|does not exist|not found|No such file or directory/i.test(r.stdout + r.stderr)) return 'absent';
        // vmkfstools prints its errors on stdout
        throw new RemoteCommandFailed({ host: runner.target, what: 'vmkfstools -U', command: r.command, exitCode: r.exitCode, stderr: [r.stdout, r.stderr].filter((x) => x.trim()).join('\n'), reason: 'exit' });
      }
      case 'datastore':
      case 'vmfs-partition': {
        // the host proves it ours by our VMFS label (vmfs-ownership.ts); the plan's run() acts on what it names
        const plan = (await planDestroy(obj, ctx))!;
        return plan.outcome === 'absent' ? 'absent' : plan.run();
      }
      case 'guest-filesystem':
        if (!opts.guest) throw new InvalidArgument(`esxi-shell: teardown of ${obj.name} needs the target's guest`, { name: 'guest', value: '' });
        return destroyGuestFilesystem(opts.guest, obj, ctx);
      default:
        throw new InvalidArgument(`esxi-shell provider does not own objects of kind ${obj.kind}`, { name: 'kind', value: obj.kind });
    }
  }

  const vmfsHost: VmfsHost = { host: target.host, allowedDevices: target.allowedDevices, exec };

  /** The read-only half of destroy() for a datastore or partition (vmfs-ownership.ts); null for other kinds. */
  async function planDestroy(obj: DestroyRef, ctx: ProviderContext): Promise<DestroyPlan | null> {
    if (obj.kind === 'datastore') return planDatastoreDestroy(vmfsHost, obj, ctx);
    if (obj.kind === 'vmfs-partition') return planPartitionDestroy(vmfsHost, obj, ctx);
    return null;
  }

  async function find(ref: OwnedObjectRef): Promise<CreatedObject | null> {
    // By owned name only: the inventory may have changed since the run (cleanup -i other.yaml).
    const found = (id: string, data: Record<string, unknown>): CreatedObject => ({ ...ref, provider: 'esxi-shell', id, data });
    switch (ref.kind) {
      case 'datastore': {
        const fs = parseFilesystemList((await exec(filesystemListArgv())).stdout).find((f) => f.volumeName === ref.name && f.mounted);
        return fs ? found(fs.uuid, { label: ref.name, volumePath: fs.mountPoint }) : null;
      }
      case 'vmfs-partition': {
        // the partition that holds our own datastore (by its label); an empty one cannot be told apart
        const ownLabel = ownLabelOf(ref.name);
        const ext = (await extents()).find((e) => e.volumeName === ownLabel);
        if (!ext || ext.partition !== 1) return null;
        const table = parseGetptbl((await exec(getptblArgv(ext.deviceName))).stdout);
        const p1 = table.partitions.find((p) => p.number === 1);
        if (!p1 || table.partitions.length !== 1) return null;
        return found(`${ext.deviceName}:1`, { device: ext.deviceName, partition: 1, label: table.label, startSector: p1.startSector, endSector: p1.endSector, type: p1.type });
      }
      case 'disk-attachment': {
        const base = ref.name.replace(/-attach$/, '');
        const candidates = [target.datastoreVolumePath, `/vmfs/volumes/${base}-ds`].filter((p): p is string => Boolean(p)).map((p) => `${p}/${base}-disk.vmdk`);
        for (const path of candidates) {
          const u = (await attachedUnits(target.vmid, path))[0];
          if (u) return found(`${target.vmid}:${u.controllerKey - 1000}:${u.unitNumber}`, { vmid: target.vmid, path, bus: u.controllerKey - 1000, unit: u.unitNumber });
        }
        return null;
      }
      default:
        // disks: destroy() is idempotent on the recorded path; the shell offers no cheap lookup by name
        return null;
    }
  }

  // a lost SSH connection is worth another attempt (the executor looks before reissuing a create)
  return {
    name: 'esxi-shell',
    apply,
    destroy,
    planDestroy,
    find,
    isTransient: connectionLost,
    close: () => runner.close(),
    // the run's fingerprint and the host's view of each test (fingerprint.ts, esxtop.ts)
    describe: () => describeEsxiHost(runner, target.vmid),
    observeHost: (provisioned, ctx) => esxtopObserver(runner, provisioned, ctx),
    // the esxtop a dead process of the run left for this target (resume, takeover)
    stopLeftovers: (runId, name) => stopEsxtopLeftovers(runner, toolOwner(runId, name)),
  };
}

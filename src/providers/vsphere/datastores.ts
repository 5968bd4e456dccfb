// Datastores on one host: VMFS candidates, VMFS and NFS creation, removal, read-back.
// Formatting a LUN destroys whatever is on it, so createVmfsDatastore refuses unless the device is
// both allowed by the inventory and reported unused by the host — checked before anything is sent.
import { InvalidArgument, UnsafeOperation } from '../../errors.ts';
import { isFault, VsphereClientError } from './fault.ts';
import {
  createNasDatastore as createNasDatastoreCall,
  createVmfsDatastore as createVmfsDatastoreCall,
  queryAvailableDisksForVmfs,
  queryVmfsConfigOption,
  queryVmfsDatastoreCreateOptions,
  removeDatastore as removeDatastoreCall,
  type RoundTripper,
} from './methods.ts';
import { readProps } from './property.ts';
import type { MoRef } from './soap.ts';
import type { DataObject, DatastoreInfo, DatastoreSummary, HostScsiDisk, ServiceContent } from './types.ts';
import { isCanonicalDevice } from '../canonical-device.ts';

export interface Ctx {
  rt: RoundTripper;
  sc: ServiceContent;
  /** endpoint label for messages */
  endpoint: string;
}

export async function hostConfigManager(ctx: Ctx, host: MoRef): Promise<{ datastoreSystem: MoRef; storageSystem: MoRef; name: string }> {
  const p = await readProps(ctx.rt, ctx.sc, host, ['name', 'configManager']);
  const cm = p.configManager as DataObject | undefined;
  const dss = cm?.datastoreSystem as MoRef | undefined;
  const ss = cm?.storageSystem as MoRef | undefined;
  if (!dss || !ss) {
    throw new VsphereClientError('unsupported', `host ${String(p.name)} on ${ctx.endpoint} has no datastoreSystem/storageSystem`, { method: 'RetrievePropertiesEx', host: ctx.endpoint });
  }
  return { datastoreSystem: dss, storageSystem: ss, name: String(p.name) };
}

/** Disks the host reports as unused and eligible for a new VMFS (QueryAvailableDisksForVmfs). */
export async function listVmfsCandidateDisks(ctx: Ctx, host: MoRef): Promise<HostScsiDisk[]> {
  const { datastoreSystem } = await hostConfigManager(ctx, host);
  return queryAvailableDisksForVmfs(ctx.rt, datastoreSystem);
}

export interface CreateVmfsOptions {
  deviceCanonicalName: string;
  /** 3, 5 or 6 */
  vmfsMajorVersion: number;
  /** VMFS 3: 1, 2, 4 or 8; VMFS 5/6: 1 */
  blockSizeMb?: number;
  /** VMFS 6 only (HostVmfsSpec.blockSize, KiB): 64 or 1024 */
  blockSizeKb?: number;
  name: string;
  /** canonical names the inventory allows to be formatted */
  allowedDevices: readonly string[];
  /** called after every guard passed, right before CreateVmfsDatastore is sent */
  beforeSend?: () => void | Promise<void>;
}

export async function createVmfsDatastore(ctx: Ctx, host: MoRef, o: CreateVmfsOptions): Promise<MoRef> {
  const dev = o.deviceCanonicalName;
  const target = `${dev} on ${ctx.endpoint}`;
  if (!isCanonicalDevice(dev)) {
    throw new InvalidArgument(`device "${dev}" is not a canonical SCSI name (naa.*, t10.*, eui.*, mpx.*)`, { name: 'deviceCanonicalName', value: dev });
  }
  if (!o.allowedDevices.includes(dev)) {
    throw new UnsafeOperation(
      `refusing to format ${dev} as VMFS: it is not in the inventory's allowedDevices (${o.allowedDevices.join(', ') || 'none'})`,
      { operation: 'CreateVmfsDatastore', target },
    );
  }
  if (o.blockSizeMb !== undefined && o.blockSizeKb !== undefined) {
    throw new InvalidArgument('give blockSizeMb or blockSizeKb, not both', { name: 'blockSizeKb', value: String(o.blockSizeKb) });
  }
  const { datastoreSystem, name: hostName } = await hostConfigManager(ctx, host);
  const available = await queryAvailableDisksForVmfs(ctx.rt, datastoreSystem);
  const disk = available.find((d) => d.canonicalName === dev);
  if (!disk) {
    throw new UnsafeOperation(
      `refusing to format ${dev} as VMFS: host ${hostName} does not report it as an unused disk (in use by a datastore or RDM, or not present); unused: ${available.map((d) => d.canonicalName).join(', ') || 'none'}`,
      { operation: 'CreateVmfsDatastore', target },
    );
  }
  const options = await queryVmfsDatastoreCreateOptions(ctx.rt, datastoreSystem, disk.devicePath, o.vmfsMajorVersion);
  // Whole-disk layout, as govc and terraform do.
  const option = options.find((x) => x.info._type === 'VmfsDatastoreAllExtentOption') ?? options[0];
  if (!option) {
    throw new VsphereClientError('not-found', `host ${hostName} offers no VMFS ${o.vmfsMajorVersion} layout for ${dev}`, { method: 'QueryVmfsDatastoreCreateOptions', host: ctx.endpoint });
  }
  const spec = structuredClone<DataObject>(option.spec);
  const vmfs = { ...(spec.vmfs as DataObject) };
  vmfs.volumeName = o.name;
  vmfs.majorVersion = o.vmfsMajorVersion;
  if (o.blockSizeMb !== undefined) vmfs.blockSizeMb = o.blockSizeMb;
  if (o.blockSizeKb !== undefined) vmfs.blockSize = o.blockSizeKb;
  if (o.vmfsMajorVersion === 6 && vmfs.blockSize !== undefined && vmfs.blockSize !== (option.spec.vmfs as DataObject | undefined)?.blockSize) {
    // The create options carry the unmap granularity of their own block size (1024 KB); a volume of
    // another block size takes the granularity the host offers for that size (QueryVmfsConfigOption,
    // API reference: VmfsConfigOption.unmapGranularityOption), e.g. 64 KB for a 64 KB volume.
    const configs = await queryVmfsConfigOption(ctx.rt, datastoreSystem);
    const offer = configs.find((c) => Number(c.blockSizeOption) === Number(vmfs.blockSize));
    const granularity = offer?.unmapGranularityOption?.[0];
    if (granularity === undefined) {
      throw new VsphereClientError('unsupported', `host ${hostName} offers no VMFS6 volume with ${Number(vmfs.blockSize)} KB blocks (QueryVmfsConfigOption: ${configs.map((c) => c.blockSizeOption).join(', ') || 'none'} KB)`, { method: 'QueryVmfsConfigOption', host: ctx.endpoint });
    }
    vmfs.unmapGranularity = Number(granularity);
  }
  spec.vmfs = vmfs;
  await o.beforeSend?.();
  return createVmfsDatastoreCall(ctx.rt, datastoreSystem, spec);
}

export interface CreateNasOptions {
  remoteHost: string;
  remotePath: string;
  name: string;
  type?: 'NFS' | 'NFS41';
  accessMode?: 'readWrite' | 'readOnly';
  /** called right before CreateNasDatastore is sent */
  beforeSend?: () => void | Promise<void>;
}

export async function createNasDatastore(ctx: Ctx, host: MoRef, o: CreateNasOptions): Promise<MoRef> {
  const { datastoreSystem } = await hostConfigManager(ctx, host);
  await o.beforeSend?.();
  return createNasDatastoreCall(ctx.rt, datastoreSystem, {
    remoteHost: o.remoteHost,
    remotePath: o.remotePath,
    localPath: o.name,
    accessMode: o.accessMode ?? 'readWrite',
    type: o.type ?? 'NFS',
  });
}

/** 'absent' when the datastore is already gone. */
export async function removeDatastore(ctx: Ctx, host: MoRef, ds: MoRef): Promise<'removed' | 'absent'> {
  const { datastoreSystem } = await hostConfigManager(ctx, host);
  try {
    await removeDatastoreCall(ctx.rt, datastoreSystem, ds);
    return 'removed';
  } catch (err) {
    if (isFault(err, 'NotFound', 'ManagedObjectNotFound')) return 'absent';
    throw err;
  }
}

export async function readDatastore(ctx: Ctx, ds: MoRef): Promise<{ summary: DatastoreSummary; info: DatastoreInfo }> {
  const p = await readProps(ctx.rt, ctx.sc, ds, ['summary', 'info']);
  return { summary: p.summary as DatastoreSummary, info: p.info as DatastoreInfo };
}

// The one public entry to vSphere: connect (TLS, login), find inventory objects, and the storage,
// disk and power operations the benchmark provider needs.
import { UsageError } from '../../errors.ts';
import * as clones from './clones.ts';
import * as controllers from './controllers.ts';
import * as ds from './datastores.ts';
import * as snapshots from './snapshots.ts';
import * as disks from './disks.ts';
import { VsphereClientError } from './fault.ts';
import { findByInventoryPath } from './methods.ts';
import { GuestOperations, type GuestCredential } from './guest-ops.ts';
import { listView, readProps, type RetrieveOptions } from './property.ts';
import { Session, type SessionEvents } from './session.ts';
import { closePropertyWaits } from './wait.ts';
import { SoapClient, type MoRef } from './soap.ts';
import { createHttpsAgent } from './tls.ts';
import type { DatastoreInfo, DatastoreSummary, HostScsiDisk, ServiceContent, VirtualDevice } from './types.ts';
import * as vms from './vms.ts';

export type { MoRef };
export type { AttachedDisk, DiskFormat, RdmCompatibility } from './disks.ts';

export interface VsphereEndpoint {
  /** https://host[:port][/sdk]; a bare host name means https://host/sdk */
  url: string;
  username: string;
  password: string;
  /** pinned SHA-256 certificate fingerprint (colon hex) */
  thumbprint?: string;
  caFile?: string;
  /** skip TLS verification; only when explicitly set */
  insecure?: boolean;
  userAgent?: string;
}

export interface ConnectOptions extends VsphereEndpoint, SessionEvents {
  timeoutMs?: number;
}

export function normalizeSdkUrl(url: string): string {
  const withScheme = /^[a-z]+:\/\//i.test(url) ? url : `https://${url}`;
  const u = new URL(withScheme);
  if (u.protocol !== 'https:') throw new UsageError(`vSphere URL ${url} must use https`);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/sdk';
  u.username = '';
  u.password = '';
  return u.toString();
}

/**
 * The identity of a vCenter's SDK endpoint for its provisioning limit: scheme, host (lower case),
 * port (443 left out), path (`/sdk` for none, no trailing slash); no user, query or fragment. `vc.lab`,
 * `https://VC.lab:443/sdk/` and `https://vc.lab/sdk` are one endpoint, and one limit.
 */
export function sdkEndpointKey(url: string): string {
  const u = new URL(normalizeSdkUrl(url));
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '') || '/sdk'}`;
}

/** govc's environment variables as defaults: GOVC_URL, GOVC_USERNAME, GOVC_PASSWORD, GOVC_INSECURE, GOVC_TLS_CA_CERTS. */
export function endpointFromEnv(env: Record<string, string | undefined>): VsphereEndpoint | undefined {
  const raw = env.GOVC_URL;
  if (!raw) return undefined;
  const u = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `https://${raw}`);
  const username = env.GOVC_USERNAME ?? decodeURIComponent(u.username);
  const password = env.GOVC_PASSWORD ?? decodeURIComponent(u.password);
  if (!username || !password) throw new UsageError('GOVC_URL is set but no username/password (GOVC_USERNAME, GOVC_PASSWORD or user:pass@ in the URL)');
  const ep: VsphereEndpoint = { url: normalizeSdkUrl(raw), username, password };
  const insecure = (env.GOVC_INSECURE ?? '').toLowerCase();
  if (insecure === '1' || insecure === 'true') ep.insecure = true;
  if (env.GOVC_TLS_CA_CERTS) ep.caFile = env.GOVC_TLS_CA_CERTS;
  return ep;
}

type Kind = 'Datacenter' | 'HostSystem' | 'VirtualMachine' | 'Datastore';
const LABEL: Record<Kind, string> = { Datacenter: 'datacenter', HostSystem: 'host', VirtualMachine: 'VM', Datastore: 'datastore' };

export class VsphereClient {
  private readonly ctx: ds.Ctx;
  private constructor(
    readonly session: Session,
    /** TLS verification is off for this endpoint (insecure: true): guest file transfers are not verified either */
    private readonly insecure = false,
  ) {
    this.ctx = { rt: session, sc: session.serviceContent, endpoint: session.host };
  }

  static async connect(opts: ConnectOptions): Promise<VsphereClient> {
    const url = normalizeSdkUrl(opts.url);
    const agent = await createHttpsAgent(url, {
      ...(opts.thumbprint !== undefined ? { thumbprint: opts.thumbprint } : {}),
      ...(opts.caFile !== undefined ? { caFile: opts.caFile } : {}),
      ...(opts.insecure !== undefined ? { insecure: opts.insecure } : {}),
    });
    const soap = new SoapClient({ url, agent, userAgent: opts.userAgent ?? 'storsweep', ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });
    await soap.discoverVersion();
    const session = new Session(soap, { username: opts.username, password: opts.password }, opts);
    await session.open();
    return new VsphereClient(session, opts.insecure === true);
  }

  get serviceContent(): ServiceContent {
    return this.session.serviceContent;
  }

  get endpoint(): string {
    return this.session.host;
  }

  // ------------------------------------------------------------ finders

  private async find(kind: Kind, nameOrPath: string, within?: MoRef): Promise<MoRef> {
    const found = await this.tryFind(kind, nameOrPath, within);
    if (found) return found;
    const known = (await this.list(kind, within)).map((o) => o.name);
    // found in no listing: our conclusion, not a server fault
    throw new VsphereClientError('not-found', `${LABEL[kind]} "${nameOrPath}" not found on ${this.endpoint}${known.length ? ` (there are: ${known.slice(0, 20).join(', ')})` : ''}`, { method: 'FindByInventoryPath', host: this.endpoint });
  }

  /** Inventory path when `nameOrPath` contains '/', else a unique name under `within`. */
  private async tryFind(kind: Kind, nameOrPath: string, within?: MoRef): Promise<MoRef | undefined> {
    if (nameOrPath.includes('/')) {
      const ref = await findByInventoryPath(this.session, this.serviceContent.searchIndex, nameOrPath.replace(/^\//, ''));
      if (ref && ref.type !== kind) {
        throw new UsageError(`inventory path ${nameOrPath} on ${this.endpoint} is a ${ref.type}, expected a ${kind}`);
      }
      return ref;
    }
    const matches = (await this.list(kind, within)).filter((o) => o.name === nameOrPath);
    if (matches.length > 1) {
      throw new UsageError(`${LABEL[kind]} name "${nameOrPath}" is ambiguous on ${this.endpoint} (${matches.length} matches); use an inventory path like DC/host/cluster/name`);
    }
    return matches[0]?.ref;
  }

  /** Every object of a kind with its name (optionally under a datacenter or folder). */
  async list(kind: Kind, within?: MoRef, opts: RetrieveOptions = {}): Promise<Array<{ ref: MoRef; name: string }>> {
    const objs = await listView(this.session, this.serviceContent, within ?? this.serviceContent.rootFolder, [kind], ['name'], opts);
    return objs.map((o) => ({ ref: o.obj, name: String(o.props.name) }));
  }

  /** The named datacenter, or the only one when no name is given. */
  async findDatacenter(nameOrPath?: string): Promise<MoRef> {
    if (nameOrPath !== undefined) return this.find('Datacenter', nameOrPath);
    const all = await this.list('Datacenter');
    if (all.length !== 1) {
      throw new UsageError(`${this.endpoint} has ${all.length} datacenters (${all.map((d) => d.name).join(', ')}); name one`);
    }
    return all[0]!.ref;
  }

  findHost(nameOrPath: string, datacenter?: MoRef): Promise<MoRef> {
    return this.find('HostSystem', nameOrPath, datacenter);
  }

  findVm(nameOrPath: string, datacenter?: MoRef): Promise<MoRef> {
    return this.find('VirtualMachine', nameOrPath, datacenter);
  }

  findDatastore(nameOrPath: string, datacenter?: MoRef): Promise<MoRef> {
    return this.find('Datastore', nameOrPath, datacenter);
  }

  /** undefined instead of NotFound */
  findDatastoreOrNone(nameOrPath: string, datacenter?: MoRef): Promise<MoRef | undefined> {
    return this.tryFind('Datastore', nameOrPath, datacenter);
  }

  readProps(obj: MoRef, paths: string[]): Promise<Record<string, unknown>> {
    return readProps(this.session, this.serviceContent, obj, paths);
  }

  // ------------------------------------------------------------ storage

  listVmfsCandidateDisks(host: MoRef): Promise<HostScsiDisk[]> {
    return ds.listVmfsCandidateDisks(this.ctx, host);
  }

  listHostLuns(host: MoRef): Promise<HostScsiDisk[]> {
    return disks.hostLuns(this.ctx, host);
  }

  createVmfsDatastore(host: MoRef, o: ds.CreateVmfsOptions): Promise<MoRef> {
    return ds.createVmfsDatastore(this.ctx, host, o);
  }

  createNasDatastore(host: MoRef, o: ds.CreateNasOptions): Promise<MoRef> {
    return ds.createNasDatastore(this.ctx, host, o);
  }

  removeDatastore(host: MoRef, datastore: MoRef): Promise<'removed' | 'absent'> {
    return ds.removeDatastore(this.ctx, host, datastore);
  }

  readDatastore(datastore: MoRef): Promise<{ summary: DatastoreSummary; info: DatastoreInfo }> {
    return ds.readDatastore(this.ctx, datastore);
  }

  // ------------------------------------------------------------ disks

  devices(vm: MoRef): Promise<VirtualDevice[]> {
    return disks.vmDevices(this.ctx, vm);
  }

  createDisk(vm: MoRef, o: disks.CreateDiskOptions): Promise<disks.AttachedDisk> {
    return disks.createDisk(this.ctx, vm, o);
  }

  attachRdm(vm: MoRef, o: disks.AttachRdmOptions): Promise<disks.AttachedDisk> {
    return disks.attachRdm(this.ctx, vm, o);
  }

  /** the VM's devices and hardware version (`vmx-N` → N) */
  vmHardware(vm: MoRef): Promise<{ devices: VirtualDevice[]; hw: number }> {
    return controllers.vmHardware(this.ctx, vm);
  }

  addController(vm: MoRef, kind: controllers.ControllerKind, beforeSend?: (busNumber: number) => void | Promise<void>): Promise<controllers.AddedController> {
    return controllers.addController(this.ctx, vm, kind, beforeSend);
  }

  removeController(vm: MoRef, rec: { key?: number; type: string; busNumber: number }): Promise<'removed' | 'absent'> {
    return controllers.removeController(this.ctx, vm, rec);
  }

  detachDisk(vm: MoRef, key: number, o: { deleteFile: boolean }): Promise<'removed' | 'absent'> {
    return disks.detachDisk(this.ctx, vm, key, o);
  }

  /** delete an unattached vmdk on `datastore`, after looking for it ('absent' only if not listed) */
  deleteVirtualDisk(fileName: string, datastore: MoRef): Promise<'removed' | 'absent'> {
    return disks.deleteVirtualDisk(this.ctx, fileName, datastore);
  }

  datastoreFileExists(datastore: MoRef, path: string): Promise<boolean> {
    return disks.datastoreFileExists(this.ctx, datastore, path);
  }

  // ------------------------------------------------------------ power, guest

  powerOn(vm: MoRef): Promise<void> {
    return vms.powerOn(this.ctx, vm);
  }

  powerOff(vm: MoRef): Promise<void> {
    return vms.powerOff(this.ctx, vm);
  }

  waitForGuestIp(vm: MoRef, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<string> {
    return vms.waitForGuestIp(this.ctx, vm, opts);
  }

  /** a full clone of `source`, or a linked one of its snapshot (clones.ts), powered off */
  cloneVm(source: MoRef, o: clones.CloneOptions): Promise<MoRef> {
    return clones.cloneVm(this.ctx, source, o);
  }

  /** why `copies` full clones of `source` do not fit where they land, or null (clones.ts) */
  cloneRoomShortfall(source: MoRef, copies: number, disk?: { datastore: string; bytes: number }, linked = false): Promise<string | null> {
    return clones.cloneRoomShortfall(this.ctx, source, copies, disk, linked);
  }

  /** the clone tasks of `source` still queued or running on the server (clones.ts) */
  runningClones(source: MoRef): Promise<MoRef[]> {
    return clones.runningClones(this.ctx, source);
  }

  /** the VM's snapshots as the host shows them now (snapshots.ts) */
  snapshots(vm: MoRef): Promise<snapshots.SnapshotNode[]> {
    return snapshots.snapshotsOf(this.ctx, vm);
  }

  /** a snapshot without memory or quiescing (snapshots.ts) */
  createSnapshot(vm: MoRef, name: string, o: { description: string; beforeSend: () => void | Promise<void>; signal?: AbortSignal }): Promise<MoRef> {
    return snapshots.createSnapshot(this.ctx, vm, name, o);
  }

  /** this snapshot only, its children kept (snapshots.ts) */
  removeSnapshot(snapshot: MoRef): Promise<'removed' | 'absent'> {
    return snapshots.removeSnapshot(this.ctx, snapshot);
  }

  /** the disk files a snapshot's config names (snapshots.ts) */
  snapshotDiskFiles(snapshot: MoRef): Promise<string[]> {
    return snapshots.snapshotDiskFiles(this.ctx, snapshot);
  }

  /** powered on and waited for until guest operations are ready */
  startClone(vm: MoRef, o: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    return clones.startClone(this.ctx, vm, o);
  }

  /** powered off and destroyed with its files (clones.ts) */
  destroyVm(vm: MoRef): Promise<'removed' | 'absent'> {
    return clones.destroyVm(this.ctx, vm);
  }

  /** VMware Tools guest operations on `vm` (guest-ops.ts); the credential is revealed at each call. */
  guestOperations(vm: MoRef, credential: () => GuestCredential): GuestOperations {
    return new GuestOperations({ rt: this.session, sc: this.serviceContent, endpoint: this.endpoint, agent: this.session.soap.agent, insecure: this.insecure }, vm, credential);
  }

  /** Ends the shared wait loop (wait.ts), then the session. */
  async logout(): Promise<void> {
    await closePropertyWaits(this.session);
    await this.session.close();
  }
}

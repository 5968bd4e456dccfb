// What a flat disk's datastore must offer, read before anything is sent.
import { InvalidArgument } from '../../../errors.ts';
import type { DiskFormat } from '../disks.ts';
import type { VsphereHost } from '../host.ts';

/**
 * A flat disk must fit where it goes: its size within the datastore's maxFileSize (a VMFS3 volume
 * caps files by its block size: 256 GB per MB of block, 2 TB − 512 B at 8 MB; an existing VMFS3
 * datastore is only known here) and within its free space (a benchmark writes the disk; a thin one
 * bigger than the free space fails mid-measurement).
 */
export async function checkRoom(h: VsphereHost, datastore: string, sizeBytes: number): Promise<void> {
  const ref = await h.findDatastore(datastore);
  if (!ref) return; // the create meets the host's own fault
  const { summary, info } = await (await h.client()).readDatastore(ref);
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
export async function checkNfsThick(h: VsphereHost, datastore: string, format: DiskFormat): Promise<void> {
  if (format === 'thin') return;
  const ref = await h.findDatastore(datastore);
  if (!ref) return;
  const c = await h.client();
  const { summary } = await c.readDatastore(ref);
  const rawType = (summary as { type?: unknown }).type;
  const type = typeof rawType === 'string' ? rawType : '';
  if (type !== 'NFS' && type !== 'NFS41') return;
  if (h.target.nfs?.vaaiNas) return;
  const mounts = ((await c.readProps(ref, ['host'])).host ?? []) as Array<{ mountInfo?: { vStorageSupport?: unknown } }>;
  const list = Array.isArray(mounts) ? mounts : [mounts];
  if (list.length > 0 && list.every((m) => m.mountInfo?.vStorageSupport === 'vStorageSupported')) return;
  throw new InvalidArgument(
    `disk.format ${format}: datastore ${datastore} is ${type} and its host mount reports no hardware acceleration (vStorageSupport ${JSON.stringify(list[0]?.mountInfo?.vStorageSupport ?? null)}); an NFS datastore without VAAI-NAS has thin disks only. Use disk.format thin, or set nfs.vaaiNas: true in the inventory if the host has a VAAI-NAS plugin for it`,
    { name: 'disk.format', value: format },
  );
}

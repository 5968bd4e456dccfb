// (In hyperv/ because it is built on its cmdlet calls; vSphere imports it from here.)
// A volume on the disk a run attached to a Windows guest (the `guest.filesystem` axis, other than
// raw): made and undone by the same storage cmdlets whichever way the guest is reached — PowerShell
// Direct from a Hyper-V host (providers/hyperv/provider.ts) or VMware Tools guest operations
// (providers/vsphere/provider.ts). The calls and the values are ./guest-volume.ts; the disk is
// found by each provider its own way (Hyper-V: by SCSI location and size; vSphere: by WWN) and
// handed in here already checked blank, not the system or boot disk.
//
// Made: Initialize-Disk -PartitionStyle GPT, New-Partition -UseMaximumSize -AssignDriveLetter,
// Format-Volume with the axis's file system and allocation unit, read back. What each call made (the
// GPT disk GUID, the partition GUID, the drive letter) is sent (ProviderContext.sent) before the
// next call, so a run killed between them leaves a ledger row that names it.
// Undone: Clear-Disk -RemoveData, only on the disk carrying the recorded location and ids, only when
// its partition table is the GPT table this run made (same disk GUID) and it holds no partition but
// ours (and the Microsoft Reserved partition Windows adds to a GPT disk).
import { InvalidArgument, ProvisionedStateMismatch, UnsafeOperation } from '../../errors.ts';
import type { MeasuredTarget, ProviderContext } from '../../contract/provider.ts';
import { getGuestDiskCall, guestDiskFacts, listGuestDisksCall, sameGuestDisk, type GuestDisk } from './guest-disk.ts';
import { z } from 'zod';
import { clearDiskCall, driveLetterOf, FILE_SYSTEMS, formatVolumeCall, VOLUME_FILESYSTEMS, initializeDiskCall, isGuestFilesystem, newPartitionCall, partitionsCall, TEST_FILE_NAME, VOLUME_SPECS, type GuestFilesystem } from './guest-volume.ts';
import type { GuestCall } from '../windows-guest.ts';

/** A volume step's arguments (vSphere's and Hyper-V's): the axis value and what it formats; volumeSpecOf checks they agree. */
export const volumeArgs = { filesystem: z.enum(VOLUME_FILESYSTEMS), fileSystem: z.enum(FILE_SYSTEMS), allocationUnitBytes: z.number().int().positive() };

/** The guest a volume is made in: its storage cmdlet calls, and names for messages. */
export interface GuestVolumeIo {
  /** the host or endpoint, for messages (`hv01`, `tools://vc/vm`) */
  host: string;
  vmName: string;
  calls(calls: GuestCall[]): Promise<Record<string, unknown>[]>;
}

/** The axis value as the step carries it, checked against what it formats (a resumed plan is data from disk). */
export function volumeSpecOf(a: Record<string, unknown>): { filesystem: Exclude<GuestFilesystem, 'raw'>; spec: (typeof VOLUME_SPECS)[keyof typeof VOLUME_SPECS] } {
  const filesystem = a.filesystem;
  if (!isGuestFilesystem(filesystem) || filesystem === 'raw') throw new InvalidArgument(`filesystem: expected ntfs-4k, ntfs-64k or refs, got ${JSON.stringify(filesystem)}`, { name: 'guest.filesystem', value: String(filesystem) });
  const spec = VOLUME_SPECS[filesystem];
  if (a.fileSystem !== spec.fileSystem || a.allocationUnitBytes !== spec.allocationUnitBytes) throw new InvalidArgument(`${filesystem}: the step says ${String(a.fileSystem)} ${String(a.allocationUnitBytes)}, which is not what ${filesystem} formats (${spec.fileSystem} ${spec.allocationUnitBytes})`, { name: 'guest.filesystem', value: filesystem });
  return { filesystem, spec };
}

/**
 * Formats the disk `d` (found by the caller, blank, online and writable): GPT, one partition, the
 * volume. `base` is what the ledger row carries besides (the caller's identity of the disk);
 * returns the row's id and data once the volume reads back as asked. Throws, with what was made
 * already sent, when the guest gives no drive letter or formats something else.
 */
export async function formatGuestVolume(io: GuestVolumeIo, d: GuestDisk, a: Record<string, unknown>, base: Record<string, unknown>, ctx: Pick<ProviderContext, 'sent' | 'log'>, o: { operation: string; where: string }): Promise<{ id: string; data: Record<string, unknown> }> {
  const { filesystem, spec } = volumeSpecOf(a);
  const n = d.Number;
  const target = `${io.vmName} disk ${n}`;
  if (d.IsOffline || d.IsReadOnly) throw new UnsafeOperation(`${io.host}: guest disk ${n} of ${io.vmName} is ${d.IsOffline ? 'offline' : 'read-only'}; it is brought online and writable first — nothing formatted`, { operation: o.operation, target });
  let facts: Record<string, unknown> = { ...base, vmName: io.vmName, ...guestDiskFacts(d), filesystem, fileSystem: spec.fileSystem, allocationUnitBytes: spec.allocationUnitBytes };
  // sent again after each mutating call with what it made: the GPT disk GUID, then the partition
  // GUID — what teardown checks before it clears anything
  await ctx.sent(facts);
  const [initialized] = (await io.calls([initializeDiskCall(n), getGuestDiskCall(n)])) as unknown as GuestDisk[];
  if (!initialized || !sameGuestDisk(initialized, facts)) throw new UnsafeOperation(`${io.host}: guest disk ${n} of ${io.vmName} is not the disk found a moment ago; nothing partitioned`, { operation: o.operation, target });
  facts = { ...facts, diskGuid: initialized.Guid ?? null };
  await ctx.sent(facts);
  const [part] = await io.calls([newPartitionCall(n)]);
  const letter = driveLetterOf(part?.DriveLetter);
  facts = { ...facts, partitionGuid: typeof part?.Guid === 'string' ? part.Guid : null, driveLetter: letter };
  await ctx.sent(facts);
  if (!letter) throw new UnsafeOperation(`${io.host}: the guest gave the new partition on disk ${n} no drive letter (none free?); nothing measured, the partition is cleared at teardown`, { operation: o.operation, target });
  const [vol] = await io.calls([formatVolumeCall(letter, spec)]);
  const volume = { volumeFileSystem: typeof vol?.FileSystem === 'string' ? vol.FileSystem : null, volumeAllocationUnit: typeof vol?.AllocationUnitSize === 'number' ? vol.AllocationUnitSize : null };
  const data = { ...facts, ...volume, testFile: `${letter}:\\${TEST_FILE_NAME}` };
  // read back: the volume must be what the axis names, or the record would be wrong
  if (volume.volumeFileSystem !== spec.fileSystem || volume.volumeAllocationUnit !== spec.allocationUnitBytes) {
    throw new ProvisionedStateMismatch(`${io.host}: ${letter}: on guest disk ${n} reads ${String(volume.volumeFileSystem)} with ${String(volume.volumeAllocationUnit)}-byte allocation units, not the ${spec.fileSystem} ${spec.allocationUnitBytes} that guest.filesystem ${filesystem} asks for`, { axis: 'guest.filesystem', asked: filesystem, got: `${String(volume.volumeFileSystem)} ${String(volume.volumeAllocationUnit)}`, object: `${o.where} ${letter}:` });
  }
  ctx.log(`${o.where}: guest disk ${n} formatted ${spec.fileSystem}, ${spec.allocationUnitBytes}-byte allocation units, as ${letter}:`, { guestDiskNumber: n, driveLetter: letter });
  return { id: `${io.vmName}:${letter}:`, data };
}

/**
 * Undoes formatGuestVolume from the ledger row's data `d` alone. `whenGone` decides when no guest
 * disk carries the recorded identity (the disk left the guest: its volume went with a disk of ours,
 * or stays on a LUN/host disk someone must clear). `keepOpen` throws: the row stays open, nothing cleared.
 */
export async function clearGuestVolume(io: GuestVolumeIo, d: Record<string, unknown>, ctx: Pick<ProviderContext, 'log'>, o: { whenGone: (what: string) => 'absent'; keepOpen: (what: string, why: string) => never }): Promise<'removed' | 'absent'> {
  const what = `${io.vmName} guest disk ${String(d.guestDiskNumber)} (${String(d.location)})`;
  // by the recorded location and ids, not the number (the guest's to change)
  const found = ((await io.calls([listGuestDisksCall()])) as unknown as GuestDisk[]).filter((x) => sameGuestDisk(x, d));
  if (found.length === 0) return o.whenGone(what);
  if (found.length > 1) return o.keepOpen(what, `guest disks ${found.map((x) => x.Number).join(', ')} all carry the recorded location and ids; nothing cleared`);
  const disk = found[0]!;
  if (disk.PartitionStyle === 'RAW' && disk.NumberOfPartitions === 0) return 'absent';
  if (disk.PartitionStyle !== 'GPT' || typeof d.diskGuid !== 'string' || disk.Guid !== d.diskGuid) {
    return o.keepOpen(what, `guest disk ${disk.Number} is ${disk.PartitionStyle} with disk GUID ${JSON.stringify(disk.Guid ?? null)}, not the GPT table this run made (${JSON.stringify(d.diskGuid ?? null)}); nothing cleared`);
  }
  // only what this run made: its one partition (and the MSR partition Windows may add to GPT)
  const parts = await io.calls([partitionsCall(disk.Number)]);
  const foreign = parts.filter((p) => p.Guid !== d.partitionGuid && p.Type !== 'Reserved');
  if (foreign.length) return o.keepOpen(what, `guest disk ${disk.Number} carries partition(s) this run did not create (${foreign.map((p) => `${String(p.PartitionNumber)} ${String(p.Guid)}`).join(', ')}); nothing cleared`);
  await io.calls([clearDiskCall(disk.Number)]);
  ctx.log(`${what}: cleared (Clear-Disk) — back to RAW`);
  return 'removed';
}

/**
 * What the workload measures once the volume is made: the test file on it (diskspd creates it with
 * the pre-fill's `-c`), with the file system and allocation unit as read back, beside what
 * `disk` (the provider's raw target for that disk) says of the disk itself.
 */
export function guestVolumeMeasure(disk: MeasuredTarget, data: Record<string, unknown>, where: string): MeasuredTarget {
  const { testFile, volumeFileSystem, volumeAllocationUnit } = data;
  if (typeof testFile !== 'string' || !/^[A-Z]:\\[A-Za-z0-9._-]+$/.test(testFile)) throw new InvalidArgument(`${where}: the test file ${JSON.stringify(testFile)} is not a file on a drive letter; nothing measured`, { name: 'testFile', value: String(testFile) });
  const filesystem = String(volumeFileSystem);
  return { ...disk, path: testFile, filesystem, facts: { ...disk.facts, filesystem, allocationUnitBytes: Number(volumeAllocationUnit), testFile } };
}

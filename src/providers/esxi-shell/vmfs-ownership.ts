// Whose VMFS partition is this? The host says, not the ledger. A partition has no name of its own;
// what storsweep puts on it is a VMFS volume labelled with the run's owned name (`ss-<runId>-
// <permutationId>-ds`: the row's name is checked against the run in run/teardown.ts), and the host
// shows where that label lives (`esxcli storage vmfs extent list`: volume, device, partition) at
// the moment of the destroy. A ledger row only says where to look. A partition that carries no such
// mark (setptbl was sent, vmkfstools -C never was, or failed) is deleted only on a device the user
// confirmed in this command (--confirm-destroy); an unmounted VMFS does not say where it is, so one
// of ours that is unmounted is refused with the way to make the host show it.
//
// Each plan reads only; its run() acts on exactly the device and partition it names (`acts`), so a
// dry run (cleanup --dry-run) prints what the action would be carried out on, from the same field.
import { UnsafeOperation } from '../../errors.ts';
import type { DestroyPlan, OwnedObjectRef, ProviderContext, ProviderName } from '../../contract/provider.ts';
import { filesystemListArgv, filesystemUnmountArgv, parseFilesystemList, parseVmfsExtentList, vmfsExtentListArgv, type VmfsExtent } from './esxcli.ts';
import { deletePartitionArgv, getptblArgv, parseGetptbl, VMFS_GPT_GUID, VMFS_MBR_TYPE } from './partedutil.ts';
import { checkEsxi } from './validate.ts';

type DestroyRef = OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> };

/** What the ownership checks need of the host. */
export interface VmfsHost {
  /** the host's name, for messages */
  host: string;
  allowedDevices: readonly string[];
  /** runs one command (argv) on the host; throws when it fails */
  exec(argv: string[]): Promise<{ stdout: string }>;
}

/** The label this run gave the VMFS on the partition `name` (`…-part` → `…-ds`, plan.ts). */
export const ownLabelOf = (partitionName: string): string => partitionName.replace(/-part$/, '-ds');

async function extents(h: VmfsHost): Promise<VmfsExtent[]> {
  return parseVmfsExtentList((await h.exec(vmfsExtentListArgv())).stdout);
}

/** How to make the host show where an unmounted VMFS of ours is, or '' when it lists none. */
async function unmountedHint(h: VmfsHost, label: string): Promise<string> {
  const fs = parseFilesystemList((await h.exec(filesystemListArgv())).stdout).find((f) => f.volumeName === label);
  if (!fs) return '';
  return `; VMFS volume ${label} of this run is on the host unmounted, and an unmounted volume does not say which device holds it: mount it on the host, so that esxcli storage vmfs extent list shows it, and run storsweep cleanup again`;
}

/** Unmounts our volume, then deletes the partition it was on: both named by the plan, nothing else. */
function unmountAndDelete(h: VmfsHost, label: string, device: string, partition: number): () => Promise<'removed'> {
  return async () => {
    await h.exec(filesystemUnmountArgv(label));
    await h.exec(deletePartitionArgv(device, partition));
    return 'removed';
  };
}

/**
 * A datastore of this run: found by its label on the host's extent list, which says the device and
 * partition; that device must be allowed and hold that one VMFS partition (as the partition step
 * made it). Removing it unmounts it and deletes its partition (as vSphere's RemoveDatastore does),
 * so no partition of ours is left without its mark between two steps.
 */
export async function planDatastoreDestroy(h: VmfsHost, obj: DestroyRef, ctx: ProviderContext): Promise<DestroyPlan> {
  const label = checkEsxi('label', obj.name, 'datastore label');
  const refuse = (why: string): never => {
    throw new UnsafeOperation(`${h.host}: refusing to remove datastore ${label}: ${why}`, { operation: 'destroy', target: label });
  };
  const ext = (await extents(h)).filter((e) => e.volumeName === label);
  if (ext.length === 0) {
    const hint = await unmountedHint(h, label);
    if (!hint) return { outcome: 'absent' };
    return refuse(`it is not mounted${hint}`);
  }
  if (ext.length !== 1) refuse(`it spans ${ext.length} extents; this run made it on one partition`);
  const { deviceName: device, partition } = ext[0]!;
  if (!h.allowedDevices.includes(device)) refuse(`the host shows it on ${device}, which is not in allowedDevices of the inventory`);
  const p = parseGetptbl((await h.exec(getptblArgv(device))).stdout).partitions;
  if (p.length !== 1 || p[0]!.number !== partition || (p[0]!.type !== VMFS_GPT_GUID && p[0]!.type !== VMFS_MBR_TYPE)) {
    refuse(`${device} holds ${p.length} partition(s), not the one VMFS partition this run made`);
  }
  if (typeof obj.data.device === 'string' && obj.data.device !== device) ctx.log(`the ledger names ${obj.data.device}, the host shows ${label} on ${device}: acting on what the host shows`, { device });
  return { outcome: 'remove', acts: `${device}:${partition} (VMFS volume ${label}: unmounted, then the partition deleted)`, run: unmountAndDelete(h, label, device, partition) };
}

/**
 * A partition of this run on the recorded device: the exact layout recorded before setptbl, and
 * the host's proof — our VMFS label on that device's partition 1 — or else this command's
 * confirmation of the device. Anything else is left alone ('absent') or refused.
 */
export async function planPartitionDestroy(h: VmfsHost, obj: DestroyRef, ctx: ProviderContext): Promise<DestroyPlan> {
  const d = obj.data;
  const device = checkEsxi('device', d.device, 'recorded device');
  const refuse = (why: string): never => {
    throw new UnsafeOperation(`${h.host}: refusing to delete partition 1 on ${device}: ${why}`, { operation: 'partedUtil delete', target: `${device}:1` });
  };
  if (!h.allowedDevices.includes(device)) refuse('not in allowedDevices of the inventory');
  // what `status` shows (the id) is what is acted on, or nothing is
  if (obj.id !== null && obj.id !== `${device}:1`) refuse(`the ledger row is inconsistent: its id names ${obj.id}, its data ${device}:1`);
  if (typeof d.startSector !== 'number' || typeof d.endSector !== 'number' || typeof d.label !== 'string') {
    // recorded before mklabel only: setptbl was never sent, so no partition of ours exists
    ctx.log(`${device}: no partition layout was recorded (setptbl never sent); nothing to delete`, { device });
    return { outcome: 'absent' };
  }
  const table = parseGetptbl((await h.exec(getptblArgv(device))).stdout);
  const p = table.partitions;
  if (!p.length) return { outcome: 'absent' };
  const expectedType = d.label === 'msdos' ? VMFS_MBR_TYPE : VMFS_GPT_GUID;
  const exact = table.label === d.label && p.length === 1 && p[0]!.number === 1 && p[0]!.startSector === d.startSector && p[0]!.endSector === d.endSector && p[0]!.type === expectedType;
  if (!exact) {
    ctx.log(`${device}: the partition table is not the layout this run wrote (${d.label} 1 ${String(d.startSector)}-${String(d.endSector)}); left alone`, { device });
    return { outcome: 'absent' };
  }
  const label = ownLabelOf(obj.name);
  const ext = await extents(h);
  const mine = ext.find((e) => e.volumeName === label);
  if (mine && (mine.deviceName !== device || mine.partition !== 1)) refuse(`VMFS volume ${label} of this run is on ${mine.deviceName}:${mine.partition}, not on ${device}:1`);
  if (mine) return { outcome: 'remove', acts: `${device}:1 (VMFS volume ${label}: unmounted, then the partition deleted)`, run: unmountAndDelete(h, label, device, 1) };
  const foreign = ext.find((e) => e.deviceName === device);
  if (foreign) refuse(`it holds VMFS volume ${foreign.volumeName}, not one of this run`);
  if (!ctx.confirmedDestroy?.includes(device)) {
    refuse(`it carries no mark of this run: no VMFS volume ${label} is on it (esxcli storage vmfs extent list)${await unmountedHint(h, label)}; a partition without the run's mark is deleted only when this command confirms its device: --confirm-destroy ${device}`);
  }
  return {
    outcome: 'remove',
    acts: `${device}:1 (no mark of this run on it; confirmed with --confirm-destroy ${device})`,
    run: async () => {
      await h.exec(deletePartitionArgv(device, 1));
      return 'removed';
    },
  };
}

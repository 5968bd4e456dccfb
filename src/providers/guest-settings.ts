// Guest I/O settings as axes (issue 32): the Linux I/O scheduler and queue depth of the disk under
// test, set in the guest's sysfs after the guest-disk step found the disk and before the passes,
// read back into every record, and restored at teardown from the values the ledger recorded
// before anything was changed (ctx.sent), so a run killed with -9 is restored by `run --resume`
// or `cleanup` as well.
//
// Sources (the kernel is the authority; what the lab guest showed is noted):
// - `/sys/block/<dev>/queue/scheduler` (RW): reads as the schedulers the kernel offers for that
//   queue with the active one in brackets (`[none] mq-deadline kyber bfq`); writing a name switches
//   to it, a name not offered fails with EINVAL (Documentation/block/queue-sysfs.rst "scheduler";
//   block/elevator.c elv_iosched_store). A scheduler not in the list is refused before any write.
// - `/sys/block/<dev>/queue/nr_requests` (RW): the requests the block layer may allocate for one
//   blk_mq_tags instance (Documentation/ABI/stable/sysfs-block, "nr_requests", as updated by Yu
//   Kuai's "blk-mq: fix stale nr_requests documentation"). queue_requests_store (block/blk-sysfs.c)
//   raises a value below BLKDEV_MIN_RQ (4) to 4 without an error, and blk_mq_update_nr_requests
//   refuses more than the tag set's depth with no scheduler (EINVAL). Switching the scheduler
//   resets it. Lab guest (loop, kernel 6.18): 128 with `none`, 256 after `mq-deadline`; 200 with
//   `none` is refused; 2 reads back as 4.
// - `/sys/block/<dev>/device/queue_depth` (RW) on a SCSI disk (sd: PVSCSI, LSI Logic, BusLogic):
//   the LUN's tag depth; drivers/scsi/scsi_sysfs.c sdev_store_queue_depth refuses a driver without
//   change_queue_depth, a depth below 1 or above the host's can_queue (EINVAL). vmw_pvscsi has
//   change_queue_depth since "VMW_PVSCSI: Allow TCQ depth change through sysfs" (Andrei Warkentin,
//   VMware, 2011). PVSCSI's `cmd_per_lun` and `ring_pages` are module parameters the driver reads
//   when it probes the adapter: they change only with a driver reload or a reboot of the guest,
//   which a benchmark of the running guest does not do, so they are no axis here (refused by name).
// Which one guest.queueDepth writes: `device/queue_depth` where the disk has one (SCSI), else
// `queue/nr_requests` (virtio-blk, NVMe, loop: blk-mq devices with no per-LUN depth). The record
// names the attribute. A value the kernel refuses or changes (read back differs) fails the
// permutation; teardown then restores what was recorded.
import path from 'node:path';
import { InvalidArgument, ProvisionedStateMismatch, UnsafeOperation } from '../errors.ts';
import type { CreatedObject, MeasuredTarget, ProviderContext, ProviderName } from '../contract/provider.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { shJoin } from '../ssh/quote.ts';
import { byIdLink, rootAccess, type AsRoot, type GuestAccess } from './guest-disk.ts';
import { GUEST_SETTINGS_OPERATION } from './guest-settings-axes.ts';

export { GUEST_SETTINGS_OPERATION };

/** `[none] mq-deadline kyber bfq` → the active one and every one offered. */
export function parseSchedulerFile(text: string): { active: string; offered: string[] } {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const active = words.find((w) => w.startsWith('[') && w.endsWith(']'))?.slice(1, -1) ?? '';
  return { active, offered: words.map((w) => w.replace(/^\[|\]$/g, '')) };
}

/** What the step asks for (its arguments): each absent when the permutation has no such axis. */
export interface GuestSettingsWanted {
  scheduler?: string;
  queueDepth?: number;
}

/** What the ledger keeps before anything changes: enough to restore and to prove the disk is the same one. */
export interface GuestSettingsRecord {
  device: string;
  byId: string;
  /** the sysfs attribute guest.queueDepth writes, relative to /sys/block/<dev> */
  depthAttribute: 'device/queue_depth' | 'queue/nr_requests';
  original: { scheduler: string; queueDepth: number };
}

const sysfs = (device: string, attr: string) => path.posix.join('/sys/block', path.posix.basename(device), attr);

async function readAttr(runner: CommandRunner, file: string): Promise<string | null> {
  const r = await runner.run(shJoin(['cat', '--', file]));
  return r.exitCode === 0 ? r.stdout.trim() : null;
}

async function writeAttr(runner: CommandRunner, asRoot: AsRoot, file: string, value: string): Promise<string | null> {
  const r = await runner.run(asRoot(['sh', '-c', 'printf %s "$1" > "$2"', 'sh', value, file]));
  return r.exitCode === 0 ? null : r.stderr.trim().split('\n').pop() || `exit ${r.exitCode}`;
}

/** Reads what is set now, refusing a disk whose sysfs lacks the files (not a block queue we can tune). */
async function readCurrent(runner: CommandRunner, device: string, byId: string): Promise<GuestSettingsRecord & { offered: string[] }> {
  const sched = await readAttr(runner, sysfs(device, 'queue/scheduler'));
  if (sched === null) throw new UnsafeOperation(`${runner.target}: ${device} has no ${sysfs(device, 'queue/scheduler')}; its I/O settings cannot be read, so none is changed`, { operation: GUEST_SETTINGS_OPERATION, target: device });
  const scsi = await readAttr(runner, sysfs(device, 'device/queue_depth'));
  const depthAttribute = scsi !== null ? 'device/queue_depth' : 'queue/nr_requests';
  const depth = scsi ?? (await readAttr(runner, sysfs(device, 'queue/nr_requests')));
  if (depth === null || !/^\d+$/.test(depth)) throw new UnsafeOperation(`${runner.target}: ${device} shows no queue depth (${sysfs(device, depthAttribute)}); nothing is changed`, { operation: GUEST_SETTINGS_OPERATION, target: device });
  const { active, offered } = parseSchedulerFile(sched);
  return { device, byId, depthAttribute, original: { scheduler: active, queueDepth: Number(depth) }, offered };
}

/** The disk behind the recorded link is still the recorded device (a detached disk: null). */
async function sameDisk(runner: CommandRunner, byId: string, device: string): Promise<boolean> {
  const r = await runner.run(shJoin(['readlink', '-f', '--', byId]));
  return r.exitCode === 0 && r.stdout.trim() === device;
}

/**
 * Writes `wanted` (scheduler first: switching it resets nr_requests) and reads both back. Throws
 * on a refusal by the kernel or a read-back that differs; what was written stays for teardown.
 */
async function write(runner: CommandRunner, asRoot: AsRoot, rec: GuestSettingsRecord, wanted: GuestSettingsWanted): Promise<{ scheduler: string; queueDepth: number }> {
  const { device } = rec;
  if (wanted.scheduler !== undefined) {
    const err = await writeAttr(runner, asRoot, sysfs(device, 'queue/scheduler'), wanted.scheduler);
    if (err) throw new UnsafeOperation(`${runner.target}: the kernel refused I/O scheduler ${wanted.scheduler} on ${device} (${err})`, { operation: GUEST_SETTINGS_OPERATION, target: device });
  }
  if (wanted.queueDepth !== undefined) {
    const err = await writeAttr(runner, asRoot, sysfs(device, rec.depthAttribute), String(wanted.queueDepth));
    if (err) throw new InvalidArgument(`${runner.target}: the kernel refused guest.queueDepth ${wanted.queueDepth} on ${device} (${rec.depthAttribute}: ${err}); with scheduler none a blk-mq queue takes no more than its tag set's depth, a SCSI LUN no more than its host's can_queue`, { name: 'guest.queueDepth', value: String(wanted.queueDepth) });
  }
  const now = await readCurrent(runner, device, rec.byId);
  const got = now.original;
  if (wanted.scheduler !== undefined && got.scheduler !== wanted.scheduler) {
    throw new ProvisionedStateMismatch(`guest.scheduler ${wanted.scheduler} was written to ${device}, but it reads back ${got.scheduler}`, { axis: 'guest.scheduler', asked: wanted.scheduler, got: got.scheduler, object: device });
  }
  if (wanted.queueDepth !== undefined && got.queueDepth !== wanted.queueDepth) {
    throw new ProvisionedStateMismatch(`guest.queueDepth ${wanted.queueDepth} was written to ${device} (${rec.depthAttribute}), but it reads back ${got.queueDepth} (the kernel raises nr_requests below 4 to 4)`, { axis: 'guest.queueDepth', asked: String(wanted.queueDepth), got: String(got.queueDepth), object: device });
  }
  return got;
}

/**
 * The guest-settings step: on the disk the guest-disk step found (ctx.measured), records the
 * current values (ctx.sent), writes the wanted ones, reads them back and says them again with the
 * measured target, so every record carries them (guestScheduler, guestQueueDepth…).
 */
export async function applyGuestSettings(g: GuestAccess, wanted: GuestSettingsWanted, step: { provider: ProviderName; name: string }, ctx: ProviderContext): Promise<CreatedObject> {
  const target = ctx.measured?.();
  if (!target) throw new UnsafeOperation('guest settings: no step found the disk under test in the guest; nothing is changed', { operation: GUEST_SETTINGS_OPERATION, target: step.name });
  const wwn = target.facts.deviceWwn;
  if (typeof wwn !== 'string') throw new InvalidArgument(`guest settings: the disk ${target.device} was found by no WWN; refusing to change it`, { name: 'deviceWwn', value: '' });
  const runner = await g.open();
  try {
    const asRoot = await rootAccess(runner, g);
    const { offered, ...rec } = await readCurrent(runner, target.device, byIdLink(g.byIdDir, wwn));
    if (wanted.scheduler !== undefined && !offered.includes(wanted.scheduler)) {
      throw new InvalidArgument(`${runner.target}: ${target.device} offers the I/O schedulers ${offered.join(', ')} (${sysfs(target.device, 'queue/scheduler')}), not ${wanted.scheduler}; nothing was changed`, { name: 'guest.scheduler', value: wanted.scheduler });
    }
    await ctx.sent({ ...rec });
    const got = await write(runner, asRoot, rec, wanted);
    ctx.log(`set ${target.device}: scheduler ${got.scheduler} (was ${rec.original.scheduler}), ${rec.depthAttribute} ${got.queueDepth} (was ${rec.original.queueDepth})`);
    ctx.measure?.(withSettings(target, rec, got));
    return { kind: 'guest-settings', name: step.name, provider: step.provider, id: target.device, data: { ...rec } };
  } finally {
    await runner.close().catch(() => undefined);
  }
}

function withSettings(t: MeasuredTarget, rec: GuestSettingsRecord, got: { scheduler: string; queueDepth: number }): MeasuredTarget {
  return { ...t, facts: { ...t.facts, guestScheduler: got.scheduler, guestQueueDepth: got.queueDepth, guestQueueDepthAttribute: rec.depthAttribute, guestSchedulerBefore: rec.original.scheduler, guestQueueDepthBefore: rec.original.queueDepth } };
}

function recorded(obj: { name: string; data: Record<string, unknown> }): GuestSettingsRecord {
  const d = obj.data;
  const o = d.original as { scheduler?: unknown; queueDepth?: unknown } | undefined;
  if (typeof d.device !== 'string' || typeof d.byId !== 'string' || (d.depthAttribute !== 'device/queue_depth' && d.depthAttribute !== 'queue/nr_requests') || typeof o?.scheduler !== 'string' || typeof o.queueDepth !== 'number') {
    throw new InvalidArgument(`the ledger records no device and original values for guest settings ${obj.name}; refusing to guess them`, { name: 'guest-settings', value: obj.name });
  }
  return { device: d.device, byId: d.byId, depthAttribute: d.depthAttribute, original: { scheduler: o.scheduler, queueDepth: o.queueDepth } };
}

/**
 * Teardown: the recorded original values written back (scheduler first, since switching it resets
 * nr_requests) and read back, while the recorded link still leads to the recorded device; a disk
 * already gone is 'absent' (its settings went with it).
 */
export async function restoreGuestSettings(g: GuestAccess, obj: { name: string; data: Record<string, unknown> }, ctx: ProviderContext): Promise<'removed' | 'absent'> {
  const rec = recorded(obj);
  const runner = await g.open();
  try {
    if (!(await sameDisk(runner, rec.byId, rec.device))) {
      ctx.log(`${rec.byId} no longer leads to ${rec.device}: the disk is gone, and its settings with it`);
      return 'absent';
    }
    const asRoot = await rootAccess(runner, g);
    ctx.log(`restoring ${rec.device}: scheduler ${rec.original.scheduler}, ${rec.depthAttribute} ${rec.original.queueDepth}`);
    await write(runner, asRoot, rec, rec.original);
    return 'removed';
  } finally {
    await runner.close().catch(() => undefined);
  }
}

/**
 * Provider.verify: the settings the step wrote, read back from the guest's sysfs again (the
 * disk behind the recorded link still the recorded device); a value that changed since is a mismatch.
 */
export async function verifyGuestSettings(g: GuestAccess, wanted: GuestSettingsWanted, created: { name: string; data: Record<string, unknown> }): Promise<void> {
  const rec = recorded(created);
  const runner = await g.open();
  try {
    if (!(await sameDisk(runner, rec.byId, rec.device))) throw new ProvisionedStateMismatch(`guest settings ${created.name}: ${rec.byId} no longer leads to ${rec.device}`, { axis: 'guest-settings', asked: rec.device, got: 'gone', object: rec.byId });
    const got = (await readCurrent(runner, rec.device, rec.byId)).original;
    if (wanted.scheduler !== undefined && got.scheduler !== wanted.scheduler) throw new ProvisionedStateMismatch(`guest.scheduler of ${rec.device} is ${got.scheduler}, not ${wanted.scheduler}`, { axis: 'guest.scheduler', asked: wanted.scheduler, got: got.scheduler, object: rec.device });
    if (wanted.queueDepth !== undefined && got.queueDepth !== wanted.queueDepth) throw new ProvisionedStateMismatch(`guest.queueDepth of ${rec.device} (${rec.depthAttribute}) is ${got.queueDepth}, not ${wanted.queueDepth}`, { axis: 'guest.queueDepth', asked: String(wanted.queueDepth), got: String(got.queueDepth), object: rec.device });
  } finally {
    await runner.close().catch(() => undefined);
  }
}

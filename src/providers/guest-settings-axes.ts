// PURE: the guest I/O setting axes (guest.scheduler, guest.queueDepth on Linux; guest.writeCache on
// Windows) and the checks of the plan step that sets them (vsphere/operations/guest-settings.ts,
// vsphere/operations/windows-write-cache.ts). The step runs after the guest-disk step and is torn down before it (reverse order): the
// settings are restored while the disk is still attached. What each setting is and where the
// kernel takes it: guest-settings.ts.
import { z } from 'zod';
import { InvalidArgument } from '../errors.ts';
import type { AxisSpec, Axes } from '../contract/axis.ts';

/** The plan step's operation (provider.ts carries it out through guest-settings.ts). */
export const GUEST_SETTINGS_OPERATION = 'guest: set I/O scheduler and queue depth (sysfs)';
/** The Linux blk-mq schedulers the axis takes; which of them a guest offers is read there at run time. */
export const LINUX_SCHEDULERS = ['none', 'mq-deadline', 'kyber', 'bfq'] as const;
export type LinuxScheduler = (typeof LINUX_SCHEDULERS)[number];
/** The axis's ceiling: PVSCSI's largest request ring (32 pages of 32 entries); the guest's kernel may refuse less. */
export const QUEUE_DEPTH_MAX = 1024;

export function acceptsQueueDepth(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= QUEUE_DEPTH_MAX;
}

/** The Windows guest's disk write cache policy (Device Manager's two boxes): ../windows-write-cache.ts. */
export const GUEST_WRITE_CACHE_OPERATION = 'guest: set the disk write cache policy (IOCTL_DISK_SET_CACHE_INFORMATION, IOCTL_DISK_SET_CACHE_SETTING)';
/** "Enable write caching on the device" */
export const WRITE_CACHE_VALUES = ['enabled', 'disabled'] as const;
export type WriteCacheValue = (typeof WRITE_CACHE_VALUES)[number];
/** "Turn off Windows write-cache buffer flushing on the device": off when it is ticked */
export const FLUSHING_VALUES = ['on', 'off'] as const;
export type FlushingValue = (typeof FLUSHING_VALUES)[number];
const WINDOWS_AXES = ['guest.writeCache', 'guest.writeCacheFlushing'] as const;

export const GUEST_SETTINGS_AXES: readonly AxisSpec[] = [
  { name: 'guest.scheduler', values: LINUX_SCHEDULERS },
  { name: 'guest.queueDepth', expected: `a whole number from 1 to ${QUEUE_DEPTH_MAX} (the disk's SCSI queue_depth, or nr_requests where it has none)`, accepts: acceptsQueueDepth },
  { name: 'guest.writeCache', values: WRITE_CACHE_VALUES },
  { name: 'guest.writeCacheFlushing', values: FLUSHING_VALUES },
];

/** The permutation's guest settings as the step takes them, or null when it has neither axis. Refused on a Windows guest. */
export function guestSettingsWanted(axes: Axes, guestOs?: string): { scheduler?: LinuxScheduler; queueDepth?: number } | null {
  const scheduler = axes['guest.scheduler'];
  const queueDepth = axes['guest.queueDepth'];
  if (scheduler === undefined && queueDepth === undefined) return null;
  const axis = scheduler !== undefined ? 'guest.scheduler' : 'guest.queueDepth';
  if (guestOs === 'windows') throw new InvalidArgument(`axis ${axis}: a Linux guest's sysfs setting; a Windows guest has no I/O scheduler or sysfs queue depth`, { name: axis, value: String(axes[axis]) });
  if (scheduler !== undefined && !(LINUX_SCHEDULERS as readonly unknown[]).includes(scheduler)) throw new InvalidArgument(`axis guest.scheduler = ${JSON.stringify(scheduler)}: expected one of ${LINUX_SCHEDULERS.join(', ')}`, { name: 'guest.scheduler', value: String(scheduler) });
  if (queueDepth !== undefined && !acceptsQueueDepth(queueDepth)) throw new InvalidArgument(`axis guest.queueDepth = ${JSON.stringify(queueDepth)}: expected a whole number from 1 to ${QUEUE_DEPTH_MAX}`, { name: 'guest.queueDepth', value: String(queueDepth) });
  return { ...(scheduler !== undefined ? { scheduler: scheduler as LinuxScheduler } : {}), ...(queueDepth !== undefined ? { queueDepth: queueDepth as number } : {}) };
}

/** What the Windows write cache step sets (each absent without its axis). */
export interface WriteCacheWanted {
  writeCache?: WriteCacheValue;
  flushing?: FlushingValue;
}

/** The permutation's Windows write cache policy, or null without either axis. Refused on a Linux guest. */
export function writeCacheWanted(axes: Axes, guestOs?: string): WriteCacheWanted | null {
  const writeCache = axes['guest.writeCache'];
  const flushing = axes['guest.writeCacheFlushing'];
  if (writeCache === undefined && flushing === undefined) return null;
  const axis = writeCache !== undefined ? 'guest.writeCache' : 'guest.writeCacheFlushing';
  if (guestOs !== 'windows') throw new InvalidArgument(`axis ${axis}: a Windows guest's disk write cache policy; a Linux guest has none (its I/O settings are guest.scheduler and guest.queueDepth)`, { name: axis, value: String(axes[axis]) });
  if (writeCache !== undefined && !(WRITE_CACHE_VALUES as readonly unknown[]).includes(writeCache)) throw new InvalidArgument(`axis guest.writeCache = ${JSON.stringify(writeCache)}: expected one of ${WRITE_CACHE_VALUES.join(', ')}`, { name: 'guest.writeCache', value: String(writeCache) });
  if (flushing !== undefined && !(FLUSHING_VALUES as readonly unknown[]).includes(flushing)) throw new InvalidArgument(`axis guest.writeCacheFlushing = ${JSON.stringify(flushing)}: expected one of ${FLUSHING_VALUES.join(', ')}`, { name: 'guest.writeCacheFlushing', value: String(flushing) });
  return { ...(writeCache !== undefined ? { writeCache: writeCache as WriteCacheValue } : {}), ...(flushing !== undefined ? { flushing: flushing as FlushingValue } : {}) };
}

/** The Windows step's argument fields besides where it acts (vsphere/operations/windows-write-cache.ts). */
export const writeCacheFields = { writeCache: z.enum(WRITE_CACHE_VALUES).optional(), flushing: z.enum(FLUSHING_VALUES).optional() };

/** The step's argument fields besides where it acts (the operation's schema: vsphere/operations/guest-settings.ts). */
export const guestSettingsFields = { scheduler: z.enum(LINUX_SCHEDULERS).optional(), queueDepth: z.number().refine(acceptsQueueDepth).optional() };

/** validate: the Linux axes on a Windows guest, at each value (its own setting is guest.writeCache). */
export function guestSettingsOnWindows(values: Readonly<Record<string, readonly unknown[]>>, name: string): Array<{ axis: string; index: number; message: string }> {
  return (['guest.scheduler', 'guest.queueDepth'] as const).flatMap((axis) =>
    (values[axis] ?? []).map((_, index) => ({ axis, index, message: `target "${name}" has a Windows guest (guest.os: windows); ${axis} is a Linux guest's sysfs setting of the disk under test` })),
  );
}

/** validate: guest.writeCache and guest.writeCacheFlushing on a Linux guest, at each value. */
export function writeCacheOnLinux(values: Readonly<Record<string, readonly unknown[]>>, name: string): Array<{ axis: string; index: number; message: string }> {
  return WINDOWS_AXES.flatMap((axis) =>
    (values[axis] ?? []).map((_, index) => ({
      axis,
      index,
      message: `target "${name}" has a Linux guest; ${axis} is a Windows guest's disk write cache policy (Device Manager's "Write-caching policy"), set with guest.os: windows`,
    })),
  );
}

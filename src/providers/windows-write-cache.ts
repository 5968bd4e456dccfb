// guest.writeCache and guest.writeCacheFlushing (issue 32): a Windows guest disk's write cache
// policy — Device Manager's "Enable write caching on the device" and "Turn off Windows write-cache
// buffer flushing on the device" — set after the guest-disk step found the disk and before the passes,
// read back into every record, and restored at teardown from the value the ledger recorded before
// anything was changed (ctx.sent), so a run killed with -9 is restored by `run --resume` or
// `cleanup` as well. The guest runs windows-write-cache-script.ts (DeviceIoControl).
//
// What Windows does (microsoft/Windows-driver-samples storage/class/disk/src, disk.sys's source):
// - IOCTL_DISK_SET_CACHE_INFORMATION (disk.c DiskIoctlSetCacheInformation → DiskSetCacheInformation)
//   reads the caching mode page (MODE SENSE), sets its WCE bit and sends it back (MODE SELECT) at
//   once: no restart, no reboot. A disk with no caching page fails with STATUS_NOT_SUPPORTED; a
//   MODE SELECT the device rejects fails, and GET_CACHE_SETTING's State says ModifyUnsuccessful.
//   Either way disk.sys stores the value asked for as UserWriteCacheSetting under the device's
//   "Device Parameters\Disk" key.
// - At each start of the disk device (pnp.c DiskStartFdo) disk.sys applies UserWriteCacheSetting
//   again. So the value outlives the run on that device; the restore is what puts it back.
// - IOCTL_DISK_GET_CACHE_INFORMATION (DiskGetCacheInformation) is a fresh MODE SENSE: the read-back
//   is the device's own state, not what the driver remembers.
// - "Turn off Windows write-cache buffer flushing" is IOCTL_DISK_SET_CACHE_SETTING's
//   IsPowerProtected (DiskIoctlSetCacheSetting, registry CacheIsPowerProtected), also at once:
//   disk.sys then completes every flush request itself, sending none to the device (disk.c
//   DiskShutdownFlush: "both the disk and adapter caches are battery-backed"). Flushing `off` is
//   IsPowerProtected TRUE. The call fails only on a wrong Version; it changes nothing on the device.
// - Writing the registry value alone changes nothing until the device restarts (DiskStartFdo reads
//   it), which a benchmark of the running guest does not do; storsweep sends the IOCTL instead.
// - Get-StorageAdvancedProperty reads IsDeviceCacheEnabled and IsPowerProtected; it sets nothing
//   (Learn, "Get-StorageAdvancedProperty"). Set-Disk, fsutil and MSFT_Disk have no write cache setting.
// The policy is the disk's, not a volume's: a volume step before it changes nothing here.
import { InvalidArgument, ProvisionedStateMismatch, RemoteCommandFailed, UnsafeOperation } from '../errors.ts';
import type { CreatedObject, MeasuredTarget, ProviderContext, ProviderName } from '../contract/provider.ts';
import { FLUSHING_VALUES, WRITE_CACHE_VALUES, type FlushingValue, type WriteCacheValue, type WriteCacheWanted } from './guest-settings-axes.ts';
import type { DiskCacheState, GuestCall, WindowsGuestRunner } from './windows-guest.ts';

/** What the ledger keeps before anything changes: the disk, the identity to prove it is the same one, the original value. */
export interface WriteCacheRecord {
  disk: number;
  /** the disk's SerialNumber (else UniqueId) as Get-Disk showed it when the value was read */
  diskId: string;
  /** the guest's own value of each setting the step changes (only those: teardown sets back nothing else) */
  original: WriteCacheWanted;
}

const idHex = (v: unknown): string => (typeof v === 'string' ? v.replace(/[\s:-]/g, '').toLowerCase() : '');
const valueOf = (s: DiskCacheState): WriteCacheValue => (s.WriteCacheEnabled ? 'enabled' : 'disabled');
const flushingOf = (s: DiskCacheState): FlushingValue => (s.IsPowerProtected ? 'off' : 'on');
const listDisks = (): GuestCall => ({ cmdlet: 'Get-Disk', params: {}, select: ['Number', 'SerialNumber', 'UniqueId'] });

function cacheOf(runner: WindowsGuestRunner): NonNullable<WindowsGuestRunner['diskCache']> {
  if (!runner.diskCache) throw new UnsafeOperation(`${runner.target}: this way into the guest cannot send the write cache IOCTL; guest.writeCache is not set`, { operation: 'guest.writeCache', target: runner.target });
  return runner.diskCache.bind(runner);
}

/** Whether guest disk `disk` still carries identity `diskId` (a disk gone or renumbered: false). */
async function sameDisk(runner: WindowsGuestRunner, disk: number, diskId: string): Promise<boolean> {
  const disks = await runner.calls([listDisks()]);
  const d = disks.find((x) => Number(x.Number) === disk);
  return d !== undefined && idHex(d.SerialNumber ?? d.UniqueId) === idHex(diskId);
}

/** Sets `wanted` and checks the read-back; the guest's refusal is said as such (the ledger already holds the original). */
async function setAndCheck(runner: WindowsGuestRunner, disk: number, wanted: WriteCacheWanted): Promise<DiskCacheState> {
  let got: DiskCacheState;
  const asked = [wanted.writeCache && `guest.writeCache ${wanted.writeCache}`, wanted.flushing && `guest.writeCacheFlushing ${wanted.flushing}`].filter(Boolean).join(', ');
  try {
    got = await cacheOf(runner)(disk, wanted);
  } catch (err) {
    if (!(err instanceof RemoteCommandFailed) || err.details.reason !== 'exit') throw err;
    const why = err.details.stderr.trim().split(/\r?\n/)[0] ?? '';
    throw new UnsafeOperation(`${runner.target}: guest disk ${disk} refused ${asked} (${why}); a device without a changeable caching mode page cannot take a write cache change`, { operation: 'guest.writeCache', target: `guest disk ${disk}` }, { cause: err });
  }
  if (wanted.writeCache !== undefined && valueOf(got) !== wanted.writeCache) {
    throw new ProvisionedStateMismatch(`guest.writeCache ${wanted.writeCache} was set on guest disk ${disk}, but the device reads back ${valueOf(got)} (State ${got.State})`, { axis: 'guest.writeCache', asked: wanted.writeCache, got: valueOf(got), object: `guest disk ${disk}` });
  }
  if (wanted.flushing !== undefined && flushingOf(got) !== wanted.flushing) {
    throw new ProvisionedStateMismatch(`guest.writeCacheFlushing ${wanted.flushing} was set on guest disk ${disk}, but it reads back ${flushingOf(got)}`, { axis: 'guest.writeCacheFlushing', asked: wanted.flushing, got: flushingOf(got), object: `guest disk ${disk}` });
  }
  return got;
}

function diskOf(target: MeasuredTarget | undefined, step: string): { target: MeasuredTarget; disk: number; diskId: string } {
  if (!target) throw new UnsafeOperation('guest.writeCache: no step found the disk under test in the guest; nothing is changed', { operation: 'guest.writeCache', target: step });
  const disk = target.facts.guestDisk;
  const diskId = target.facts.guestDiskId;
  if (typeof disk !== 'number' || typeof diskId !== 'string' || diskId === '') {
    throw new InvalidArgument(`guest.writeCache: the disk under test (${target.device}) was found by no guest disk number and serial; refusing to change it`, { name: 'guestDisk', value: String(disk) });
  }
  return { target, disk, diskId };
}

/**
 * The step: on the disk the guest-disk step found (ctx.measured), reads the write cache, records it
 * (ctx.sent), sets the wanted value, reads it back and says the target again with it, so every
 * record carries it (guestWriteCache, guestWriteCacheFlushing, and each one's …Before).
 */
export async function applyWriteCache(open: () => Promise<WindowsGuestRunner>, wanted: WriteCacheWanted, step: { provider: ProviderName; name: string; where?: Record<string, unknown> }, ctx: ProviderContext): Promise<CreatedObject> {
  const { target, disk, diskId } = diskOf(ctx.measured?.(), step.name);
  const runner = await open();
  try {
    const cache = cacheOf(runner);
    if (!(await sameDisk(runner, disk, diskId))) throw new UnsafeOperation(`${runner.target}: guest disk ${disk} no longer carries ${diskId}; nothing is changed`, { operation: 'guest.writeCache', target: `guest disk ${disk}` });
    const before = await cache(disk);
    if (wanted.writeCache === undefined && wanted.flushing === undefined) throw new InvalidArgument('guest.writeCache: the step sets nothing', { name: 'guest.writeCache', value: '' });
    const original = { ...(wanted.writeCache !== undefined ? { writeCache: valueOf(before) } : {}), ...(wanted.flushing !== undefined ? { flushing: flushingOf(before) } : {}) };
    const rec: WriteCacheRecord = { disk, diskId, original };
    // `where`: what the provider's destroy needs to reach the guest again (Hyper-V: the VM's name)
    await ctx.sent({ ...step.where, ...rec });
    ctx.signal.throwIfAborted();
    const got = await setAndCheck(runner, disk, wanted);
    ctx.log(`set the write cache policy of guest disk ${disk}: write cache ${valueOf(got)} (was ${valueOf(before)}), flushing ${flushingOf(got)} (was ${flushingOf(before)})`, { guestDisk: disk });
    const facts = { guestWriteCache: valueOf(got), guestWriteCacheBefore: valueOf(before), guestWriteCacheFlushing: flushingOf(got), guestWriteCacheFlushingBefore: flushingOf(before) };
    ctx.measure?.({ ...target, facts: { ...target.facts, ...facts } });
    return { kind: 'guest-write-cache', name: step.name, provider: step.provider, id: `guest disk ${disk}`, data: { ...step.where, ...rec } };
  } finally {
    await runner.close().catch(() => undefined);
  }
}

function recorded(obj: { name: string; data: Record<string, unknown> }): WriteCacheRecord {
  const d = obj.data;
  const o = (d.original ?? {}) as { writeCache?: unknown; flushing?: unknown };
  const okCache = o.writeCache === undefined || (WRITE_CACHE_VALUES as readonly unknown[]).includes(o.writeCache);
  const okFlushing = o.flushing === undefined || (FLUSHING_VALUES as readonly unknown[]).includes(o.flushing);
  if (typeof d.disk !== 'number' || typeof d.diskId !== 'string' || !okCache || !okFlushing || (o.writeCache === undefined && o.flushing === undefined)) {
    throw new InvalidArgument(`the ledger records no guest disk and original write cache policy for ${obj.name}; refusing to guess them`, { name: 'guest-write-cache', value: obj.name });
  }
  const original = { ...(o.writeCache !== undefined ? { writeCache: o.writeCache as WriteCacheValue } : {}), ...(o.flushing !== undefined ? { flushing: o.flushing as FlushingValue } : {}) };
  return { disk: d.disk, diskId: d.diskId, original };
}

/**
 * Teardown: the recorded original written back and read back, while guest disk `disk` still
 * carries the recorded identity; a disk gone from the guest is 'absent'.
 */
export async function restoreWriteCache(open: () => Promise<WindowsGuestRunner>, obj: { name: string; data: Record<string, unknown> }, ctx: ProviderContext): Promise<'removed' | 'absent'> {
  const rec = recorded(obj);
  const runner = await open();
  try {
    cacheOf(runner);
    if (!(await sameDisk(runner, rec.disk, rec.diskId))) {
      ctx.log(`guest disk ${rec.disk} no longer carries ${rec.diskId}: the disk is gone; its write cache is not set back`);
      return 'absent';
    }
    const { writeCache, flushing } = rec.original;
    ctx.log(`restoring the write cache policy of guest disk ${rec.disk}: ${[writeCache && `write cache ${writeCache}`, flushing && `flushing ${flushing}`].filter(Boolean).join(', ')}`);
    try {
      await setAndCheck(runner, rec.disk, rec.original);
    } catch (err) {
      // a device that refuses every change (the apply's set failed too) still shows the original;
      // the refused set has stored the original as the user value again (disk.c), so only the
      // flushing setting is left to put back
      if (!(err instanceof UnsafeOperation) || writeCache === undefined || valueOf(await cacheOf(runner)(rec.disk)) !== writeCache) throw err;
      ctx.log(`guest disk ${rec.disk} refuses a write cache change and still shows ${writeCache}`);
      if (flushing !== undefined) await setAndCheck(runner, rec.disk, { flushing });
    }
    return 'removed';
  } finally {
    await runner.close().catch(() => undefined);
  }
}

/** Provider.verify: the policy read from the device again; a value changed since is a mismatch. */
export async function verifyWriteCache(open: () => Promise<WindowsGuestRunner>, wanted: WriteCacheWanted, created: { name: string; data: Record<string, unknown> }): Promise<void> {
  const rec = recorded(created);
  const runner = await open();
  try {
    const cache = cacheOf(runner);
    if (!(await sameDisk(runner, rec.disk, rec.diskId))) throw new ProvisionedStateMismatch(`guest.writeCache ${created.name}: guest disk ${rec.disk} no longer carries ${rec.diskId}`, { axis: 'guest.writeCache', asked: rec.diskId, got: 'gone', object: `guest disk ${rec.disk}` });
    const got = await cache(rec.disk);
    if (wanted.writeCache !== undefined && valueOf(got) !== wanted.writeCache) throw new ProvisionedStateMismatch(`guest.writeCache of guest disk ${rec.disk} is ${valueOf(got)}, not ${wanted.writeCache}`, { axis: 'guest.writeCache', asked: wanted.writeCache, got: valueOf(got), object: `guest disk ${rec.disk}` });
    if (wanted.flushing !== undefined && flushingOf(got) !== wanted.flushing) throw new ProvisionedStateMismatch(`guest.writeCacheFlushing of guest disk ${rec.disk} is ${flushingOf(got)}, not ${wanted.flushing}`, { axis: 'guest.writeCacheFlushing', asked: wanted.flushing, got: flushingOf(got), object: `guest disk ${rec.disk}` });
  } finally {
    await runner.close().catch(() => undefined);
  }
}

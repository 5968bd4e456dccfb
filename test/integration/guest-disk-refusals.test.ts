// What the Linux guest-disk step refuses before it writes anything (issue 14 item 1: "refuse to run
// if the identified disk is the guest's system disk or carries partitions we did not create"),
// checked on real block devices: loop devices on this machine (the guest, as in the lab), found
// through a wwn-0x link in a by-id directory of the test's own, by the same findGuestDisk the
// vSphere and ESXi-shell guest-disk steps call (src/providers/guest-disk.ts), with real lsblk,
// blkid, mount and device-mapper. Every refused disk is read back: not one byte changed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestDiskNotFound, UnsafeOperation } from '../../src/errors.ts';
import { findGuestDisk, type GuestDiskSettings } from '../../src/providers/guest-disk.ts';
import { createLocalRunner } from '../../src/ssh/local-runner.ts';

const MiB = 1024 * 1024;
let dir: string;
let settings: GuestDiskSettings;
const loops: string[] = [];
const mounts: string[] = [];
const maps: string[] = [];
const runner = createLocalRunner(process.env);

/** a loop device over a new sparse file of `size` bytes, linked as <byIdDir>/wwn-0x<wwn> */
function disk(name: string, wwn: string, size: number): { image: string; dev: string } {
  const image = path.join(dir, `${name}.img`);
  fs.writeFileSync(image, '');
  fs.truncateSync(image, size);
  const dev = execFileSync('losetup', ['-f', '--show', image], { encoding: 'utf8' }).trim();
  loops.push(dev);
  fs.symlinkSync(dev, path.join(settings.byIdDir, `wwn-0x${wwn}`));
  return { image, dev };
}

const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const identity = (wwn: string, sizeBytes: number) => ({ wwn, sizeBytes, source: `the test disk ${wwn}` });

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-gd-refuse-'));
  settings = { byIdDir: path.join(dir, 'by-id'), sudo: false };
  fs.mkdirSync(settings.byIdDir);
});

afterAll(async () => {
  for (const m of mounts) execFileSync('umount', [m]);
  for (const m of maps) execFileSync('dmsetup', ['remove', m]);
  for (const l of loops) execFileSync('losetup', ['-d', l]);
  await runner.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('findGuestDisk on real block devices', () => {
  it('finds a blank disk of the provisioned size by its WWN: the device the link leads to', async () => {
    const wwn = '6000c2900000000000000000000000a1';
    const { dev } = disk('blank', wwn, 64 * MiB);
    const found = await findGuestDisk(runner, identity(wwn, 64 * MiB), settings, { waitMs: 2000 });
    expect(found).toEqual({ wwn, byId: path.join(settings.byIdDir, `wwn-0x${wwn}`), device: dev, sizeBytes: 64 * MiB });
  });

  it('refuses a disk that is mounted (what the guest system disk is), naming the mount', async () => {
    const wwn = '6000c2900000000000000000000000a2';
    const { image, dev } = disk('mounted', wwn, 64 * MiB);
    execFileSync('mkfs.ext4', ['-q', '-F', dev]);
    const mnt = path.join(dir, 'mnt');
    fs.mkdirSync(mnt);
    execFileSync('mount', [dev, mnt]);
    mounts.push(mnt);
    const err = await findGuestDisk(runner, identity(wwn, 64 * MiB), settings, { waitMs: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeOperation);
    expect((err as Error).message).toContain(`is ${dev}, which is in use: ${path.basename(dev)} mounted at ${mnt} (the guest's system disk, or a disk someone uses); refusing to measure it (nothing was written)`);
    execFileSync('umount', [mnt]);
    mounts.pop();
    // unmounted, it still carries someone's filesystem: refused for that
    const before = digest(image);
    const again = await findGuestDisk(runner, identity(wwn, 64 * MiB), settings, { waitMs: 2000 }).catch((e: unknown) => e);
    expect((again as Error).message).toMatch(/which carries a ext4 signature we did not create; refusing to measure it \(nothing was written\)/);
    expect(digest(image)).toBe(before);
  });

  it('refuses a disk that carries a partition table, read or not yet read by the kernel', async () => {
    const wwn = '6000c2900000000000000000000000a3';
    const { image, dev } = disk('parted', wwn, 64 * MiB);
    execFileSync('sfdisk', ['-q', dev], { input: 'label: gpt\n,,L\n', stdio: ['pipe', 'pipe', 'pipe'] });
    execFileSync('partx', ['-u', dev]);
    const before = digest(image);
    const err = await findGuestDisk(runner, identity(wwn, 64 * MiB), settings, { waitMs: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeOperation);
    expect((err as Error).message).toMatch(new RegExp(`which carries (partitions we did not create \\(${path.basename(dev)}p1\\)|a gpt partition table we did not create)`));
    expect(digest(image)).toBe(before);
  });

  it('refuses a disk of another size than the one attached: it is not that disk', async () => {
    const wwn = '6000c2900000000000000000000000a4';
    const { image } = disk('size', wwn, 32 * MiB);
    const before = digest(image);
    await expect(findGuestDisk(runner, identity(wwn, 64 * MiB), settings, { waitMs: 2000 })).rejects.toThrow(/has 33554432 bytes, not the 67108864 provisioned: it is not the disk attached/);
    expect(digest(image)).toBe(before);
  });

  it('refuses a disk another device holds (device-mapper, as LVM does)', async (ctx) => {
    const wwn = '6000c2900000000000000000000000a5';
    const { image, dev } = disk('held', wwn, 64 * MiB);
    const name = `ss-gd-held-${process.pid}`;
    try {
      execFileSync('dmsetup', ['create', name, '--table', `0 ${(64 * MiB) / 512} linear ${dev} 0`], { stdio: 'pipe' });
    } catch (e) {
      // no device-mapper in this kernel or container (as on the CI machine of 2026-12: /dev/mapper/control
      // "No such device"): nothing here can hold the disk, and the refusal is not exercised
      return ctx.skip(`dmsetup create failed: ${String((e as { stderr?: Buffer }).stderr ?? e)}`);
    }
    maps.push(name);
    const before = digest(image);
    await expect(findGuestDisk(runner, identity(wwn, 64 * MiB), settings, { waitMs: 2000 })).rejects.toThrow(/which is held by dm-\d+ \(LVM, md or device-mapper\)/);
    expect(digest(image)).toBe(before);
  });

  it('a WWN no disk answers to: waits, then names disk.EnableUUID and byIdDir', async () => {
    const logged: string[] = [];
    const t0 = Date.now();
    const err = await findGuestDisk(runner, identity('6000c2900000000000000000000000ff', 64 * MiB), settings, { waitMs: 1500, pollMs: 200, log: (m) => logged.push(m) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GuestDiskNotFound);
    expect((err as Error).message).toMatch(/did not appear in the guest within 2 s; nothing is measured\. Is disk\.EnableUUID = TRUE on the VM .* and is guest\.byIdDir \(.*\/by-id\) where the guest lists disks\?/);
    // it said it waits, and gave up no earlier than its deadline: a lower bound on the clock the
    // deadline itself is read from (Date.now), which a loaded machine only lengthens
    expect(logged).toEqual([`waiting for ${path.join(settings.byIdDir, 'wwn-0x6000c2900000000000000000000000ff')} to appear in the guest`]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
  });

  it('a link that leads to something other than a block device is refused', async () => {
    const wwn = '6000c2900000000000000000000000a6';
    const file = path.join(dir, 'regular-file');
    fs.writeFileSync(file, 'not a disk');
    fs.symlinkSync(file, path.join(settings.byIdDir, `wwn-0x${wwn}`));
    await expect(findGuestDisk(runner, identity(wwn, 64 * MiB), settings, { waitMs: 2000 })).rejects.toThrow(/which is not a block device; nothing is measured/);
    expect(fs.readFileSync(file, 'utf8')).toBe('not a disk');
  });
});

// The disk under test, found in the Linux guest by its identity. A provider that attaches a disk
// knows what the guest will call it: a VMDK's backing uuid (`6000C29a-…`, with the VM's
// disk.EnableUUID = TRUE) or a physical RDM's LUN id (`naa.6000…`) is the WWN the guest's udev
// names it by, `/dev/disk/by-id/wwn-0x<32 hex>` (real-product-rules.md §3.4: with disk.EnableUUID
// the disk answers VPD 0x80/0x83 with `6000c29…`, elatov/elatov.github.io 2012-03-26 post citing
// VMware KB 1029157; udev's `wwn-$ID_WWN_WITH_EXTENSION`, systemd rules.d/60-persistent-storage.rules;
// the uuid-without-dashes mapping as deckhouse/deckhouse ee/candi/cloud-providers/vsphere/
// terraform-modules/master-node/outputs.tf uses it). After a hot-add the SCSI hosts are rescanned
// (`echo "- - -" > /sys/class/scsi_host/hostN/scan`, real-product-rules.md §3.4), the link is
// waited for, resolved, and the device checked before anything is written: its size must be the
// provisioned size, and a disk that is mounted (the system disk), held by another device
// (LVM, md), or carries a partition table or filesystem we did not create is refused.
//
// Raw devices need root: the guest login is root, or `guest.sudo: true` and every command that
// touches a device goes through `sudo -n` (never a password prompt) — or, for a raw disk, a login
// that may read and write that device node itself (the node's owner, or a member of its group:
// udev gives disks to root:disk 0660), checked once the node is known. Making a filesystem always
// needs root.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { GuestDiskNotFound, InvalidArgument, UnsafeOperation, type DiskIdentityMismatch } from '../errors.ts';
import { intIn } from '../input/fields.ts';
import type { CreatedObject, MeasuredTarget, ProviderContext, ProviderName } from '../contract/provider.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { shJoin, shQuote } from '../ssh/quote.ts';
import { runChecked } from '../ssh/run-checked.ts';

/** How long a guest may take to show an attached disk, by default and at most (seconds). */
export const DEFAULT_DISK_WAIT_SEC = 300;
export const MAX_DISK_WAIT_SEC = 3600;

/** Where the guest's udev publishes disks by identity; the lab's guest has its own (no udev there). */
export const DEFAULT_BY_ID_DIR = '/dev/disk/by-id';

/** The guest fields a provider that attaches disks reads (inventory `guest:`). */
export const guestDiskFields = {
  byIdDir: z
    .string()
    .regex(/^\/[A-Za-z0-9._/-]*$/, { error: 'an absolute path of letters, digits, ".", "_", "-" and "/"' })
    .default(DEFAULT_BY_ID_DIR)
    .describe('Directory where the guest lists disks by WWN (wwn-0x…); /dev/disk/by-id on a real guest (udev). The embedded lab sets its own'),
  sudo: z.boolean().default(false).describe('The guest login is not root: run the commands that touch the disk (rescan, lsblk, blkid, fio on the device) through `sudo -n` (needs NOPASSWD for that user)'),
  diskWaitSec: intIn(1, MAX_DISK_WAIT_SEC, 'whole seconds', 'an hour at most').default(DEFAULT_DISK_WAIT_SEC).describe('How long to wait for an attached disk to appear in the guest as wwn-0x<id> before the permutation fails, naming the identities a disk of that size shows up under instead (default 300)'),
};

export interface GuestDiskSettings {
  byIdDir: string;
  sudo: boolean;
  /** seconds to wait for the disk's link (default DEFAULT_DISK_WAIT_SEC) */
  diskWaitSec?: number;
}

/** What a provider knows of a disk it attached: what the guest will call it, and its size. */
export interface AttachedDiskIdentity {
  /** lower-case hex of the WWN the guest sees (`wwn-0x<wwn>`) */
  wwn: string;
  sizeBytes: number;
  /** the VMDK file or LUN, for messages */
  source: string;
}

/** The disk as found in the guest, checked. */
export interface FoundGuestDisk {
  wwn: string;
  /** `<byIdDir>/wwn-0x<wwn>` */
  byId: string;
  /** the resolved device node, e.g. /dev/sdb */
  device: string;
  sizeBytes: number;
}

/**
 * A VMDK backing's uuid (`6000C29a-bcde-f012-3456-789abcdef012`, the API's form) as the WWN hex the
 * guest sees with disk.EnableUUID; null when it is not 32 hex digits.
 */
export function wwnOfDiskUuid(uuid: unknown): string | null {
  if (typeof uuid !== 'string') return null;
  const hex = uuid.replace(/[-\s]/g, '').toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) ? hex : null;
}

/** A LUN's canonical name as the WWN a physical RDM passes to the guest: only NAA ids are WWNs. */
export function wwnOfLun(canonicalName: string): string | null {
  const m = /^naa\.([0-9a-f]{16}|[0-9a-f]{32})$/i.exec(canonicalName);
  return m ? m[1]!.toLowerCase() : null;
}

export function byIdLink(byIdDir: string, wwn: string): string {
  return path.posix.join(byIdDir, `wwn-0x${wwn}`);
}

/** `lsblk -P` output: one line of KEY="value" pairs per device (values escaped as \xNN). */
export function parseLsblkPairs(text: string): Array<Record<string, string>> {
  const rows: Array<Record<string, string>> = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const row: Record<string, string> = {};
    for (const m of line.matchAll(/([A-Z:_-]+)="((?:[^"\\]|\\.)*)"/g)) {
      row[m[1]!] = m[2]!.replace(/\\x([0-9a-fA-F]{2})/g, (_s, h: string) => String.fromCharCode(parseInt(h, 16)));
    }
    rows.push(row);
  }
  return rows;
}

/** `blkid -p -o export` output: KEY=value lines. */
export function parseBlkidExport(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

/** A command line run as root: as is for a root login, through `sudo -n` with guest.sudo. */
export type AsRoot = (argv: string[]) => string;

/**
 * How commands reach root in the guest: the login is root, or `sudo -n` works. Refuses, naming the
 * fix, when neither (raw device access needs root) or when sudo wants a password.
 */
export async function rootAccess(runner: CommandRunner, s: GuestDiskSettings): Promise<AsRoot> {
  const uid = (await runChecked(runner, 'id -u', { what: 'id -u' })).stdout.trim();
  if (uid === '0') return (argv) => shJoin(argv);
  if (!s.sudo) {
    throw new UnsafeOperation(`${runner.target}: the guest login is not root (uid ${uid}), and finding and measuring the attached disk needs raw device access; log in as root, or set the target's guest.sudo: true and give that user passwordless sudo (NOPASSWD)`, { operation: 'guest disk', target: runner.target });
  }
  const r = await runner.run('sudo -n true');
  if (r.exitCode !== 0) {
    const said = r.stderr.trim().split('\n').pop() ?? '';
    const why = /password is required/i.test(said) ? 'sudo asks for a password ("sudo: a password is required")' : `sudo -n true failed (exit ${r.exitCode}${said ? `: ${said}` : ''})`;
    throw new UnsafeOperation(`${runner.target}: guest.sudo is set but ${why}; storsweep never types a password: give that user NOPASSWD sudo (a line in /etc/sudoers.d), or log in as root`, { operation: 'guest disk', target: runner.target });
  }
  return (argv) => shJoin(['sudo', '-n', ...argv]);
}

/** Every SCSI host rescanned for new targets (channel, target, LUN wildcards). */
export const RESCAN_SCRIPT = 'for f in /sys/class/scsi_host/host*/scan; do [ -w "$f" ] && echo "- - -" > "$f"; done; true';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      },
      { once: true },
    );
  });

export interface FindOptions {
  signal?: AbortSignal;
  log?: (message: string) => void;
  /** most time to wait for the link (default 300 s; the step's own deadline usually ends it first) */
  waitMs?: number;
  pollMs?: number;
}

/** A by-id link of the guest, the device it leads to and that device's size in bytes. */
export interface SeenDisk {
  name: string;
  device: string;
  sizeBytes: number;
}

/**
 * Every whole-disk link in the guest's by-id directory (not the `-partN` ones), with its device and
 * size (`lsblk -b -d`, read from sysfs: no root needed). Names that are not plain are left out.
 */
export async function listByIdDisks(runner: CommandRunner, byIdDir: string): Promise<SeenDisk[]> {
  // one line: shQuote refuses a newline in any argument
  const script = [
    `cd -- ${shQuote(byIdDir, 'guest.byIdDir')} 2>/dev/null || exit 0`,
    'for l in *; do [ -L "$l" ] || continue',
    'case "$l" in *-part[0-9]*) continue ;; esac',
    'd=$(readlink -f -- "$l") && [ -b "$d" ] || continue',
    `printf '%s %s %s\\n' "$l" "$d" "$(lsblk -b -d -n -o SIZE -- "$d" 2>/dev/null | tr -d ' ')"`,
    'done',
  ].join('; ');
  const r = await runner.run(shJoin(['sh', '-c', script]));
  const out: SeenDisk[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^([A-Za-z0-9._:+-]{1,128}) (\/dev\/[A-Za-z0-9._/-]{1,64}) (\d{1,20})$/.exec(line.trim());
    if (m) out.push({ name: m[1]!, device: m[2]!, sizeBytes: Number(m[3]) });
  }
  return out;
}

/** The mismatch as fields: the by-id names are the plain ones listByIdDisks kept. */
function identityMismatch(disk: AttachedDiskIdentity, seen: readonly SeenDisk[]): DiskIdentityMismatch {
  const wwnOf = (name: string) => /^wwn-0x([0-9a-f]+)$/i.exec(name)?.[1]?.toLowerCase();
  return {
    object: disk.source,
    sizeBytes: disk.sizeBytes,
    expected: { wwn: disk.wwn, name: `wwn-0x${disk.wwn}` },
    seen: seen.map((d) => {
      const wwn = wwnOf(d.name);
      return { name: d.name, ...(wwn ? { wwn } : {}), device: d.device };
    }),
  };
}

/**
 * The disk did not appear under the identity the provider expects: the error names that identity
 * and the ones a disk of the provisioned size shows up under instead (a host whose uuid → WWN
 * mapping is another one than assumed: real-product-rules.md §3.4 marks it unverified).
 */
async function notFound(runner: CommandRunner, disk: AttachedDiskIdentity, s: GuestDiskSettings, where: string, waitMs: number): Promise<GuestDiskNotFound> {
  const seen = (await listByIdDisks(runner, s.byIdDir).catch(() => [])).filter((d) => d.sizeBytes === disk.sizeBytes);
  const saw = seen.length
    ? `the guest shows a disk of that size (${disk.sizeBytes} bytes) as ${seen.slice(0, 5).map((d) => `${d.name} (${d.device})`).join(', ')}: is the host's uuid → WWN mapping another one than storsweep assumes?`
    : `the guest shows no disk of that size (${disk.sizeBytes} bytes) under ${s.byIdDir}.`;
  return new GuestDiskNotFound(
    `${where} did not appear in the guest within ${Math.round(waitMs / 1000)} s; nothing is measured. Is disk.EnableUUID = TRUE on the VM (without it a virtual disk reports no WWN), and is guest.byIdDir (${s.byIdDir}) where the guest lists disks? Expected wwn-0x${disk.wwn}; ${saw}`,
    { host: runner.target, wwn: disk.wwn, byIdDir: s.byIdDir, seen: seen.map((d) => d.name), identity: identityMismatch(disk, seen) },
  );
}

/**
 * Finds the attached disk in the guest by its WWN and checks it is the blank disk we attached:
 * exactly the provisioned size, not mounted (nor any of its partitions or holders: the system
 * disk), no partition table, no filesystem or other signature. Throws GuestDiskNotFound or
 * UnsafeOperation; writes nothing.
 */
export async function findGuestDisk(runner: CommandRunner, disk: AttachedDiskIdentity, s: GuestDiskSettings, o: FindOptions = {}): Promise<FoundGuestDisk> {
  // Root, or sudo; else a login that may read and write the disk itself (a member of the group
  // owning the device node, `disk` under udev's rules): checked once the device is known.
  const uid = (await runChecked(runner, 'id -u', { what: 'id -u' })).stdout.trim();
  const privileged = uid === '0' || s.sudo;
  const asRoot: AsRoot = privileged ? await rootAccess(runner, s) : (argv) => shJoin(argv);
  const link = byIdLink(s.byIdDir, disk.wwn);
  const where = `${runner.target}: the disk attached as ${disk.source} (${link})`;
  await runner.run(asRoot(['sh', '-c', RESCAN_SCRIPT]));
  const waitMs = o.waitMs ?? (s.diskWaitSec ?? DEFAULT_DISK_WAIT_SEC) * 1000;
  const deadline = Date.now() + waitMs;
  for (let first = true; ; first = false) {
    o.signal?.throwIfAborted();
    const r = await runner.run(shJoin(['test', '-e', link]));
    if (r.exitCode === 0) break;
    if (first) o.log?.(`waiting for ${link} to appear in the guest`);
    if (Date.now() >= deadline) throw await notFound(runner, disk, s, where, waitMs);
    await sleep(o.pollMs ?? 1000, o.signal);
  }
  const device = (await runChecked(runner, shJoin(['readlink', '-f', '--', link]), { what: 'readlink' })).stdout.trim();
  if (!device.startsWith('/dev/') || (await runner.run(shJoin(['test', '-b', device]))).exitCode !== 0) {
    throw new UnsafeOperation(`${where} leads to ${JSON.stringify(device)}, which is not a block device; nothing is measured`, { operation: 'guest disk', target: link });
  }
  if (!privileged && (await runner.run(`${shJoin(['test', '-r', device])} && ${shJoin(['test', '-w', device])}`)).exitCode !== 0) {
    throw new UnsafeOperation(`${runner.target}: the guest login is not root (uid ${uid}) and cannot read and write ${device}, and finding and measuring the attached disk needs raw device access; log in as root, or set the target's guest.sudo: true and give that user passwordless sudo (NOPASSWD)`, { operation: 'guest disk', target: runner.target });
  }
  const refuse = (why: string): never => {
    throw new UnsafeOperation(`${where} is ${device}, which ${why}; refusing to measure it (nothing was written)`, { operation: 'guest disk', target: device });
  };
  const tree = parseLsblkPairs((await runChecked(runner, asRoot(['lsblk', '-b', '-P', '-o', 'NAME,TYPE,SIZE,MOUNTPOINT', '--', device]), { what: 'lsblk' })).stdout);
  const self = tree[0];
  if (!self) refuse('lsblk does not list');
  const size = Number(self!.SIZE);
  if (size !== disk.sizeBytes) refuse(`has ${size} bytes, not the ${disk.sizeBytes} provisioned: it is not the disk attached`);
  const mounted = tree.filter((r) => r.MOUNTPOINT);
  if (mounted.length) refuse(`is in use: ${mounted.map((r) => `${r.NAME} mounted at ${r.MOUNTPOINT}`).join(', ')} (the guest's system disk, or a disk someone uses)`);
  const parts = tree.slice(1).filter((r) => r.TYPE === 'part');
  if (parts.length) refuse(`carries partitions we did not create (${parts.map((r) => r.NAME).join(', ')})`);
  const name = path.posix.basename(device);
  const holders = (await runner.run(shJoin(['ls', '-A', '--', `/sys/class/block/${name}/holders`]))).stdout.trim();
  if (holders) refuse(`is held by ${holders.split(/\s+/).join(', ')} (LVM, md or device-mapper)`);
  // a partition table or filesystem the kernel has not read (or an unpartitioned LVM PV): probe it
  const probe = await runner.run(asRoot(['blkid', '-p', '-o', 'export', '--', device]));
  if (probe.exitCode === 0) {
    const sig = parseBlkidExport(probe.stdout);
    refuse(`carries ${sig.PTTYPE ? `a ${sig.PTTYPE} partition table` : `a ${sig.TYPE ?? 'recognised'} signature`} we did not create`);
  }
  if (probe.exitCode !== 2) refuse(`could not be probed (blkid -p exit ${probe.exitCode}: ${probe.stderr.trim().split('\n').pop() ?? ''})`);
  return { wwn: disk.wwn, byId: link, device, sizeBytes: size };
}

/**
 * What the workload measures on a disk found in a Linux guest (ProviderContext.measure): the
 * device itself (`raw`), or the test file on the filesystem made on it. Every record names the
 * device, its WWN, the filesystem and the path fio was given.
 */
export function linuxMeasuredTarget(found: FoundGuestDisk, filesystem: 'raw' | Exclude<LinuxGuestFilesystem, 'raw'>, testFile?: string): MeasuredTarget {
  const p = filesystem === 'raw' ? found.device : testFile;
  if (!p) throw new UnsafeOperation(`${found.byId}: guest.filesystem ${filesystem} names no test file; nothing is measured`, { operation: 'guest disk', target: found.device });
  return { path: p, device: found.device, identity: `wwn-0x${found.wwn}`, filesystem, facts: { device: found.device, deviceWwn: found.wwn, filesystem, testPath: p } };
}

// ---------------------------------------------------------------- a filesystem on the disk (guest.filesystem)

/** What a Linux guest's disk is measured as: raw, or a test file on a filesystem we make on it. */
/** the filesystems a Linux guest's disk is made into (guest.filesystem other than raw) */
export const LINUX_FILESYSTEMS_MADE = ['ext4', 'xfs'] as const;
export const LINUX_GUEST_FILESYSTEMS = ['raw', ...LINUX_FILESYSTEMS_MADE] as const;
export type LinuxGuestFilesystem = (typeof LINUX_GUEST_FILESYSTEMS)[number];
export const isLinuxGuestFilesystem = (f: unknown): f is LinuxGuestFilesystem => (LINUX_GUEST_FILESYSTEMS as readonly unknown[]).includes(f);

/** The test file on the filesystem we made: the profile's fileSize of it is written and measured. */
export const FS_TEST_FILE = 'storsweep-test.dat';

/** mkfs per filesystem, quiet and forced (the disk was checked blank; -F/-f only skips the prompt), and its package. */
const MKFS: Record<Exclude<LinuxGuestFilesystem, 'raw'>, { argv: string[]; tool: string; pkg: string }> = {
  ext4: { argv: ['mkfs.ext4', '-q', '-F'], tool: 'mkfs.ext4', pkg: 'e2fsprogs' },
  xfs: { argv: ['mkfs.xfs', '-q', '-f'], tool: 'mkfs.xfs', pkg: 'xfsprogs' },
};

/**
 * The partition table we write: GPT with a disk GUID chosen by us (recorded before it is written,
 * so teardown can prove the table ours by its PTUUID) and one Linux partition over the disk,
 * aligned by sfdisk (1 MiB). sfdisk's script format: util-linux sfdisk(8), "INPUT FORMATS".
 */
export function sfdiskScript(labelId: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(labelId)) throw new UnsafeOperation(`not a GUID: ${JSON.stringify(labelId)}`, { operation: 'sfdisk', target: labelId });
  return `label: gpt\nlabel-id: ${labelId.toUpperCase()}\n,,L\n`;
}

/** What a guest-filesystem step records (ctx.sent) and teardown proves ownership with. */
export interface GuestFilesystemRecord {
  wwn: string;
  byId: string;
  /** the disk's node when it was found (informational: nodes change; byId and ptuuid decide) */
  device: string;
  filesystem: Exclude<LinuxGuestFilesystem, 'raw'>;
  mountpoint: string;
  /** the GPT disk GUID we wrote, lower case */
  ptuuid: string;
  /** the partition's node, once it exists */
  partition?: string;
}

/**
 * Partitions the disk found (blank, checked by findGuestDisk), makes the filesystem and mounts it
 * at `mountpoint`. `sent` is called with the record before the first write (sfdisk) and again as
 * it learns more. Returns the record and the test file's path.
 */
export async function makeGuestFilesystem(
  runner: CommandRunner,
  found: FoundGuestDisk,
  s: GuestDiskSettings,
  o: { filesystem: Exclude<LinuxGuestFilesystem, 'raw'>; mountpoint: string; labelId: string; sent: (r: GuestFilesystemRecord) => void | Promise<void>; signal?: AbortSignal },
): Promise<{ record: GuestFilesystemRecord; testFile: string }> {
  const asRoot = await rootAccess(runner, s);
  const mk = MKFS[o.filesystem];
  // said before anything is written: a guest without the tools gets nothing partitioned
  for (const [tool, pkg] of [['sfdisk', 'fdisk (util-linux on older releases)'], [mk.tool, mk.pkg]] as const) {
    if ((await runner.run(asRoot(['sh', '-c', `command -v ${tool}`]))).exitCode !== 0) {
      throw new GuestDiskNotFound(`${runner.target}: ${tool} is not installed in the guest (package ${pkg}); guest.filesystem ${o.filesystem} cannot be made, nothing was written`, { host: runner.target, wwn: found.wwn, byIdDir: path.posix.dirname(found.byId) });
    }
  }
  const record: GuestFilesystemRecord = { wwn: found.wwn, byId: found.byId, device: found.device, filesystem: o.filesystem, mountpoint: o.mountpoint, ptuuid: o.labelId.toLowerCase() };
  await o.sent(record);
  await runChecked(runner, asRoot(['sfdisk', '-q', '--', found.device]), { what: 'sfdisk', stdin: sfdiskScript(o.labelId) });
  // the kernel's view of the new table (a no-op where sfdisk's re-read already did it)
  await runner.run(asRoot(['partx', '-u', '--', found.device]));
  let partition: string | undefined;
  for (let i = 0; i < 20 && !partition; i++) {
    o.signal?.throwIfAborted();
    const tree = parseLsblkPairs((await runChecked(runner, asRoot(['lsblk', '-b', '-P', '-o', 'NAME,TYPE', '--', found.device]), { what: 'lsblk' })).stdout);
    const parts = tree.filter((r) => r.TYPE === 'part');
    const node = parts.length === 1 ? `/dev/${parts[0]!.NAME}` : undefined;
    if (node && (await runner.run(shJoin(['test', '-b', node]))).exitCode === 0) partition = node;
    else await sleep(250, o.signal);
  }
  if (!partition) throw new GuestDiskNotFound(`${runner.target}: the partition sfdisk wrote on ${found.device} did not appear in the guest`, { host: runner.target, wwn: found.wwn, byIdDir: path.posix.dirname(found.byId) });
  record.partition = partition;
  await o.sent(record);
  await runChecked(runner, asRoot([...mk.argv, '--', partition]), { what: mk.tool });
  await runChecked(runner, asRoot(['mkdir', '-p', '--', o.mountpoint]), { what: 'mkdir' });
  await runChecked(runner, asRoot(['mount', '--', partition, o.mountpoint]), { what: 'mount' });
  return { record, testFile: path.posix.join(o.mountpoint, FS_TEST_FILE) };
}

/**
 * Undoes makeGuestFilesystem from its record only: unmounts the mount point if what is mounted
 * there is a partition of the disk carrying our PTUUID, then wipes the partition's and the disk's
 * signatures (our GPT) — only when the disk behind the recorded WWN still carries the GPT GUID we
 * wrote. 'absent' when the disk is gone or carries another table (left alone, said in `note`).
 */
export async function removeGuestFilesystem(runner: CommandRunner, r: GuestFilesystemRecord, s: GuestDiskSettings, note: (m: string) => void): Promise<'removed' | 'absent'> {
  const asRoot = await rootAccess(runner, s);
  const ptuuidOf = async (dev: string): Promise<string | null> => {
    const p = await runner.run(asRoot(['blkid', '-p', '-o', 'value', '-s', 'PTUUID', '--', dev]));
    return p.exitCode === 0 ? p.stdout.trim().toLowerCase() || null : null;
  };
  const linkThere = (await runner.run(shJoin(['test', '-e', r.byId]))).exitCode === 0;
  const device = linkThere ? (await runChecked(runner, shJoin(['readlink', '-f', '--', r.byId]), { what: 'readlink' })).stdout.trim() : null;
  const ours = device !== null && (await ptuuidOf(device)) === r.ptuuid;
  // what is mounted at our mount point: unmounted only when it is a partition of our disk
  const src = await runner.run(shJoin(['findmnt', '-n', '-o', 'SOURCE', '--mountpoint', r.mountpoint]));
  const mounted = src.exitCode === 0 ? src.stdout.trim() : '';
  if (mounted) {
    const parent = (await runner.run(shJoin(['lsblk', '-n', '-o', 'PKNAME', '--', mounted]))).stdout.trim();
    if (!ours || !device || `/dev/${parent}` !== device) {
      throw new UnsafeOperation(`${runner.target}: ${r.mountpoint} has ${mounted} mounted, which is not a partition of the disk this run formatted (${r.byId}, GPT ${r.ptuuid}); left mounted`, { operation: 'umount', target: r.mountpoint });
    }
    await runChecked(runner, asRoot(['umount', '--', r.mountpoint]), { what: 'umount' });
  }
  let removed = false;
  if (!device) note(`${r.byId} is gone from the guest: the disk was detached, its partition table with it`);
  else if (!ours) note(`${device} (${r.byId}) no longer carries the GPT ${r.ptuuid} this run wrote; left alone`);
  else {
    const tree = parseLsblkPairs((await runChecked(runner, asRoot(['lsblk', '-b', '-P', '-o', 'NAME,TYPE', '--', device]), { what: 'lsblk' })).stdout);
    for (const p of tree.filter((x) => x.TYPE === 'part')) await runChecked(runner, asRoot(['wipefs', '-a', '-q', '--', `/dev/${p.NAME}`]), { what: 'wipefs' });
    await runChecked(runner, asRoot(['wipefs', '-a', '-q', '--', device]), { what: 'wipefs' });
    // the kernel forgets the partition (already done where wipefs's re-read worked)
    await runner.run(asRoot(['partx', '-d', '--', device]));
    removed = true;
  }
  // the mount point is ours (owned name); removed only when empty
  await runner.run(asRoot(['rmdir', '--', r.mountpoint]));
  return removed || mounted ? 'removed' : 'absent';
}

// ---------------------------------------------------------------- the guest-disk step, shared by the providers that attach a disk

const isMadeFilesystem = (f: string): f is (typeof LINUX_FILESYSTEMS_MADE)[number] => (LINUX_FILESYSTEMS_MADE as readonly string[]).includes(f);

/** The guest-disk step's operations (plan steps of vsphere and esxi-shell): raw, or a filesystem made on the disk. */
export const GUEST_DISK_OPERATION = 'guest: find disk by WWN';
export const GUEST_FS_OPERATION = 'guest: find disk by WWN, partition, mkfs, mount';

/** The guest a provider reaches to find the disk it attached: its settings and how to log in. */
export interface GuestAccess extends GuestDiskSettings {
  open(): Promise<CommandRunner>;
}

/**
 * The guest-disk step after an attach: the disk found by its identity and checked (findGuestDisk),
 * then, for ext4/xfs, partitioned, formatted and mounted at `mountpoint` (recorded through
 * ctx.sent before the first write). Says what the workload measures (ctx.measure). Returns the
 * guest-filesystem object, or null for raw (nothing is created).
 */
export async function applyGuestDiskStep(
  g: GuestAccess,
  identity: AttachedDiskIdentity,
  step: { provider: ProviderName; filesystem: string; mountpoint?: unknown; name?: string },
  ctx: ProviderContext,
): Promise<CreatedObject | null> {
  const runner = await g.open();
  try {
    const found = await findGuestDisk(runner, identity, g, { signal: ctx.signal, log: (m) => ctx.log(m) });
    ctx.log(`found ${identity.source} in the guest as ${found.device} (${found.byId})`, { device: found.device, wwn: found.wwn });
    if (step.filesystem === 'raw') {
      ctx.measure?.(linuxMeasuredTarget(found, 'raw'));
      return null;
    }
    const filesystem = step.filesystem;
    if (!isMadeFilesystem(filesystem)) throw new InvalidArgument(`guest-disk step: filesystem ${filesystem} is not one the guest makes (${LINUX_GUEST_FILESYSTEMS.join(', ')})`, { name: 'guest.filesystem', value: filesystem });
    if (!step.name) throw new InvalidArgument('guest-disk step: a filesystem step names no object to create', { name: 'creates', value: '' });
    if (typeof step.mountpoint !== 'string' || !step.mountpoint.startsWith('/') || !step.mountpoint.endsWith(`/${step.name}`)) {
      throw new InvalidArgument(`guest-disk step: mount point ${JSON.stringify(step.mountpoint)} is not a directory of the owned name ${step.name}`, { name: 'mountpoint', value: String(step.mountpoint) });
    }
    const { record, testFile } = await makeGuestFilesystem(runner, found, g, { filesystem, mountpoint: step.mountpoint, labelId: randomUUID(), sent: (r) => ctx.sent({ ...r }), signal: ctx.signal });
    ctx.log(`made ${filesystem} on ${String(record.partition)}, mounted at ${record.mountpoint}`, { device: found.device, filesystem });
    ctx.measure?.(linuxMeasuredTarget(found, filesystem, testFile));
    return { kind: 'guest-filesystem', name: step.name, provider: step.provider, id: record.ptuuid, data: { ...record } };
  } finally {
    await runner.close().catch(() => undefined);
  }
}

/**
 * Teardown of a guest filesystem from its recorded data only: the disk by its WWN link, ours only
 * while it carries the GPT GUID we wrote; the mount point of our owned name (removeGuestFilesystem).
 */
export async function destroyGuestFilesystem(g: GuestAccess, obj: { name: string; data: Record<string, unknown> }, ctx: ProviderContext): Promise<'removed' | 'absent'> {
  const d = obj.data;
  for (const k of ['wwn', 'byId', 'device', 'filesystem', 'mountpoint', 'ptuuid'] as const) {
    if (typeof d[k] !== 'string' || d[k] === '') throw new InvalidArgument(`the ledger records no ${k} for guest filesystem ${obj.name}; refusing to guess one`, { name: k, value: '' });
  }
  const mountpoint = d.mountpoint as string;
  if (!mountpoint.endsWith(`/${obj.name}`)) throw new UnsafeOperation(`recorded mount point ${mountpoint} does not carry the owned name ${obj.name}; left alone`, { operation: 'umount', target: mountpoint });
  const rec = { wwn: d.wwn, byId: d.byId, device: d.device, filesystem: d.filesystem, mountpoint, ptuuid: d.ptuuid } as GuestFilesystemRecord;
  const runner = await g.open();
  try {
    ctx.log(`unmounting ${mountpoint} and wiping the partition table this run wrote on ${rec.byId}`);
    return await removeGuestFilesystem(runner, rec, g, (m) => ctx.log(m));
  } finally {
    await runner.close().catch(() => undefined);
  }
}

// Seeds and reads the state of the powershell.exe stand-in: a Hyper-V host with two bench volumes
// of different sizes, a system disk, a blank disk allowed for pass-through, and one running VM.
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

export const WINDOWS_HARNESS_DIR = path.dirname(new URL(import.meta.url).pathname);
export const GUEST_CREDENTIAL = { user: 'bench\\admin', password: "p@ss'; $(x) `y` \"z\"" };

export const LAB_VM = 'bench-vm';
export const LAB_GUEST_USER = 'bench\\admin';
/**
 * Inside the guest (guest_storage.py): disk 0 is the OS disk on SCSI 0:0; a drive added later gets
 * the lowest free number, offline and read-only under the SAN policy OfflineShared (`sanPolicy`).
 * A test that seeds a drive directly seeds its number too. T: is the volume on SCSI 0:1 only when
 * that disk carries a formatted volume (a file model with `formatted: true`, seeded by a test as the
 * user's disk) — a VHDX New-VHD just made has none, as on Windows.
 */
const GUEST_DISKS = { '0': 'SCSI:0:0' };
const GUEST_VOLUMES = { 'T:': 'SCSI:0:1' };

/**
 * The `vm.count` template (hyperv_vms.py): a sysprepped Windows Server guest's system disk, whose
 * answer file set the guest account (`guestCredential`: what a VM booted from a child of it logs in
 * with). Outside the bench volumes, as a template library usually is.
 */
export const LAB_TEMPLATE = 'C:\\Templates\\ws2022-sysprep.vhdx';

export function templateFile(credential: { user: string; password: string }): Record<string, unknown> {
  const GiB = 1024 ** 3;
  return { type: 'Dynamic', size: 127 * GiB, fileSize: 12 * GiB, block: 32 * 1024 ** 2, logical: 512, physical: 4096, diskIdentifier: 'A1B2C3D4-0000-4000-8000-00000000CAFE', guestCredential: credential };
}

export function defaultHypervState(): Record<string, unknown> {
  const GiB = 1024 ** 3;
  return {
    volumes: { 'D:\\bench': { sizeBytes: 100 * GiB, freeBytes: 99 * GiB }, 'E:\\bench': { sizeBytes: 2000 * GiB, freeBytes: 1990 * GiB } },
    files: {},
    disks: [
      { Number: 0, SerialNumber: 'SYS-0001', UniqueId: '6002248000000000000000000000A000', FriendlyName: 'Msft Virtual Disk', Size: 128 * GiB, IsSystem: true, IsBoot: true, IsOffline: false, NumberOfPartitions: 4, PartitionStyle: 'GPT' },
      { Number: 2, SerialNumber: 'S4EWNX0R123456', UniqueId: '6002248000000000000000000000A002', FriendlyName: 'Samsung SSD 970', Size: 500 * GiB, IsSystem: false, IsBoot: false, IsOffline: false, NumberOfPartitions: 0, PartitionStyle: 'RAW' },
      { Number: 3, SerialNumber: 'DATA-3', UniqueId: '6002248000000000000000000000A003', FriendlyName: 'Data disk', Size: 500 * GiB, IsSystem: false, IsBoot: false, IsOffline: false, NumberOfPartitions: 1, PartitionStyle: 'GPT' },
    ],
    vms: { 'bench-vm': { state: 'Running', sanPolicy: 'OfflineShared', guestCredential: GUEST_CREDENTIAL, guestDisks: { ...GUEST_DISKS }, guestVolumes: { ...GUEST_VOLUMES }, drives: { 'SCSI:0:0': { Path: 'C:\\VMs\\bench-vm\\os.vhdx' } } } },
  };
}

/**
 * The embedded lab's Hyper-V host: one bench volume per `volume.sizeGb` value (folder → a volume of
 * that many GiB) and the VM with a per-lab guest password.
 */
export function labHypervState(volumes: Record<string, string>, guestPassword: string): Record<string, unknown> {
  const GiB = 1024 ** 3;
  const base = defaultHypervState() as { vms: Record<string, Record<string, unknown>> };
  return {
    ...base,
    files: { [LAB_TEMPLATE]: templateFile({ user: LAB_GUEST_USER, password: guestPassword }) },
    volumes: Object.fromEntries(Object.entries(volumes).map(([gb, folder]) => [folder, { sizeBytes: Number(gb) * GiB, freeBytes: Number(gb) * GiB - GiB }])),
    vms: { [LAB_VM]: { ...base.vms['bench-vm'], guestCredential: { user: LAB_GUEST_USER, password: guestPassword } } },
  };
}

/** Writes the host model; `keepLog` leaves an existing commands.jsonl (shared with the ESXi stand-ins) alone. */
export async function seedHypervState(dir: string, state: Record<string, unknown> = defaultHypervState(), opts: { keepLog?: boolean } = {}): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'hyperv.json'), JSON.stringify(state, null, 1));
  if (opts.keepLog) await fs.appendFile(path.join(dir, 'commands.jsonl'), '');
  else await fs.writeFile(path.join(dir, 'commands.jsonl'), '');
}

/** A partition as guest_storage.py keeps it on its medium (a VHDX file model or a host disk). */
export interface StandinPartition {
  PartitionNumber: number;
  Guid: string;
  Size: number;
  DriveLetter: string | null;
  Type: string;
  volume?: { FileSystem: string; AllocationUnitSize: number };
  guestFiles?: Record<string, number>;
}

export interface HypervStandinState {
  volumes: Record<string, { sizeBytes: number; freeBytes: number }>;
  files: Record<string, { type: string; size: number; block: number; logical: number; physical: number; formatted?: boolean; guestFiles?: Record<string, number>; PartitionStyle?: string; partitions?: StandinPartition[] }>;
  disks: { Number: number; IsOffline: boolean; SerialNumber?: string; NumberOfPartitions?: number; PartitionStyle?: string; partitions?: StandinPartition[] }[];
  vms: Record<string, { drives: Record<string, { Path?: string; DiskNumber?: number | null }>; guestDisks?: Record<string, string>; guestDiskState?: Record<string, { IsOffline: boolean; IsReadOnly: boolean }> }>;
}

export async function readHypervState(dir: string): Promise<HypervStandinState> {
  return JSON.parse(await fs.readFile(path.join(dir, 'hyperv.json'), 'utf8')) as HypervStandinState;
}

export interface PsLogEntry {
  shape: string;
  data: { calls?: { cmdlet: string; params: Record<string, unknown> }[]; vmName?: string; exe?: string; argv?: string[]; run?: { exe: string; args: string; dir: string; pid: string; out: string; err: string } };
}

export async function readPsLog(dir: string): Promise<PsLogEntry[]> {
  const text = await fs.readFile(path.join(dir, 'commands.jsonl'), 'utf8');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as PsLogEntry);
}

/** A process of the stand-in's VM (guest_process.py's table); hostPid null for the System processes. */
export interface StandinGuestProcess {
  ProcessId: number;
  Name: string;
  /** UTC, .NET round-trip format ("o") */
  CreationDate: string | null;
  CommandLine?: string | null;
  ExecutablePath?: string | null;
  hostPid: number | null;
  hostStart?: number | null;
}

/** A host process's start in clock ticks since boot (/proc/<pid>/stat field 22), null when gone or a zombie. */
export function hostStartTicks(pid: number): number | null {
  let s: string;
  try {
    s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const rest = s.slice(s.lastIndexOf(')') + 1).trim().split(/\s+/);
  return rest[0] === 'Z' || rest[0] === 'X' ? null : Number(rest[19]);
}

/** The processes running in the stand-in's VM `vm` (ended ones left out, as Win32_Process does), without the System ones. */
export async function guestProcesses(dir: string, vm: string = LAB_VM): Promise<StandinGuestProcess[]> {
  const state = JSON.parse(await fs.readFile(path.join(dir, 'hyperv.json'), 'utf8')) as { vms: Record<string, { processes?: StandinGuestProcess[] }> };
  return (state.vms[vm]?.processes ?? []).filter((p) => p.hostPid !== null && hostStartTicks(p.hostPid) === p.hostStart);
}

/**
 * Puts a process into the stand-in VM's table, backed by the host process `hostPid` (it runs while
 * that runs): for a test, another program that got a pid Windows handed out before.
 */
export async function addGuestProcess(dir: string, p: Omit<StandinGuestProcess, 'hostStart'> & { hostPid: number }, vm: string = LAB_VM): Promise<void> {
  const lock = path.join(dir, 'hyperv.json');
  const state = JSON.parse(await fs.readFile(lock, 'utf8')) as { vms: Record<string, { processes?: StandinGuestProcess[] }> };
  const v = state.vms[vm]!;
  v.processes = [...(v.processes ?? []), { ...p, hostStart: hostStartTicks(p.hostPid) }];
  await fs.writeFile(lock, JSON.stringify(state, null, 1));
}

/** A Windows command line → argv by the Microsoft C runtime's rules (as guest_process.py split_args). */
export function splitWindowsArgs(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let have = false;
  let quoted = false;
  for (let i = 0; i < line.length; ) {
    const c = line[i]!;
    if (c === '\\') {
      let j = i;
      while (line[j] === '\\') j++;
      const n = j - i;
      if (line[j] === '"') {
        cur += '\\'.repeat(n >> 1);
        if (n % 2) {
          cur += '"';
          j++;
        }
      } else cur += '\\'.repeat(n);
      i = j;
      have = true;
      continue;
    }
    if (c === '"') {
      quoted = !quoted;
      have = true;
    } else if ((c === ' ' || c === '\t') && !quoted) {
      if (have) out.push(cur);
      cur = '';
      have = false;
    } else {
      cur += c;
      have = true;
    }
    i++;
  }
  if (have) out.push(cur);
  return out;
}

/**
 * Every diskspd the stand-in ran in a VM, in order: the GUEST shape's `& $exe @argv` (the
 * fingerprint's `diskspd -?`) and the GUEST_RUN shape's Start-Process (a pass), its command line split.
 */
export function diskspdRuns(log: PsLogEntry[]): { vmName: string; exe: string; argv: string[] }[] {
  return log.flatMap((l) => {
    if (l.shape === 'guest') return [{ vmName: l.data.vmName!, exe: l.data.exe!, argv: l.data.argv! }];
    if (l.shape === 'guest-run') return [{ vmName: l.data.vmName!, exe: l.data.run!.exe, argv: splitWindowsArgs(l.data.run!.args) }];
    return [];
  });
}

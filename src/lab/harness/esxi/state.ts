// Seeds and reads the state of the ESXi shell stand-ins (see esxi_state.py): a small host with a
// boot device holding datastore1, blank devices for formatting and RDMs, and one VM.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_LAB_VERSION, LAB_VERSIONS, type LabVersion } from '../../versions.ts';

export const ESXI_HARNESS_DIR = path.dirname(new URL(import.meta.url).pathname);

export const BOOT_DEV = 'naa.6000c29d1b2c3d4e5f60718293a4b5c6';
export const BLANK_DEV = 'naa.6000c2900000000000000000000000a1';
export const RDM_DEV = 'naa.6000c2900000000000000000000000b2';
export const PARTITIONED_DEV = 'naa.6000c2900000000000000000000000c3';
export const DS1_UUID = '5f69774e-f1031e44-7bdb-ac1f6bc4b812';

/**
 * The host as ESXi `version` (default 8.0): `product` is what `vmware -v` / `esxcli system version get`
 * print and decides which VMFS versions vmkfstools creates; datastore1 is VMFS6 where the release has
 * it (6.5+), VMFS5 before.
 */
export function defaultEsxiState(version: LabVersion = DEFAULT_LAB_VERSION, opts: { guestDisks?: string } = {}): Record<string, unknown> {
  const product = LAB_VERSIONS[version];
  const ds1Version = Number(version) >= 6.5 ? 'vmfs6' : 'vmfs5';
  return {
    product: { version: product.version, build: product.build },
    // the lab guest's disks (guest_disks.py): a loop device and a wwn-0x link per attached disk
    ...(opts.guestDisks ? { guestDisks: opts.guestDisks } : {}),
    devices: {
      [BOOT_DEV]: { sizeMb: 102400, vendor: 'VMware', model: 'Virtual disk', isBoot: true, label: 'gpt', partitions: [
        { number: 1, start: 64, end: 204863, type: 'C12A7328F81F11D2BA4B00A0C93EC93B', attr: 128 },
        { number: 3, start: 15472640, end: 209715166, type: 'AA31E02A400F11DB9590000C2911D1B8', attr: 0 },
      ] },
      [BLANK_DEV]: { sizeMb: 20480, vendor: 'VMware', model: 'Virtual disk', label: null, partitions: [] },
      [RDM_DEV]: { sizeMb: 10240, vendor: 'VMware', model: 'Virtual disk', label: null, partitions: [] },
      [PARTITIONED_DEV]: { sizeMb: 10240, vendor: 'VMware', model: 'Virtual disk', label: 'gpt', partitions: [
        { number: 1, start: 2048, end: 20971486, type: 'EBD0A0A2B9E5443387C068B6B72699C7', attr: 0 },
      ] },
    },
    volumes: {
      [DS1_UUID]: { label: 'datastore1', device: BOOT_DEV, partition: 3, version: ds1Version, blockSize: 1048576, capacity: 99 * 1024 ** 3, mounted: true },
    },
    files: {
      '/vmfs/volumes/datastore1/bench-vm/bench-vm.vmdk': { kind: 'vmdk', sizeBytes: 16 * 1024 ** 3, format: 'thin', allocated: false, uuid: '60 00 C2 91 7d 0a 3b 44-8e 52 19 c6 0f a4 d2 17' },
    },
    vms: {
      // a benchmark guest prepared as the docs ask: disk.EnableUUID = TRUE (its disks report a WWN)
      '1': { name: 'bench-vm', datastore: 'datastore1', vmx: 'bench-vm/bench-vm.vmx', extraConfig: { 'disk.EnableUUID': 'TRUE' }, disks: { '0:0': '/vmfs/volumes/datastore1/bench-vm/bench-vm.vmdk' } },
    },
  };
}

/** Writes the host model; `keepLog` leaves an existing commands.jsonl (shared with powershell.exe) alone. */
export async function seedEsxiState(dir: string, state: Record<string, unknown> = defaultEsxiState(), opts: { keepLog?: boolean } = {}): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'esxi.json'), JSON.stringify(state, null, 1));
  if (opts.keepLog) await fs.appendFile(path.join(dir, 'commands.jsonl'), '');
  else await fs.writeFile(path.join(dir, 'commands.jsonl'), '');
}

export interface EsxiStandinState {
  product?: { version: string; build: string };
  devices: Record<string, { label: string | null; partitions: { number: number; start: number; end: number; type: string; attr: number }[] }>;
  volumes: Record<string, { label: string; device: string; partition: number; version: string; blockSize: number; mounted: boolean }>;
  files: Record<string, Record<string, unknown>>;
  vms: Record<string, { name: string; disks: Record<string, string>; extraConfig?: Record<string, string>; guestDevices?: Record<string, { loop: string; link: string | null; image: string; vmdk: boolean }> }>;
  guestDisks?: string;
}

export async function readEsxiState(dir: string): Promise<EsxiStandinState> {
  return JSON.parse(await fs.readFile(path.join(dir, 'esxi.json'), 'utf8')) as EsxiStandinState;
}

/** Every stand-in invocation as `tool arg1 arg2…` (args joined by single spaces, as received). */
export async function readCommands(dir: string): Promise<{ tool: string; argv: string[] }[]> {
  const text = await fs.readFile(path.join(dir, 'commands.jsonl'), 'utf8');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { tool: string; argv: string[] });
}

/**
 * Takes away every loop device and wwn-0x link the stand-ins gave the lab guest (guest_disks.py),
 * and the images of VMDKs; the host model forgets them. For `npm run lab -- down` and tests' ends:
 * nothing the lab made stays attached to this machine.
 */
export async function releaseEsxiGuestDisks(dir: string): Promise<string[]> {
  const file = path.join(dir, 'esxi.json');
  let state: EsxiStandinState;
  try {
    state = JSON.parse(await fs.readFile(file, 'utf8')) as EsxiStandinState;
  } catch {
    return [];
  }
  const released: string[] = [];
  for (const vm of Object.values(state.vms)) {
    for (const [key, g] of Object.entries(vm.guestDevices ?? {})) {
      if (g.link) await fs.rm(g.link, { force: true });
      spawnSync('partx', ['-d', g.loop]);
      spawnSync('losetup', ['-d', g.loop]);
      if (g.vmdk) await fs.rm(g.image, { force: true });
      released.push(g.loop);
      delete vm.guestDevices![key];
    }
  }
  await fs.writeFile(file, JSON.stringify(state, null, 1));
  return released;
}

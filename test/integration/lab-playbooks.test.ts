// The two shell-provider playbooks, end to end through the CLI against a lab of our own: `labUp` in
// a temp root (real OpenSSH on 127.0.0.1 whose sessions have the ESXi and Windows stand-ins on PATH,
// fio for the ESXi "guest"), then `storsweep run` as the playbooks' headers tell a user to (with two repetitions: REPEAT).
// Asserted: every permutation done with a record for every repetition × test, the exact command
// lines the stand-ins received for one permutation, and nothing left on the hosts afterwards.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, labUp, LAB_HYPERV_VOLUMES, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { getProfile } from '../../src/workloads/profiles.ts';
import { BLANK_DEV, BOOT_DEV, DS1_UUID, readCommands, readEsxiState, releaseEsxiGuestDisks } from '../../src/lab/harness/esxi/state.ts';
import { LAB_TEMPLATE, readHypervState, readPsLog, diskspdRuns } from '../../src/lab/harness/windows/state.ts';
import { REPO_ROOT, runCli, stackTraceLines, type CliResult } from '../helpers/cli.ts';

interface RecordLine {
  runId: string;
  permutationId: string;
  axes: Record<string, string | number | boolean>;
  repetition: number;
  test: { id: string };
  iops: number;
  bytesPerSecond: number;
  tool: { name: string; version: string | null };
  rawPath: string;
  metadata: Record<string, unknown>;
}

let root: string;
let lab: LabState;
let stateDir: string;
const runs: Record<'esxi' | 'hyperv', { cli: CliResult; runDir: string; records: RecordLine[] }> = {} as never;
// The shipped playbooks say `repeat: 3`. Two repetitions prove the same things (a record for every
// repetition × test, each key once, one pass and one esxtop per repetition × test) in two thirds of
// the time: each repetition is 8 sequential passes per permutation. `--set`, as a user would pass it.
const REPEAT = 2;

async function runPlaybook(file: string, extra: string[]): Promise<{ cli: CliResult; runDir: string; records: RecordLine[] }> {
  const cli = await runCli(['run', path.join(REPO_ROOT, 'playbooks', file), '-i', labPaths(root).inventory, '--json', '--set', `repeat=${REPEAT}`, ...extra], { cwd: root, timeoutMs: 480_000 });
  const last = cli.stdout.trim().split('\n').pop() ?? '{}';
  const runDir = path.resolve(root, (JSON.parse(last) as { runDir?: string }).runDir ?? '');
  const text = await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8').catch(() => '');
  return { cli, runDir, records: text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as RecordLine) };
}

/** every (permutation, repetition, test) exactly once, for all tests of the profile */
function expectComplete(records: RecordLine[], permutations: number, profile: string, repeat: number): void {
  const tests = getProfile(profile)!.tests.map((t) => t.id);
  expect(records).toHaveLength(permutations * repeat * tests.length);
  const keys = new Set(records.map((r) => `${r.permutationId}/${r.repetition}/${r.test.id}`));
  expect(keys.size).toBe(records.length);
  expect(new Set(records.map((r) => r.permutationId)).size).toBe(permutations);
  expect(new Set(records.map((r) => r.test.id))).toEqual(new Set(tests));
  for (const r of records) {
    expect(r.iops).toBeGreaterThan(0);
    expect(r.bytesPerSecond).toBeGreaterThan(0);
  }
}

async function statusOf(runDir: string): Promise<{ permutations: { status: string }[]; leftovers: unknown[] }> {
  const r = await runCli(['status', runDir, '--json'], { cwd: root });
  return JSON.parse(r.stdout) as { permutations: { status: string }[]; leftovers: unknown[] };
}

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-labpb-'));
  lab = await labUp(root, { vcsim: false, version: '5.5' }); // the shell study is VMFS3's: ESXi 5.x
  stateDir = lab.standinState;
  // both sweeps at once: different stand-in host models, one sshd (as a lab user would run them)
  const [esxi, hyperv] = await Promise.all([runPlaybook('vmfs-block-size-shell.yaml', ['--confirm-destroy', BLANK_DEV]), runPlaybook('hyperv-volume-size.yaml', [])]);
  runs.esxi = esxi;
  runs.hyperv = hyperv;
}, 600_000);

afterAll(async () => {
  // the loop devices the stand-ins gave this machine (the lab guest) for attached disks
  if (stateDir) await releaseEsxiGuestDisks(stateDir);
  if (lab) await stopPid(lab.ssh.pid);
  if (root) await fs.rm(root, { recursive: true, force: true });
});

describe('lab inventory', () => {
  it('has lab-esxi (stand-in devices) and lab-hyperv (a folder per volume size, guest password by file reference)', async () => {
    const inv = await fs.readFile(labPaths(root).inventory, 'utf8');
    expect(inv).toContain('  lab-esxi:\n    provider: esxi-shell\n    sshHost: lab\n');
    expect(inv).toContain(`    vmfsDevice: ${BLANK_DEV}\n`);
    expect(inv).toContain('  lab-hyperv:\n    provider: hyperv\n');
    for (const [gb, dir] of Object.entries(LAB_HYPERV_VOLUMES)) expect(inv).toContain(`      "${gb}": '${dir}'\n`);
    expect(inv).toContain('      password: ${file:hyperv-guest-password}\n');
    const password = (await fs.readFile(labPaths(root).guestPassword, 'utf8')).trim();
    expect(inv).not.toContain(password);
    const r = await runCli(['validate', '-i', labPaths(root).inventory], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('host-side figures and fingerprints of the shell and Hyper-V runs', () => {
  it('each lab-esxi record carries esxtop\'s figures of the LUN under test (synthetic values), the reports set them beside the guest\'s', async () => {
    const { runDir, records } = runs.esxi;
    for (const r of records) {
      const host = (r as unknown as { host?: { source: string; esxtop?: { device: string; gavgMs: number | null } } }).host;
      expect(host?.source).toBe('esxtop');
      expect(host?.esxtop?.device).toBe(BLANK_DEV);
      expect(host?.esxtop?.gavgMs).toEqual(expect.any(Number));
    }
    // one esxtop per test and repetition, each in batch mode at the 2 s minimum
    const esxtop = (await readCommands(stateDir)).filter((c) => c.tool === 'esxtop');
    expect(esxtop).toHaveLength(records.length);
    expect(new Set(esxtop.map((c) => c.argv.join(' ')))).toEqual(new Set(['-b -d 2 -n 3600']));
    const md = await fs.readFile(path.join(runDir, 'report.md'), 'utf8');
    expect(md).toContain('## Guest vs host latency');
    expect(md).toMatch(/GAVG/);
  });

  it('the fingerprints name the ESXi build and VMware Tools, the Hyper-V host and guest Windows builds and diskspd', async () => {
    const esxi = await fs.readFile(path.join(runs.esxi.runDir, 'report.md'), 'utf8');
    for (const k of ['esxi.product', 'esxi.build', 'vmwareTools.version', 'vm.guestFullName', 'guest.tool']) expect(esxi).toContain(`| ${k} |`);
    const hv = await fs.readFile(path.join(runs.hyperv.runDir, 'report.md'), 'utf8');
    for (const k of ['hyperv.host.os', 'hyperv.host.osBuild', 'guest.os', 'guest.osBuild']) expect(hv).toContain(`| ${k} |`);
    expect(hv).toMatch(/\| guest\.tool \| diskspd \d/);
  });
});

describe('playbooks/vmfs-block-size-shell.yaml on lab-esxi', () => {
  it('finishes every permutation with a record for every repetition and test', async () => {
    const { cli, runDir, records } = runs.esxi;
    expect(cli.code, cli.stderr).toBe(0);
    expect(stackTraceLines(cli.stderr)).toEqual([]);
    expectComplete(records, 4, 'cdm3', REPEAT);
    expect(new Set(records.map((r) => r.axes['datastore.blockSizeMb']))).toEqual(new Set([1, 2, 4, 8]));
    expect(records.every((r) => r.tool.name === 'fio')).toBe(true);
    // each permutation measured the disk it attached, found in the lab guest by the VMDK's uuid
    for (const r of records) expect(r.metadata).toMatchObject({ device: expect.stringMatching(/^\/dev\/loop\d+$/), deviceWwn: expect.stringMatching(/^6000c29[0-9a-f]{25}$/), filesystem: 'raw' });
    expect(new Set(records.map((r) => r.metadata.deviceWwn)).size).toBe(4);
    const status = await statusOf(runDir);
    expect(status.permutations.map((p) => p.status)).toEqual(['done', 'done', 'done', 'done']);
    expect(status.leftovers).toEqual([]);
  });

  it('sent exactly the classic shell sequence for the 8 MB block permutation', async () => {
    const rec = runs.esxi.records.find((r) => r.axes['datastore.blockSizeMb'] === 8)!;
    const base = `ss-${rec.runId}-${rec.permutationId}`;
    const dev = `/vmfs/devices/disks/${BLANK_DEV}`;
    const ds = `/vmfs/volumes/${base}-ds`;
    // esxtop watches each test from the host (its own test below); the provisioning sequence is the classic one
    const lines = (await readCommands(stateDir)).filter((c) => c.tool !== 'powershell.exe' && c.tool !== 'esxtop').map((c) => [c.tool, ...c.argv].join(' '));
    // one permutation = from its device check to the end of its teardown
    const starts = lines.flatMap((l, i) => (l === `esxcli storage core device list -d ${BLANK_DEV}` ? [i] : []));
    expect(starts).toHaveLength(4);
    const mine = starts.map((s, k) => lines.slice(s, starts[k + 1] ?? lines.length)).find((chunk) => chunk.some((l) => l.includes(base)))!;
    // 20 GiB device: 41943040 sectors; msdos usable range ends one sector before the end
    expect(mine).toEqual([
      `esxcli storage core device list -d ${BLANK_DEV}`,
      'esxcli storage vmfs extent list',
      `partedUtil getptbl ${dev}`,
      `partedUtil mklabel ${dev} msdos`,
      `partedUtil getUsableSectors ${dev}`,
      `partedUtil setptbl ${dev} msdos 1 128 41943039 251 0`,
      'esxcli storage vmfs extent list',
      `partedUtil getptbl ${dev}`,
      `vmkfstools -C vmfs3 -b 8m -S ${base}-ds ${dev}:1`,
      `vmkfstools -P ${ds}`,
      `vmkfstools -c 4g -d eagerzeroedthick ${ds}/${base}-disk.vmdk`,
      'vim-cmd vmsvc/device.getdevices 1',
      `vim-cmd vmsvc/device.diskaddexisting 1 ${ds}/${base}-disk.vmdk 0 1`,
      // the guest-disk step: the disk still on the VM, and the uuid the guest names it by
      'vim-cmd vmsvc/device.getdevices 1',
      `vmkfstools -J getuuid ${ds}/${base}-disk.vmdk`,
      'vim-cmd vmsvc/device.getdevices 1',
      'vim-cmd vmsvc/device.diskremove 1 0 1 false',
      `vmkfstools -U ${ds}/${base}-disk.vmdk`,
      // the datastore, found by its label on the host's extent list (which names device and
      // partition), goes with its partition
      'esxcli storage vmfs extent list',
      `partedUtil getptbl ${dev}`,
      `esxcli storage filesystem unmount -l ${base}-ds`,
      `partedUtil delete ${dev} 1`,
      // the partition's own row: nothing left on the recorded device
      `partedUtil getptbl ${dev}`,
    ]);
  });

  it('leaves no VMFS, disk, partition or attachment behind on the ESXi stand-in', async () => {
    const s = await readEsxiState(stateDir);
    expect(Object.keys(s.volumes)).toEqual([DS1_UUID]);
    expect(Object.keys(s.files)).toEqual(['/vmfs/volumes/datastore1/bench-vm/bench-vm.vmdk']);
    expect(s.vms['1']!.disks).toEqual({ '0:0': '/vmfs/volumes/datastore1/bench-vm/bench-vm.vmdk' });
    // and no loop device of the lab guest: each went with its disk
    expect(s.vms['1']!.guestDevices).toEqual({});
    expect(s.devices[BLANK_DEV]!.partitions).toEqual([]);
    expect(s.devices[BOOT_DEV]!.partitions).toHaveLength(2);
  });
});

describe('playbooks/hyperv-volume-size.yaml on lab-hyperv', () => {
  it('finishes every permutation with a diskspd record for every repetition and test', async () => {
    const { cli, runDir, records } = runs.hyperv;
    expect(cli.code, cli.stderr).toBe(0);
    expect(stackTraceLines(cli.stderr)).toEqual([]);
    expectComplete(records, 3, 'cdm5', REPEAT);
    expect(new Set(records.map((r) => r.axes['volume.sizeGb']))).toEqual(new Set([100, 500, 2000]));
    expect(records.every((r) => r.tool.name === 'diskspd' && r.tool.version === '2.2')).toBe(true);
    const raw = await fs.readFile(path.join(runDir, records[0]!.rawPath), 'utf8');
    expect(raw).toMatch(/^<Results>\r?\n {2}<System>/);
    const status = await statusOf(runDir);
    expect(status.permutations.map((p) => p.status)).toEqual(['done', 'done', 'done']);
    expect(status.leftovers).toEqual([]);
  });

  it('sent exactly New-VHD, Get-VMHardDiskDrive, Add-VMHardDiskDrive, diskspd via PowerShell Direct, then teardown for the 2000 GB volume', async () => {
    const rec = runs.hyperv.records.find((r) => r.axes['volume.sizeGb'] === 2000)!;
    const vhdx = `E:\\bench\\ss-${rec.runId}-${rec.permutationId}-disk.vhdx`;
    const log = (await readPsLog(stateDir)).filter((l) => (l as { tool?: string }).tool === 'powershell.exe');
    const first = log.findIndex((l) => l.data.calls?.[0]?.cmdlet === 'New-VHD' && l.data.calls[0].params.Path === vhdx);
    expect(first).toBeGreaterThanOrEqual(0);
    // host steps (3), the guest-disk step (2 host calls, 2 PowerShell Direct sessions), 1 fill + REPEAT × 8 passes, teardown (4)
    const mine = log.slice(first, first + 3 + 4 + 1 + REPEAT * 8 + 4);
    const calls = mine.filter((l) => l.shape === 'call').map((l) => l.data.calls!.map((c) => ({ cmdlet: c.cmdlet, params: c.params }))[0]);
    const slot = { VMName: 'bench-vm', ControllerType: 'SCSI', ControllerNumber: 0, ControllerLocation: 1 };
    expect(calls).toEqual([
      { cmdlet: 'New-VHD', params: { Path: vhdx, SizeBytes: 8 * 1024 ** 3, Fixed: true } },
      // the configured location, listed first: refused if a drive is already there
      { cmdlet: 'Get-VMHardDiskDrive', params: { VMName: 'bench-vm' } },
      { cmdlet: 'Add-VMHardDiskDrive', params: { ...slot, Path: vhdx } },
      // the guest-disk step: what sits at the slot is ours, and how big it is
      { cmdlet: 'Get-VMHardDiskDrive', params: { VMName: 'bench-vm' } },
      { cmdlet: 'Get-VHD', params: { Path: vhdx } },
      // teardown
      { cmdlet: 'Get-VMHardDiskDrive', params: { VMName: 'bench-vm' } },
      { cmdlet: 'Remove-VMHardDiskDrive', params: slot },
      { cmdlet: 'Get-Item', params: { LiteralPath: vhdx, ErrorAction: 'SilentlyContinue' } },
      { cmdlet: 'Remove-Item', params: { LiteralPath: vhdx } },
    ]);
    // in the guest: the disk found at LUN 1 by its size, brought online, then writable (two Set-Disk parameter sets)
    expect(mine.filter((l) => l.shape === 'guest-call').map((l) => l.data.calls!.map((c) => `${c.cmdlet} ${JSON.stringify(c.params)}`))).toEqual([
      ['Get-Disk {}'],
      ['Set-Disk {"Number":1,"IsOffline":false}', 'Set-Disk {"Number":1,"IsReadOnly":false}', 'Get-Disk {"Number":1}'],
    ]);
    expect(rec.metadata).toMatchObject({ guestDisk: 1, guestDiskId: expect.stringMatching(/^60022480/), filesystem: 'raw' });
    const guest = diskspdRuns(mine);
    // one pre-fill pass (a raw drive: -f bounds the fill, nothing is created — no -c anywhere), then REPEAT repetitions × 8 tests
    expect(guest).toHaveLength(1 + REPEAT * 8);
    const exe = 'C:\\Tools\\diskspd.exe';
    // the new VHDX, found in the guest as disk 1 (SCSI 0:1): measured as that physical drive
    const t = '#1';
    expect(guest[0]).toEqual({ vmName: 'bench-vm', exe, argv: ['-b1M', '-o8', '-t1', '-s', '-w100', '-d10', '-W0', '-S', '-Z1M', '-f16M', '-Rxml', t] });
    expect(guest.filter((g) => g.argv.some((a) => a.startsWith('-c')))).toEqual([]);
    // CrystalDiskMark 5's eight tests, one repetition (lab timing: 16 MiB file, 1 s, no ramp): every
    // read, then every write, with -S (no OS cache, no forced write-through) as CDM passes it
    expect(guest.slice(1, 9)).toEqual([
      { vmName: 'bench-vm', exe, argv: ['-b128K', '-o32', '-t1', '-w0', '-d1', '-W0', '-S', '-f16M', '-L', '-Rxml', t] },
      { vmName: 'bench-vm', exe, argv: ['-b4K', '-o32', '-t1', '-r', '-w0', '-d1', '-W0', '-S', '-f16M', '-L', '-Rxml', t] },
      { vmName: 'bench-vm', exe, argv: ['-b1M', '-o1', '-t1', '-w0', '-d1', '-W0', '-S', '-f16M', '-L', '-Rxml', t] },
      { vmName: 'bench-vm', exe, argv: ['-b4K', '-o1', '-t1', '-r', '-w0', '-d1', '-W0', '-S', '-f16M', '-L', '-Rxml', t] },
      { vmName: 'bench-vm', exe, argv: ['-b128K', '-o32', '-t1', '-w100', '-d1', '-W0', '-S', '-Z128K', '-f16M', '-L', '-Rxml', t] },
      { vmName: 'bench-vm', exe, argv: ['-b4K', '-o32', '-t1', '-r', '-w100', '-d1', '-W0', '-S', '-Z4K', '-f16M', '-L', '-Rxml', t] },
      { vmName: 'bench-vm', exe, argv: ['-b1M', '-o1', '-t1', '-w100', '-d1', '-W0', '-S', '-Z1M', '-f16M', '-L', '-Rxml', t] },
      { vmName: 'bench-vm', exe, argv: ['-b4K', '-o1', '-t1', '-r', '-w100', '-d1', '-W0', '-S', '-Z4K', '-f16M', '-L', '-Rxml', t] },
    ]);
    const password = (await fs.readFile(labPaths(root).guestPassword, 'utf8')).trim();
    expect(JSON.stringify(await readPsLog(stateDir))).not.toContain(password);
  });

  it('leaves no VHDX or drive behind, and every volume has its space back', async () => {
    const s = await readHypervState(stateDir);
    // the lab's vm.count template (LAB_TEMPLATE) is the host's, never a run's
    expect(Object.keys(s.files)).toEqual([LAB_TEMPLATE]);
    expect(Object.keys(s.vms['bench-vm']!.drives)).toEqual(['SCSI:0:0']);
    const volumes = (s as unknown as { volumes: Record<string, { sizeBytes: number; freeBytes: number }> }).volumes;
    for (const [gb, dir] of Object.entries(LAB_HYPERV_VOLUMES)) expect(volumes[dir]).toEqual({ sizeBytes: Number(gb) * 1024 ** 3, freeBytes: (Number(gb) - 1) * 1024 ** 3 });
  });
});

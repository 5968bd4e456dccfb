// The guest.filesystem axis on Hyper-V (issue 14 item 2): the disk found in the guest is initialized
// GPT, partitioned, formatted NTFS/ReFS with the axis's allocation unit, measured through a test
// file on it, and cleared again at teardown — end to end through the CLI on a lab of our own
// (`labUp`: real OpenSSH, the strict powershell.exe stand-in with its guest model), and through the
// provider for what must be refused or left alone.
import { readFileSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedObject, MeasuredTarget, ProviderContext } from '../../src/contract/provider.ts';
import { defaultHypervState, GUEST_CREDENTIAL, LAB_TEMPLATE, readHypervState, readPsLog, seedHypervState, diskspdRuns } from '../../src/lab/harness/windows/state.ts';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import type { HypervTargetConfig } from '../../src/providers/hyperv/config.ts';
import { planHypervSteps } from '../../src/providers/hyperv/plan.ts';
import { runGuestCalls } from '../../src/providers/hyperv/powershell.ts';
import { createHypervProvider } from '../../src/providers/hyperv/provider.ts';
import { connectSsh, type SshOptions } from '../../src/ssh/ssh-runner.ts';
import { REPO_ROOT, runCli, stackTraceLines } from '../helpers/cli.ts';
import { startWindowsStandin, type WindowsStandin } from '../helpers/windows-standin.ts';

const GiB = 1024 ** 3;
const ctx: ProviderContext = { runId: 'r1', permutationId: 'p1', axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined };
const target: HypervTargetConfig = { host: 'hv-standin', vmName: 'bench-vm', volumes: { '100': 'D:\\bench' }, allowedDisks: [{ number: 2, serialNumber: 'S4EWNX0R123456' }], passthroughDisk: 2 };
const guest = { credential: () => GUEST_CREDENTIAL };

interface RecordLine {
  axes: Record<string, string | number>;
  test: { id: string };
  iops: number;
  metadata: Record<string, unknown>;
}

describe('playbooks/hyperv-allocation-unit.yaml on lab-hyperv', () => {
  let root: string;
  let lab: LabState;
  let records: RecordLine[] = [];
  let runDir = '';
  let cli: Awaited<ReturnType<typeof runCli>>;

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-hvfs-'));
    lab = await labUp(root, { vcsim: false });
    cli = await runCli(['run', path.join(REPO_ROOT, 'playbooks', 'hyperv-allocation-unit.yaml'), '-i', labPaths(root).inventory, '--json'], { cwd: root, timeoutMs: 300_000 });
    const last = cli.stdout.trim().split('\n').pop() ?? '{}';
    runDir = path.resolve(root, (JSON.parse(last) as { runDir?: string }).runDir ?? '');
    const text = await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8').catch(() => '');
    records = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as RecordLine);
  }, 360_000);

  afterAll(async () => {
    if (lab) await stopPid(lab.ssh.pid);
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  it('runs both permutations (no --confirm-destroy: only our own new VHDX is written); every record names the guest disk, the file system and the allocation unit read back', () => {
    expect(cli.code, cli.stderr).toBe(0);
    expect(stackTraceLines(cli.stderr)).toEqual([]);
    expect(records).toHaveLength(2 * 8);
    for (const r of records) {
      const unit = r.axes['guest.filesystem'] === 'ntfs-4k' ? 4096 : 65536;
      expect(r.metadata).toMatchObject({ guestDisk: 1, guestDiskId: expect.stringMatching(/^60022480[0-9A-F]{24}$/), filesystem: 'NTFS', allocationUnitBytes: unit, testFile: expect.stringMatching(/^[D-Z]:\\storsweep\.dat$/) });
      expect(r.iops).toBeGreaterThan(0);
    }
    expect(new Set(records.map((r) => r.axes['guest.filesystem']))).toEqual(new Set(['ntfs-4k', 'ntfs-64k']));
  });

  it('sent, per permutation: Initialize-Disk GPT, New-Partition, Format-Volume with the allocation unit; diskspd measured the test file (created once by the fill: -c only there); Clear-Disk at teardown', async () => {
    const log = await readPsLog(lab.standinState);
    const guestCalls = log.filter((l) => l.shape === 'guest-call').flatMap((l) => l.data.calls ?? []);
    const formats = guestCalls.filter((c) => c.cmdlet === 'Format-Volume').map((c) => c.params);
    expect(formats).toEqual([
      { DriveLetter: expect.any(String), FileSystem: 'NTFS', AllocationUnitSize: expect.any(Number), NewFileSystemLabel: 'storsweep', Confirm: false },
      { DriveLetter: expect.any(String), FileSystem: 'NTFS', AllocationUnitSize: expect.any(Number), NewFileSystemLabel: 'storsweep', Confirm: false },
    ]);
    expect(formats.map((f) => f.AllocationUnitSize).sort()).toEqual([4096, 65536]);
    expect(guestCalls.filter((c) => c.cmdlet === 'Initialize-Disk').map((c) => c.params)).toEqual([{ Number: 1, PartitionStyle: 'GPT' }, { Number: 1, PartitionStyle: 'GPT' }]);
    expect(guestCalls.filter((c) => c.cmdlet === 'Clear-Disk').map((c) => c.params)).toEqual([{ Number: 1, RemoveData: true, Confirm: false }, { Number: 1, RemoveData: true, Confirm: false }]);
    const all = diskspdRuns(log).map((r) => r.argv);
    // once per run, the fingerprint reads diskspd's version from its usage banner (diskspd -?)
    expect(all.filter((a) => a.length === 1 && a[0] === '-?')).toHaveLength(1);
    const argv = all.filter((a) => !(a.length === 1 && a[0] === '-?'));
    expect(argv).toHaveLength(2 * (1 + 8));
    for (const a of argv) expect(a.at(-1)).toMatch(/^[D-Z]:\\storsweep\.dat$/);
    expect(argv.filter((a) => a.some((x) => x.startsWith('-c'))).map((a) => a.find((x) => x.startsWith('-c')))).toEqual(['-c16M', '-c16M']);
  });

  it('leaves nothing behind: no VHDX, no attachment, no guest disk, no partition or volume on any disk; status has no leftovers', async () => {
    const host = await readHypervState(lab.standinState);
    // the lab's vm.count template (LAB_TEMPLATE) is the host's, never the run's
    expect(Object.keys(host.files)).toEqual([LAB_TEMPLATE]);
    expect(Object.keys(host.vms['bench-vm']!.drives)).toEqual(['SCSI:0:0']);
    expect(host.vms['bench-vm']!.guestDisks).toEqual({ '0': 'SCSI:0:0' });
    expect(host.disks.map((d) => [d.Number, d.NumberOfPartitions ?? 0])).toEqual([[0, 4], [2, 0], [3, 1]]);
    const status = JSON.parse((await runCli(['status', runDir, '--json'], { cwd: root })).stdout) as { permutations: { status: string }[]; leftovers: unknown[] };
    expect(status.permutations.map((p) => p.status)).toEqual(['done', 'done']);
    expect(status.leftovers).toEqual([]);
  });
});

describe('guest volumes through the provider', () => {
  let hv: WindowsStandin;
  let stateDir: string;
  let ssh: SshOptions;

  beforeAll(async () => {
    hv = await startWindowsStandin('ss-hvfs2-');
    stateDir = hv.stateDir;
    ssh = hv.ssh;
  });
  afterAll(async () => {
    await hv?.stop();
  });
  const guestCalls = async (since = 0) => (await readPsLog(stateDir)).slice(since).filter((l) => l.shape === 'guest-call').flatMap((l) => l.data.calls ?? []);
  type Host = { disks: Array<Record<string, unknown>>; files: Record<string, Record<string, unknown>> };
  const editHost = (edit: (st: Host) => void) => {
    const file = path.join(stateDir, 'hyperv.json');
    const st = JSON.parse(readFileSync(file, 'utf8')) as Host;
    edit(st);
    writeFileSync(file, JSON.stringify(st));
  };

  it('the stand-in refuses what Windows refuses: New-Partition on a RAW disk, Initialize-Disk twice, Format-Volume on an offline disk, Set-Disk with both flags', async () => {
    const state = defaultHypervState() as unknown as { files: Record<string, unknown>; vms: Record<string, { drives: Record<string, unknown>; guestDisks: Record<string, string>; guestDiskState?: Record<string, unknown> }> };
    state.files['D:\\bench\\x.vhdx'] = { type: 'Fixed', size: 4 * GiB, fileSize: 4 * GiB, block: 0, logical: 512, physical: 4096 };
    state.vms['bench-vm']!.drives['SCSI:0:1'] = { Path: 'D:\\bench\\x.vhdx' };
    state.vms['bench-vm']!.guestDisks['1'] = 'SCSI:0:1';
    await seedHypervState(stateDir, state);
    const runner = await connectSsh(ssh);
    const calls = (c: Parameters<typeof runGuestCalls>[3]) => runGuestCalls(runner, 'bench-vm', GUEST_CREDENTIAL, c);
    await expect(calls([{ cmdlet: 'New-Partition', params: { DiskNumber: 1, UseMaximumSize: true, AssignDriveLetter: true } }])).rejects.toThrow(/New-Partition : The disk has not been initialized\./);
    await expect(calls([{ cmdlet: 'Set-Disk', params: { Number: 1, IsOffline: false, IsReadOnly: false } }])).rejects.toThrow(/Set-Disk : Parameter set cannot be resolved/);
    await calls([{ cmdlet: 'Initialize-Disk', params: { Number: 1, PartitionStyle: 'GPT' } }]);
    await expect(calls([{ cmdlet: 'Initialize-Disk', params: { Number: 1 } }])).rejects.toThrow(/Initialize-Disk : The disk has already been initialized\./);
    const [part] = await calls([{ cmdlet: 'New-Partition', params: { DiskNumber: 1, UseMaximumSize: true, AssignDriveLetter: true }, select: ['DriveLetter'] }]);
    // the disk goes offline (someone ran Set-Disk -IsOffline $true): formatting it is refused
    await calls([{ cmdlet: 'Set-Disk', params: { Number: 1, IsOffline: true } }]);
    await expect(calls([{ cmdlet: 'Format-Volume', params: { DriveLetter: String(part!.DriveLetter), FileSystem: 'NTFS', AllocationUnitSize: 4096, Confirm: false } }])).rejects.toThrow(/Format-Volume : The disk is offline/);
    // and the system disk cannot be taken offline
    await expect(calls([{ cmdlet: 'Set-Disk', params: { Number: 0, IsOffline: true } }])).rejects.toThrow(/not supported on a critical disk/);
    await runner.close();
  });

  it('pass-through + ntfs-64k: the host disk carries our partition while attached, and is RAW again after teardown (Clear-Disk on the disk we formatted, then detach, then online)', async () => {
    await seedHypervState(stateDir);
    const provider = createHypervProvider(target, await connectSsh(ssh), guest);
    const steps = planHypervSteps({ 'disk.format': 'passthrough', 'guest.filesystem': 'ntfs-64k' }, target, { base: 'ss-r2-p1' });
    expect(steps.map((s) => [s.step, s.operation, s.destroys])).toEqual([
      ['offline', 'Set-Disk -IsOffline', ['disk2:S4EWNX0R123456']],
      ['attach', 'Add-VMHardDiskDrive', ['disk2:S4EWNX0R123456']],
      ['guest-disk', 'Set-Disk (guest)', ['disk2:S4EWNX0R123456']],
      ['guest-volume', 'Format-Volume (guest)', ['disk2:S4EWNX0R123456']],
    ]);
    const created: CreatedObject[] = [];
    const measured: MeasuredTarget[] = [];
    for (const s of steps) created.push((await provider.apply(s, { ...ctx, measure: (t) => measured.push(t) }))!);
    const vol = created.at(-1)!;
    expect(vol.data).toMatchObject({ guestDiskNumber: 1, serialNumber: 'S4EWNX0R123456', filesystem: 'ntfs-64k', volumeFileSystem: 'NTFS', volumeAllocationUnit: 65536, driveLetter: 'D', testFile: 'D:\\storsweep.dat', diskGuid: expect.stringMatching(/^\{/), partitionGuid: expect.stringMatching(/^\{/) });
    // the guest-disk step says #1, the guest-volume step then the file on the volume it made: the last word counts
    expect(measured.map((m) => m.path)).toEqual(['#1', 'D:\\storsweep.dat']);
    expect(measured.at(-1)).toEqual({ path: 'D:\\storsweep.dat', device: 'guest disk 1', identity: 'S4EWNX0R123456', filesystem: 'NTFS', facts: { guestDisk: 1, guestDiskId: 'S4EWNX0R123456', filesystem: 'NTFS', allocationUnitBytes: 65536, testFile: 'D:\\storsweep.dat' } });
    let host = await readHypervState(stateDir);
    expect(host.disks.find((d) => d.Number === 2)).toMatchObject({ IsOffline: true, NumberOfPartitions: 1, PartitionStyle: 'GPT' });
    const before = (await readPsLog(stateDir)).length;
    for (const o of [...created].reverse()) expect(await provider.destroy(o, ctx)).toBe('removed');
    expect((await guestCalls(before)).map((c) => [c.cmdlet, c.params])).toEqual([['Get-Disk', {}], ['Get-Partition', { DiskNumber: 1 }], ['Clear-Disk', { Number: 1, RemoveData: true, Confirm: false }]]);
    host = await readHypervState(stateDir);
    expect(host.disks.find((d) => d.Number === 2)).toMatchObject({ IsOffline: false, NumberOfPartitions: 0, PartitionStyle: 'RAW' });
    await provider.close();
  });

  it('teardown: a partition someone else added to our disk → nothing cleared, the row stays open with the reason; a disk renumbered in the guest is still found by its location and ids', async () => {
    await seedHypervState(stateDir);
    const provider = createHypervProvider(target, await connectSsh(ssh), guest);
    const steps = planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4, 'guest.filesystem': 'ntfs-4k' }, target, { base: 'ss-r3-p1' });
    const created: CreatedObject[] = [];
    for (const s of steps) created.push((await provider.apply(s, ctx))!);
    const vhdx = 'D:\\bench\\ss-r3-p1-disk.vhdx';
    editHost((st) => (st.files[vhdx]!.partitions as unknown[]).push({ PartitionNumber: 2, Guid: '{theirs}', Size: GiB, DriveLetter: 'Q', Type: 'Basic' }));
    const before = (await readPsLog(stateDir)).length;
    await expect(provider.destroy(created.at(-1)!, ctx)).rejects.toThrow(/left alone: .*carries partition\(s\) this run did not create \(2 \{theirs\}\); nothing cleared/);
    expect((await guestCalls(before)).map((c) => c.cmdlet)).not.toContain('Clear-Disk');
    // theirs removed again, and the guest renumbered the disk (a reboot): found by location and ids, cleared
    editHost((st) => {
      (st.files[vhdx]!.partitions as unknown[]).pop();
      const vm = (st as unknown as { vms: Record<string, { guestDisks: Record<string, string> }> }).vms['bench-vm']!;
      vm.guestDisks = { '0': 'SCSI:0:0', '7': 'SCSI:0:1' };
    });
    expect(await provider.destroy(created.at(-1)!, ctx)).toBe('removed');
    expect((await guestCalls(before)).filter((c) => c.cmdlet === 'Clear-Disk').map((c) => c.params)).toEqual([{ Number: 7, RemoveData: true, Confirm: false }]);
    expect((await readHypervState(stateDir)).files[vhdx]).toMatchObject({ PartitionStyle: 'RAW', partitions: [] });
    for (const o of created.slice(0, -1).reverse()) await provider.destroy(o, ctx);
    await provider.close();
  });
});

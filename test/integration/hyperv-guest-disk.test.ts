// The Hyper-V provider finds the disk it attached inside the guest by identity (LUN = controller
// location, size) and measures that disk, whatever number the guest gave it: end to end over a real
// OpenSSH server with the strict powershell.exe stand-in (its guest model: guest_storage.py —
// disk numbers, SAN policy offline/read-only, partitions and volumes on the disk's medium).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComposeContext, CreatedObject, MeasuredTarget, ProviderContext } from '../../src/contract/provider.ts';
import { defaultHypervState, GUEST_CREDENTIAL, readHypervState, readPsLog, seedHypervState, diskspdRuns } from '../../src/lab/harness/windows/state.ts';
import type { HypervTargetConfig } from '../../src/providers/hyperv/config.ts';
import { hypervProvider } from '../../src/providers/hyperv/index.ts';
import { planHypervSteps } from '../../src/providers/hyperv/plan.ts';
import { createHypervProvider, runGuestDiskspd } from '../../src/providers/hyperv/provider.ts';
import { ResultStore, type RunMeta } from '../../src/results/store.ts';
import { executeRun } from '../../src/run/executor.ts';
import { connectSsh, type SshOptions } from '../../src/ssh/ssh-runner.ts';
import { makeTest } from '../../src/workloads/profiles.ts';
import type { WorkloadProfile } from '../../src/workloads/spec.ts';
import { onePermutationPlan } from '../helpers/executor-run.ts';
import { startWindowsStandin, type WindowsStandin } from '../helpers/windows-standin.ts';

let hv: WindowsStandin;
let dir: string;
let stateDir: string;
let ssh: SshOptions;
const ctx: ProviderContext = { runId: 'r1', permutationId: 'p1', axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined };
const target: HypervTargetConfig = { host: 'hv-standin', vmName: 'bench-vm', volumes: { '100': 'D:\\bench' }, allowedDisks: [{ number: 2, serialNumber: 'S4EWNX0R123456' }], passthroughDisk: 2 };
const guest = { credential: () => GUEST_CREDENTIAL };
const GiB = 1024 ** 3;
const profile: WorkloadProfile = { name: 't', description: 't', tests: [makeTest('randwrite', 4096, 4, 1)], fileSizeBytes: 64 * 1024 ** 2, runtimeSec: 1, rampSec: 0, passes: 1, warmupPass: false, intervalSec: 0, direct: true, aggregate: 'max', prefill: false };

type Host = { files: Record<string, Record<string, unknown>>; vms: Record<string, { guestDisks: Record<string, string>; drives: Record<string, Record<string, unknown>>; sanPolicy?: string }> };
const editHost = (edit: (st: Host) => void) => {
  const file = path.join(stateDir, 'hyperv.json');
  const st = JSON.parse(readFileSync(file, 'utf8')) as Host;
  edit(st);
  writeFileSync(file, JSON.stringify(st));
};
/** the user's own data disk, already in the guest as disk 1 (at SCSI 0:2), with an NTFS volume on it */
const withUsersDisk = (size = 4 * GiB) => {
  const state = defaultHypervState() as unknown as Host;
  state.files['D:\\users\\data.vhdx'] = { type: 'Fixed', size, fileSize: size, block: 0, logical: 512, physical: 4096, PartitionStyle: 'GPT', partitions: [{ PartitionNumber: 1, Guid: '{users}', Size: size - 2 ** 20, DriveLetter: 'U', Type: 'Basic', volume: { FileSystem: 'NTFS', AllocationUnitSize: 4096 } }] };
  state.vms['bench-vm']!.drives['SCSI:0:2'] = { Path: 'D:\\users\\data.vhdx' };
  state.vms['bench-vm']!.guestDisks['1'] = 'SCSI:0:2';
  return state;
};

beforeAll(async () => {
  hv = await startWindowsStandin('ss-hvg-');
  dir = hv.dir;
  stateDir = hv.stateDir;
  ssh = hv.ssh;
});

afterAll(async () => {
  await hv?.stop();
});

const guestCalls = async (since = 0) => (await readPsLog(stateDir)).slice(since).filter((l) => l.shape === 'guest-call').flatMap((l) => l.data.calls ?? []);

describe('hyperv: the attached disk is found in the guest by identity', () => {
  it('a new VHDX arrives offline and read-only (SAN policy OfflineShared): found at LUN 1 by its size, brought online and writable, recorded by number and unique id', async () => {
    await seedHypervState(stateDir);
    const provider = createHypervProvider(target, await connectSsh(ssh), guest);
    const steps = planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4 }, target, { base: 'ss-r1-p1' });
    expect(steps.map((s) => [s.step, s.operation, s.destructive])).toEqual([['vhdx', 'New-VHD', false], ['attach', 'Add-VMHardDiskDrive', false], ['guest-disk', 'Set-Disk (guest)', false]]);
    const created: CreatedObject[] = [];
    for (const s of steps.slice(0, 2)) created.push((await provider.apply(s, ctx))!);
    // the stand-in's guest, before the step: the new disk is number 1, offline and read-only
    let host = await readHypervState(stateDir);
    expect(host.vms['bench-vm']!.guestDisks).toEqual({ '0': 'SCSI:0:0', '1': 'SCSI:0:1' });
    expect(host.vms['bench-vm']!.guestDiskState!['SCSI:0:1']).toEqual({ IsOffline: true, IsReadOnly: true });
    // diskspd cannot write to it yet: Windows blocks writes to an offline, read-only disk
    await expect(runGuestDiskspd(await connectSsh(ssh), target, GUEST_CREDENTIAL, makeTest('randwrite', 4096, 1, 1), profile, { guestTarget: '#1' })).rejects.toThrow(/error during overlapped IO operation \(error code: 19\)/);

    const before = (await readPsLog(stateDir)).length;
    const sent: Record<string, unknown>[] = [];
    const measured: MeasuredTarget[] = [];
    const disk = (await provider.apply(steps[2]!, { ...ctx, sent: (d) => void sent.push(d), measure: (t) => measured.push(t) }))!;
    expect(disk).toMatchObject({ kind: 'guest-disk', id: 'bench-vm:disk1', data: { guestDiskNumber: 1, serialNumber: null, uniqueId: expect.stringMatching(/^60022480[0-9A-F]{24}$/), location: 'Integrated : Adapter 1 : Port 0 : Target 0 : LUN 1', sizeBytes: 4 * GiB, wasOffline: true, wasReadOnly: true } });
    // sent before the first Set-Disk, with what proves it later
    expect(sent).toEqual([disk.data]);
    expect((await guestCalls(before)).map((c) => [c.cmdlet, c.params])).toEqual([
      ['Get-Disk', {}],
      ['Set-Disk', { Number: 1, IsOffline: false }],
      ['Set-Disk', { Number: 1, IsReadOnly: false }],
      ['Get-Disk', { Number: 1 }],
    ]);
    host = await readHypervState(stateDir);
    expect(host.vms['bench-vm']!.guestDiskState!['SCSI:0:1']).toEqual({ IsOffline: false, IsReadOnly: false });
    // the one handoff to the workload: diskspd measures #1, and records name it
    expect(measured).toEqual([{ path: '#1', device: 'guest disk 1', identity: disk.data.uniqueId, filesystem: 'raw', facts: { guestDisk: 1, guestDiskId: disk.data.uniqueId, filesystem: 'raw' } }]);

    for (const o of [disk, ...created.reverse()]) expect(await provider.destroy(o, ctx)).toBe('removed');
    host = await readHypervState(stateDir);
    expect(host.vms['bench-vm']!.guestDisks).toEqual({ '0': 'SCSI:0:0' });
    expect(host.files).toEqual({});
    await provider.close();
  });

  it('another disk sits at the number a fixed "#1" would name: ours is disk 2, and the run measures disk 2; the user\'s disk gets no write', async () => {
    await seedHypervState(stateDir, withUsersDisk());
    const compose = hypervProvider.compose(
      { provider: 'hyperv', sshHost: 'hv', vmName: 'bench-vm', volumes: { '100': 'D:\\bench' }, allowedDisks: [], scsiController: 0, scsiLocation: 1, guestCredential: { username: GUEST_CREDENTIAL.user, password: '${env:PW}' }, diskspdPath: 'C:\\Tools\\diskspd.exe' },
      { ssh: () => ssh, reveal: () => GUEST_CREDENTIAL.password } as unknown as ComposeContext,
    );
    const provider = await compose.connectProvider();
    const steps = compose.planSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 4 }, { prefix: 'ss-r2-p1' });
    const plan = onePermutationPlan('r2', steps);
    plan.permutations[0]!.steps[steps.length] = { step: 'workload', provider: 'hyperv', operation: 'diskspd', arguments: {}, destructive: false };
    plan.profiles.none = { ...profile, name: 'none' };
    const meta: RunMeta = { runId: 'r2', playbook: 'pb', playbookFile: '/pb.yaml', inventoryFile: '/inv.yaml', target: 't', startedAt: new Date().toISOString(), fingerprint: {}, insecureEndpoints: [] };
    const store = ResultStore.create(path.join(dir, 'run-r2'), meta, plan);
    const summary = await executeRun({ store, plan, provider, workload: compose.workload, signal: new AbortController().signal, retry: { retries: 0 } });
    expect(summary).toMatchObject({ done: 1, failed: 0 });
    const argv = diskspdRuns(await readPsLog(stateDir)).map((r) => r.argv);
    expect(argv.map((a) => a.at(-1))).toEqual(['#2']);
    const rec = store.records()[0]!;
    expect(rec.metadata).toMatchObject({ guestDisk: 2, guestDiskId: expect.stringMatching(/^60022480/), filesystem: 'raw' });
    const host = await readHypervState(stateDir);
    // the user's disk: nothing written to it, its volume untouched; ours is gone again
    expect((host.files['D:\\users\\data.vhdx'] as { guestWritten?: unknown }).guestWritten).toBeUndefined();
    expect(host.files['D:\\users\\data.vhdx']!.partitions).toHaveLength(1);
    expect(Object.keys(host.files)).toEqual(['D:\\users\\data.vhdx']);
    expect(host.vms['bench-vm']!.guestDisks).toEqual({ '0': 'SCSI:0:0', '1': 'SCSI:0:2' });
    expect(store.ledger().map((r) => [r.kind, r.state])).toEqual([['vhdx', 'removed'], ['disk-attachment', 'removed'], ['guest-disk', 'removed']]);
    store.close();
    await provider.close();
  });

  it('the disk found at LUN 1 carries a partition this run did not create: refused before any Set-Disk, nothing measured', async () => {
    await seedHypervState(stateDir);
    const provider = createHypervProvider(target, await connectSsh(ssh), guest);
    const steps = planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4 }, target, { base: 'ss-r3-p1' });
    const created: CreatedObject[] = [];
    for (const s of steps.slice(0, 2)) created.push((await provider.apply(s, ctx))!);
    // between attach and the guest step, something partitioned the disk
    editHost((st) => Object.assign(st.files['D:\\bench\\ss-r3-p1-disk.vhdx']!, { PartitionStyle: 'GPT', partitions: [{ PartitionNumber: 1, Guid: '{theirs}', Size: GiB, DriveLetter: 'Q', Type: 'Basic' }] }));
    const before = (await readPsLog(stateDir)).length;
    let sent = false;
    await expect(provider.apply(steps[2]!, { ...ctx, sent: () => void (sent = true) })).rejects.toThrow(/refusing to measure guest disk 1 of bench-vm: it carries 1 partition\(s\) this run did not create \(partition style GPT\); nothing was measured/);
    expect(sent).toBe(false);
    expect((await guestCalls(before)).map((c) => c.cmdlet)).toEqual(['Get-Disk']);
    expect((await readHypervState(stateDir)).vms['bench-vm']!.guestDiskState!['SCSI:0:1']).toEqual({ IsOffline: true, IsReadOnly: true });
    for (const o of created.reverse()) await provider.destroy(o, ctx);
    await provider.close();
  });

  it('two guest disks answer at LUN 1 with the same size (a second SCSI controller): refused, nothing brought online', async () => {
    const state = defaultHypervState() as unknown as Host;
    state.files['D:\\users\\twin.vhdx'] = { type: 'Fixed', size: 4 * GiB, fileSize: 4 * GiB, block: 0, logical: 512, physical: 4096 };
    state.vms['bench-vm']!.drives['SCSI:1:1'] = { Path: 'D:\\users\\twin.vhdx' };
    state.vms['bench-vm']!.guestDisks['1'] = 'SCSI:1:1';
    await seedHypervState(stateDir, state);
    const provider = createHypervProvider(target, await connectSsh(ssh), guest);
    const steps = planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4 }, target, { base: 'ss-r4-p1' });
    const created: CreatedObject[] = [];
    for (const s of steps.slice(0, 2)) created.push((await provider.apply(s, ctx))!);
    const before = (await readPsLog(stateDir)).length;
    await expect(provider.apply(steps[2]!, ctx)).rejects.toThrow(/guest disks 1, 2 all report LUN 1 and 4294967296 bytes \(the VM has several SCSI controllers\); cannot tell which is the drive this run attached at bench-vm SCSI 0:1/);
    expect((await guestCalls(before)).map((c) => c.cmdlet)).toEqual(['Get-Disk']);
    for (const o of created.reverse()) await provider.destroy(o, ctx);
    await provider.close();
  });

  it('a pass-through disk is found by LUN, size and the host disk serial; the plan names it destroyed', async () => {
    await seedHypervState(stateDir, withUsersDisk());
    const provider = createHypervProvider(target, await connectSsh(ssh), guest);
    const steps = planHypervSteps({ 'disk.format': 'passthrough' }, target, { base: 'ss-r5-p1' });
    expect(steps.at(-1)).toMatchObject({ step: 'guest-disk', destructive: true, destroys: ['disk2:S4EWNX0R123456'], arguments: { diskNumber: 2, controllerLocation: 1 } });
    const created: CreatedObject[] = [];
    for (const s of steps) created.push((await provider.apply(s, ctx))!);
    expect(created.at(-1)).toMatchObject({ data: { guestDiskNumber: 2, serialNumber: 'S4EWNX0R123456', sizeBytes: 500 * GiB } });
    for (const o of created.reverse()) expect(await provider.destroy(o, ctx)).toBe('removed');
    const host = await readHypervState(stateDir);
    expect(host.disks.find((d) => d.Number === 2)).toMatchObject({ IsOffline: false, NumberOfPartitions: 0 });
    await provider.close();
  });
});

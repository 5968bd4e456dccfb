// The Hyper-V provider end to end over a real OpenSSH server whose PATH holds the strict
// powershell.exe stand-in (src/lab/harness/windows): -EncodedCommand decoding, the known script shapes,
// cmdlet parameter sets and the host model are the stand-in's; everything else is real.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteCommandFailed, UnsafeOperation } from '../../src/errors.ts';
import type { HypervTargetConfig } from '../../src/providers/hyperv/config.ts';
import { planHypervSteps } from '../../src/providers/hyperv/plan.ts';
import { setDiskOfflineCall } from '../../src/providers/hyperv/passthrough.ts';
import { runCalls } from '../../src/providers/hyperv/powershell.ts';
import { createHypervProvider, runGuestDiskspd, runGuestDiskspdArgv } from '../../src/providers/hyperv/provider.ts';
import type { CreatedObject, ProviderContext, WorkloadEndpoint } from '../../src/contract/provider.ts';
import type { CommandRunner } from '../../src/ssh/command-runner.ts';
import { cleanupLedger } from '../../src/run/teardown.ts';
import { executeSteps, onePermutationPlan } from '../helpers/executor-run.ts';
import { ResultStore, type RunMeta } from '../../src/results/store.ts';
import { executeRun } from '../../src/run/executor.ts';
import type { GroupStop } from '../../src/ssh/process-group.ts';
import { parseDiskspdXml } from '../../src/workloads/diskspd.ts';
import { makeTest } from '../../src/workloads/profiles.ts';
import { diskspdCreateOnlyArgs, runDiskspdFill } from '../../src/workloads/prefill.ts';
import type { WorkloadProfile } from '../../src/workloads/spec.ts';
import { defaultHypervState, GUEST_CREDENTIAL, readHypervState, readPsLog, seedHypervState, diskspdRuns } from '../../src/lab/harness/windows/state.ts';
import { startWindowsStandin, type WindowsStandin } from '../helpers/windows-standin.ts';

let hv: WindowsStandin;
let dir: string;
let stateDir: string;
const ctx: ProviderContext = { runId: 'r1', permutationId: 'p1', axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined };
const target: HypervTargetConfig = {
  host: 'hv-standin',
  vmName: 'bench-vm',
  volumes: { '100': 'D:\\bench', '2000': 'E:\\bench' },
  allowedDisks: [{ number: 2, serialNumber: 'S4EWNX0R123456' }, { number: 3, uniqueId: '6002248000000000000000000000A003' }, { number: 0, serialNumber: 'SYS-0001' }],
  passthroughDisk: 2,
};

beforeAll(async () => {
  hv = await startWindowsStandin('ss-hv-');
  dir = hv.dir;
  stateDir = hv.stateDir;
});

afterAll(async () => {
  await hv?.stop();
});

/** The host-side steps only (what these tests are about); the guest-disk step has its own tests below. */
const hostSteps = (...args: Parameters<typeof planHypervSteps>) => planHypervSteps(...args).filter((s) => s.step !== 'guest-disk');

const connect = () => hv.connect();

describe('hyperv provider over SSH (stand-in powershell.exe)', () => {
  it('creates a fixed 4K-sector VHDX on the 2000 GB volume, attaches it on SCSI 0:1, and removes both', async () => {
    await seedHypervState(stateDir);
    const provider = createHypervProvider(target, await connect());
    const steps = hostSteps({ 'volume.sizeGb': 2000, 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 8, 'disk.logicalSectorBytes': 4096, 'disk.physicalSectorBytes': 4096 }, target, { base: 'ss-r1-p1' });
    const created: CreatedObject[] = [];
    for (const s of steps) created.push((await provider.apply(s, ctx))!);
    const vhdx = 'E:\\bench\\ss-r1-p1-disk.vhdx';
    const calls = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []);
    expect(calls).toEqual([
      { cmdlet: 'New-VHD', params: { Path: vhdx, SizeBytes: 8 * 1024 ** 3, Fixed: true, LogicalSectorSizeBytes: 4096, PhysicalSectorSizeBytes: 4096 }, select: expect.any(Array) },
      // the location comes from the VM's own listing: 0:0 holds the OS disk, 0:1 is free
      { cmdlet: 'Get-VMHardDiskDrive', params: { VMName: 'bench-vm' }, select: expect.any(Array) },
      { cmdlet: 'Add-VMHardDiskDrive', params: { VMName: 'bench-vm', ControllerType: 'SCSI', ControllerNumber: 0, ControllerLocation: 1, Path: vhdx } },
    ]);
    expect(created[0]!.data.vhd).toMatchObject({ Path: vhdx, VhdType: 'Fixed', Size: 8 * 1024 ** 3, LogicalSectorSize: 4096, BlockSize: 0 });
    let state = await readHypervState(stateDir);
    expect(state.vms['bench-vm']!.drives['SCSI:0:1']).toEqual({ Path: vhdx });
    expect(await provider.find({ kind: 'vhdx', name: 'ss-r1-p1-disk' })).toMatchObject({ id: vhdx });

    for (const o of [...created].reverse()) expect(await provider.destroy(o, ctx)).toBe('removed');
    state = await readHypervState(stateDir);
    expect(state.files).toEqual({});
    expect(Object.keys(state.vms['bench-vm']!.drives)).toEqual(['SCSI:0:0']);
    for (const o of [...created].reverse()) expect(await provider.destroy(o, ctx)).toBe('absent');
    await provider.close();
  });

  it('dynamic VHDX with a 1 MiB block size; a block size the cmdlet refuses surfaces as its error', async () => {
    await seedHypervState(stateDir);
    const provider = createHypervProvider(target, await connect());
    const [vhdx] = hostSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4, 'disk.blockSizeBytes': 1048576 }, target, { base: 'ss-r1-p2' });
    const o = await provider.apply(vhdx!, ctx);
    expect(o!.data.vhd).toMatchObject({ VhdType: 'Dynamic', BlockSize: 1048576, LogicalSectorSize: 512 });
    // apply parses step arguments with New-VHD's schema: a step edited in the ledger cannot smuggle a bad value through
    const bad = { ...vhdx!, arguments: { ...vhdx!.arguments, path: 'D:\\bench\\ss-r1-p3-disk.vhdx', logicalSectorBytes: 1024 } };
    await expect(provider.apply(bad, ctx)).rejects.toThrow(/step vhdx \(New-VHD\): arguments\.logicalSectorBytes: /);
    await provider.close();
  });

  it('pass-through: offlines only an allowed, unused disk; refuses system disks and wrong serials before Set-Disk', async () => {
    await seedHypervState(stateDir);
    const runner = await connect();
    const provider = createHypervProvider(target, runner);
    const steps = hostSteps({ 'disk.format': 'passthrough' }, target, { base: 'ss-r1-p4' });
    const created = [];
    for (const s of steps) created.push((await provider.apply(s, ctx))!);
    let state = await readHypervState(stateDir);
    expect(state.disks.find((d) => d.Number === 2)!.IsOffline).toBe(true);
    expect(state.vms['bench-vm']!.drives['SCSI:0:1']).toMatchObject({ DiskNumber: 2 });
    for (const o of created.reverse()) expect(await provider.destroy(o, ctx)).toBe('removed');
    state = await readHypervState(stateDir);
    expect(state.disks.find((d) => d.Number === 2)!.IsOffline).toBe(false);

    await seedHypervState(stateDir);
    const offline = (n: number, t: HypervTargetConfig = target) => createHypervProvider(t, runner).apply(hostSteps({ 'disk.format': 'passthrough' }, { ...t, passthroughDisk: n }, { base: 'ss-r1-p5' })[0]!, ctx);
    await expect(offline(0)).rejects.toThrow(/system disk/);
    await expect(offline(3)).rejects.toThrow(/1 partition/);
    await expect(offline(2, { ...target, allowedDisks: [{ number: 2, serialNumber: 'OTHER' }] })).rejects.toThrow(UnsafeOperation);
    const sent = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet);
    expect(sent).toEqual(['Get-Disk', 'Get-Disk', 'Get-Disk']);
    await provider.close();
  });

  it('runs diskspd in the guest via PowerShell Direct with the credential on stdin only', async () => {
    const state = defaultHypervState() as { vms: Record<string, { drives: Record<string, unknown> }>; files: Record<string, unknown> };
    state.vms['bench-vm']!.drives['SCSI:0:1'] = { Path: 'E:\\bench\\ss-r1-p8-disk.vhdx' };
    (state.vms['bench-vm'] as unknown as { guestDisks: Record<string, string> }).guestDisks['1'] = 'SCSI:0:1';
    state.files['E:\\bench\\ss-r1-p8-disk.vhdx'] = { type: 'Fixed', size: 8 * 1024 ** 3, fileSize: 8 * 1024 ** 3, block: 0, logical: 512, physical: 4096 };
    await seedHypervState(stateDir, state);
    const runner = await connect();
    const profile: WorkloadProfile = { name: 't', description: 't', tests: [], fileSizeBytes: 1024 ** 3, runtimeSec: 5, rampSec: 0, passes: 1, warmupPass: false, intervalSec: 0, direct: true, aggregate: 'max' };
    const xml = await runGuestDiskspd(runner, target, GUEST_CREDENTIAL, makeTest('randread', 4096, 32, 1), profile, { guestTarget: '#1' });
    const parsed = parseDiskspdXml(xml, 'guest');
    // the diskspd stand-in's device model: 16 I/Os in flight at 82.56 µs each, 5 s
    expect(parsed.timeSpans[0]!.read.iops).toBe(968992 / 5);
    const log = await readPsLog(stateDir);
    expect(log[0]!.data).toEqual({ vmName: 'bench-vm', exe: 'diskspd.exe', argv: ['-b4K', '-o32', '-t1', '-r', '-w0', '-d5', '-W0', '-S', '-f1G', '-L', '-Rxml', '#1'] });
    expect(JSON.stringify(log)).not.toContain(GUEST_CREDENTIAL.password);
    const wrong = runGuestDiskspd(runner, target, { user: 'bench\\admin', password: 'nope' }, makeTest('randread', 4096, 1, 1), profile, { guestTarget: '#1' });
    await expect(wrong).rejects.toThrow(RemoteCommandFailed);
    await expect(wrong).rejects.not.toThrow(/nope/);
    await runner.close();
  });

  it('diskspd takes a partition (T:) as a raw target, like real diskspd ("named partitions: DriveLetter:"); no file is made in it', async () => {
    const state = defaultHypervState() as { vms: Record<string, { drives: Record<string, unknown> }>; files: Record<string, unknown> };
    const vhdx = 'E:\\bench\\ss-r1-p9-disk.vhdx';
    state.vms['bench-vm']!.drives['SCSI:0:1'] = { Path: vhdx };
    // a disk the guest formatted as T: (a new VHDX has no volume: see the next test)
    state.files[vhdx] = { type: 'Fixed', size: 8 * 1024 ** 3, fileSize: 8 * 1024 ** 3, block: 0, logical: 512, physical: 4096, formatted: true };
    await seedHypervState(stateDir, state);
    const runner = await connect();
    const profile: WorkloadProfile = { name: 't', description: 't', tests: [], fileSizeBytes: 1024 ** 3, runtimeSec: 5, rampSec: 0, passes: 1, warmupPass: false, intervalSec: 0, direct: true, aggregate: 'max' };
    const xml = await runGuestDiskspd(runner, target, GUEST_CREDENTIAL, makeTest('randwrite', 4096, 8, 1), profile, { guestTarget: 'T:' });
    expect(parseDiskspdXml(xml, 'guest').timeSpans[0]!.write.iops).toBeGreaterThan(0);
    expect((await readHypervState(stateDir)).files[vhdx]!.guestFiles ?? {}).toEqual({});
    // a letter no guest volume has is refused the way diskspd refuses a path it cannot open
    await expect(runGuestDiskspd(runner, target, GUEST_CREDENTIAL, makeTest('randread', 4096, 1, 1), profile, { guestTarget: 'Q:' })).rejects.toThrow(/Could not open Q:/);
    await runner.close();
  });

  it('pre-fill on a Dynamic VHDX: diskspd -c re-creates the file with nothing written (reads are zeros, fast); after the fill reads reach the host; the next -c undoes it', async () => {
    const state = defaultHypervState() as { vms: Record<string, { drives: Record<string, unknown> }>; files: Record<string, unknown> };
    const vhdx = 'E:\\bench\\ss-r1-p7-disk.vhdx';
    state.vms['bench-vm']!.drives['SCSI:0:1'] = { Path: vhdx };
    // a disk the guest formatted as T: (a new VHDX has no volume)
    state.files[vhdx] = { type: 'Dynamic', size: 8 * 1024 ** 3, fileSize: 4 * 1024 ** 2, block: 32 * 1024 ** 2, logical: 512, physical: 4096, formatted: true };
    await seedHypervState(stateDir, state);
    const runner = await connect();
    const profile: WorkloadProfile = { name: 't', description: 't', tests: [], fileSizeBytes: 64 * 1024 ** 2, runtimeSec: 5, rampSec: 0, passes: 1, warmupPass: false, intervalSec: 0, direct: true, aggregate: 'max' };
    const file = 'T:\\storsweep.dat';
    const pass = (argv: string[]) => runGuestDiskspdArgv(runner, target, GUEST_CREDENTIAL, argv, {});
    const readIops = async () => parseDiskspdXml(await runGuestDiskspd(runner, target, GUEST_CREDENTIAL, makeTest('randread', 4096, 32, 1), profile, { guestTarget: file }), 'guest').timeSpans[0]!.read.iops;
    // a measured pass never creates the file: without the create/fill step there is nothing to read
    await expect(readIops()).rejects.toThrow(/cannot find the file specified/);
    await pass(diskspdCreateOnlyArgs(profile, file)!);
    const unwritten = await readIops();
    const fill = await runDiskspdFill(profile, file, pass);
    expect(fill).toMatchObject({ filled: true, bytes: 64 * 1024 ** 2, passes: 1 });
    const filled = await readIops();
    expect(unwritten).toBeGreaterThan(filled * 3);
    const written = (await readHypervState(stateDir)).files[vhdx] as unknown as { guestFiles: Record<string, number>; guestWritten: Record<string, { ranges: number[][] }> };
    expect(written.guestFiles).toEqual({ 'storsweep.dat': 64 * 1024 ** 2 });
    expect(written.guestWritten['storsweep.dat']!.ranges).toEqual([[0, 64 * 1024 ** 2]]);
    // what -c on every pass did before: the file re-created, nothing written, zeros read again
    await pass(diskspdCreateOnlyArgs(profile, file)!);
    expect(await readIops()).toBe(unwritten);
    const log = diskspdRuns(await readPsLog(stateDir)).map((r) => r.argv);
    expect(log.filter((a) => a.some((x) => x.startsWith('-c'))).map((a) => a.slice(0, 5).join(' '))).toEqual(['-b1M -o1 -t1 -w0 -d1', '-b1M -o8 -t1 -s -w100', '-b1M -o1 -t1 -w0 -d1']);
    await runner.close();
  });

  it('a VHDX New-VHD just made reaches the guest blank: no T: volume on it (T:\\storsweep.dat and T: cannot be opened), only the physical drive #1 is it; #2 is no disk; a pass-through disk is #1 too', async () => {
    await seedHypervState(stateDir);
    const runner = await connect();
    const provider = createHypervProvider(target, runner);
    const created: CreatedObject[] = [];
    for (const s of hostSteps({ 'volume.sizeGb': 2000, 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 8 }, target, { base: 'ss-r1-p10' })) created.push((await provider.apply(s, ctx))!);
    const profile: WorkloadProfile = { name: 't', description: 't', tests: [], fileSizeBytes: 16 * 1024 ** 2, runtimeSec: 1, rampSec: 0, passes: 1, warmupPass: false, intervalSec: 0, direct: true, aggregate: 'max' };
    const diskspd = (guestTarget: string) => runGuestDiskspd(runner, target, GUEST_CREDENTIAL, makeTest('randread', 4096, 1, 1), profile, { guestTarget });
    await expect(diskspd('T:\\storsweep.dat')).rejects.toThrow(/Could not open T:\\storsweep\.dat: The system cannot find the path specified/);
    await expect(diskspd('T:')).rejects.toThrow(/Could not open T:/);
    await expect(diskspd('#2')).rejects.toThrow(/Could not open #2/);
    expect(parseDiskspdXml(await diskspd('#1'), 'guest').timeSpans[0]!.read.iops).toBeGreaterThan(0);
    for (const o of created.reverse()) await provider.destroy(o, ctx);
    // nothing at SCSI 0:1 now: #1 is no disk either
    await expect(diskspd('#1')).rejects.toThrow(/Could not open #1/);
    // a pass-through disk at SCSI 0:1 is the guest's disk 1
    const pt: CreatedObject[] = [];
    for (const s of hostSteps({ 'disk.format': 'passthrough' }, target, { base: 'ss-r1-p11' })) pt.push((await provider.apply(s, ctx))!);
    expect(parseDiskspdXml(await diskspd('#1'), 'guest').timeSpans[0]!.read.iops).toBeGreaterThan(0);
    await expect(diskspd('T:\\storsweep.dat')).rejects.toThrow(/Could not open/);
    for (const o of pt.reverse()) await provider.destroy(o, ctx);
    await provider.close();
  });

  it("SCSI 0:1 (the configured location) holds the user's drive: the attach is refused, nothing measured, the user's drive stays", async () => {
    const state = defaultHypervState() as { vms: Record<string, { drives: Record<string, unknown> }>; files: Record<string, unknown> };
    const users = 'E:\\bench\\users-data.vhdx';
    state.vms['bench-vm']!.drives['SCSI:0:1'] = { Path: users };
    state.files[users] = { type: 'Fixed', size: 1024 ** 3, fileSize: 1024 ** 3 + 4 * 1024 ** 2, block: 0, logical: 512, physical: 4096 };
    await seedHypervState(stateDir, state);
    const provider = createHypervProvider(target, await connect());
    const steps = hostSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4 }, target, { base: 'ss-r7-p1' });
    const { store, summary } = await executeSteps(dir, 'r7', steps, provider);
    // the host first: the user's drive is still attached at 0:1, nothing else attached, our VHDX is gone
    const after = await readHypervState(stateDir);
    expect(after.vms['bench-vm']!.drives).toEqual({ 'SCSI:0:0': { Path: 'C:\\VMs\\bench-vm\\os.vhdx' }, 'SCSI:0:1': { Path: users } });
    expect(Object.keys(after.files)).toEqual([users]);
    // nothing measured: no test file written into the user's disk, no result recorded
    expect((after.files[users] as { guestFiles?: Record<string, unknown> }).guestFiles ?? {}).toEqual({});
    expect(summary).toMatchObject({ done: 0, failed: 1 });
    expect(store.permutations()[0]!.reason).toMatch(/SCSI 0:1 of bench-vm already holds E:\\bench\\users-data\.vhdx[\s\S]*point the inventory's scsiLocation at a free one/);
    const calls = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet);
    expect(calls).not.toContain('Add-VMHardDiskDrive');
    expect(calls).not.toContain('Remove-VMHardDiskDrive');
    expect(store.ledger().find((r) => r.kind === 'disk-attachment')).toMatchObject({ state: 'refused' });
    expect(store.ledger().find((r) => r.kind === 'vhdx')).toMatchObject({ state: 'removed' });
    store.close();
    await provider.close();
  });

  it("a failed attach never detaches the drive that was already there", async () => {
    // the location was free when listed, then taken before Add-VMHardDiskDrive (a race): Hyper-V refuses it
    await seedHypervState(stateDir);
    const provider = createHypervProvider(target, await connect());
    const steps = hostSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4 }, target, { base: 'ss-r6-p1' });
    // sent() runs after the listing and right before Add-VMHardDiskDrive: the user takes 0:1 then
    const takeLocation = () => {
      const file = path.join(stateDir, 'hyperv.json');
      const st = JSON.parse(readFileSync(file, 'utf8')) as { vms: Record<string, { drives: Record<string, unknown> }> };
      st.vms['bench-vm']!.drives['SCSI:0:1'] = { Path: 'E:\\bench\\late-user.vhdx' };
      writeFileSync(file, JSON.stringify(st));
    };
    const racing: typeof provider = {
      ...provider,
      apply: (step, c) =>
        provider.apply(step, step.step !== 'attach' ? c : { ...c, sent: async (d) => {
          await c.sent(d);
          takeLocation();
        } }),
    };
    const { store, summary } = await executeSteps(dir, 'r6', steps, racing);
    expect(summary.failed).toBe(1);
    expect(store.permutations()[0]!.reason).toMatch(/Add-VMHardDiskDrive : 'bench-vm' failed to add resources[\s\S]*0:1 is already in use/);
    const after = await readHypervState(stateDir);
    expect(after.vms['bench-vm']!.drives['SCSI:0:1']).toEqual({ Path: 'E:\\bench\\late-user.vhdx' });
    const calls = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet);
    expect(calls).not.toContain('Remove-VMHardDiskDrive');
    expect(after.files).toEqual({});
    store.close();
    await provider.close();
  });

  it('a refused pass-through sends no Set-Disk at all: not to disk 0, not to any disk', async () => {
    // disk 0 here is another VM's pass-through disk, offline on purpose (issue 11, item 2)
    const state = defaultHypervState() as { disks: Array<Record<string, unknown>> };
    state.disks = state.disks.map((d) => (d.Number === 0 ? { ...d, IsSystem: false, IsBoot: false, IsOffline: true, NumberOfPartitions: 0, SerialNumber: 'OTHER-VM-PT' } : d));
    await seedHypervState(stateDir, state);
    const t3 = { ...target, passthroughDisk: 3 };
    const provider = createHypervProvider(t3, await connect());
    const { store, summary } = await executeSteps(dir, 'r5', hostSteps({ 'disk.format': 'passthrough' }, t3, { base: 'ss-r5-p1' }), provider);
    expect(summary.failed).toBe(1);
    expect(store.permutations()[0]!.reason).toMatch(/refusing to take disk 3 offline for pass-through: it has 1 partition/);
    expect(store.ledger().map((r) => [r.kind, r.state])).toEqual([['disk-offline', 'refused']]);
    const calls = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []);
    expect(calls.filter((c) => c.cmdlet === 'Set-Disk')).toEqual([]);
    const after = await readHypervState(stateDir);
    expect(after.disks.map((d) => [d.Number, d.IsOffline])).toEqual([
      [0, true],
      [2, false],
      [3, false],
    ]);
    store.close();
    await provider.close();
  });
});

describe('hyperv pass-through: the SSH connection drops right after Add-VMHardDiskDrive went through', () => {
  it('the retry finds our drive at the recorded slot by the disk serial instead of re-attaching (and refusing its own drive); teardown removes it and brings the disk back', async () => {
    await seedHypervState(stateDir);
    const real = await connect();
    let dropped = 0;
    // the call reaches the host and runs; its reply is lost with the connection
    const flaky: CommandRunner = {
      target: real.target,
      run: async (command, options) => {
        const before = (await readPsLog(stateDir)).length;
        const r = await real.run(command, options);
        const calls = (await readPsLog(stateDir)).slice(before).flatMap((l) => l.data.calls ?? []);
        if (dropped === 0 && calls.some((c) => c.cmdlet === 'Add-VMHardDiskDrive')) {
          dropped++;
          throw new RemoteCommandFailed({ host: real.target, command: 'powershell.exe', exitCode: null, stderr: '', reason: 'connection', detail: 'lost its connection' });
        }
        return r;
      },
      close: () => real.close(),
    };
    const provider = createHypervProvider(target, flaky);
    const { store, summary } = await executeSteps(dir, 'r20', hostSteps({ 'disk.format': 'passthrough' }, target, { base: 'ss-r20-p1' }), provider, { keep: true, retries: 2 });
    expect(dropped).toBe(1);
    expect(summary.failed).toBe(0);
    expect(store.ledgerRow('disk-attachment', 'ss-r20-p1-attach')).toMatchObject({ state: 'kept', objectId: 'bench-vm:SCSI:0:1', data: { controllerLocation: 1, diskNumber: 2, serialNumber: 'S4EWNX0R123456' } });
    const adds = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []).filter((c) => c.cmdlet === 'Add-VMHardDiskDrive');
    expect(adds).toHaveLength(1);
    expect(await cleanupLedger(store, async () => provider, () => undefined)).toBe(0);
    const host = await readHypervState(stateDir);
    expect(host.vms['bench-vm']!.drives).toEqual({ 'SCSI:0:0': { Path: 'C:\\VMs\\bench-vm\\os.vhdx' } });
    expect(host.disks.find((d) => d.Number === 2)!.IsOffline).toBe(false);
    store.close();
    await provider.close();
  });
});

// `storsweep cleanup` of a kept pass-through permutation, on a host that changed since the run.
describe('hyperv cleanup: a pass-through disk comes back online only when it is provably ours and no VM holds it', () => {
  type Host = { disks: Array<Record<string, unknown>>; vms: Record<string, { state?: string; drives: Record<string, Record<string, unknown>> }> };
  const editHost = (edit: (st: Host) => void) => {
    const file = path.join(stateDir, 'hyperv.json');
    const st = JSON.parse(readFileSync(file, 'utf8')) as Host;
    edit(st);
    writeFileSync(file, JSON.stringify(st));
  };
  const onlineCalls = async (since = 0) => (await readPsLog(stateDir)).slice(since).flatMap((l) => l.data.calls ?? []).filter((c) => c.cmdlet === 'Set-Disk' && c.params.IsOffline === false);
  /** a kept pass-through permutation: disk 2 offline, attached to bench-vm at SCSI 0:1 */
  const keptRun = async (runId: string) => {
    const state = defaultHypervState() as Host;
    state.vms['other-vm'] = { state: 'Off', drives: {} };
    await seedHypervState(stateDir, state);
    const provider = createHypervProvider(target, await connect());
    const { store, summary } = await executeSteps(dir, runId, hostSteps({ 'disk.format': 'passthrough' }, target, { base: `ss-${runId}-p1` }), provider, { keep: true });
    expect(summary.failed).toBe(0);
    expect(store.leftovers().map((r) => [r.kind, r.state])).toEqual([['disk-offline', 'kept'], ['disk-attachment', 'kept']]);
    return { store, provider };
  };

  it('another VM now holds the disk as pass-through: it stays offline, the row stays open with the reason, and a later cleanup brings it back once it is free', async () => {
    const { store, provider } = await keptRun('r11');
    // after the run, someone put a drive of their own at SCSI 0:1 and gave the (still offline) disk to another VM
    editHost((st) => {
      st.vms['bench-vm']!.drives['SCSI:0:1'] = { Path: 'E:\\bench\\users.vhdx' };
      st.vms['other-vm']!.drives['SCSI:0:0'] = { DiskNumber: 2, Path: 'Disk 2 500 GB Bus 0 Lun 0 Target 2' };
    });
    // the stand-in is as strict as the host: Set-Disk cannot bring a disk a VM holds online
    const runner = await connect();
    await expect(runCalls(runner, [setDiskOfflineCall(2, false)])).rejects.toThrow(/Set-Disk : Disk is in use/);
    await runner.close();

    const before = (await readPsLog(stateDir)).length;
    const said: string[] = [];
    expect(await cleanupLedger(store, async () => provider, (l) => said.push(l))).toBe(1);
    expect(said).toEqual(['  disk-attachment ss-r11-p1-attach: bench-vm SCSI 0:1 holds a drive this run did not attach; left alone', 'already gone: disk-attachment ss-r11-p1-attach', expect.stringMatching(/^could not remove disk-offline ss-r11-p1-offline: hv-standin: left alone: disk 2 \(serial S4EWNX0R123456, unique id 6002248000000000000000000000A002\) is held as a pass-through disk by other-vm SCSI 0:0; not brought online/)]);
    let host = await readHypervState(stateDir);
    expect(host.disks.find((d) => d.Number === 2)!.IsOffline).toBe(true);
    expect(host.vms['other-vm']!.drives).toEqual({ 'SCSI:0:0': { DiskNumber: 2, Path: 'Disk 2 500 GB Bus 0 Lun 0 Target 2' } });
    expect(host.vms['bench-vm']!.drives['SCSI:0:1']).toEqual({ Path: 'E:\\bench\\users.vhdx' });
    expect(await onlineCalls(before)).toEqual([]);
    expect(store.ledgerRow('disk-offline', 'ss-r11-p1-offline')).toMatchObject({ state: 'remove-failed', error: expect.stringMatching(/held as a pass-through disk by other-vm/) });

    // the other VM lets go of it: the next cleanup brings it back online
    editHost((st) => {
      st.vms['other-vm']!.drives = {};
    });
    expect(await cleanupLedger(store, async () => provider, () => undefined)).toBe(0);
    host = await readHypervState(stateDir);
    expect(host.disks.find((d) => d.Number === 2)!.IsOffline).toBe(false);
    expect(store.leftovers()).toEqual([]);
    store.close();
    await provider.close();
  });

  it('disks renumbered after the run (reboot): our disk is found by its serial, detached and brought online under its new number; the disk now numbered 2 is not touched', async () => {
    const { store, provider } = await keptRun('r12');
    // a reboot: our disk (S4EWNX0R123456) is disk 5 now, and the user's disk DATA-3 took number 2
    // and is offline, handed to other-vm as a pass-through disk
    editHost((st) => {
      for (const d of st.disks) {
        if (d.SerialNumber === 'S4EWNX0R123456') d.Number = 5;
        else if (d.SerialNumber === 'DATA-3') Object.assign(d, { Number: 2, IsOffline: true });
      }
      st.vms['bench-vm']!.drives['SCSI:0:1'] = { DiskNumber: 5, Path: 'Disk 5 500 GB Bus 0 Lun 0 Target 5' };
      st.vms['other-vm']!.drives['SCSI:0:0'] = { DiskNumber: 2, Path: 'Disk 2 500 GB Bus 0 Lun 0 Target 2' };
    });
    const said: string[] = [];
    expect(await cleanupLedger(store, async () => provider, (l) => said.push(l))).toBe(0);
    expect(said).toEqual(['removed: disk-attachment ss-r12-p1-attach', 'removed: disk-offline ss-r12-p1-offline']);
    const host = await readHypervState(stateDir);
    expect(host.disks.map((d) => [d.Number, d.IsOffline])).toEqual([[0, false], [5, false], [2, true]]);
    expect(host.vms['bench-vm']!.drives).toEqual({ 'SCSI:0:0': { Path: 'C:\\VMs\\bench-vm\\os.vhdx' } });
    expect(host.vms['other-vm']!.drives).toEqual({ 'SCSI:0:0': { DiskNumber: 2, Path: 'Disk 2 500 GB Bus 0 Lun 0 Target 2' } });
    expect((await onlineCalls()).map((c) => c.params.Number)).toEqual([5]);
    // how each was found is in the journal
    expect(store.journal().filter((j) => j.event === 'cleanup-note').map((j) => [j.step, (j.detail as { message: string }).message])).toEqual([
      ['disk-attachment:ss-r12-p1-attach', 'bench-vm SCSI 0:1: the disk this run attached as disk 2 is disk 5 now (same serial S4EWNX0R123456, unique id 6002248000000000000000000000A002)'],
      ['disk-offline:ss-r12-p1-offline', 'the disk this run took offline as disk 2 is disk 5 now (same serial S4EWNX0R123456, unique id 6002248000000000000000000000A002)'],
    ]);
    store.close();
    await provider.close();
  });

  it('the drive at SCSI 0:1 reports no DiskNumber (Hyper-V no longer resolves its disk): not called gone, the disk stays offline and attached, both rows stay open', async () => {
    const { store, provider } = await keptRun('r16');
    // Get-VMHardDiskDrive shows a pass-through drive with an empty DiskNumber when Hyper-V cannot
    // resolve the physical disk; the VM still references it
    editHost((st) => {
      st.vms['bench-vm']!.drives['SCSI:0:1']!.DiskNumber = null;
    });
    const before = (await readPsLog(stateDir)).length;
    const said: string[] = [];
    expect(await cleanupLedger(store, async () => provider, (l) => said.push(l))).toBe(2);
    expect(said).toEqual([
      expect.stringMatching(/^could not remove disk-attachment ss-r16-p1-attach: .*bench-vm SCSI 0:1 holds a pass-through drive whose disk Hyper-V does not resolve \(DiskNumber empty, Path "Disk 2 500 GB Bus 0 Lun 0 Target 2"\); cannot tell whether it is the disk this run attached \(disk 2, serial S4EWNX0R123456/),
      expect.stringMatching(/^could not remove disk-offline ss-r16-p1-offline: .*held as a pass-through disk by bench-vm SCSI 0:1 \(a pass-through drive whose disk Hyper-V does not resolve.*possibly disk 2\); not brought online/),
    ]);
    expect(store.leftovers().map((r) => [r.kind, r.state])).toEqual([['disk-offline', 'remove-failed'], ['disk-attachment', 'remove-failed']]);
    const host = await readHypervState(stateDir);
    expect(host.disks.find((d) => d.Number === 2)!.IsOffline).toBe(true);
    expect(host.vms['bench-vm']!.drives['SCSI:0:1']).toEqual({ DiskNumber: null, Path: 'Disk 2 500 GB Bus 0 Lun 0 Target 2' });
    expect(await onlineCalls(before)).toEqual([]);
    expect((await readPsLog(stateDir)).slice(before).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet)).not.toContain('Remove-VMHardDiskDrive');
    store.close();
    await provider.close();
  });

  it('the disk is not visible at all (LUN unmapped): nothing is brought online, both rows stay open with the reason', async () => {
    const { store, provider } = await keptRun('r13');
    editHost((st) => {
      st.disks = st.disks.filter((d) => d.SerialNumber !== 'S4EWNX0R123456');
      // the drive now points at a disk number nothing has; disk 3 (DATA-3) is renumbered to 2
      st.vms['bench-vm']!.drives['SCSI:0:1'] = { DiskNumber: 7, Path: 'Disk 7 500 GB Bus 0 Lun 0 Target 7' };
      for (const d of st.disks) if (d.SerialNumber === 'DATA-3') d.Number = 2;
    });
    const said: string[] = [];
    expect(await cleanupLedger(store, async () => provider, (l) => said.push(l))).toBe(2);
    expect(said).toEqual([
      expect.stringMatching(/^could not remove disk-attachment ss-r13-p1-attach: .*holds disk 7, which Get-Disk does not report; cannot tell/),
      expect.stringMatching(/^could not remove disk-offline ss-r13-p1-offline: .*no disk on the host carries serial S4EWNX0R123456, unique id 6002248000000000000000000000A002 \(it was disk 2\)/),
    ]);
    expect(store.leftovers().map((r) => r.state)).toEqual(['remove-failed', 'remove-failed']);
    const host = await readHypervState(stateDir);
    expect(host.disks.map((d) => [d.Number, d.IsOffline])).toEqual([[0, false], [2, false]]);
    expect(host.vms['bench-vm']!.drives['SCSI:0:1']).toEqual({ DiskNumber: 7, Path: 'Disk 7 500 GB Bus 0 Lun 0 Target 7' });
    expect(await onlineCalls()).toEqual([]);
    const calls = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet);
    expect(calls).not.toContain('Remove-VMHardDiskDrive');
    store.close();
    await provider.close();
  });
});

// A disk is never detached or deleted while our tool may still write to it (a stop that could not
// be confirmed): the objects stay, the rows stay open with the reason, and a resume neither tears
// them down nor redoes the permutation until the tool is confirmed gone.
describe('teardown waits for the tool: an unconfirmed stop leaves the disk in place', () => {
  const vhdx = 'D:\\bench\\ss-r31-p1-disk.vhdx';
  const stillRunning: GroupStop = { pgid: 4242, outcome: 'still-running', signal: 'KILL', pids: [4243], detail: 'still alive after SIGKILL' };
  const endpoint = (opts: { stopOnTest?: GroupStop; leftovers?: GroupStop }): WorkloadEndpoint => ({
    tool: 'diskspd',
    connect: async () => ({ target: 'guest', run: async () => ({ command: '', exitCode: 0, stdout: '', stderr: '' }), close: async () => undefined }) as never,
    runTest: async (_runner, _test, _profile, o) => {
      // the test timed out; its stop could not confirm that the tool ended
      if (opts.stopOnTest) o.onStopped?.(opts.stopOnTest);
      throw new Error('diskspd timed out');
    },
    ...(opts.leftovers ? { stopLeftovers: async () => opts.leftovers! } : {}),
  });
  const hostHasOurs = async () => {
    const host = await readHypervState(stateDir);
    return { file: vhdx in host.files, attached: host.vms['bench-vm']!.drives['SCSI:0:1']?.Path === vhdx };
  };

  it('teardown holds, resume holds while the stop is unconfirmed, and goes ahead once it is confirmed', async () => {
    await seedHypervState(stateDir);
    const provider = createHypervProvider(target, await connect());
    const steps = hostSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4 }, target, { base: 'ss-r31-p1' });
    const plan = onePermutationPlan('r31', steps);
    const profile = { ...plan.profiles.none!, tests: [makeTest('randwrite', 4096, 1, 1)] };
    plan.profiles.none = profile;
    const meta: RunMeta = { runId: 'r31', playbook: 'pb', playbookFile: '/pb.yaml', inventoryFile: '/inv.yaml', target: 't', startedAt: new Date().toISOString(), fingerprint: {}, insecureEndpoints: [] };
    const store = ResultStore.create(path.join(dir, 'run-r31'), meta, plan);
    const messages: string[] = [];
    const run = (workload: WorkloadEndpoint) => executeRun({ store, plan, provider, workload, signal: new AbortController().signal, retry: { retries: 0 }, onEvent: (e) => void (e.type === 'message' && messages.push(e.text)) });

    const first = await run(endpoint({ stopOnTest: stillRunning }));
    expect(first.failed).toBe(1);
    expect(await hostHasOurs()).toEqual({ file: true, attached: true });
    let cmdlets = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet);
    expect(cmdlets).not.toContain('Remove-VMHardDiskDrive');
    expect(cmdlets).not.toContain('Remove-Item');
    expect(store.leftovers().map((r) => [r.kind, r.state])).toEqual([['vhdx', 'remove-failed'], ['disk-attachment', 'remove-failed']]);
    expect(store.leftovers()[0]!.error).toMatch(/^left in place: could not confirm that diskspd \(pids 4243\) on guest ended: still alive after SIGKILL; once it has ended, run `storsweep cleanup`/);
    expect(messages.some((m) => /its disk is left in place/.test(m))).toBe(true);

    // resume: the leftover stop is still unconfirmed — not torn down, not redone (no second New-VHD)
    const before = (await readPsLog(stateDir)).length;
    const second = await run(endpoint({ leftovers: { pgid: null, outcome: 'unknown', detail: 'cannot read process environments here' } }));
    expect(second.failed).toBe(1);
    expect(await hostHasOurs()).toEqual({ file: true, attached: true });
    expect((await readPsLog(stateDir)).slice(before)).toEqual([]);
    expect(store.permutations()[0]!.reason).toMatch(/^not redone: could not confirm that no diskspd of this run is left running on guest: cannot read process environments/);

    // cleanup while the tool may still run (its stop failed on that target): held back as well
    const said: string[] = [];
    expect(await cleanupLedger(store, async () => provider, (l) => said.push(l), {}, () => 'could not confirm that no diskspd of this run is left running on hv')).toBe(2);
    expect(said).toEqual(['left in place: disk-attachment ss-r31-p1-attach: could not confirm that no diskspd of this run is left running on hv', 'left in place: vhdx ss-r31-p1-disk: could not confirm that no diskspd of this run is left running on hv']);
    expect(await hostHasOurs()).toEqual({ file: true, attached: true });

    // resume once the leftover is confirmed gone: the old objects are removed first, then it is redone
    const third = await run(endpoint({ leftovers: { pgid: null, outcome: 'not-running' } }));
    expect(third.failed).toBe(1); // the (fake) test fails again, with no stop this time: teardown goes ahead
    expect(await hostHasOurs()).toEqual({ file: false, attached: false });
    cmdlets = (await readPsLog(stateDir)).slice(before).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet);
    expect(cmdlets.filter((c) => c === 'New-VHD')).toHaveLength(1);
    expect(store.leftovers()).toEqual([]);
    store.close();
    await provider.close();
  });
});

describe('hyperv pass-through: a disk another VM holds is never taken', () => {
  it('an Off VM keeps disk 2 as its pass-through disk while the host has it online: refused before Set-Disk, nothing attached', async () => {
    // "Hyper-V does not restrict multiple VMs from selecting the same passthrough disk" (Dell,
    // Storage Solutions Guide for Microsoft Hyper-V, "Considerations When Utilizing Passthrough Disks")
    const state = defaultHypervState() as { vms: Record<string, { state?: string; drives: Record<string, Record<string, unknown>> }> };
    state.vms['other-vm'] = { state: 'Off', drives: { 'SCSI:0:0': { DiskNumber: 2, Path: 'Disk 2 500 GB Bus 0 Lun 0 Target 2' } } };
    await seedHypervState(stateDir, state);
    const provider = createHypervProvider(target, await connect());
    const { store, summary } = await executeSteps(dir, 'r15', hostSteps({ 'disk.format': 'passthrough' }, target, { base: 'ss-r15-p1' }), provider);
    expect(summary.failed).toBe(1);
    expect(store.permutations()[0]!.reason).toMatch(/refusing to use disk 2 for pass-through: other-vm SCSI 0:0 already holds it as a pass-through disk/);
    expect(store.ledger().map((r) => [r.kind, r.state])).toEqual([['disk-offline', 'refused']]);
    const calls = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet);
    expect(calls).not.toContain('Set-Disk');
    expect(calls).not.toContain('Add-VMHardDiskDrive');
    const host = await readHypervState(stateDir);
    expect(host.disks.find((d) => d.Number === 2)!.IsOffline).toBe(false);
    expect(host.vms['bench-vm']!.drives).toEqual({ 'SCSI:0:0': { Path: 'C:\\VMs\\bench-vm\\os.vhdx' } });
    store.close();
    await provider.close();
  });
});

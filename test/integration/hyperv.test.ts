// The Hyper-V provider end to end over a real OpenSSH server whose PATH holds the strict
// powershell.exe stand-in (test/harness/windows): -EncodedCommand decoding, the known script shapes,
// cmdlet parameter sets and the host model are the stand-in's; everything else is real.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteCommandFailed, UnsafeOperation } from '../../src/errors.ts';
import { ensureKeyPair, startSshd, type SshdHandle } from '../../src/lab/sshd.ts';
import type { HypervTargetConfig } from '../../src/providers/hyperv/config.ts';
import { planHypervSteps } from '../../src/providers/hyperv/plan.ts';
import { createHypervProvider, runGuestDiskspd } from '../../src/providers/hyperv/provider.ts';
import type { CreatedObject, ProviderContext } from '../../src/run/provider.ts';
import { connectSsh } from '../../src/ssh/ssh-runner.ts';
import { parseDiskspdXml } from '../../src/workloads/diskspd.ts';
import { makeTest } from '../../src/workloads/profiles.ts';
import type { WorkloadProfile } from '../../src/workloads/spec.ts';
import { GUEST_CREDENTIAL, readHypervState, readPsLog, seedHypervState, WINDOWS_HARNESS_DIR } from '../harness/windows/state.ts';

let dir: string;
let stateDir: string;
let sshd: SshdHandle;
let keyPath: string;
let knownHosts: string;
const ctx: ProviderContext = { runId: 'r1', permutationId: 'p1', axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined };
const target: HypervTargetConfig = {
  host: 'hv-standin',
  vmName: 'bench-vm',
  volumes: { '100': 'D:\\bench', '2000': 'E:\\bench' },
  allowedDisks: [{ number: 2, serialNumber: 'S4EWNX0R123456' }, { number: 3, uniqueId: '6002248000000000000000000000A003' }, { number: 0, serialNumber: 'SYS-0001' }],
  passthroughDisk: 2,
};

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-hv-'));
  stateDir = path.join(dir, 'state');
  const key = await ensureKeyPair(path.join(dir, 'client_key'));
  keyPath = key.privateKeyPath;
  sshd = await startSshd({ dir: path.join(dir, 'sshd'), authorizedKeys: [key.publicKey], pathPrefix: [WINDOWS_HARNESS_DIR], env: { STORSWEEP_STANDIN_STATE: stateDir } });
  knownHosts = path.join(dir, 'known_hosts');
  await fs.writeFile(knownHosts, sshd.knownHostsLine + '\n');
});

afterAll(async () => {
  await sshd?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const connect = () => connectSsh({ host: sshd.host, port: sshd.port, username: os.userInfo().username, privateKeyPath: keyPath, knownHostsFile: knownHosts });

describe('hyperv provider over SSH (stand-in powershell.exe)', () => {
  it('creates a fixed 4K-sector VHDX on the 2000 GB volume, attaches it on SCSI 0:1, and removes both', async () => {
    await seedHypervState(stateDir);
    const provider = createHypervProvider(target, await connect());
    const steps = planHypervSteps({ 'volume.sizeGb': 2000, 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 8, 'disk.logicalSectorBytes': 4096, 'disk.physicalSectorBytes': 4096 }, target, { base: 'ss-r1-p1' });
    const created: CreatedObject[] = [];
    for (const s of steps) created.push((await provider.apply(s, ctx))!);
    const vhdx = 'E:\\bench\\ss-r1-p1-disk.vhdx';
    const calls = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []);
    expect(calls).toEqual([
      { cmdlet: 'New-VHD', params: { Path: vhdx, SizeBytes: 8 * 1024 ** 3, Fixed: true, LogicalSectorSizeBytes: 4096, PhysicalSectorSizeBytes: 4096 }, select: expect.any(Array) },
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
    const [vhdx] = planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4, 'disk.blockSizeBytes': 1048576 }, target, { base: 'ss-r1-p2' });
    const o = await provider.apply(vhdx!, ctx);
    expect(o!.data.vhd).toMatchObject({ VhdType: 'Dynamic', BlockSize: 1048576, LogicalSectorSize: 512 });
    // apply re-validates step arguments: a step edited in the ledger cannot smuggle a bad value through
    const bad = { ...vhdx!, arguments: { ...vhdx!.arguments, path: 'D:\\bench\\ss-r1-p3-disk.vhdx', logicalSectorBytes: 1024 } };
    await expect(provider.apply(bad, ctx)).rejects.toThrow(/LogicalSectorSizeBytes must be 512 or 4096/);
    await provider.close();
  });

  it('pass-through: offlines only an allowed, unused disk; refuses system disks and wrong serials before Set-Disk', async () => {
    await seedHypervState(stateDir);
    const runner = await connect();
    const provider = createHypervProvider(target, runner);
    const steps = planHypervSteps({ 'disk.format': 'passthrough' }, target, { base: 'ss-r1-p4' });
    const created = [];
    for (const s of steps) created.push((await provider.apply(s, ctx))!);
    let state = await readHypervState(stateDir);
    expect(state.disks.find((d) => d.Number === 2)!.IsOffline).toBe(true);
    expect(state.vms['bench-vm']!.drives['SCSI:0:1']).toMatchObject({ DiskNumber: 2 });
    for (const o of created.reverse()) expect(await provider.destroy(o, ctx)).toBe('removed');
    state = await readHypervState(stateDir);
    expect(state.disks.find((d) => d.Number === 2)!.IsOffline).toBe(false);

    await seedHypervState(stateDir);
    const offline = (n: number, t: HypervTargetConfig = target) => createHypervProvider(t, runner).apply(planHypervSteps({ 'disk.format': 'passthrough' }, { ...t, passthroughDisk: n }, { base: 'ss-r1-p5' })[0]!, ctx);
    await expect(offline(0)).rejects.toThrow(/system disk/);
    await expect(offline(3)).rejects.toThrow(/1 partition/);
    await expect(offline(2, { ...target, allowedDisks: [{ number: 2, serialNumber: 'OTHER' }] })).rejects.toThrow(UnsafeOperation);
    const sent = (await readPsLog(stateDir)).flatMap((l) => l.data.calls ?? []).map((c) => c.cmdlet);
    expect(sent).toEqual(['Get-Disk', 'Get-Disk', 'Get-Disk']);
    await provider.close();
  });

  it('runs diskspd in the guest via PowerShell Direct with the credential on stdin only', async () => {
    await seedHypervState(stateDir);
    const runner = await connect();
    const profile: WorkloadProfile = { name: 't', description: 't', tests: [], fileSizeBytes: 1024 ** 3, runtimeSec: 5, rampSec: 0, passes: 1, warmupPass: false, intervalSec: 0, direct: true, aggregate: 'max' };
    const xml = await runGuestDiskspd(runner, target, GUEST_CREDENTIAL, makeTest('randread', 4096, 32, 1), profile, { guestTarget: '#1' });
    const parsed = parseDiskspdXml(xml, 'guest');
    // the diskspd stand-in's device model: 16 I/Os in flight at 82.56 µs each, 5 s
    expect(parsed.timeSpans[0]!.read.iops).toBe(968992 / 5);
    const log = await readPsLog(stateDir);
    expect(log[0]!.data).toEqual({ vmName: 'bench-vm', exe: 'diskspd.exe', argv: ['-b4K', '-o32', '-t1', '-r', '-w0', '-d5', '-W0', '-Sh', '-L', '-Rxml', '-c1G', '#1'] });
    expect(JSON.stringify(log)).not.toContain(GUEST_CREDENTIAL.password);
    const wrong = runGuestDiskspd(runner, target, { user: 'bench\\admin', password: 'nope' }, makeTest('randread', 4096, 1, 1), profile, { guestTarget: '#1' });
    await expect(wrong).rejects.toThrow(RemoteCommandFailed);
    await expect(wrong).rejects.not.toThrow(/nope/);
    await runner.close();
  });
});

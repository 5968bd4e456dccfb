// Room for diskspd's test file on a Windows guest's volume, both ways. The stand-ins first, as
// Windows and diskspd behave: Get-Volume's SizeRemaining (MSFT_Volume) falls by what a file takes,
// and diskspd `-c` of a file the volume cannot hold fails at SetEndOfFile with ERROR_DISK_FULL
// (112), exit 1. Then `run` on the embedded lab's Hyper-V target: a file that fits is created after
// Get-Volume was asked; a file that does not is refused before diskspd ever runs with -c, naming
// the volume, what it needs and what is free, and everything the run made is torn down (the
// stand-in's host model read back).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultHypervState, diskspdRuns, GUEST_CREDENTIAL, readHypervState, readPsLog, seedHypervState } from '../../src/lab/harness/windows/state.ts';
import type { HypervTargetConfig } from '../../src/providers/hyperv/config.ts';
import { runGuestDiskspdArgv } from '../../src/providers/hyperv/guest-diskspd.ts';
import { runGuestCalls } from '../../src/providers/hyperv/powershell.ts';
import { VOLUME_MARGIN_BYTES } from '../../src/providers/windows-volume-room.ts';
import { connectSsh } from '../../src/ssh/ssh-runner.ts';
import { labPaths } from '../../src/lab/lab.ts';
import { runCli } from '../helpers/cli.ts';
import { runLabPlaybook, useEmbeddedLab } from '../helpers/embedded-lab.ts';
import { startWindowsStandin, type WindowsStandin } from '../helpers/windows-standin.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const target: HypervTargetConfig = { host: 'hv-standin', vmName: 'bench-vm', volumes: { '100': 'D:\\bench' }, allowedDisks: [{ number: 2, serialNumber: 'S4EWNX0R123456' }], passthroughDisk: 2 };

describe('the stand-ins: Get-Volume SizeRemaining and diskspd -c on a full volume', () => {
  let hv: WindowsStandin;
  beforeAll(async () => {
    hv = await startWindowsStandin('ss-room-');
  });
  afterAll(async () => {
    await hv?.stop();
  });

  it('SizeRemaining falls by the file diskspd made; a file larger than it fails as diskspd does (112, exit 1) and stays empty', async () => {
    const state = defaultHypervState() as unknown as { files: Record<string, unknown>; vms: Record<string, { drives: Record<string, unknown>; guestDisks: Record<string, string> }> };
    state.files['D:\\bench\\room.vhdx'] = { type: 'Fixed', size: GiB, fileSize: GiB, block: 0, logical: 512, physical: 4096 };
    state.vms['bench-vm']!.drives['SCSI:0:1'] = { Path: 'D:\\bench\\room.vhdx' };
    state.vms['bench-vm']!.guestDisks['1'] = 'SCSI:0:1';
    await seedHypervState(hv.stateDir, state);
    const runner = await connectSsh(hv.ssh);
    try {
      const calls = (c: Parameters<typeof runGuestCalls>[3]) => runGuestCalls(runner, 'bench-vm', GUEST_CREDENTIAL, c);
      await calls([{ cmdlet: 'Initialize-Disk', params: { Number: 1, PartitionStyle: 'GPT' } }]);
      const [part] = await calls([{ cmdlet: 'New-Partition', params: { DiskNumber: 1, UseMaximumSize: true, AssignDriveLetter: true }, select: ['DriveLetter'] }]);
      const letter = String(part!.DriveLetter);
      await calls([{ cmdlet: 'Format-Volume', params: { DriveLetter: letter, FileSystem: 'NTFS', AllocationUnitSize: 4096, Confirm: false } }]);
      const volume = async () => (await calls([{ cmdlet: 'Get-Volume', params: { DriveLetter: letter }, select: ['Size', 'SizeRemaining'] }]))[0] as { Size: number; SizeRemaining: number };
      const fresh = await volume();
      expect(fresh.SizeRemaining).toBeGreaterThan(0);
      expect(fresh.SizeRemaining).toBeLessThan(fresh.Size);
      const diskspd = (size: string) => runGuestDiskspdArgv(runner, target, GUEST_CREDENTIAL, ['-b64K', '-o1', '-t1', '-w0', '-d1', '-W0', `-c${size}`, '-Rxml', `${letter}:\\room.dat`], {});
      await diskspd('100M');
      expect((await volume()).SizeRemaining).toBe(fresh.SizeRemaining - 100 * MiB);
      // CREATE_ALWAYS empties the 100 MiB file first: 1 GiB still does not fit what is left
      await expect(diskspd('1G')).rejects.toThrow(/exit(?:ed with)? (?:code )?1[\s\S]*Error setting end of file \(error code: 112\)/);
      expect((await volume()).SizeRemaining).toBe(fresh.SizeRemaining);
    } finally {
      await runner.close();
    }
  });
});

describe('run on lab-hyperv: the test file checked against its volume before diskspd creates it', () => {
  const lab = useEmbeddedLab('ss-room-run-', { vcsim: false });
  const playbook = async (name: string, fileSize: string) => {
    const file = path.join(lab.root, `${name}.yaml`);
    const lines = [`name: ${name}`, 'target: lab-hyperv', 'matrix:', '  volume: {sizeGb: [100]}', '  disk: {format: [vhdx-fixed], sizeGb: [1]}', '  guest: {filesystem: [ntfs-4k]}', '  workload: {profile: [cdm3]}'];
    lines.push(`settings: {fileSize: ${fileSize}, runtimeSec: 1, passes: 1, warmupPass: false, intervalSec: 0}`, 'repeat: 1', '');
    await fs.writeFile(file, lines.join('\n'));
    return file;
  };
  const since = async () => (await readPsLog(lab.state.standinState).catch(() => [])).length;
  const guestCalls = async (from: number) => (await readPsLog(lab.state.standinState)).slice(from).filter((l) => l.shape === 'guest-call').flatMap((l) => l.data.calls ?? []);
  const creates = async (from: number) => diskspdRuns((await readPsLog(lab.state.standinState)).slice(from)).filter((r) => r.argv.some((a) => a.startsWith('-c')));

  const preflight = async (file: string) => {
    const r = await runCli(['preflight', file, '-i', labPaths(lab.root).inventory, '--json', '--no-canary', '-o', path.join(lab.root, 'runs')], { cwd: lab.root, timeoutMs: 120_000 });
    const checks = (JSON.parse(r.stdout) as { targets: Array<{ checks: Array<{ check: string; status: string; detail: string; remedy?: string }> }> }).targets.flatMap((t) => t.checks);
    return { code: r.code, stderr: r.stderr, room: checks.find((c) => c.check === 'guest volume free space') };
  };

  it('preflight: ✓ for a 16 MiB file on a 1 GiB disk; ✗ for 2 GiB, naming the volume, the need and the most it can have free', async () => {
    const ok = await preflight(await playbook('room-pf-fits', '16m'));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.room).toMatchObject({ status: 'ok' });
    const short = await preflight(await playbook('room-pf-short', '2g'));
    expect(short.code).toBe(1);
    expect(short.room).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(new RegExp(`^the test file needs 2\\.1 GiB \\(${2 * GiB + VOLUME_MARGIN_BYTES} bytes: settings\\.fileSize plus 64\\.0 MiB for the file system\\) on the ntfs-4k volume made on the 1\\.0 GiB disk of permutation p[0-9a-f]+, which can have at most 1\\.0 GiB free \\(${GiB} bytes: the whole disk\\)$`)),
      remedy: 'set a smaller settings.fileSize, or a disk.sizeGb of at least 3',
    });
  }, 300_000);

  it('a 16 MiB file on a 1 GiB disk: Get-Volume asked, then created and measured, exit 0', async () => {
    const from = await since();
    const { cli, records } = await runLabPlaybook(lab.root, await playbook('room-fits', '16m'));
    expect(cli.code, cli.stderr).toBe(0);
    expect(records.length).toBeGreaterThan(0);
    expect((await guestCalls(from)).filter((c) => c.cmdlet === 'Get-Volume').map((c) => c.params)).toContainEqual({ DriveLetter: expect.stringMatching(/^[D-Z]$/) });
    expect((await creates(from)).map((r) => r.argv.find((a) => a.startsWith('-c')))).toEqual(['-c16M']);
  }, 300_000);

  it('a 2 GiB file on a 1 GiB disk: refused before diskspd -c, naming the volume, the need and the free bytes; exit 1; nothing left', async () => {
    const from = await since();
    const { cli, runDir } = await runLabPlaybook(lab.root, await playbook('room-short', '2g'));
    expect(cli.code).toBe(1);
    // no diskspd ever ran with -c: the file was never created
    expect(await creates(from)).toEqual([]);
    const need = 2 * GiB + VOLUME_MARGIN_BYTES;
    const status = JSON.parse((await runCli(['status', runDir, '--json'], { cwd: lab.root })).stdout) as { permutations: Array<{ status: string; reason?: string }>; leftovers: unknown[] };
    expect(status.permutations.map((p) => p.status)).toEqual(['failed']);
    const reason = status.permutations[0]!.reason ?? '';
    expect(reason).toMatch(new RegExp(`the test file [D-Z]:\\\\storsweep\\.dat needs 2\\.1 GiB \\(${need} bytes: settings\\.fileSize plus 64\\.0 MiB for the file system\\) on [D-Z]:, which has \\d+\\.\\d MiB free \\((\\d+) bytes, Get-Volume SizeRemaining\\)`));
    // the free bytes it names are what the stand-in's volume had: its 1 GiB disk less the partition layout and metadata
    const free = Number(/\((\d+) bytes, Get-Volume/.exec(reason)![1]);
    expect(free).toBeGreaterThan(0);
    expect(free).toBeLessThan(GiB);
    // torn down: no VHDX of the run, no attachment beyond the system disk; status shows nothing left
    const host = await readHypervState(lab.state.standinState);
    expect(Object.keys(host.files).filter((f) => f.includes('ss-'))).toEqual([]);
    expect(Object.keys(host.vms['bench-vm']!.drives)).toEqual(['SCSI:0:0']);
    expect(status.leftovers).toEqual([]);
  }, 300_000);
});

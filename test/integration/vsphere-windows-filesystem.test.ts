// The guest.filesystem axis in a Windows guest on vSphere (issue 14/16 follow-up): the disk a run
// attaches is found in the guest by its WWN through VMware Tools guest operations, initialized GPT,
// partitioned, formatted NTFS with the axis's allocation unit, measured through a test file on it,
// and cleared again at teardown — end to end through the CLI on a lab of our own (`labUp`: the vcsim
// harness with guest operations, the Windows stand-ins as the guest: the same strict Storage-cmdlet
// model a Hyper-V guest has, src/lab/harness/windows/guest_storage.py). Checked from outside our
// code: the guest's own disk state (the stand-in's state file) during the measured passes and after.
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { labPaths, TOOLS_WINDOWS_VM, TOOLS_WINDOWS_WORKDIR } from '../../src/lab/lab.ts';
import { getProfile } from '../../src/workloads/profiles.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import { reconfigVMTask } from '../../src/providers/vsphere/methods.ts';
import { waitForTask } from '../../src/providers/vsphere/task.ts';
import { addDiskSpec } from '../helpers/vsphere-disk-spec.ts';
import { REPO_ROOT, runCli, stackTraceLines } from '../helpers/cli.ts';
import { toolsWindowsPidFiles } from '../helpers/tools-guest.ts';
import { sampleUntilStopped, waitFor } from '../helpers/wait.ts';
import { runLabPlaybook, useEmbeddedLab } from '../helpers/embedded-lab.ts';

const isRoot = process.getuid?.() === 0;
const PLAYBOOK = 'windows-guest-tools-allocation-unit.yaml';

interface RecordLine {
  permutationId: string;
  axes: Record<string, string | number>;
  test: { id: string };
  iops: number;
  tool: { name: string };
  metadata: Record<string, unknown>;
}
interface Partition {
  PartitionNumber: number;
  Guid: string;
  DriveLetter: string | null;
  Type: string;
  Offset?: number;
  Size?: number;
  volume?: { FileSystem: string; AllocationUnitSize: number; FileSystemLabel: string };
}
interface Medium {
  serial: string;
  PartitionStyle: string;
  partitions: Partition[];
  diskGuid?: string | null;
  [k: string]: unknown;
}
interface GuestState {
  vm: { guestDisks: Record<string, string>; guestDiskState: Record<string, unknown>; systemDisk?: { partitions: Partition[] } };
  media: Record<string, Medium>;
}
const GiB = 1024 ** 3;


/** The Windows guest's disks as the stand-in keeps them (what Get-Disk / Get-Partition answer from). */
async function guestState(): Promise<GuestState> {
  return JSON.parse(await fs.readFile(path.join(labPaths(lab.root).toolsGuests, TOOLS_WINDOWS_VM, 'windows-guest.json'), 'utf8')) as GuestState;
}
const volumesOf = (st: GuestState) => Object.values(st.media).flatMap((m) => m.partitions.filter((p) => p.volume).map((p) => ({ serial: m.serial, letter: p.DriveLetter, ...p.volume! })));

/**
 * Samples the guest's disk state until `stop()` (a volume lasts a permutation's whole passes, many
 * times the interval); every distinct volume seen (serial, letter, file system, unit).
 */
function watchVolumes(): { stop: () => Promise<Array<{ serial: string; letter: string | null; FileSystem: string; AllocationUnitSize: number }>> } {
  const seen = new Map<string, { serial: string; letter: string | null; FileSystem: string; AllocationUnitSize: number }>();
  const sampling = sampleUntilStopped(async () => {
    const st = await guestState().catch(() => null);
    for (const v of st ? volumesOf(st) : []) seen.set(`${v.serial} ${v.letter} ${v.FileSystem} ${v.AllocationUnitSize}`, { serial: v.serial, letter: v.letter, FileSystem: v.FileSystem, AllocationUnitSize: v.AllocationUnitSize });
  }, { intervalMs: 150 });
  return {
    stop: async () => {
      await sampling.stop();
      return [...seen.values()];
    },
  };
}

/** The playbook on the lab's inventory (test/helpers/embedded-lab.ts runLabPlaybook). */
const runPlaybook = (extra: string[] = [], onSpawn?: (pid: number) => void, file = path.join(REPO_ROOT, 'playbooks', PLAYBOOK)) => runLabPlaybook<RecordLine>(lab.root, file, { extra, ...(onSpawn ? { onSpawn } : {}) });

const lab = useEmbeddedLab('ss-vswinfs-', { vcsim: true });

describe.skipIf(!isRoot)(`playbooks/${PLAYBOOK} on lab-vcenter-tools-windows`, () => {
  let run: Awaited<ReturnType<typeof runPlaybook>>;
  let seen: Awaited<ReturnType<ReturnType<typeof watchVolumes>['stop']>>;
  let systemBefore: Partition[] | undefined;

  beforeAll(async () => {
    systemBefore = (await guestState().catch(() => null))?.vm.systemDisk?.partitions;
    const w = watchVolumes();
    run = await runPlaybook();
    seen = await w.stop();
  }, 360_000);

  it('runs both permutations; every record names the guest disk (by WWN), the test file, and the file system and allocation unit read back', () => {
    expect(run.cli.code, run.cli.stderr).toBe(0);
    expect(stackTraceLines(run.cli.stderr)).toEqual([]);
    const tests = getProfile('cdm8-default')!.tests.length;
    expect(run.records).toHaveLength(2 * tests);
    for (const r of run.records) {
      expect(r.tool.name).toBe('diskspd');
      expect(r.iops).toBeGreaterThan(0);
      const unit = r.axes['guest.filesystem'] === 'ntfs-64k' ? 65536 : 4096;
      expect(r.metadata).toMatchObject({ filesystem: 'NTFS', allocationUnitBytes: unit, testFile: expect.stringMatching(/^[D-Z]:\\storsweep\.dat$/), guestDisk: expect.any(Number), deviceWwn: expect.stringMatching(/^6000c29[0-9a-f]{25}$/) });
    }
  });

  it('the guest showed our volume while it was measured (NTFS 64 KiB for ntfs-64k, on the disk with the WWN the records name), and none after teardown', async () => {
    const wwn64 = String(run.records.find((r) => r.axes['guest.filesystem'] === 'ntfs-64k')!.metadata.deviceWwn);
    const wwn4 = String(run.records.find((r) => r.axes['guest.filesystem'] === 'ntfs-4k')!.metadata.deviceWwn);
    expect(seen).toContainEqual(expect.objectContaining({ serial: wwn64, FileSystem: 'NTFS', AllocationUnitSize: 65536 }));
    expect(seen).toContainEqual(expect.objectContaining({ serial: wwn4, FileSystem: 'NTFS', AllocationUnitSize: 4096 }));
    // only on the disks this run attached
    expect(new Set(seen.map((v) => v.serial))).toEqual(new Set([wwn64, wwn4]));
    const after = await guestState();
    // Clear-Disk ran on each (a disk merely detached would still carry its table in the guest's model)
    expect(volumesOf(after)).toEqual([]);
    for (const m of Object.values(after.media)) expect(m).toMatchObject({ PartitionStyle: 'RAW', partitions: [] });
    // the system disk (C:) kept what it had
    if (systemBefore) expect(after.vm.systemDisk?.partitions).toEqual(systemBefore);
    const status = JSON.parse((await runCli(['status', run.runDir, '--json'], { cwd: lab.root })).stdout) as { leftovers: unknown[] };
    expect(status.leftovers).toEqual([]);
  });

  it('leaves no process running in the guest', async () => {
    expect((await lab.control.guestProcesses()).filter((p) => p.vm === TOOLS_WINDOWS_VM)).toEqual([]);
  });
});

describe.skipIf(!isRoot)('kill -9 while diskspd measures the ntfs-64k volume', () => {
  it('the volume outlives storsweep; `cleanup` stops diskspd, clears the volume we made on our disk (Clear-Disk) and nothing else, then removes the disk', async () => {
    const out = path.join(lab.root, 'killed-runs');
    // a disk of the user's in the guest beside ours: same size (1 GiB), its own WWN, GPT with an NTFS
    // volume D: — added to the VM, and its contents seeded in the guest's model while no guest program runs
    const password = (await fs.readFile(labPaths(lab.root).vcsimPassword, 'utf8')).trim();
    const client = await VsphereClient.connect({ url: lab.state.vcsim!.url, username: lab.state.vcsim!.username, password, thumbprint: lab.state.vcsim!.thumbprint });
    let userSlot = '';
    let userMedium!: Medium;
    try {
      const vmRef = await client.findVm(TOOLS_WINDOWS_VM);
      const { devices } = await client.vmHardware(vmRef);
      const ctl = devices.find((d) => d._type === 'ParaVirtualSCSIController' || d._type === 'VirtualLsiLogicController' || d._type === 'VirtualLsiLogicSASController')!;
      const ds = devices.filter((d) => d._type === 'VirtualDisk').map((d) => String(d.backing?.fileName)).find((f) => f.startsWith('['))!.split(']')[0]!.slice(1);
      const task = await reconfigVMTask(client.session, vmRef, addDiskSpec({ fileName: `[${ds}] users-data.vmdk`, controllerKey: ctl.key, unitNumber: 5, sizeMB: 1024 }));
      await waitForTask(client.session, client.serviceContent, task);
      const added = (await client.vmHardware(vmRef)).devices.find((d) => d._type === 'VirtualDisk' && d.controllerKey === ctl.key && d.unitNumber === 5)!;
      const serial = String(added.backing?.uuid).replaceAll('-', '').toLowerCase();
      userSlot = `SCSI:${String((ctl as { busNumber?: number }).busNumber ?? 0)}:5`;
      // (no guest program has run yet when this test runs alone: the stand-in starts from an empty state)
      const st = await guestState().catch((): GuestState => ({ vm: { guestDisks: {}, guestDiskState: {} }, media: {} }));
      // disk 0 is the system disk's
      const free = [...Array(64).keys()].find((n) => n > 0 && !(String(n) in st.vm.guestDisks))!;
      userMedium = {
        serial, Size: GiB, SerialNumber: serial, UniqueId: serial.toUpperCase(), FriendlyName: 'VMware Virtual disk SCSI Disk Device', PartitionStyle: 'GPT', diskGuid: '{0badc0de-0000-4000-8000-000000000001}',
        partitions: [{ PartitionNumber: 1, Guid: '{0badc0de-0000-4000-8000-000000000002}', Offset: 17825792, Size: 1000 * 2 ** 20, DriveLetter: 'D', Type: 'Basic', volume: { FileSystem: 'NTFS', AllocationUnitSize: 4096, FileSystemLabel: 'users' } }],
      };
      st.media[userSlot] = userMedium;
      st.vm.guestDisks[String(free)] = userSlot;
      st.vm.guestDiskState[userSlot] = { IsOffline: false, IsReadOnly: false };
      await fs.writeFile(path.join(labPaths(lab.root).toolsGuests, TOOLS_WINDOWS_VM, 'windows-guest.json'), JSON.stringify(st));
    } finally {
      await client.logout().catch(() => undefined);
    }
    const before = await guestState().catch(() => null);
    let pid = 0;
    let ended = false;
    let killedOn: { serial: string; letter: string | null; FileSystem: string; AllocationUnitSize: number } | undefined;
    // the playbook with ntfs-64k alone; killed in its first measured pass: diskspd on the test file
    // while the guest shows our 64 KiB volume
    const only64k = path.join(lab.root, 'only-ntfs-64k.yaml');
    const text = (await fs.readFile(path.join(REPO_ROOT, 'playbooks', PLAYBOOK), 'utf8')).replace('filesystem: [ntfs-4k, ntfs-64k]', 'filesystem: [ntfs-64k]').replace(/\nbaseline:\n.*\n/, '\n');
    expect(text).toContain('filesystem: [ntfs-64k]');
    await fs.writeFile(only64k, text);
    // killed once the measured diskspd has its pidfile in the guest (what cleanup finds it by)
    const watch = (async () => {
      const found = await waitFor(async () => {
        if (ended) return 'ended';
        const procs = (await lab.control.guestProcesses().catch(() => [])).filter((p) => p.vm === TOOLS_WINDOWS_VM && /^diskspd\.exe$/i.test(p.name) && / -L( |$)/.test(p.cmdLine) && /storsweep\.dat/.test(p.cmdLine));
        const st = await guestState().catch(() => null);
        const vol = st ? volumesOf(st).find((v) => v.AllocationUnitSize === 65536 && v.serial !== userMedium.serial) : undefined;
        if (!vol || !pid || !procs.length) return null;
        const recorded = (await toolsWindowsPidFiles(labPaths(lab.root).toolsGuests, TOOLS_WINDOWS_VM, TOOLS_WINDOWS_WORKDIR)).map((r) => r.pid);
        if (!procs.some((p) => recorded.includes(p.pid))) return null;
        killedOn = vol;
        return 'seen';
      }, { what: 'diskspd measuring the 64 KiB volume, its pidfile written', timeoutMs: 300_000, intervalMs: 100 });
      if (found === 'seen') process.kill(pid, 'SIGKILL');
    })();
    const run = await runPlaybook(['--set', 'settings.runtimeSec=60', '--set', 'settings.prefill=false', '--out', out], (p) => (pid = p), only64k).finally(() => (ended = true));
    await watch;
    expect(killedOn, `never saw diskspd on the 64 KiB volume; run exit ${run.cli.code}: ${run.cli.stderr.slice(-2000)}`).toBeDefined();
    expect(run.cli.code).toBeNull();
    const [dir] = await fs.readdir(out);
    const runDir = path.join(out, dir!);
    // nothing undid it: the dead run's volume is still in the guest
    expect(volumesOf(await guestState())).toContainEqual(expect.objectContaining({ serial: killedOn!.serial, FileSystem: 'NTFS', AllocationUnitSize: 65536 }));
    const cl = await runCli(['cleanup', runDir], { cwd: lab.root, timeoutMs: 180_000 });
    expect(cl.code, cl.stderr + cl.stdout).toBe(0);
    expect(cl.stdout).toMatch(/^stopped diskspd left running on lab-vcenter-tools-windows \(pids \d+, SIGKILL\)$/m);
    expect((await lab.control.guestProcesses()).filter((p) => p.vm === TOOLS_WINDOWS_VM)).toEqual([]);
    const after = await guestState();
    // our disk: back to RAW (Clear-Disk); the user's disk still carries its table and volume D:, the
    // system disk as it was; ours had taken the next free letter
    expect(killedOn!.letter).toBe('E');
    expect(after.media[Object.keys(after.media).find((k) => after.media[k]!.serial === killedOn!.serial)!]).toMatchObject({ PartitionStyle: 'RAW', partitions: [] });
    expect(after.media[userSlot]).toMatchObject({ serial: userMedium.serial, PartitionStyle: 'GPT', diskGuid: userMedium.diskGuid, partitions: userMedium.partitions });
    expect(volumesOf(after)).toEqual([{ serial: userMedium.serial, letter: 'D', FileSystem: 'NTFS', AllocationUnitSize: 4096, FileSystemLabel: 'users' }]);
    if (before?.vm.systemDisk) expect(after.vm.systemDisk?.partitions).toEqual(before.vm.systemDisk.partitions);
    const status = JSON.parse((await runCli(['status', runDir, '--json'], { cwd: lab.root })).stdout) as { leftovers: unknown[] };
    expect(status.leftovers).toEqual([]);
  }, 400_000);
});

// The ESXi-shell target measures the disk each permutation attaches, found in the guest by its
// identity — `vmkfstools -J getuuid` read after `vmkfstools -c` — never a fixed path or unit. The
// embedded lab (`labUp`): a real sshd whose sessions run the strict ESXi stand-ins, and whose
// "guest" is this machine; the stand-ins give it a real loop device per disk attached to the VM,
// linked as <esxi-guest-disks>/by-id/wwn-0x<uuid> (src/lab/harness/esxi/guest_disks.py). Real fio,
// real mkfs/mount; what was written is read back from the disks' backing files.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { ESXI_HARNESS_DIR, readCommands, readEsxiState, releaseEsxiGuestDisks } from '../../src/lab/harness/esxi/state.ts';
import { readRun, runDirOf } from '../helpers/vsphere-lab.ts';
import { runCli } from '../helpers/cli.ts';
import type { ResultRecord } from '../../src/results/record.ts';
import { diskPlaybook } from '../helpers/disk-playbook.ts';

let root: string;
let lab: LabState;
let stateDir: string;
let guestDisks: string;
let byIdDir: string;
let filesDir: string;
let workdir: string;
const THEIRS = '/vmfs/volumes/datastore1/bench-vm/users-data.vmdk';

/** a stand-in ESXi tool run as the host's admin would (not through storsweep) */
function esxi(tool: string, args: string[]): string {
  return execFileSync(path.join(ESXI_HARNESS_DIR, tool), args, { encoding: 'utf8', env: { ...process.env, STORSWEEP_STANDIN_STATE: stateDir } });
}

/** loop devices attached to a file under `dir` */
function loopsOn(dir: string): string[] {
  return execFileSync('losetup', ['-a'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(dir)).map((l) => l.split(':')[0]!);
}

/** whether every byte of a (sparse) file is zero, read in 8 MiB chunks, each compared natively */
function allZero(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(8 << 20);
    const zeros = Buffer.alloc(buf.length);
    for (let pos = 0; ; ) {
      const n = fs.readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) return true;
      if (buf.compare(zeros, 0, n, 0, n) !== 0) return false;
      pos += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}

const mountsUnder = (dir: string) => execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' }).split('\n').filter((t) => t.startsWith(dir));

function records(runDir: string): ResultRecord[] {
  return readRun(runDir, (db) => (db.prepare('SELECT record FROM results').all() as Array<{ record: string }>).map((r) => JSON.parse(r.record) as ResultRecord));
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-esxi-gd-'));
  lab = await labUp(root, { vcsim: false, version: '8.0' });
  stateDir = lab.standinState;
  guestDisks = path.join(root, '.lab', 'esxi-guest-disks');
  byIdDir = path.join(guestDisks, 'by-id');
  filesDir = path.join(guestDisks, 'files');
  workdir = path.join(lab.scratch, 'esxi-guest');
}, 120_000);

afterAll(async () => {
  if (stateDir) await releaseEsxiGuestDisks(stateDir);
  if (lab) await stopPid(lab.ssh.pid);
  if (filesDir) expect(loopsOn(filesDir)).toEqual([]);
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe('the lab wiring', () => {
  it('lab-esxi points the guest at the stand-ins\' by-id directory; the host model names it', async () => {
    const inv = fs.readFileSync(labPaths(root).inventory, 'utf8');
    expect(inv).toContain(`      byIdDir: ${byIdDir}\n`);
    expect((await readEsxiState(stateDir)).guestDisks).toBe(guestDisks);
    const r = await runCli(['validate', '-i', labPaths(root).inventory], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('lab-esxi: guest.filesystem [raw, ext4], the disk found by its vmkfstools uuid', () => {
  it('records name the device (by WWN) and filesystem; a same-size disk attached first stays all zeros; cleanup leaves no loop device, mount or file', async () => {
    // the user's disk: the same size, attached first at 0:1 — the unit a fixed path used to name
    esxi('vmkfstools', ['-c', '1g', '-d', 'thin', THEIRS]);
    esxi('vim-cmd', ['vmsvc/device.diskaddexisting', '1', THEIRS, '0', '1']);
    const theirUuid = /^UUID is (.*)$/.exec(esxi('vmkfstools', ['-J', 'getuuid', THEIRS]).trim())![1]!;
    const theirLink = `wwn-0x${theirUuid.replace(/[ -]/g, '').toLowerCase()}`;
    expect(fs.readdirSync(byIdDir)).toEqual([theirLink]);
    const theirLoop = fs.readlinkSync(path.join(byIdDir, theirLink));
    const theirImage = execFileSync('losetup', ['-n', '-O', 'BACK-FILE', theirLoop], { encoding: 'utf8' }).trim();
    expect(fs.statSync(theirImage).size).toBe(1024 ** 3);

    const pb = path.join(root, 'esxi-fs.yaml');
    fs.writeFileSync(pb, diskPlaybook({ name: 'esxi-fs', target: 'lab-esxi', format: 'thin', extra: ['  guest:', '    filesystem: [raw, ext4]'] }));
    const runsDir = path.join(root, 'runs');
    const r = await runCli(['run', pb, '-i', labPaths(root).inventory, '--out', runsDir, '--no-report', '--json', '--keep'], { cwd: root, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    const recs = records(runDir);
    expect(recs.map((x) => [x.axes['guest.filesystem'], x.metadata!.filesystem])).toEqual([['raw', 'raw'], ['ext4', 'ext4']]);
    for (const rec of recs) {
      expect(String(rec.metadata!.device)).toMatch(/^\/dev\/loop\d+$/);
      expect(String(rec.metadata!.deviceWwn)).toMatch(/^6000c29[0-9a-f]{25}$/);
      expect(rec.metadata!.deviceWwn).not.toBe(theirLink.slice('wwn-0x'.length));
      expect(rec.metadata!.device).not.toBe(theirLoop);
      expect(rec.iops).toBeGreaterThan(0);
    }
    expect(recs[0]!.metadata!.testPath).toBe(recs[0]!.metadata!.device);

    // what went to the host: the uuid read after the create, ours on the next free unit (0:2)
    const base = (p: string) => `ss-${path.basename(runDir).split('-').pop()}-${p}`;
    const cmds = (await readCommands(stateDir)).filter((c) => c.tool !== 'powershell.exe').map((c) => [c.tool, ...c.argv].join(' '));
    for (const rec of recs) {
      const disk = `/vmfs/volumes/datastore1/${base(rec.permutationId)}-disk.vmdk`;
      const i = cmds.indexOf(`vmkfstools -c 1g -d thin ${disk}`);
      expect(i).toBeGreaterThanOrEqual(0);
      expect(cmds.slice(i + 1, i + 5)).toEqual(['vim-cmd vmsvc/device.getdevices 1', `vim-cmd vmsvc/device.diskaddexisting 1 ${disk} 0 2`, 'vim-cmd vmsvc/device.getdevices 1', `vmkfstools -J getuuid ${disk}`]);
    }

    // --keep: the ext4 permutation's disk stays, its partition mounted in our directory, the test file written
    const ext4 = recs[1]!.metadata!;
    const mountpoint = path.join(workdir, `${base(recs[1]!.permutationId)}-fs`);
    expect(ext4.testPath).toBe(path.join(mountpoint, 'storsweep-test.dat'));
    expect(execFileSync('findmnt', ['-n', '-o', 'SOURCE,FSTYPE', '--mountpoint', mountpoint], { encoding: 'utf8' }).trim().split(/\s+/)).toEqual([`${String(ext4.device)}p1`, 'ext4']);
    expect(fs.statSync(String(ext4.testPath)).size).toBe(4 << 20);
    expect(fs.readlinkSync(path.join(byIdDir, `wwn-0x${String(ext4.deviceWwn)}`))).toBe(ext4.device);
    // the raw permutation was torn down: its disk, loop device and image are gone
    expect(fs.readdirSync(byIdDir).sort()).toEqual([theirLink, `wwn-0x${String(ext4.deviceWwn)}`].sort());
    expect(mountsUnder(workdir)).toEqual([mountpoint]);

    // their disk: never written (fio raw on ours, the fill too)
    expect(allZero(theirImage)).toBe(true);

    const cl = await runCli(['cleanup', runDir], { cwd: root });
    expect(cl.code, cl.stderr + cl.stdout).toBe(0);
    expect(mountsUnder(workdir)).toEqual([]);
    expect(fs.existsSync(mountpoint)).toBe(false);
    expect(fs.readdirSync(byIdDir)).toEqual([theirLink]);
    expect(loopsOn(filesDir)).toEqual([theirLoop]);
    expect(fs.readdirSync(filesDir)).toEqual([path.basename(theirImage)]);
    const host = await readEsxiState(stateDir);
    expect(host.vms['1']!.disks).toEqual({ '0:0': '/vmfs/volumes/datastore1/bench-vm/bench-vm.vmdk', '0:1': THEIRS });
    expect(Object.keys(host.files).filter((f) => f.includes('/ss-'))).toEqual([]);
    expect(allZero(theirImage)).toBe(true);

    // theirs goes too, by the test, as it came
    esxi('vim-cmd', ['vmsvc/device.diskremove', '1', '0', '1', 'true']);
    expect(fs.readdirSync(byIdDir)).toEqual([]);
    expect(loopsOn(filesDir)).toEqual([]);
    expect(fs.readdirSync(filesDir)).toEqual([]);
  }, 360_000);
});

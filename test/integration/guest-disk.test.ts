// The disk under test is found in the guest by its identity, not by a fixed path. The lab's guest
// is this machine: the vcsim harness gives it a real loop device per disk attached to the VM,
// linked as <guestDisks>/by-id/wwn-0x<id> (src/lab/harness/vcsim/guestdisks.go). Real vcsim, real
// fio, real loop devices; what was written is read back from the disks' backing files.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultRecord } from '../../src/results/record.ts';
import { runCli } from '../helpers/cli.ts';
import { useNonRootGuest } from '../helpers/non-root-guest.ts';
import { permutationStatuses, readRun, runDirOf, startVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';
import { diskPlaybook } from '../helpers/disk-playbook.ts';

const SET_VM_OPTION = new URL('../harness/pyvmomi/set_vm_option.py', import.meta.url).pathname;

/** an advanced VM option set by pyvmomi, as an administrator would (not through storsweep); its value read back */
function setVmOption(l: VsphereLab, vm: string, key: string, value: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const p = execFile('/usr/bin/python3', [SET_VM_OPTION], { timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`set_vm_option.py: ${stderr || err.message}`)) : resolve((JSON.parse(stdout) as { value: string | null }).value)));
    p.stdin!.end(JSON.stringify({ url: l.sim.url, username: l.sim.username, password: l.password, certFile: l.sim.certFile, vm, key, value }));
  });
}

let lab: VsphereLab;
let filesDir: string;

/** loop devices attached to a file under `dir` */
function loopsOn(dir: string): string[] {
  const out = execFileSync('losetup', ['-a'], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(dir)).map((l) => l.split(':')[0]!);
}

/** the first `len` bytes of a (possibly huge, sparse) file */
function head(file: string, len: number): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(len);
    return buf.subarray(0, fs.readSync(fd, buf, 0, len, 0));
  } finally {
    fs.closeSync(fd);
  }
}

/** bytes of `file` in [0, len) that are not zero */
function nonZeroBytes(file: string, len: number): number {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(len);
    const n = fs.readSync(fd, buf, 0, len, 0);
    let c = 0;
    for (let i = 0; i < n; i++) if (buf[i] !== 0) c++;
    return c;
  } finally {
    fs.closeSync(fd);
  }
}

function records(runDir: string): ResultRecord[] {
  return readRun(runDir, (db) => (db.prepare('SELECT record FROM results').all() as Array<{ record: string }>).map((r) => JSON.parse(r.record) as ResultRecord));
}

function playbook(name: string, format: string, extra: string[] = []): string {
  return diskPlaybook({ name, target: 'lab-vcenter', format, extra });
}

beforeAll(async () => {
  lab = await startVsphereLab({ version: '8.0' });
  filesDir = path.join(path.dirname(lab.byIdDir), 'files');
}, 120_000);

afterAll(async () => {
  await lab?.stop();
  // the harness detaches every loop device it made when it stops
  if (filesDir) expect(loopsOn(filesDir)).toEqual([]);
});

describe('the disk under test, found in the guest by its WWN', () => {
  it('measures the disk it attached, not the guest disk of the same size already at the next unit', async () => {
    // the user's disk: same size, attached first, so it holds the unit a fixed path would name
    const c = await lab.connect();
    const vm = await c.findVm('DC0_H0_VM0');
    const theirs = await c.createDisk(vm, { datastore: 'LocalDS_0', fileName: 'users-data.vmdk', sizeBytes: 1024 ** 3, format: 'thin' });
    await c.logout();
    const theirImage = fs.readdirSync(filesDir).find((f) => f.includes('users-data'));
    expect(theirImage, 'the harness gave the guest a loop device for their disk').toBeTruthy();
    const links = fs.readdirSync(lab.byIdDir);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(/^wwn-0x6000c29[0-9a-f]{25}$/);

    const pb = await lab.writePlaybook('raw.yaml', playbook('raw', 'thin'));
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', await lab.newRunsDir('raw'), '--no-report', '--json', '--keep']);
    expect(r.stderr).not.toMatch(/FAILED/);
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    const recs = records(runDir);
    expect(recs).toHaveLength(1);
    const meta = recs[0]!.metadata!;
    expect(meta.filesystem).toBe('raw');
    expect(String(meta.device)).toMatch(/^\/dev\/loop\d+$/);
    expect(String(meta.deviceWwn)).toMatch(/^6000c29[0-9a-f]{25}$/);
    expect(meta.testPath).toBe(meta.device);
    // --keep left ours attached: its link leads to the device measured, and fio wrote that disk only
    const ours = path.join(lab.byIdDir, `wwn-0x${String(meta.deviceWwn)}`);
    expect(fs.readlinkSync(ours)).toBe(meta.device);
    const ourImage = execFileSync('losetup', ['-n', '-O', 'BACK-FILE', String(meta.device)], { encoding: 'utf8' }).trim();
    expect(path.basename(ourImage)).not.toBe(theirImage);
    // the pre-fill wrote the whole test region once with incompressible data before the pass, and the record says so
    expect(nonZeroBytes(ourImage, 4 << 20)).toBeGreaterThan((4 << 20) * 0.99);
    expect(meta).toMatchObject({ prefill: true, prefillBytes: 4 << 20, prefillSeconds: expect.any(Number) });
    expect(nonZeroBytes(path.join(filesDir, theirImage!), 8 << 20)).toBe(0);
    // the plan said so before anything ran: the workload measures the attached disk, no path
    const plan = JSON.parse(fs.readFileSync(path.join(runDir, 'plan.json'), 'utf8')) as { permutations: Array<{ steps: Array<{ step: string; operation: string; arguments: Record<string, unknown>; destructive: boolean }> }> };
    const steps = plan.permutations[0]!.steps;
    expect(steps.map((s) => s.step)).toEqual(['disk', 'guest-disk', 'workload']);
    expect(steps[2]!.arguments.testFile).toBeUndefined();
    expect(steps[2]!.destructive).toBe(false);

    // cleanup removes ours: its loop device is detached, its link and image gone; theirs stays
    const cl = await runCli(['cleanup', runDir]);
    expect(cl.code).toBe(0);
    expect(fs.existsSync(ours)).toBe(false);
    expect(fs.existsSync(ourImage)).toBe(false);
    expect(loopsOn(ourImage)).toEqual([]);
    expect(fs.readdirSync(lab.byIdDir)).toEqual(links);
    expect(fs.existsSync(path.join(filesDir, theirImage!))).toBe(true);

    // theirs goes too, by the test, as it came
    const c2 = await lab.connect();
    await c2.detachDisk(await c2.findVm('DC0_H0_VM0'), theirs.key, { deleteFile: true });
    await c2.logout();
    expect(fs.readdirSync(lab.byIdDir)).toEqual([]);
    expect(loopsOn(filesDir)).toEqual([]);
    expect(fs.readdirSync(filesDir)).toEqual([]);
  }, 180_000);

  it('refuses a mapped LUN that carries a partition table: nothing measured, nothing written', async () => {
    const rdmLun = lab.luns[1]!;
    const c = await lab.connect();
    const lun = (await c.listVmfsCandidateDisks(await c.findHost('DC0_H0'))).find((d) => d.canonicalName === rdmLun)!;
    await c.logout();
    const size = lun.capacity!.block * lun.capacity!.blockSize;
    // the LUN's data (the harness keeps it in <guestDisks>/files/<naa>.img): someone's GPT
    const image = path.join(filesDir, `${rdmLun}.img`);
    fs.writeFileSync(image, '');
    fs.truncateSync(image, size);
    execFileSync('sfdisk', ['-q', image], { input: 'label: gpt\n,,L\n' });
    const before = createHash('sha256').update(head(image, 1 << 20)).digest('hex');

    const inv = fs.readFileSync(lab.inventory, 'utf8').replace(/allowedDevices: \[(.*)\]/, `rdmDevice: ${rdmLun}\n    allowedDevices: [$1, ${rdmLun}]`);
    const invFile = path.join(lab.dir, 'inventory-rdm.yaml');
    fs.writeFileSync(invFile, inv);
    const pb = await lab.writePlaybook('rdm.yaml', playbook('rdm', 'rdm-physical'));
    const runsDir = await lab.newRunsDir('rdm');
    const r = await runCli(['run', pb, '-i', invFile, '--out', runsDir, '--confirm-destroy', rdmLun, '--no-report', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const runDir = runDirOf(r);
    const [perm] = permutationStatuses(runDir);
    expect(perm!.status).toBe('failed');
    expect(perm!.reason).toMatch(/carries a gpt partition table we did not create; refusing to measure it \(nothing was written\)/);
    expect(records(runDir)).toEqual([]);
    // the mapping is gone (teardown), the LUN's data is as it was
    expect(createHash('sha256').update(head(image, 1 << 20)).digest('hex')).toBe(before);
    expect(execFileSync('blkid', ['-p', '-o', 'value', '-s', 'PTTYPE', image], { encoding: 'utf8' }).trim()).toBe('gpt');
    expect(loopsOn(image)).toEqual([]);
    expect(fs.readdirSync(lab.byIdDir)).toEqual([]);
    expect(await lab.leftovers()).toEqual({ datastores: [], disks: [], files: [] });
  }, 180_000);
});

describe('disk.EnableUUID', () => {
  it('a VM without it: the run refuses before attaching anything — nothing measured, no disk, no loop device, no file', async () => {
    expect(await setVmOption(lab, 'DC0_H0_VM0', 'disk.EnableUUID', 'FALSE')).toBe('FALSE');
    try {
      const loopsBefore = loopsOn(filesDir);
      const pb = await lab.writePlaybook('nouuid.yaml', playbook('nouuid', 'thin', ['  guest:', '    filesystem: [raw, ext4]']));
      const r = await runCli(['run', pb, '-i', lab.inventory, '--out', await lab.newRunsDir('nouuid'), '--no-report', '--json']);
      expect(r.code, r.stderr).toBe(1);
      const runDir = runDirOf(r);
      const perms = permutationStatuses(runDir);
      expect(perms.map((p) => p.status)).toEqual(['failed', 'failed']);
      for (const p of perms) expect(p.reason).toMatch(/VM DC0_H0_VM0 does not have disk\.EnableUUID = TRUE: its virtual disks report no WWN to the guest[\s\S]*storsweep does not change it/);
      expect(records(runDir)).toEqual([]);
      // refused before the disk was sent: the ledger says so, and the host and the guest agree
      const ledger = readRun(runDir, (db) => db.prepare('SELECT kind, state FROM ledger').all() as Array<{ kind: string; state: string }>);
      expect(ledger.filter((row) => row.kind === 'disk').map((row) => row.state)).toEqual(['refused', 'refused']);
      expect(await lab.leftovers()).toEqual({ datastores: [], disks: [], files: [] });
      expect(fs.readdirSync(lab.byIdDir)).toEqual([]);
      expect(loopsOn(filesDir)).toEqual(loopsBefore);
      expect(fs.readdirSync(filesDir).filter((f) => !f.startsWith('naa.'))).toEqual([]);
      expect(execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' }).split('\n').filter((t) => t.startsWith(lab.workdir))).toEqual([]);
    } finally {
      // the lab VM as the other tests expect it
      expect(await setVmOption(lab, 'DC0_H0_VM0', 'disk.EnableUUID', 'TRUE')).toBe('TRUE');
    }
  }, 180_000);
});

describe('guest.filesystem: the disk measured raw, or through a filesystem made on it', () => {
  it('[raw, ext4, xfs]: each record names the device and the filesystem; --keep leaves the mount, cleanup undoes it all', async () => {
    const pb = await lab.writePlaybook('fs.yaml', playbook('fs', 'thin', ['  guest:', '    filesystem: [raw, ext4, xfs]']));
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', await lab.newRunsDir('fs'), '--no-report', '--json', '--keep']);
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    const recs = records(runDir);
    expect(recs.map((x) => [x.axes['guest.filesystem'], x.metadata!.filesystem])).toEqual([['raw', 'raw'], ['ext4', 'ext4'], ['xfs', 'xfs']]);
    for (const rec of recs) {
      expect(String(rec.metadata!.device)).toMatch(/^\/dev\/loop\d+$/);
      expect(String(rec.metadata!.deviceWwn)).toMatch(/^6000c29[0-9a-f]{25}$/);
      expect(rec.iops).toBeGreaterThan(0);
    }
    // a file on the filesystem, in a mount point of ours under the guest's workdir
    const xfs = recs[2]!.metadata!;
    expect(String(xfs.testPath)).toBe(path.join(lab.workdir, `ss-${runDir.split('-').pop()}-${recs[2]!.permutationId}-fs`, 'storsweep-test.dat'));
    // the last permutation's objects stay (--keep): xfs mounted from our disk's partition, the test file written (pre-fill)
    const mountpoint = path.dirname(String(xfs.testPath));
    const mnt = execFileSync('findmnt', ['-n', '-o', 'SOURCE,FSTYPE', '--mountpoint', mountpoint], { encoding: 'utf8' }).trim().split(/\s+/);
    expect(mnt).toEqual([`${String(xfs.device)}p1`, 'xfs']);
    expect(fs.statSync(String(xfs.testPath)).size).toBe(4 << 20);
    expect(execFileSync('blkid', ['-p', '-o', 'value', '-s', 'PTTYPE', String(xfs.device)], { encoding: 'utf8' }).trim()).toBe('gpt');
    // the earlier permutations were torn down: no mount of theirs, their disks gone
    expect(execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' }).split('\n').filter((t) => t.startsWith(lab.workdir))).toEqual([mountpoint]);
    expect(fs.readdirSync(lab.byIdDir)).toHaveLength(1);

    const cl = await runCli(['cleanup', runDir]);
    expect(cl.code, cl.stderr + cl.stdout).toBe(0);
    expect(execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' }).split('\n').filter((t) => t.startsWith(lab.workdir))).toEqual([]);
    expect(fs.existsSync(mountpoint)).toBe(false);
    expect(fs.readdirSync(lab.byIdDir)).toEqual([]);
    expect(loopsOn(filesDir)).toEqual([]);
    expect(fs.readdirSync(filesDir).filter((f) => !f.startsWith('naa.'))).toEqual([]);
    expect(await lab.leftovers()).toEqual({ datastores: [], disks: [], files: [] });
  }, 240_000);
});

// Raw devices need root: a non-root guest login goes through `sudo -n`, and is told what is missing.
describe('a non-root guest login', () => {
  const g = useNonRootGuest('ss-sudo-guest', 'Sudo-Guest');

  const run = async (name: string, sudo: boolean) => {
    const inv = path.join(g.vlab.dir, `inventory-${name}.yaml`);
    fs.writeFileSync(inv, fs.readFileSync(g.vlab.inventory, 'utf8').replace(/^( {6}byIdDir: .*)$/m, `$1${sudo ? '\n      sudo: true' : ''}`));
    const pb = await g.vlab.writePlaybook(`${name}.yaml`, playbook(name, 'thin'));
    const r = await runCli(['run', pb, '-i', inv, '--out', await g.vlab.newRunsDir(name), '--no-report', '--json']);
    return { r, runDir: runDirOf(r) };
  };

  it('without guest.sudo: refused, naming the fix; nothing measured, the disk removed', async (ctx) => {
    if (!g.setup.ok) return ctx.skip();
    const { r, runDir } = await run('nosudo', false);
    expect(r.code, r.stderr).toBe(1);
    expect(permutationStatuses(runDir)[0]!.reason).toMatch(/the guest login is not root \(uid \d+\).*set the target's guest\.sudo: true and give that user passwordless sudo \(NOPASSWD\)/);
    expect(records(runDir)).toEqual([]);
    expect(fs.readdirSync(g.vlab.byIdDir)).toEqual([]);
  }, 180_000);

  it('guest.sudo without NOPASSWD: "sudo: a password is required" is named, with the fix', async (ctx) => {
    if (!g.setup.ok) return ctx.skip();
    const { r, runDir } = await run('pwsudo', true);
    expect(r.code, r.stderr).toBe(1);
    expect(permutationStatuses(runDir)[0]!.reason).toMatch(/guest\.sudo is set but sudo asks for a password \("sudo: a password is required"\); storsweep never types a password: give that user NOPASSWD sudo/);
    expect(records(runDir)).toEqual([]);
  }, 180_000);

  it('guest.sudo with NOPASSWD: finds and measures the disk as root, through sudo -n', async (ctx) => {
    if (!g.setup.ok) return ctx.skip();
    g.allowSudo();
    const { r, runDir } = await run('sudo', true);
    expect(r.code, r.stderr).toBe(0);
    const recs = records(runDir);
    expect(recs).toHaveLength(1);
    expect(String(recs[0]!.metadata!.device)).toMatch(/^\/dev\/loop\d+$/);
    expect(recs[0]!.iops).toBeGreaterThan(0);
    expect(fs.readdirSync(g.vlab.byIdDir)).toEqual([]);
    expect(loopsOn(path.dirname(g.vlab.byIdDir))).toEqual([]);
  }, 180_000);
});

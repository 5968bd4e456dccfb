// The three shipped vSphere playbooks, run through the CLI exactly as a user runs them, against the
// vcsim harness with fio on this machine as the guest. An independent client (pyvmomi) watches the
// vCenter during each run (test/harness/pyvmomi/verify_watch.py) and reads back what is left after
// it; the harness counts every SOAP call, so "nothing was sent" and "logged out" are checked there.
//
// The runs use the shipped files with two changes, so the suite stays within minutes: `repeat: 1`
// instead of 3 (or 2), and a profile of eight tests (cdm3, cdm8-default) narrowed to one 4k random
// read: what is asserted here is the vSphere side (datastores, disks, --keep, cleanup, calls), and
// the profiles' fio runs are covered end to end elsewhere (lab-playbooks: cdm3; guest-tools and
// lab-guest runs: cdm8-default). Matrix, settings, order and baseline are the files' own; the dry
// run plans the shipped files unchanged.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { REPO_ROOT, runCli, stackTraceLines, type CliResult } from '../helpers/cli.ts';
import { NOTHING_LEFT, useVsphereLab } from '../helpers/vsphere-lab.ts';

const PYVMOMI = fileURLToPath(new URL('../harness/pyvmomi/', import.meta.url));
const VM = 'DC0_H0_VM0';
const EXISTING_DS = 'LocalDS_0';

interface PyDatastore {
  type: string;
  infoType: string;
  blockSizeMb?: number;
  majorVersion?: number;
  extents?: string[];
  remoteHost?: string;
  remotePath?: string;
}
interface PyDisk {
  backingType: string;
  fileName: string;
  thinProvisioned?: boolean;
  eagerlyScrub?: boolean;
  compatibilityMode?: string;
  deviceName?: string;
}
interface Watched {
  polls: number;
  datastores: Record<string, PyDatastore>;
  disks: Record<string, PyDisk>;
  order: string[];
}

// The shape of `npm run lab -- up`'s target (src/lab/lab.ts labInventoryYaml), fio on this machine; the
// inventory states no release, as the VMFS3 study below switches the simulator to 5.5.
const lab = useVsphereLab({ version: '8.0', inventoryVersion: false, rdm: true, nfs: true });
let vmfsDevice: string;
let rdmDevice: string;
let spareDevice: string;
beforeAll(() => void ([vmfsDevice, rdmDevice, spareDevice] = lab.luns as [string, string, string]));

// A failed assertion must not leave a run's objects behind for the next test (the LUN stays in use):
// a test that fails cleans up its runs (summaryOf registers them).


const shipped = (name: string) => path.join(REPO_ROOT, 'playbooks', name);

/** The shipped playbook with `repeat: 1` (whatever its repeat says), an eight-test profile narrowed to one test, and optionally one more line replaced. */
async function labCopy(name: string, replace?: [RegExp, string]): Promise<string> {
  let text = await fs.readFile(shipped(name), 'utf8');
  expect(text).toMatch(/^repeat: (\d+|\{.*\})$/m);
  text = text.replace(/^repeat: (\d+|\{.*\})$/m, 'repeat: 1');
  const profile = /^ {4}profile: \[(cdm3|cdm8-default)\]$/m;
  if (profile.test(text)) {
    expect(text).not.toMatch(/^workloads:/m);
    text = text.replace(profile, '    profile: [lab-one]').replace(/^settings:$/m, 'workloads:\n  lab-one:\n    iometer: "4k 100% read 100% random"\nsettings:');
  }
  if (replace) {
    expect(text).toMatch(replace[0]);
    text = text.replace(replace[0], replace[1]);
  }
  const file = path.join(lab.dir, `${replace ? 'variant-' : ''}${name}`);
  await fs.writeFile(file, text);
  return file;
}

function python<T>(script: string, req: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    const p = execFile('/usr/bin/python3', [path.join(PYVMOMI, script)], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script} failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout) as T);
    });
    p.stdin!.end(JSON.stringify({ url: lab.sim.url, username: lab.sim.username, password: lab.password, certFile: lab.sim.certFile, ...req }));
  });
}

const readBack = (datastores: string[]) => python<{ datastores: Record<string, PyDatastore | null>; disks: PyDisk[] }>('verify_vsphere.py', { datastores, vm: VM });
const probe = (ops: Array<Record<string, unknown>>) => python<Array<{ ok: boolean; fault?: string; message?: string }>>('probe.py', { ops });

/** Starts the pyvmomi watcher and resolves once it is logged in; stop() returns what it saw. */
async function watch(): Promise<{ stop(): Promise<Watched> }> {
  const p = spawn('/usr/bin/python3', [path.join(PYVMOMI, 'verify_watch.py')], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  p.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => p.on('close', resolve));
  p.stdin.write(JSON.stringify({ url: lab.sim.url, username: lab.sim.username, password: lab.password, certFile: lab.sim.certFile, prefix: 'ss-', vm: VM, intervalMs: 150, maxSec: 600 }) + '\n');
  // its first line says it is logged in
  await new Promise<void>((resolve, reject) => {
    const ready = () => {
      if (!out.startsWith('ready\n')) return;
      p.stdout.off('data', ready);
      resolve();
    };
    p.stdout.on('data', ready);
    void exited.then(() => reject(new Error(`verify_watch.py exited before it was ready: ${err}`)));
  });
  return {
    async stop() {
      p.stdin.end('stop\n');
      const code = await exited;
      if (code !== 0) throw new Error(`verify_watch.py exited ${code}: ${err}`);
      return JSON.parse(out.trim().split('\n').pop()!) as Watched;
    },
  };
}

interface Summary {
  runDir: string;
  done: number;
  failed: number;
  pending: number;
}
function summaryOf(r: CliResult): Summary {
  const lines = r.stdout.trim().split('\n');
  const sum = JSON.parse(lines[lines.length - 2]!) as Summary;
  onTestFailed(async () => void (await runCli(['cleanup', sum.runDir])));
  return sum;
}

interface PermStatus {
  permutationId: string;
  index: number;
  axes: Record<string, string | number>;
  status: string;
  reason: string | null;
}
async function status(runDir: string): Promise<{ permutations: PermStatus[]; leftovers: Array<{ kind: string; name: string; state: string }> }> {
  const r = await runCli(['status', '--json', runDir]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as { permutations: PermStatus[]; leftovers: Array<{ kind: string; name: string; state: string }> };
}

/** `ss-<runId>-<permutationId>-<suffix>` → permutationId */
const permOf = (name: string) => /ss-[a-z0-9]+-(p[0-9a-f]+)-(?:ds|disk|rdm)\b/.exec(name)?.[1];

function expectLoggedOut(calls: Record<string, number>): void {
  expect(calls.Login ?? 0).toBeGreaterThanOrEqual(1);
  expect(calls.Logout ?? 0).toBeGreaterThanOrEqual(1);
  // every session opened (the CLI's and the watcher's) was closed again
  expect(calls.Logout).toBe(calls.Login);
}

describe('dry run and refusals: nothing is sent', () => {
  it('run --dry-run --json prints every planned call of each playbook as {permutationId, step, provider, operation, arguments}', async () => {
    await lab.sim.control.reset();
    const plans: Record<string, Array<{ permutationId: string; step: string; provider: string; operation: string; arguments: Record<string, unknown> }>> = {};
    for (const name of ['vmfs-block-size.yaml', 'disk-format.yaml', 'nfs-vs-vmfs.yaml']) {
      const r = await runCli(['run', shipped(name), '-i', lab.inventory, '--dry-run', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).not.toContain(lab.password);
      plans[name] = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as (typeof plans)[string][number]);
      for (const call of plans[name]) {
        expect(Object.keys(call)).toEqual(expect.arrayContaining(['permutationId', 'step', 'provider', 'operation', 'arguments']));
        expect(call.permutationId).toMatch(/^p[0-9a-f]+$/);
      }
    }
    const ops = (name: string, op: string) => plans[name]!.filter((c) => c.operation === op).map((c) => c.arguments);

    const vmfs = ops('vmfs-block-size.yaml', 'CreateVmfsDatastore');
    expect(vmfs.map((a) => a.blockSizeMb)).toEqual([1, 2, 4, 8]);
    for (const a of vmfs) expect(a).toMatchObject({ host: 'DC0_H0', device: vmfsDevice, vmfsMajorVersion: 3 });
    expect(ops('vmfs-block-size.yaml', 'ReconfigVM_Task').map((a) => a.format)).toEqual(['eagerzeroedthick', 'eagerzeroedthick', 'eagerzeroedthick', 'eagerzeroedthick']);
    expect(new Set(plans['vmfs-block-size.yaml']!.map((c) => c.permutationId)).size).toBe(4);

    const df = plans['disk-format.yaml']!;
    expect(df.filter((c) => c.step === 'datastore')).toEqual([]);
    const disks = ops('disk-format.yaml', 'ReconfigVM_Task');
    expect(disks.map((a) => a.format ?? a.compatibilityMode).sort()).toEqual(['eagerzeroedthick', 'lazyzeroedthick', 'physicalMode', 'thin', 'virtualMode']);
    for (const a of disks) expect(a.datastore).toBe(EXISTING_DS);
    for (const a of disks.filter((x) => x.backing === 'rdm')) expect(a.device).toBe(rdmDevice);

    expect(ops('nfs-vs-vmfs.yaml', 'CreateNasDatastore')).toEqual([expect.objectContaining({ remoteHost: '127.0.0.1', remotePath: lab.nfsDir, type: 'NFS' })]);
    expect(ops('nfs-vs-vmfs.yaml', 'CreateVmfsDatastore')).toEqual([expect.objectContaining({ device: vmfsDevice, vmfsMajorVersion: 6 })]);

    // A dry run never connects: not even a login reached the simulator.
    expect(await lab.sim.control.calls()).toEqual({});
  });

  it('refuses destructive steps unless --confirm-destroy names every device they touch: exit ≠ 0, a clear message, nothing sent', async () => {
    await lab.sim.control.reset();
    const runsDir = await lab.newRunsDir('refused');
    const cases: Array<[string, string[], string]> = [
      ['vmfs-block-size.yaml', [], vmfsDevice],
      ['vmfs-block-size.yaml', ['--confirm-destroy', spareDevice], vmfsDevice],
      ['disk-format.yaml', ['--confirm-destroy', vmfsDevice], rdmDevice],
      ['nfs-vs-vmfs.yaml', [], vmfsDevice],
    ];
    for (const [name, extra, device] of cases) {
      const r = await runCli(['run', shipped(name), '-i', lab.inventory, '--out', runsDir, ...extra]);
      expect(r.code, `${name} ${extra.join(' ')}`).not.toBe(0);
      expect(r.stderr).toMatch(/^refused: this plan has \d+ destructive step\(s\)/m);
      expect(r.stderr).toContain(`--confirm-destroy ${device}`);
      expect(stackTraceLines(r.stderr)).toEqual([]);
    }
    expect(await fs.readdir(runsDir)).toEqual([]);
    expect(await lab.sim.control.calls()).toEqual({});
  });
});

describe('vmfs-block-size.yaml', () => {
  // the VMFS3 study needs ESXi 5.x (its first lines say so): the simulator acts as 5.5 here
  beforeAll(async () => void (await lab.sim.control.version('5.5')));
  afterAll(async () => void (await lab.sim.control.version('8.0')));
  it('formats the LUN as VMFS3 with 1, 2, 4 and 8 MB blocks, an eager-zeroed disk on each; --keep leaves the last, cleanup removes it', { timeout: 300_000 }, async () => {
    await lab.sim.control.reset();
    const pb = await labCopy('vmfs-block-size.yaml');
    const runsDir = await lab.newRunsDir('vmfs');
    const w = await watch();
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', runsDir, '--confirm-destroy', vmfsDevice, '--keep', '--no-report', '--json'], { timeoutMs: 280_000 });
    const seen = await w.stop();
    const sum = summaryOf(r);
    expect(r.code, r.stderr).toBe(0);
    expect(sum).toMatchObject({ done: 4, failed: 0, pending: 0 });
    const st = await status(sum.runDir);
    const axes = new Map(st.permutations.map((p) => [p.permutationId, p.axes]));

    // Every permutation's datastore, as pyvmomi saw it while it existed.
    const dsNames = Object.keys(seen.datastores);
    expect(dsNames).toHaveLength(4);
    for (const name of dsNames) {
      const a = axes.get(permOf(name)!)!;
      expect(seen.datastores[name]).toEqual({ type: 'VMFS', infoType: 'VmfsDatastoreInfo', blockSizeMb: a['datastore.blockSizeMb'], blockSize: expect.any(Number), majorVersion: 3, extents: [vmfsDevice] });
    }
    expect(dsNames.map((n) => seen.datastores[n]!.blockSizeMb).sort((x, y) => x! - y!)).toEqual([1, 2, 4, 8]);
    const diskFiles = Object.keys(seen.disks);
    expect(diskFiles).toHaveLength(4);
    for (const f of diskFiles) {
      const pid = permOf(f)!;
      expect(seen.disks[f]).toMatchObject({ backingType: 'VirtualDiskFlatVer2BackingInfo', thinProvisioned: false, eagerlyScrub: true });
      expect(f).toBe(`[${dsNames.find((n) => permOf(n) === pid)}] ${f.slice(f.indexOf('] ') + 2)}`);
    }

    const calls = await lab.sim.control.calls();
    expect(calls.CreateVmfsDatastore).toBe(4);
    expect(calls.RemoveDatastore).toBe(3);
    expectLoggedOut(calls);

    // --keep: the last permutation's datastore and disk are still there, as the ledger says.
    const last = st.permutations.find((p) => p.index === 3)!;
    const lastDs = dsNames.find((n) => permOf(n) === last.permutationId)!;
    const lastDisk = diskFiles.find((f) => permOf(f) === last.permutationId)!;
    expect(await lab.leftovers()).toEqual({ datastores: [lastDs], disks: [{ vm: VM, fileName: lastDisk }], files: [lastDisk.replace(/\.vmdk$/, '-flat.vmdk'), lastDisk] });
    const back = await readBack([lastDs]);
    expect(back.datastores[lastDs]).toMatchObject({ majorVersion: 3, blockSizeMb: last.axes['datastore.blockSizeMb'] });
    expect(back.disks.find((d) => d.fileName === lastDisk)).toMatchObject({ thinProvisioned: false, eagerlyScrub: true });
    expect(st.leftovers.map((o) => [o.kind, o.state]).sort()).toEqual([['datastore', 'kept'], ['disk', 'kept']]);

    await lab.sim.control.reset();
    const clean = await runCli(['cleanup', sum.runDir]);
    expect(clean.code, clean.stderr).toBe(0);
    const ownedDisk = lastDisk.slice(lastDisk.indexOf('] ') + 2, -'.vmdk'.length);
    expect(clean.stdout).toBe(`removed: disk ${ownedDisk}\nremoved: datastore ${lastDs}\n`);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    expectLoggedOut(await lab.sim.control.calls());
    expect((await status(sum.runDir)).leftovers).toEqual([]);
    expect((await runCli(['cleanup', sum.runDir])).stdout).toBe('nothing to clean up\n');
  });
});

describe('disk-format.yaml', () => {
  it('thin, lazy-zeroed and eager-zeroed VMDKs and physical and virtual RDMs, all on the existing datastore; --keep and cleanup', { timeout: 300_000 }, async () => {
    await lab.sim.control.reset();
    const pb = await labCopy('disk-format.yaml');
    const runsDir = await lab.newRunsDir('disk-format');
    const w = await watch();
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', runsDir, '--confirm-destroy', rdmDevice, '--keep', '--no-report', '--json'], { timeoutMs: 280_000 });
    const seen = await w.stop();
    const sum = summaryOf(r);
    expect(r.code, r.stderr).toBe(0);
    expect(sum).toMatchObject({ done: 5, failed: 0, pending: 0 });
    const st = await status(sum.runDir);
    const formatOf = new Map(st.permutations.map((p) => [p.permutationId, String(p.axes['disk.format'])]));

    expect(seen.datastores).toEqual({});
    const byFormat = new Map(Object.entries(seen.disks).map(([f, d]) => [formatOf.get(permOf(f)!)!, d]));
    expect([...byFormat.keys()].sort()).toEqual(['eagerzeroedthick', 'lazyzeroedthick', 'rdm-physical', 'rdm-virtual', 'thin']);
    const flat = { backingType: 'VirtualDiskFlatVer2BackingInfo' };
    expect(byFormat.get('thin')).toMatchObject({ ...flat, thinProvisioned: true, eagerlyScrub: false });
    expect(byFormat.get('lazyzeroedthick')).toMatchObject({ ...flat, thinProvisioned: false, eagerlyScrub: false });
    expect(byFormat.get('eagerzeroedthick')).toMatchObject({ ...flat, thinProvisioned: false, eagerlyScrub: true });
    const rdm = { backingType: 'VirtualDiskRawDiskMappingVer1BackingInfo', deviceName: `/vmfs/devices/disks/${rdmDevice}` };
    expect(byFormat.get('rdm-physical')).toMatchObject({ ...rdm, compatibilityMode: 'physicalMode' });
    expect(byFormat.get('rdm-virtual')).toMatchObject({ ...rdm, compatibilityMode: 'virtualMode' });
    // Every file, the RDM mapping files included, lives on the existing datastore.
    for (const d of byFormat.values()) expect(d.fileName).toMatch(new RegExp(`^\\[${EXISTING_DS}\\] ss-.*-(disk|rdm)\\.vmdk$`));
    expectLoggedOut(await lab.sim.control.calls());

    // The last permutation (the playbook's seeded order decides which format) is kept.
    const last = st.permutations.find((p) => p.index === 4)!;
    const kept = Object.keys(seen.disks).find((f) => permOf(f) === last.permutationId)!;
    expect((await lab.leftovers()).disks).toEqual([{ vm: VM, fileName: kept }]);
    const flags = (d: PyDisk | undefined) => d && { backingType: d.backingType, thinProvisioned: d.thinProvisioned, eagerlyScrub: d.eagerlyScrub, compatibilityMode: d.compatibilityMode, deviceName: d.deviceName };
    expect(flags((await readBack([])).disks.find((d) => d.fileName === kept))).toEqual(flags(byFormat.get(String(last.axes['disk.format']))));
    const clean = await runCli(['cleanup', sum.runDir]);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/^removed: (disk|rdm) ss-/);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    expect((await readBack([EXISTING_DS])).datastores[EXISTING_DS]).not.toBeNull();
  });

  // Someone else's use of the RDM LUN, made and undone through pyvmomi.
  const otherUses: Array<[string, () => Promise<void>, () => Promise<void>]> = [
    [
      'formatted as VMFS',
      async () => expect((await probe([{ op: 'create-vmfs', host: 'DC0_H0', disk: rdmDevice, major: 6, name: 'someone-elses-ds' }]))[0]).toMatchObject({ ok: true }),
      async () => expect((await probe([{ op: 'remove-datastore', host: 'DC0_H0', name: 'someone-elses-ds' }]))[0]).toMatchObject({ ok: true }),
    ],
    [
      'mapped as an RDM of another VM',
      async () => {
        const add = { op: 'add-rdm', vm: 'DC0_H0_VM1', deviceName: `/vmfs/devices/disks/${rdmDevice}`, mode: 'physicalMode', unit: 3, fileName: `[${EXISTING_DS}] someone-elses-rdm.vmdk` };
        expect((await probe([add]))[0]).toMatchObject({ ok: true });
      },
      async () => {
        const [vmDisks] = (await probe([{ op: 'vm-disks', vm: 'DC0_H0_VM1' }])) as unknown as Array<{ disks: Array<{ key: number; fileName: string }> }>;
        const key = vmDisks!.disks.find((d) => d.fileName.endsWith('someone-elses-rdm.vmdk'))!.key;
        expect((await probe([{ op: 'remove-disk', vm: 'DC0_H0_VM1', key, destroy: true }]))[0]).toMatchObject({ ok: true });
      },
    ],
  ];
  for (const [how, use, undo] of otherUses) {
    it(`refuses to map an RDM of a LUN the host reports in use (${how}), before any ReconfigVM_Task`, { timeout: 120_000 }, async () => {
      await use();
      try {
        await lab.sim.control.reset();
        const pb = await labCopy('disk-format.yaml', [/^ {4}format: \[.*\]$/m, '    format: [rdm-physical]']);
        // the playbook's baseline (thin) must be a value of the narrowed axis, or validate refuses the copy
        const text = await fs.readFile(pb, 'utf8');
        expect(text).toMatch(/^ {2}disk\.format: thin$/m);
        await fs.writeFile(pb, text.replace(/^ {2}disk\.format: thin$/m, '  disk.format: rdm-physical'));
        const r = await runCli(['run', pb, '-i', lab.inventory, '--out', await lab.newRunsDir(`rdm-in-use-${how.replace(/\W+/g, '-')}`), '--confirm-destroy', rdmDevice, '--no-report', '--json']);
        const st = await status(summaryOf(r).runDir);
        expect(r.code).toBe(1);
        expect(st.permutations).toHaveLength(1);
        expect(st.permutations[0]).toMatchObject({ status: 'failed', reason: expect.stringContaining(`refusing to map ${rdmDevice} as RDM: the host reports it in use`) });
        const calls = await lab.sim.control.calls();
        expect(calls.QueryAvailableDisksForVmfs).toBeGreaterThanOrEqual(1);
        expect(calls.ReconfigVM_Task).toBeUndefined();
        expectLoggedOut(calls);
        expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
      } finally {
        await undo();
      }
    });
  }
});

describe('nfs-vs-vmfs.yaml', () => {
  it('mounts the NFS export and formats VMFS6, a thin disk on each, and removes both', { timeout: 300_000 }, async () => {
    await lab.sim.control.reset();
    const pb = await labCopy('nfs-vs-vmfs.yaml');
    const runsDir = await lab.newRunsDir('nfs');
    const w = await watch();
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', runsDir, '--confirm-destroy', vmfsDevice, '--no-report', '--json'], { timeoutMs: 280_000 });
    const seen = await w.stop();
    const sum = summaryOf(r);
    expect(r.code, r.stderr).toBe(0);
    expect(sum).toMatchObject({ done: 2, failed: 0, pending: 0 });
    const stores = Object.values(seen.datastores);
    expect(stores).toHaveLength(2);
    expect(stores).toContainEqual({ type: 'NFS', infoType: 'NasDatastoreInfo', remoteHost: '127.0.0.1', remotePath: lab.nfsDir });
    expect(stores).toContainEqual(expect.objectContaining({ type: 'VMFS', majorVersion: 6, extents: [vmfsDevice] }));
    const disks = Object.values(seen.disks);
    expect(disks).toHaveLength(2);
    for (const d of disks) expect(d).toMatchObject({ thinProvisioned: true, eagerlyScrub: false });
    expect(disks.map((d) => /^\[(.*?)\]/.exec(d.fileName)![1]).sort()).toEqual(Object.keys(seen.datastores).sort());

    const calls = await lab.sim.control.calls();
    expect(calls).toMatchObject({ CreateNasDatastore: 1, CreateVmfsDatastore: 1, RemoveDatastore: 2 });
    expectLoggedOut(calls);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

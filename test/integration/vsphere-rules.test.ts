// What a real vCenter/ESXi refuses or does differently, against the vcsim harness (which learned
// the same rules), read back through pyvmomi, the harness call counter and the datastore's files.
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVcsim, vcsimControl, type VcsimControl, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import type { VsphereTargetConfig } from '../../src/providers/vsphere/config.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { planVsphereSteps } from '../../src/providers/vsphere/steps.ts';
import type { CreatedObject, ProviderContext } from '../../src/contract/provider.ts';
import { TaskFailed } from '../../src/providers/vsphere/fault.ts';
import { reconfigVMTask } from '../../src/providers/vsphere/methods.ts';
import { waitForTask } from '../../src/providers/vsphere/task.ts';
import type { DataObject } from '../../src/providers/vsphere/types.ts';
import { vcenterYaml, vsphereTargetYaml } from '../../src/lab/vsphere-inventory.ts';
import { pyvmomi, type PyDisk } from '../helpers/pyvmomi-verify.ts';
import { runCli } from '../helpers/cli.ts';
import { readRun, runDirIn, simTarget } from '../helpers/vsphere-lab.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { addDiskChange } from '../helpers/vsphere-disk-spec.ts';


const events: string[] = [];
function ctx(permutationId: string): ProviderContext {
  return { runId: 'rules', permutationId, axes: {}, signal: new AbortController().signal, log: (m) => events.push(m), sent: () => undefined };
}

let sim: VcsimHandle;
let control: VcsimControl;
let client: VsphereClient;
let luns: string[];
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-vrules-'));
  // the guest (this machine) gets a loop device per attached disk, listed under guest-disks/by-id
  sim = await startVcsim({ password: `vc-Rules-${Math.random().toString(36).slice(2, 10)}`, guestDisks: path.join(dir, 'guest-disks') });
  control = vcsimControl(sim);
  client = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
  luns = (await client.listVmfsCandidateDisks(await client.findHost('DC0_H0'))).map((d) => d.canonicalName).sort();
});

afterAll(async () => {
  await client?.logout();
  await sim?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await control.reset();
});

const target = (over: Partial<VsphereTargetConfig> = {}) => simTarget(sim, luns, over);

describe('an orphaned VMDK on vCenter (DeleteVirtualDisk_Task)', () => {
  /** A disk created by the provider, then detached with its file kept: what a crash between detach and delete leaves. */
  async function orphan(prefix: string, t: VsphereTargetConfig): Promise<{ obj: CreatedObject; file: string }> {
    const provider = createVsphereProvider(t);
    try {
      const [step] = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, t, { prefix });
      const obj = (await provider.apply(step!, ctx(prefix)))!;
      const vm = await client.findVm('DC0_H0_VM0');
      expect(await client.detachDisk(vm, Number(obj.id), { deleteFile: false })).toBe('removed');
      const url = (await pyvmomi(sim, { datastores: ['LocalDS_0'] })).datastores.LocalDS_0!.url;
      const file = path.join(url, `${prefix}-disk.vmdk`);
      expect(existsSync(file)).toBe(true);
      return { obj, file };
    } finally {
      await provider.close();
    }
  }

  it('without a datacenter in the inventory: the datastore’s datacenter is looked up and the file is deleted', async () => {
    const t = target({ datacenter: undefined });
    const { obj, file } = await orphan('ss-rules-orphan1', t);
    await control.reset();
    const provider = createVsphereProvider(t);
    try {
      expect(await provider.destroy(obj, ctx('o1'))).toBe('removed');
      expect(existsSync(file)).toBe(false);
      const calls = await control.calls();
      expect(calls.DeleteVirtualDisk_Task).toBe(1);
      expect(calls.SearchDatastore_Task).toBeGreaterThanOrEqual(1);

      // Looked again, not assumed: absent only because the datastore does not list it, and no
      // delete is sent for it.
      await control.reset();
      expect(await provider.destroy(obj, ctx('o1'))).toBe('absent');
      const again = await control.calls();
      expect(again.SearchDatastore_Task).toBe(1);
      expect(again.DeleteVirtualDisk_Task).toBeUndefined();
    } finally {
      await provider.close();
    }
  });

  it('a NotFound-like fault from the delete is a failure, not "absent": the file is still there', async () => {
    const t = target({ datacenter: undefined });
    const { obj, file } = await orphan('ss-rules-orphan2', t);
    const provider = createVsphereProvider(t);
    try {
      await control.fault({ method: 'DeleteVirtualDisk_Task', fault: 'FileNotFound', asTask: true, message: 'File [LocalDS_0] ss-rules-orphan2-disk.vmdk was not found', fields: { file: '[LocalDS_0] ss-rules-orphan2-disk.vmdk' } });
      await expect(provider.destroy(obj, ctx('o2'))).rejects.toThrow(/FileNotFound/);
      expect(existsSync(file)).toBe(true);
      await control.fault({ method: 'DeleteVirtualDisk_Task', fault: 'NotFound', message: 'The object or item referred to could not be found.' });
      await expect(provider.destroy(obj, ctx('o2'))).rejects.toThrow(/NotFound/);
      expect(existsSync(file)).toBe(true);
      // and once the host lets it go, it goes
      expect(await provider.destroy(obj, ctx('o2'))).toBe('removed');
      expect(existsSync(file)).toBe(false);
    } finally {
      await provider.close();
    }
  });
});

describe('NFS without VAAI-NAS: thin disks only', () => {
  const NFS = { remoteHost: 'nas.lab', remotePath: '/export/rules' };

  it('an existing NFS datastore whose mount reports no vStorageSupport: a thick disk is refused before ReconfigVM_Task (nothing created, nothing deleted); nfs.vaaiNas lets it through to the host', async () => {
    const h = await client.findHost('DC0_H0');
    const vm = await client.findVm('DC0_H0_VM0');
    const ds = await client.createNasDatastore(h, { ...NFS, name: 'ss-rules-nfs-existing' });
    try {
      const t = target({ datastore: 'ss-rules-nfs-existing' });
      const provider = createVsphereProvider(t);
      const before = (await client.devices(vm)).length;
      for (const format of ['lazyzeroedthick', 'eagerzeroedthick']) {
        const [step] = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': format, 'disk.sizeGb': 1 }, t, { prefix: `ss-rules-x${format.length}` });
        let sent = false;
        const err = await provider.apply(step!, { ...ctx('nx'), sent: () => void (sent = true) }).catch((e: unknown) => e);
        expect(String(err)).toMatch(new RegExp(`disk\\.format ${format}: datastore ss-rules-nfs-existing is NFS and its host mount reports no hardware acceleration .*thin disks only`));
        expect(sent).toBe(false);
      }
      expect((await client.devices(vm)).length).toBe(before);
      await provider.close();
      // the inventory vouches for VAAI-NAS: the check lets it through (the host then decides)
      const vaai = createVsphereProvider(target({ datastore: 'ss-rules-nfs-existing', nfs: { ...NFS, vaaiNas: true } }));
      const [lazy] = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'lazyzeroedthick', 'disk.sizeGb': 1 }, target({ datastore: 'ss-rules-nfs-existing', nfs: { ...NFS, vaaiNas: true } }), { prefix: 'ss-rules-vaai' });
      let sent = false;
      await vaai.apply(lazy!, { ...ctx('nv'), sent: () => void (sent = true) }).catch(() => undefined);
      expect(sent).toBe(true);
      await vaai.close();
      for (const d of await client.devices(vm)) if (`${(d as { backing?: { fileName?: string } }).backing?.fileName ?? ''}`.includes('ss-rules-nfs-existing')) await client.detachDisk(vm, Number((d as { key: unknown }).key), { deleteFile: true });
    } finally {
      await client.removeDatastore(h, ds);
    }
  });

  it('the harness creates lazy-zeroed thick as thin and refuses eager-zeroed thick, like a host', async () => {
    const h = await client.findHost('DC0_H0');
    const vm = await client.findVm('DC0_H0_VM0');
    const ds = await client.createNasDatastore(h, { ...NFS, name: 'ss-rules-nfs' });
    try {
      const lazy = await client.createDisk(vm, { datastore: 'ss-rules-nfs', fileName: 'ss-rules-lazy.vmdk', sizeBytes: 1024 ** 3, format: 'lazyzeroedthick' });
      const py = (await pyvmomi(sim, { vm: 'DC0_H0_VM0' })).disks!.find((d) => d.key === lazy.key)!;
      expect(py).toMatchObject({ fileName: '[ss-rules-nfs] ss-rules-lazy.vmdk', thinProvisioned: true, eagerlyScrub: false });
      const before = (await client.devices(vm)).length;
      const err = await client.createDisk(vm, { datastore: 'ss-rules-nfs', fileName: 'ss-rules-eager.vmdk', sizeBytes: 1024 ** 3, format: 'eagerzeroedthick' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TaskFailed);
      expect((err as TaskFailed).faultName).toBe('InvalidDeviceBacking');
      expect((await client.devices(vm)).length).toBe(before);
      expect(await client.detachDisk(vm, lazy.key, { deleteFile: true })).toBe('removed');
    } finally {
      await client.removeDatastore(h, ds);
    }
  });

  describe('through the CLI', () => {
    let runs: string;
    const inventory = async (vaaiNas: boolean) => {
      const nfsDir = path.join(dir, 'nfs-export');
      await fs.mkdir(nfsDir, { recursive: true });
      await fs.writeFile(path.join(dir, 'vc-password'), sim.password + '\n', { mode: 0o600 });
      const file = path.join(dir, `inventory-${vaaiNas ? 'vaai' : 'plain'}.yaml`);
      const lines = [
        'vcenters:',
        ...vcenterYaml({ name: 'lab-vc', url: sim.url, username: sim.username, passwordRef: '${file:vc-password}', thumbprint: sim.thumbprint }),
        'targets:',
        ...vsphereTargetYaml({ name: 'lab-vcenter', vcenter: 'lab-vc', host: 'DC0_H0', vm: 'DC0_H0_VM0', datastore: 'LocalDS_0', nfsDir, guest: { workdir: path.join(dir, 'scratch'), byIdDir: path.join(dir, 'guest-disks', 'by-id') } }),
      ];
      if (vaaiNas) lines.splice(lines.indexOf(`      remotePath: ${nfsDir}`) + 1, 0, '      vaaiNas: true');
      await fs.writeFile(file, lines.join('\n') + '\n');
      await fs.mkdir(path.join(dir, 'scratch'), { recursive: true });
      return file;
    };
    const playbook = async (formats: string[]) => {
      const file = path.join(dir, `nfs-${formats.join('-')}.yaml`);
      await fs.writeFile(
        file,
        [
          'name: nfs-formats',
          'target: lab-vcenter',
          'matrix:',
          '  datastore:',
          '    kind: [nfs]',
          '  disk:',
          `    format: [${formats.join(', ')}]`,
          '    sizeGb: [1]',
          '  workload:',
          '    profile: [quick]',
          'workloads:',
          '  quick:',
          '    iometer: "4k 100% read 100% random"',
          ...quickSettings({ direct: false }),
          '',
        ].join('\n'),
      );
      return file;
    };

    it('validate refuses a thick format on an NFS datastore without VAAI-NAS, at the value, and run sends nothing', async () => {
      const inv = await inventory(false);
      const pb = await playbook(['thin', 'lazyzeroedthick', 'eagerzeroedthick']);
      const v = await runCli(['validate', pb, '-i', inv]);
      expect(v.code).toBe(2);
      expect(v.stderr).toMatch(new RegExp(`${path.basename(pb)}:7:20: .*lazyzeroedthick.*thin disks only`));
      expect(v.stderr).toMatch(new RegExp(`${path.basename(pb)}:7:37: .*eagerzeroedthick.*thin disks only`));
      await control.reset();
      runs = path.join(dir, 'runs-refused');
      const r = await runCli(['run', pb, '-i', inv, '--out', runs, '--no-report', '--json']);
      expect(r.code).toBe(2);
      const calls = await control.calls();
      expect(calls.CreateNasDatastore ?? 0).toBe(0);
      expect(calls.ReconfigVM_Task ?? 0).toBe(0);
    });

    it('with VAAI-NAS claimed but the host giving thin anyway: that permutation fails naming both, and nothing of it is measured', async () => {
      const inv = await inventory(true);
      const pb = await playbook(['thin', 'lazyzeroedthick']);
      expect((await runCli(['validate', pb, '-i', inv])).code).toBe(0);
      runs = path.join(dir, 'runs-mismatch');
      const r = await runCli(['run', pb, '-i', inv, '--out', runs, '--no-report', '--json']);
      expect(r.code).toBe(1);
      const runDir = runDirIn(runs)!;
      const perms = readRun(runDir, (db) => db.prepare('SELECT permutation_id AS id, axes, status, reason FROM permutations').all() as Array<{ id: string; axes: string; status: string; reason: string | null }>);
      const lazy = perms.find((p) => JSON.parse(p.axes)['disk.format'] === 'lazyzeroedthick')!;
      const thin = perms.find((p) => JSON.parse(p.axes)['disk.format'] === 'thin')!;
      expect(lazy.status).toBe('failed');
      expect(lazy.reason).toMatch(/disk\.format lazyzeroedthick was asked for, but .* created \[ss-[^\]]+\] ss-\S+-disk\.vmdk as thin/);
      expect(thin.status).toBe('done');
      const measured = readRun(runDir, (db) => db.prepare('SELECT permutation_id AS id, count(*) AS n FROM results GROUP BY permutation_id').all() as Array<{ id: string; n: number }>);
      expect(measured.find((m) => m.id === thin.id)?.n).toBeGreaterThan(0);
      expect(measured.find((m) => m.id === lazy.id)).toBeUndefined();
      // the disk it did create was torn down with its datastore
      const ledger = readRun(runDir, (db) => db.prepare("SELECT kind, state FROM ledger WHERE permutation_id = ? ORDER BY seq").all(lazy.id) as Array<{ kind: string; state: string }>);
      expect(ledger.filter((l) => l.kind === 'disk').at(-1)?.state).toBe('removed');
      const left = await pyvmomi(sim, { vm: 'DC0_H0_VM0' });
      expect(left.disks!.filter((d) => d.fileName.includes('ss-'))).toEqual([]);
    });

    it('the same when the connection drops after the disk was made: the disk found on the retry is read back too, nothing measured', async () => {
      const inv = await inventory(true);
      const pb = await playbook(['lazyzeroedthick']);
      await control.reset();
      await control.drop({ method: 'ReconfigVM_Task', when: 'after', count: 1 });
      runs = path.join(dir, 'runs-mismatch-drop');
      const r = await runCli(['run', pb, '-i', inv, '--out', runs, '--no-report', '--json']);
      expect(r.code).toBe(1);
      const runDir = runDirIn(runs)!;
      // the retry really happened: the disk came from find(), not from a second create
      expect(readFileSync(path.join(runDir, 'log.jsonl'), 'utf8')).toMatch(/retrying disk \(attempt 2\)/);
      expect((await control.calls()).ReconfigVM_Task).toBeGreaterThanOrEqual(2); // the create, then the detach
      const perms = readRun(runDir, (db) => db.prepare('SELECT permutation_id AS id, status, reason FROM permutations').all() as Array<{ id: string; status: string; reason: string | null }>);
      expect(perms).toHaveLength(1);
      expect(perms[0]!.status).toBe('failed');
      expect(perms[0]!.reason).toMatch(/disk\.format lazyzeroedthick was asked for, but .* created \[ss-[^\]]+\] ss-\S+-disk\.vmdk as thin/);
      expect(readRun(runDir, (db) => (db.prepare('SELECT count(*) AS n FROM results').get() as { n: number }).n)).toBe(0);
      const ledger = readRun(runDir, (db) => db.prepare("SELECT kind, state FROM ledger WHERE permutation_id = ? ORDER BY seq").all(perms[0]!.id) as Array<{ kind: string; state: string }>);
      expect(ledger.filter((l) => l.kind === 'disk').at(-1)?.state).toBe('removed');
      const left = await pyvmomi(sim, { vm: 'DC0_H0_VM0' });
      expect(left.disks!.filter((d) => d.fileName.includes('ss-'))).toEqual([]);
    });
  });
});

describe('disk.controller: the disk on a controller of the named type', () => {
  /** Apply a permutation's steps, inspect, tear down in reverse, like the executor. */
  async function permutation(axes: Record<string, string | number>, prefix: string, inspect: (created: Array<CreatedObject | null>) => Promise<void>): Promise<Record<string, number>> {
    await control.reset();
    const t = target();
    const provider = createVsphereProvider(t);
    const created: Array<CreatedObject | null> = [];
    try {
      // no guest here: the guest-disk step is guest-disk.test.ts's
      for (const s of planVsphereSteps(axes, t, { prefix }).filter((x) => x.step !== 'guest-disk')) created.push(await provider.apply(s, ctx(prefix)));
      await inspect(created);
    } finally {
      for (const o of [...created].reverse()) if (o) expect(await provider.destroy(o, ctx(prefix))).toBe('removed');
      await provider.close();
    }
    return control.calls();
  }
  const controllerTypes = async () => (await client.vmHardware(await client.findVm('DC0_H0_VM0'))).devices.filter((d) => /Controller$/.test(d._type ?? '') && /SCSI|Lsi|BusLogic|NVME/.test(d._type ?? '')).map((d) => `${d._type}@${d.busNumber}`).sort();

  it('[pvscsi, lsisas]: the VM’s PVSCSI is used as it is; an LSI Logic SAS is added on the next bus, holds the disk, and goes at teardown', async () => {
    const before = await controllerTypes();
    expect(before).toEqual(['ParaVirtualSCSIController@0']);
    const seen: Record<string, PyDisk> = {};
    const calls: Record<string, Record<string, number>> = {};
    for (const kind of ['pvscsi', 'lsisas']) {
      calls[kind] = await permutation({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'disk.controller': kind }, `ss-rules-ctl-${kind}`, async (created) => {
        const disk = created.find((o) => o?.kind === 'disk')!;
        seen[kind] = (await pyvmomi(sim, { vm: 'DC0_H0_VM0' })).disks!.find((d) => d.key === Number(disk.id))!;
        if (kind === 'lsisas') expect(created.find((o) => o?.kind === 'controller')?.data).toMatchObject({ type: 'VirtualLsiLogicSASController', busNumber: 1 });
        else expect(created[0]).toBeNull(); // the VM has one: nothing added
      });
    }
    expect(seen.pvscsi).toMatchObject({ controllerType: 'ParaVirtualSCSIController', busNumber: 0 });
    expect(seen.lsisas).toMatchObject({ controllerType: 'VirtualLsiLogicSASController', busNumber: 1, unitNumber: 0 });
    // the calls differ: add controller + add disk, remove disk + remove controller, against disk only
    expect(calls.pvscsi!.ReconfigVM_Task).toBe(2);
    expect(calls.lsisas!.ReconfigVM_Task).toBe(4);
    expect(await controllerTypes()).toEqual(before);
  });

  it('nvme: an NVMe controller (hardware version 13 and later) with the disk on namespace 0', async () => {
    await permutation({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'disk.controller': 'nvme' }, 'ss-rules-ctl-nvme', async (created) => {
      const disk = created.find((o) => o?.kind === 'disk')!;
      expect((await pyvmomi(sim, { vm: 'DC0_H0_VM0' })).disks!.find((d) => d.key === Number(disk.id))).toMatchObject({ controllerType: 'VirtualNVMEController', busNumber: 0, unitNumber: 0 });
    });
    expect(await controllerTypes()).toEqual(['ParaVirtualSCSIController@0']);
  });

  it('teardown leaves a controller alone that holds a device it did not put there', async () => {
    const t = target();
    const provider = createVsphereProvider(t);
    const vm = await client.findVm('DC0_H0_VM0');
    try {
      const [ctl, disk] = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'disk.controller': 'lsilogic' }, t, { prefix: 'ss-rules-ctl-held' });
      const c = (await provider.apply(ctl!, ctx('held')))!;
      const d = (await provider.apply(disk!, ctx('held')))!;
      await expect(provider.destroy(c, ctx('held'))).rejects.toThrow(/holds devices .*removed only when empty/);
      expect(await controllerTypes()).toContain('VirtualLsiLogicController@1');
      expect(await provider.destroy(d, ctx('held'))).toBe('removed');
      // a recorded key that is no longer the controller's: not ours, absent
      expect(await provider.destroy({ ...c, id: '99999' }, ctx('held'))).toBe('absent');
      expect(await provider.destroy(c, ctx('held'))).toBe('removed');
      expect(await controllerTypes()).toEqual(['ParaVirtualSCSIController@0']);
    } finally {
      await provider.close();
      void vm;
    }
  });

  it('the harness enforces a host’s controller rules: unit 7, a unit past 15, a fifth SCSI controller, a taken bus', async () => {
    const vm = await client.findVm('DC0_H0_VM0');
    const { devices } = await client.vmHardware(vm);
    const pv = devices.find((d) => d._type === 'ParaVirtualSCSIController')!;
    const reconfigure = async (deviceChange: DataObject[]) => {
      const task = await reconfigVMTask(client.session, vm, { deviceChange });
      return waitForTask(client.session, client.serviceContent, task).then(
        () => 'ok',
        (e: unknown) => (e instanceof TaskFailed ? e.faultName : String(e)),
      );
    };
    const diskAt = (unitNumber: number, name: string) => addDiskChange({ fileName: `[LocalDS_0] ${name}.vmdk`, controllerKey: pv.key, unitNumber, sizeMB: 1 });
    expect(await reconfigure([diskAt(7, 'ss-rules-u7')])).toBe('InvalidDeviceSpec');
    // the 8.0 profile's VMs are hardware version 20: PVSCSI has 64 targets (0–63, 7 reserved)
    expect((await client.vmHardware(vm)).hw).toBe(20);
    expect(await reconfigure([diskAt(64, 'ss-rules-u64')])).toBe('InvalidDeviceSpec');
    expect(await reconfigure([diskAt(40, 'ss-rules-u40')])).toBe('ok');
    const u40 = (await client.vmHardware(vm)).devices.find((d) => d._type === 'VirtualDisk' && d.unitNumber === 40)!;
    expect(await client.detachDisk(vm, u40.key, { deleteFile: true })).toBe('removed');
    expect(await reconfigure([{ operation: 'add', device: { _type: 'VirtualLsiLogicController', key: -100, busNumber: 0, sharedBus: 'noSharing' } }])).toBe('InvalidDeviceSpec');
    expect(await reconfigure([{ operation: 'add', device: { _type: 'VirtualLsiLogicController', key: -100, busNumber: 4, sharedBus: 'noSharing' } }])).toBe('InvalidDeviceSpec');
    const added: number[] = [];
    for (const bus of [1, 2, 3]) {
      expect(await reconfigure([{ operation: 'add', device: { _type: 'VirtualLsiLogicController', key: -100, busNumber: bus, sharedBus: 'noSharing' } }])).toBe('ok');
    }
    for (const d of (await client.vmHardware(vm)).devices) if (d._type === 'VirtualLsiLogicController') added.push(d.key);
    // four SCSI controllers: a fifth has no bus, and the provider says so before sending anything
    const provider = createVsphereProvider(target());
    try {
      await control.reset();
      const [ctl] = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'disk.controller': 'lsisas' }, target(), { prefix: 'ss-rules-ctl-5th' });
      await expect(provider.apply(ctl!, ctx('5th'))).rejects.toThrow(/already has 4 SCSI controllers/);
      expect((await control.calls()).ReconfigVM_Task).toBeUndefined();
    } finally {
      await provider.close();
      for (const key of added) expect(await client.removeController(vm, { key, type: 'VirtualLsiLogicController', busNumber: (await client.vmHardware(vm)).devices.find((d) => d.key === key)!.busNumber! })).toBe('removed');
    }
    expect(await controllerTypes()).toEqual(['ParaVirtualSCSIController@0']);
  });
});

describe('controllers on an ESXi 5.5 host (hardware version 10)', () => {
  it('PVSCSI has 16 targets, NVMe does not exist: the harness refuses, the provider refuses before sending, validate at the value', async () => {
    await control.version('5.5');
    try {
      const vm = await client.findVm('DC0_H0_VM0');
      expect((await client.vmHardware(vm)).hw).toBe(10);
      const task = await reconfigVMTask(client.session, vm, { deviceChange: [{ operation: 'add', device: { _type: 'VirtualNVMEController', key: -100, busNumber: 0 } }] });
      const err = await waitForTask(client.session, client.serviceContent, task).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TaskFailed);
      expect((err as TaskFailed).faultName).toBe('DeviceUnsupportedForVmVersion');

      await control.reset();
      const provider = createVsphereProvider(target());
      try {
        const [ctl] = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'disk.controller': 'nvme' }, target(), { prefix: 'ss-rules-ctl-55' });
        await expect(provider.apply(ctl!, ctx('55'))).rejects.toThrow(/hardware version 10; an NVMe controller needs 13 or later/);
        expect((await control.calls()).ReconfigVM_Task).toBeUndefined();
      } finally {
        await provider.close();
      }
      // an inventory that states the release: refused when planning
      expect(() => planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'disk.controller': 'nvme' }, target({ version: '5.5' }), { prefix: 'p' })).toThrow(
        /disk.controller nvme: DC0_H0 runs ESXi 5\.5; a virtual NVMe controller needs ESXi 6\.5 or later/,
      );
    } finally {
      await control.version('8.0');
    }
  });
});

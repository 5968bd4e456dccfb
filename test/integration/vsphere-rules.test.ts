// What a real vCenter/ESXi refuses or does differently, against the vcsim harness (which learned
// the same rules), read back through pyvmomi, the harness call counter and the datastore's files.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVcsim, vcsimControl, type VcsimControl, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import type { VsphereTargetConfig } from '../../src/providers/vsphere/config.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { planVsphereSteps } from '../../src/providers/vsphere/steps.ts';
import type { CreatedObject, ProviderContext } from '../../src/contract/provider.ts';
import { TaskFailed } from '../../src/providers/vsphere/fault.ts';
import { vcenterYaml, vsphereTargetYaml } from '../../src/lab/vsphere-inventory.ts';
import { runCli } from './helpers/cli.ts';
import { readRun, runDirIn } from './helpers/vsphere-lab.ts';

const VERIFY = fileURLToPath(new URL('../harness/pyvmomi/verify_vsphere.py', import.meta.url));

interface PyDisk {
  key: number;
  fileName: string;
  backingType: string;
  controllerType?: string;
  busNumber?: number;
  unitNumber?: number;
  thinProvisioned?: boolean;
  eagerlyScrub?: boolean;
}
function pyvmomi(sim: VcsimHandle, req: { datastores?: string[]; vm?: string }): Promise<{ datastores: Record<string, { url: string } | null>; disks?: PyDisk[] }> {
  return new Promise((resolve, reject) => {
    const p = execFile('/usr/bin/python3', [VERIFY], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`verify_vsphere.py failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout));
    });
    p.stdin!.end(JSON.stringify({ url: sim.url, username: sim.username, password: sim.password, certFile: sim.certFile, ...req }));
  });
}

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
  sim = await startVcsim({ password: `vc-Rules-${Math.random().toString(36).slice(2, 10)}` });
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

function target(over: Partial<VsphereTargetConfig> = {}): VsphereTargetConfig {
  return {
    vcenter: { url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint },
    datacenter: 'DC0',
    host: 'DC0_H0',
    vm: 'DC0_H0_VM0',
    datastore: 'LocalDS_0',
    vmfsDevice: luns[0]!,
    rdmDevice: luns[1]!,
    allowedDevices: [luns[0]!, luns[1]!],
    ...over,
  };
}

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
        ...vsphereTargetYaml({ name: 'lab-vcenter', vcenter: 'lab-vc', host: 'DC0_H0', vm: 'DC0_H0_VM0', datastore: 'LocalDS_0', nfsDir, guest: { workdir: path.join(dir, 'scratch') } }),
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
          'settings:',
          '  fileSize: 4m',
          '  runtimeSec: 1',
          '  passes: 1',
          '  warmupPass: false',
          '  intervalSec: 0',
          '  direct: false',
          'repeat: 1',
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
  });
});

// Semantics check: the disks our client creates for each format carry the same backing flags as
// the disks Ansible's community.vmware.vmware_guest_disk creates for the same request, both read
// back through pyvmomi from the vcsim harness.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';

const PLAYBOOK = fileURLToPath(new URL('../harness/ansible/guest-disks.yaml', import.meta.url));
const VERIFY = fileURLToPath(new URL('../harness/pyvmomi/verify_vsphere.py', import.meta.url));

interface PyDisk {
  unitNumber: number;
  backingType: string;
  thinProvisioned?: boolean;
  eagerlyScrub?: boolean;
  compatibilityMode?: string;
  deviceName?: string;
  lunUuid?: string;
}

function run(cmd: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = execFile(cmd, args, { timeout: 180_000, maxBuffer: 16 << 20, env: opts.env ?? process.env }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} failed: ${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
    p.stdin!.end(opts.input ?? '');
  });
}

async function disks(sim: VcsimHandle, vm: string): Promise<PyDisk[]> {
  const out = await run('/usr/bin/python3', [VERIFY], { input: JSON.stringify({ url: sim.url, username: sim.username, password: sim.password, certFile: sim.certFile, vm }) });
  return (JSON.parse(out) as { disks: PyDisk[] }).disks;
}

/** the flags that define a format, plus the LUN identity for RDMs */
function flags(d: PyDisk | undefined): Record<string, unknown> {
  if (!d) return {};
  const { backingType, thinProvisioned, eagerlyScrub, compatibilityMode } = d;
  return { backingType, thinProvisioned, eagerlyScrub, compatibilityMode };
}

let sim: VcsimHandle;
beforeAll(async () => {
  sim = await startVcsim();
});
afterAll(async () => {
  await sim?.stop();
});

describe('storsweep vs community.vmware.vmware_guest_disk', () => {
  it('thin / thick / eager-zeroed / RDM physical / RDM virtual give the same backing flags', async () => {
    const client = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
    let hostLuns: Array<{ canonicalName: string; uuid: string }> = [];
    try {
      const host = await client.findHost('DC0_H0');
      const luns = (await client.listVmfsCandidateDisks(host)).map((d) => d.canonicalName).sort();
      hostLuns = await client.listHostLuns(host);
      expect(luns.length).toBeGreaterThanOrEqual(4);
      const vm = await client.findVm('DC0_H0_VM0');
      // ours on VM0 at units 1..5; each RDM gets its own LUN (a LUN maps to one VM here)
      await client.createDisk(vm, { datastore: 'LocalDS_0', fileName: 'ours-thin.vmdk', sizeBytes: 1024 ** 3, format: 'thin', unitNumber: 1 });
      await client.createDisk(vm, { datastore: 'LocalDS_0', fileName: 'ours-lazy.vmdk', sizeBytes: 1024 ** 3, format: 'lazyzeroedthick', unitNumber: 2 });
      await client.createDisk(vm, { datastore: 'LocalDS_0', fileName: 'ours-eager.vmdk', sizeBytes: 1024 ** 3, format: 'eagerzeroedthick', unitNumber: 3 });
      await client.attachRdm(vm, { deviceCanonicalName: luns[0]!, compatibilityMode: 'physicalMode', datastore: 'LocalDS_0', fileName: 'ours-rdmp.vmdk', unitNumber: 4, allowedDevices: luns });
      await client.attachRdm(vm, { deviceCanonicalName: luns[1]!, compatibilityMode: 'virtualMode', datastore: 'LocalDS_0', fileName: 'ours-rdmv.vmdk', unitNumber: 5, allowedDevices: luns });

      const port = new URL(sim.url).port;
      const vars = { vc_host: '127.0.0.1', vc_port: port, vc_user: sim.username, vc_password: sim.password, vm: 'DC0_H0_VM1', datastore: 'LocalDS_0', rdm_physical: `/vmfs/devices/disks/${luns[2]}`, rdm_virtual: `/vmfs/devices/disks/${luns[3]}` };
      await run('ansible-playbook', [PLAYBOOK, '-e', JSON.stringify(vars)], {
        env: { ...process.env, ANSIBLE_PYTHON_INTERPRETER: '/usr/bin/python3', ANSIBLE_NOCOLOR: '1', ANSIBLE_LOCALHOST_WARNING: 'false', ANSIBLE_INVENTORY_UNPARSED_WARNING: 'false' },
      });
    } finally {
      await client.logout();
    }

    const ours = await disks(sim, 'DC0_H0_VM0');
    const theirs = await disks(sim, 'DC0_H0_VM1');
    const at = (list: PyDisk[], unit: number) => list.find((d) => d.unitNumber === unit);
    const expected: Record<number, Record<string, unknown>> = {
      1: { backingType: 'VirtualDiskFlatVer2BackingInfo', thinProvisioned: true, eagerlyScrub: false },
      2: { backingType: 'VirtualDiskFlatVer2BackingInfo', thinProvisioned: false, eagerlyScrub: false },
      3: { backingType: 'VirtualDiskFlatVer2BackingInfo', thinProvisioned: false, eagerlyScrub: true },
      4: { backingType: 'VirtualDiskRawDiskMappingVer1BackingInfo', compatibilityMode: 'physicalMode' },
      5: { backingType: 'VirtualDiskRawDiskMappingVer1BackingInfo', compatibilityMode: 'virtualMode' },
    };
    for (const unit of [1, 2, 3, 4, 5]) {
      expect(flags(at(ours, unit)), `unit ${unit}`).toEqual(flags(at(theirs, unit)));
      expect(at(ours, unit), `unit ${unit}`).toMatchObject(expected[unit]!);
    }
    // Both identify the mapped LUN the same way: device path and the host's LUN uuid.
    for (const [list, unit] of [[ours, 4], [ours, 5], [theirs, 4], [theirs, 5]] as const) {
      const d = at(list, unit)!;
      const lun = hostLuns.find((l) => d.deviceName === `/vmfs/devices/disks/${l.canonicalName}`);
      expect(lun, d.deviceName).toBeDefined();
      expect(d.lunUuid).toBe(lun!.uuid);
    }
  });
});

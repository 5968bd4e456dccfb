// What a real vCenter/ESXi refuses or does differently, against the vcsim harness (which learned
// the same rules), read back through pyvmomi, the harness call counter and the datastore's files.
import { existsSync } from 'node:fs';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVcsim, vcsimControl, type VcsimControl, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import type { VsphereTargetConfig } from '../../src/providers/vsphere/config.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { planVsphereSteps } from '../../src/providers/vsphere/steps.ts';
import type { CreatedObject, ProviderContext } from '../../src/contract/provider.ts';

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

beforeAll(async () => {
  sim = await startVcsim();
  control = vcsimControl(sim);
  client = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
  luns = (await client.listVmfsCandidateDisks(await client.findHost('DC0_H0'))).map((d) => d.canonicalName).sort();
});

afterAll(async () => {
  await client?.logout();
  await sim?.stop();
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

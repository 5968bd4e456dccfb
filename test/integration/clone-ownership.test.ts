// A vm.count clone's teardown proves ownership on the host (operations/clone-vm.ts): it destroys a
// VM only while the host shows it under the run's owned name, by the recorded MoRef or by that
// name; a recorded id whose VM now has another name is not ours ('absent', left alone); and a clone
// holding a disk from outside its own folder is refused (UnsafeOperation), not destroyed with that
// disk. Checked afterwards with pyvmomi and the harness's call log, never by our return value alone.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderContext } from '../../src/contract/provider.ts';
import { UnsafeOperation } from '../../src/errors.ts';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';
import { simTarget } from '../helpers/vsphere-lab.ts';

const NAME = 'ss-r1clone-p0123456789ab-vm1';
let sim: VcsimHandle;
let dir: string;

const ctx: ProviderContext = { runId: 'r1clone', permutationId: 'p0123456789ab', axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined };
const vms = async () => (await probeOne(sim, { op: 'about' })).vms as string[];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-clone-own-'));
  sim = await startVcsim({ username: 'administrator@vsphere.local', password: `vc-Secret-${Math.random().toString(36).slice(2, 10)}` });
}, 120_000);

afterAll(async () => {
  await sim?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('destroying a clone', () => {
  it('refuses one holding a disk from outside its folder; destroys it once that disk is gone; a reused id of another name is absent', async () => {
    const c = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
    const provider = createVsphereProvider(simTarget(sim, ['naa.unused0', 'naa.unused1']));
    try {
      const dc = await c.findDatacenter('DC0');
      const clone = await c.cloneVm(await c.findVm('DC0_H0_VM0', dc), { name: NAME, beforeSend: () => undefined });
      expect(await vms()).toContain(NAME);
      // someone attaches a disk that lives in another VM's folder
      const foreign = await probeOne(sim, { op: 'add-disk', vm: NAME, unit: 3, fileName: '[LocalDS_0] DC0_H0_VM0/someone-elses.vmdk' });
      expect(foreign.ok, JSON.stringify(foreign)).toBe(true);
      const recorded = { kind: 'vm', name: NAME, provider: 'vsphere' as const, id: clone.value, data: { vm: NAME } };
      await expect(provider.destroy(recorded, ctx)).rejects.toBeInstanceOf(UnsafeOperation);
      expect(await vms()).toContain(NAME);
      expect((await sim.control.log()).filter((x) => x.method === 'Destroy_Task')).toEqual([]);

      // the foreign disk detached (its file kept): the clone is ours alone again
      const disks = (await probeOne(sim, { op: 'vm-disks', vm: NAME })).disks as Array<{ key: number; fileName: string }>;
      const key = disks.find((d) => d.fileName.includes('someone-elses.vmdk'))!.key;
      expect((await probeOne(sim, { op: 'remove-disk', vm: NAME, key })).ok).toBe(true);
      expect(await provider.destroy(recorded, ctx)).toBe('removed');
      expect(await vms()).not.toContain(NAME);
      expect((await sim.control.log()).filter((x) => x.method === 'Destroy_Task').map((x) => x.vm)).toEqual([NAME]);

      // the target's own VM under a recorded id that is not the owned name's: not ours, left alone
      const source = await c.findVm('DC0_H0_VM0', dc);
      expect(await provider.destroy({ ...recorded, id: source.value }, ctx)).toBe('absent');
      expect(await vms()).toContain('DC0_H0_VM0');
      expect((await sim.control.log()).filter((x) => x.method === 'Destroy_Task')).toHaveLength(1);
    } finally {
      await provider.close();
      await c.logout();
    }
  }, 120_000);
});

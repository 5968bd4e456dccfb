// A vm.count clone boots a copy of the template's guest: its IP configuration, host name and (for a
// manual MAC address) its MAC. On the template's network it would collide with the running
// template. A clone is reached through VMware Tools only, so its network cards are cut while it is
// still powered off (providers/vsphere/clones.ts isolateNics): not connected, not connected at
// power-on, out of the guest's control. Read back with pyvmomi, after power-on too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';

const NAME = 'ss-r1nic-p0123456789ab-vm1';
let sim: VcsimHandle;

type Nic = { key: number; macAddress: string; startConnected: boolean | null; connected: boolean | null; allowGuestControl: boolean | null };
const nicsOf = async (vm: string) => {
  const r = await probeOne(sim, { op: 'vm-nics', vm });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return r as unknown as { nics: Nic[]; powerState: string };
};

beforeAll(async () => {
  sim = await startVcsim({ username: 'administrator@vsphere.local', password: `vc-Secret-${Math.random().toString(36).slice(2, 10)}` });
}, 120_000);

afterAll(async () => {
  await sim?.stop();
});

describe('a vm.count clone on the network', () => {
  it('has every network card disconnected, also after power-on; the template keeps its own', async () => {
    const template = await nicsOf('DC0_H0_VM0');
    // the simulator's VM has a connected card: what a clone would otherwise inherit
    expect(template.nics.length).toBeGreaterThan(0);
    expect(template.nics.every((n) => n.startConnected === true)).toBe(true);

    const c = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
    try {
      const ref = await c.cloneVm(await c.findVm('DC0_H0_VM0', await c.findDatacenter('DC0')), { name: NAME, beforeSend: () => undefined });
      const off = await nicsOf(NAME);
      expect(off.powerState).toBe('poweredOff');
      expect(off.nics.length).toBe(template.nics.length);
      for (const n of off.nics) expect(n, JSON.stringify(n)).toMatchObject({ startConnected: false, connected: false, allowGuestControl: false });

      await c.powerOn(ref);
      const on = await nicsOf(NAME);
      expect(on.powerState).toBe('poweredOn');
      for (const n of on.nics) expect(n, JSON.stringify(n)).toMatchObject({ startConnected: false, connected: false, allowGuestControl: false });
    } finally {
      await c.logout();
    }
    // the template is left as it was
    expect((await nicsOf('DC0_H0_VM0')).nics).toEqual(template.nics);
    // the cards were cut before the clone was first powered on
    const calls = (await sim.control.log()).map((x) => x.method);
    expect(calls.indexOf('ReconfigVM_Task')).toBeGreaterThan(calls.indexOf('CloneVM_Task'));
    expect(calls.indexOf('ReconfigVM_Task')).toBeLessThan(calls.indexOf('PowerOnVM_Task'));
  }, 120_000);
});

// A run killed while CloneVM_Task runs on the host: the task goes on without its client, and its
// clone may appear after the resume's teardown looked for it. The teardown must not call that
// clone absent while a clone of the template is still under way on the host
// (providers/vsphere/operations/clone-vm.ts): it is left for `cleanup`, and removed once the task
// has ended. Checked on the host: pyvmomi's VM list and the harness's call log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderContext } from '../../src/contract/provider.ts';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { cloneVm } from '../../src/providers/vsphere/operations/clone-vm.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';
import { heldTasks } from '../helpers/vcsim-log.ts';
import { simTarget } from '../helpers/vsphere-lab.ts';
import { waitFor } from '../helpers/wait.ts';

const NAME = 'ss-r1mid-p0123456789ab-vm1';
let sim: VcsimHandle;
const vms = async () => (await probeOne(sim, { op: 'about' })).vms as string[];

beforeAll(async () => {
  sim = await startVcsim({ username: 'administrator@vsphere.local', password: `vc-Secret-${Math.random().toString(36).slice(2, 10)}` });
}, 120_000);

afterAll(async () => {
  await sim?.stop();
});

describe('resuming after a kill during CloneVM_Task', () => {
  it('leaves the clone\'s row open while the host still clones the template, and removes the clone once the task ended', async () => {
    const target = simTarget(sim, ['naa.unused0', 'naa.unused1']);
    // the killed run: its clone task held running on the host; the process gone (its wait aborted)
    const killed = new AbortController();
    const dead = createVsphereProvider(target);
    const runCtx: ProviderContext = { runId: 'r1mid', permutationId: 'p0123456789ab', axes: {}, signal: killed.signal, log: () => undefined, sent: () => undefined };
    await sim.control.hold('CloneVM_Task', { task: true });
    const step = cloneVm.step({ step: 'clone vm1', arguments: { host: 'DC0_H0', vm: 'DC0_H0_VM0', datacenter: 'DC0', name: NAME, member: 1, count: 1, clone: 'full' }, destructive: false, creates: { kind: 'vm', name: NAME } });
    const applying = dead.apply(step, runCtx).catch((e: unknown) => e);
    await waitFor(async () => heldTasks(await sim.control.log(), 'CloneVM_Task').length === 1, { what: 'the clone task running on the host' });
    killed.abort();
    await applying;
    await dead.close();

    // the resume's teardown of the row (sent, no id): the host has no such VM yet, but a clone of the template runs
    const resumed = createVsphereProvider(target);
    const ctx: ProviderContext = { ...runCtx, signal: new AbortController().signal };
    const row = { kind: 'vm', name: NAME, provider: 'vsphere' as const, id: null, data: { vm: NAME, source: 'DC0_H0_VM0', member: 1 } };
    try {
      const early = await resumed.destroy(row, ctx).then((o) => o, (e: unknown) => e);
      expect(early, 'not absent while the clone task runs').not.toBe('absent');
      expect(String(early)).toMatch(/CloneVM_Task .* still running/);

      // the task ends: its clone appears, and the next teardown (cleanup) removes it
      await sim.control.release('CloneVM_Task');
      await waitFor(async () => (await vms()).includes(NAME), { what: 'the clone made by the orphaned task' });
      expect(await resumed.destroy(row, ctx)).toBe('removed');
      expect(await vms()).not.toContain(NAME);
      expect((await sim.control.log()).filter((x) => x.method === 'Destroy_Task').map((x) => x.vm)).toEqual([NAME]);
    } finally {
      await resumed.close();
    }
  }, 120_000);
});

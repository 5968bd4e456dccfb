// Listed targets that share something (a VM, a guest's test file or work directory, a LUN, a
// Hyper-V VM or host disk, a datastore or volume) are serialised: the keys come from each provider
// module (ProviderModule.sharedResources) through the inventory (app/compose.ts resourceContext),
// the plan names the targets that take turns and why (plan.serialised, `plan`'s text).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory, type LoadedInventory } from '../../../src/config/index.ts';
import { composeTargets, isLoopback, resourceContext } from '../../../src/app/compose.ts';
import { scheduleLines } from '../../../src/app/plan-text.ts';
import { serialisedResources } from '../../../src/plan/plan.ts';
import { remainingEstimate } from '../../../src/plan/estimate.ts';
import type { RunPlan } from '../../../src/contract/plan.ts';

let dir: string;
let inv: LoadedInventory;

const INVENTORY = `
vcenters:
  vc: { url: https://VC.example.com/sdk, username: administrator@vsphere.local, password: "\${env:SS_TEST_VC_PASSWORD}" }
  vc-alias: { url: "https://vc.example.com:443/sdk", username: other@vsphere.local, password: "\${env:SS_TEST_VC_PASSWORD}" }
sshHosts:
  loop: { host: 127.0.0.1, port: 2222, user: me, privateKeyFile: k, knownHostsFile: kh }
  loop6: { host: "::1", port: 2223, user: me, privateKeyFile: k, knownHostsFile: kh }
  far: { host: Guest.example.com, port: 22, user: me, privateKeyFile: k, knownHostsFile: kh }
  far-other-user: { host: guest.example.com, port: 22, user: root, privateKeyFile: k, knownHostsFile: kh }
  far-other-port: { host: guest.example.com, port: 2200, user: me, privateKeyFile: k, knownHostsFile: kh }
  esx: { host: esx1.example.com, user: root, privateKeyFile: k, knownHostsFile: kh }
  hv: { host: hv1.example.com, user: me, privateKeyFile: k, knownHostsFile: kh }
targets:
  over-ssh: { provider: ssh, sshHost: loop, workdir: /w1 }
  here: { provider: local, workdir: /w1 }
  here-own-dir: { provider: local, workdir: /w2 }
  here-same-file: { provider: local, workdir: /w3, testFile: /w1/storsweep-test.dat }
  over-ssh6: { provider: ssh, sshHost: loop6, workdir: /w4 }
  here-w4: { provider: local, workdir: /w4 }
  far-a: { provider: ssh, sshHost: far, workdir: /w1 }
  far-b: { provider: ssh, sshHost: far-other-user, workdir: /w1 }
  far-c: { provider: ssh, sshHost: far-other-port, workdir: /w1 }
  vm0: { provider: vsphere, vcenter: vc, host: h0, vm: VM0, vmfsDevice: naa.600a01, allowedDevices: [naa.600a01], guest: { sshHost: far, workdir: /v0 } }
  vm0-again: { provider: vsphere, vcenter: vc-alias, host: h0, vm: VM0, guest: { sshHost: far, workdir: /v9 } }
  vm1: { provider: vsphere, vcenter: vc, host: h1, vm: VM1, vmfsDevice: naa.600a02, allowedDevices: [naa.600a02], guest: { sshHost: far-other-port, workdir: /v1 } }
  vm0-dc: { provider: vsphere, vcenter: vc, datacenter: DC0, host: DC0/host/h0, vm: VM0, datastore: ds1, rdmDevice: mpx.vmhba1:C0:T1:L0, allowedDevices: [mpx.vmhba1:C0:T1:L0], guest: { workdir: /d0 } }
  vm0-nodc: { provider: vsphere, vcenter: vc, host: h0, vm: VM0, datastore: ds1, rdmDevice: mpx.vmhba1:C0:T1:L0, allowedDevices: [mpx.vmhba1:C0:T1:L0], guest: { workdir: /d1 } }
  vm5-far: { provider: vsphere, vcenter: vc, host: h1, vm: VM5, guest: { sshHost: far-other-user, workdir: /v5 } }
  esx-vm-far: { provider: esxi-shell, sshHost: esx, vmid: 8, guest: { sshHost: far, workdir: /e8 } }
  esx-vm-7: { provider: esxi-shell, sshHost: esx, vmid: "7", guest: { sshHost: far-other-port, workdir: /e7 } }
  esx-vm: { provider: esxi-shell, sshHost: esx, vmid: 7, rdmDevice: naa.600a01, allowedDevices: [naa.600a01], guest: { sshHost: far, workdir: /e1 } }
  hv-a: { provider: hyperv, sshHost: hv, vmName: Bench, volumes: { "100": 'E:\\bench' }, guestCredential: { username: u, password: "\${env:SS_TEST_HV_PASSWORD}" } }
  hv-b: { provider: hyperv, sshHost: hv, vmName: bench, guestCredential: { username: u, password: "\${env:SS_TEST_HV_PASSWORD}" } }
  hv-c: { provider: hyperv, sshHost: hv, vmName: other, volumes: { "500": 'e:\\BENCH\\' }, allowedDisks: [{ number: 3, serialNumber: S3 }], passthroughDisk: 3, guestCredential: { username: u, password: "\${env:SS_TEST_HV_PASSWORD}" } }
  hv-d: { provider: hyperv, sshHost: hv, vmName: fourth, allowedDisks: [{ number: 3, serialNumber: S3 }], passthroughDisk: 3, guestCredential: { username: u, password: "\${env:SS_TEST_HV_PASSWORD}" } }
`;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-shared-'));
  fs.writeFileSync(path.join(dir, 'inv.yaml'), INVENTORY);
  inv = loadInventory(path.join(dir, 'inv.yaml'), { SS_TEST_VC_PASSWORD: 'a-long-enough-password', SS_TEST_HV_PASSWORD: 'another-long-password' });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** What the named targets share, as `target+target: what`, through the composition root. */
function shared(...names: string[]): string[] {
  const comps = composeTargets(names, inv);
  return serialisedResources(names.map((name) => ({ name, resources: comps.get(name)!.sharedResources }))).map((s) => `${s.targets.join('+')}: ${s.what}`);
}

describe('which machine an endpoint is', () => {
  it('loopback (127.0.0.0/8, ::1, localhost, IPv4-mapped) is this machine, whatever the port; other hosts by host:port in lower case', () => {
    for (const h of ['127.0.0.1', '127.3.2.1', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST', 'db.localhost']) expect(isLoopback(h), h).toBe(true);
    for (const h of ['10.0.0.1', '128.0.0.1', '::2', 'example.com', 'localhost.example.com']) expect(isLoopback(h), h).toBe(false);
    const where = resourceContext(inv);
    expect(where.machine(undefined)).toBe('this machine');
    expect(where.machine('loop')).toBe('this machine');
    expect(where.machine('far')).toBe('guest.example.com:22');
    expect(where.machine('far-other-user')).toBe('guest.example.com:22');
    expect(where.machine('far-other-port')).toBe('guest.example.com:2200');
    expect(where.endpoint('vcenters', 'vc')).toBe('vc.example.com');
    expect(where.endpoint('vcenters', 'vc-alias')).toBe('vc.example.com');
  });
});

describe('targets that share something are serialised, with the reason', () => {
  it('a guest test file and work directory: over SSH to this machine and local are one guest; another user on one host:port is the same guest', () => {
    expect(shared('over-ssh', 'here')).toEqual(['over-ssh+here: guest test file /w1/storsweep-test.dat on this machine', 'over-ssh+here: guest work directory /w1 on this machine']);
    expect(shared('over-ssh6', 'here-w4')).toHaveLength(2);
    expect(shared('here', 'here-same-file')).toEqual(['here+here-same-file: guest test file /w1/storsweep-test.dat on this machine']);
    expect(shared('far-a', 'far-b')).toHaveLength(3);
  });

  it('one guest machine over SSH (two sshHosts entries for one host:port) measured from two work directories: one guest', () => {
    expect(shared('vm0', 'vm5-far')).toEqual(['vm0+vm5-far: guest guest.example.com:22']);
    expect(shared('far-a', 'esx-vm-far')).toEqual(['far-a+esx-vm-far: guest guest.example.com:22']);
    expect(shared('over-ssh', 'over-ssh6')).toEqual(['over-ssh+over-ssh6: guest this machine']);
  });

  it('vSphere: a target with datacenter and one without (the default) share the VM, datastore and mpx LUN', () => {
    expect(shared('vm0-dc', 'vm0-nodc')).toEqual(['vm0-dc+vm0-nodc: VM VM0 on vc.example.com', 'vm0-dc+vm0-nodc: LUN mpx.vmhba1:C0:T1:L0', 'vm0-dc+vm0-nodc: datastore ds1 on vc.example.com']);
  });

  it('ESXi shell: one VM by vmid whether written as a number or a string', () => {
    expect(shared('esx-vm', 'esx-vm-7')).toEqual(['esx-vm+esx-vm-7: VM 7 (vim-cmd vmid) on esx1.example.com:22']);
  });

  it('independent targets share nothing: another work directory, another port (another machine)', () => {
    expect(shared('here', 'here-own-dir')).toEqual([]);
    expect(shared('far-a', 'far-c')).toEqual([]);
    expect(shared('vm0', 'vm1')).toEqual([]);
    expect(shared('hv-a', 'hv-d')).toEqual([]);
  });

  it('a VM (two vcenters entries for one vCenter), a LUN across providers (VMFS on one, RDM on the other)', () => {
    expect(shared('vm0', 'vm0-again')).toEqual(['vm0+vm0-again: VM VM0 on vc.example.com', 'vm0+vm0-again: guest guest.example.com:22']);
    expect(shared('vm0', 'esx-vm')).toEqual(['vm0+esx-vm: LUN naa.600a01', 'vm0+esx-vm: guest guest.example.com:22']);
  });

  it('Hyper-V: a VM and a volume folder (names without regard to case), a pass-through disk by number and serial', () => {
    expect(shared('hv-a', 'hv-b')).toEqual(['hv-a+hv-b: Hyper-V VM Bench on hv1.example.com:22']);
    expect(shared('hv-a', 'hv-c')).toEqual(['hv-a+hv-c: volume folder E:\\bench on hv1.example.com:22']);
    expect(shared('hv-c', 'hv-d')).toEqual(['hv-c+hv-d: host disk 3 on hv1.example.com:22', 'hv-c+hv-d: host disk with serial/id S3 on hv1.example.com:22']);
  });

  it('three targets: each resource lists every target that uses it', () => {
    expect(shared('far-a', 'far-b', 'far-c')).toEqual(['far-a+far-b: guest guest.example.com:22', 'far-a+far-b: guest test file /w1/storsweep-test.dat on guest.example.com:22', 'far-a+far-b: guest work directory /w1 on guest.example.com:22']);
  });
});

describe('the plan says which targets take turns, and its estimate counts them one after the other', () => {
  const perm = (target: string, i: number) => ({ index: i, permutationId: `p${i}`, axes: { target }, workload: 'w', steps: [], repetitions: 1, estimateSec: 100 });
  const plan = (serialised: RunPlan['serialised']): Pick<RunPlan, 'targets' | 'serialised' | 'permutations'> => ({
    targets: ['a', 'b', 'c'].map((name) => ({ name, provider: 'local' as const })),
    serialised,
    permutations: [perm('a', 0), perm('a', 1), perm('b', 2), perm('c', 3)],
  });

  it('nothing shared: every target in parallel; the run takes as long as its longest target', () => {
    expect(scheduleLines(plan([]))).toEqual(['targets a, b, c run in parallel (they share no VM, guest, test file, LUN, disk, datastore or volume)']);
    expect(remainingEstimate(plan([]), () => false)).toEqual({ workSec: 400, wallSec: 200, done: 0 });
  });

  it('a and c share a test file: they take turns (one lane of 300 s), b runs beside them', () => {
    const p = plan([
      { key: 'k1', what: 'guest test file /x on this machine', targets: ['a', 'c'] },
      { key: 'k2', what: 'guest work directory / on this machine', targets: ['a', 'c'] },
    ]);
    expect(scheduleLines(p)).toEqual([
      'targets run in parallel, except these, which run one after the other (one permutation at a time):',
      '  a, c: they share guest test file /x on this machine; guest work directory / on this machine',
    ]);
    expect(remainingEstimate(p, () => false)).toEqual({ workSec: 400, wallSec: 300, done: 0 });
    // resumed with p0 done: only what is left counts
    expect(remainingEstimate(p, (id) => id === 'p0')).toEqual({ workSec: 300, wallSec: 200, done: 1 });
  });
});

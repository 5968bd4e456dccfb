// What a run records of its inventory for `run --resume` to compare (app/compose.ts): what changes
// a measurement, never a secret or a reference to one.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { measurementFacts, usedFacts } from '../../../src/app/compose.ts';
import { checkResumeInventory } from '../../../src/app/run/resume-checks.ts';
import { ResumeMismatch } from '../../../src/errors.ts';
import type { RunMeta } from '../../../src/results/store.ts';
import type { RunPlan } from '../../../src/contract/plan.ts';
import { loadInventory } from '../../../src/config/index.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-facts-'));
  fs.writeFileSync(path.join(dir, 'vc-pass'), 'Vc-Secret-1234\n');
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const inventory = (guestExtra: string[] = []) =>
  [
    'sshHosts:',
    '  guest:',
    '    host: 10.0.0.5',
    '    port: 2222',
    '    user: bench',
    '    password: ${file:vc-pass}',
    '    knownHostsFile: known_hosts',
    'vcenters:',
    '  vc:',
    '    url: https://vc.example.com/sdk',
    '    username: administrator@vsphere.local',
    '    password: ${file:vc-pass}',
    'targets:',
    '  lab:',
    '    provider: vsphere',
    '    vcenter: vc',
    '    host: esx1',
    '    vm: bench-vm',
    '    vmfsDevice: naa.600508b1001c3a4f',
    '    allowedDevices: [naa.600508b1001c3a4f]',
    '    guest:',
    '      sshHost: guest',
    '      workdir: /bench',
    ...guestExtra,
    '',
  ].join('\n');

function factsOf(yaml: string): Record<string, string> {
  const file = path.join(dir, 'inventory.yaml');
  fs.writeFileSync(file, yaml);
  return measurementFacts(['lab'], loadInventory(file, process.env));
}

describe('measurementFacts', () => {
  it('names the target, its guest, where it finds disks and fio settings, the SSH endpoint and the vCenter URL', () => {
    expect(factsOf(inventory(['      byIdDir: /lab/by-id', '      ioengine: psync']))).toEqual({
      'targets.lab.provider': 'vsphere',
      'targets.lab.vcenter': 'vc',
      'targets.lab.host': 'esx1',
      'targets.lab.vm': 'bench-vm',
      'targets.lab.vmfsDevice': 'naa.600508b1001c3a4f',
      'targets.lab.guest.sshHost': 'guest',
      'targets.lab.guest.workdir': '/bench',
      'targets.lab.guest.fioPath': 'fio',
      'targets.lab.guest.ioengine': 'psync',
      'targets.lab.guest.byIdDir': '/lab/by-id',
      'targets.lab.guest.sudo': 'false',
      // how the guest is reached and what it runs (issue 16): ssh to a Linux guest by default
      'targets.lab.guest.via': 'ssh',
      'targets.lab.guest.os': 'linux',
      'sshHosts.guest.host': '10.0.0.5',
      'sshHosts.guest.port': '2222',
      'sshHosts.guest.user': 'bench',
      'vcenters.vc.url': 'https://vc.example.com/sdk',
    });
  });

  it('holds no secret, no reference to one, and not the allow-lists', () => {
    const text = JSON.stringify(factsOf(inventory()));
    expect(text).not.toContain('Vc-Secret-1234');
    expect(text).not.toContain('${file:');
    expect(text).not.toContain('allowedDevices');
  });

  it('with the plan: only what its permutations use (an NFS export without NFS permutations, a Hyper-V volume for another size)', () => {
    fs.writeFileSync(path.join(dir, 'guest-pass'), 'Guest-Secret-1\n');
    const file = path.join(dir, 'inventory.yaml');
    fs.writeFileSync(
      file,
      inventory(['    nfs:', '      remoteHost: nas1', '      remotePath: /export/bench']).replace(
        'targets:\n',
        [
          'targets:',
          '  hv:',
          '    provider: hyperv',
          '    sshHost: guest',
          '    vmName: bench-vm',
          '    volumes:',
          '      "2000": E:\\bench',
          '      "5000": F:\\bench',
          '    guestCredential:',
          '      username: bench',
          '      password: ${file:guest-pass}',
          '',
        ].join('\n'),
      ),
    );
    const inv = loadInventory(file, process.env);
    const plan = (axes: Array<Record<string, string | number>>) => ({ permutations: axes.map((a) => ({ axes: a })) }) as unknown as Pick<RunPlan, 'permutations' | 'targets'>;
    // vSphere: nfs only with a datastore.kind nfs permutation
    const vmfsOnly = measurementFacts(['lab'], inv, plan([{ 'datastore.kind': 'vmfs' }]));
    expect(Object.keys(vmfsOnly).filter((k) => k.includes('nfs'))).toEqual([]);
    expect(vmfsOnly['targets.lab.vm']).toBe('bench-vm');
    const withNfs = measurementFacts(['lab'], inv, plan([{ 'datastore.kind': 'vmfs' }, { 'datastore.kind': 'nfs' }]));
    expect(withNfs['targets.lab.nfs.remotePath']).toBe('/export/bench');
    // Hyper-V: only the volume of a size the run measures
    const hv = measurementFacts(['hv'], inv, plan([{ 'disk.format': 'vhdx-fixed', 'volume.sizeGb': 2000 }]));
    expect(hv['targets.hv.volumes.2000']).toBe('E:\\bench');
    expect(hv).not.toHaveProperty('targets.hv.volumes.5000');
    expect(hv['targets.hv.vmName']).toBe('bench-vm');
    // a run recorded with every field compares the same once restricted
    const full = measurementFacts(['hv'], inv);
    expect(full).toHaveProperty('targets.hv.volumes.5000');
    expect(usedFacts(full, ['hv'], plan([{ 'disk.format': 'vhdx-fixed', 'volume.sizeGb': 2000 }]))).toEqual(hv);
  });

  it('resume: a recorded field the run does not use is not compared; a new SSH port is refused and explained', () => {
    const plan = { permutations: [{ axes: { 'volume.sizeGb': 2000 } }] } as unknown as RunPlan;
    const recorded = { 'targets.hv.vmName': 'bench-vm', 'targets.hv.volumes.2000': 'E:\\bench', 'targets.hv.volumes.5000': 'F:\\bench', 'sshHosts.hvhost.port': '2222' };
    const meta = { inventoryFile: '/inv/old.yaml', config: { facts: recorded } } as unknown as RunMeta;
    // volume 5000 gone (or changed): not used by the run, so not a difference
    expect(() => checkResumeInventory(meta, ['hv'], plan, { 'targets.hv.vmName': 'bench-vm', 'targets.hv.volumes.2000': 'E:\\bench', 'sshHosts.hvhost.port': '2222' }, '/inv/new.yaml')).not.toThrow();
    let err: unknown;
    try {
      checkResumeInventory(meta, ['hv'], plan, { 'targets.hv.vmName': 'bench-vm', 'targets.hv.volumes.2000': 'E:\\bench', 'sshHosts.hvhost.port': '2223' }, '/inv/new.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ResumeMismatch);
    expect((err as ResumeMismatch).differences).toEqual([{ key: 'sshHosts.hvhost.port', was: '2222', now: '2223' }]);
    expect((err as Error).message).toContain('(an SSH port names which machine is reached: on one address another port is another machine');
  });
});

// What a run records of its inventory for `run --resume` to compare (cli/compose.ts): what changes
// a measurement, never a secret or a reference to one.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { measurementFacts } from '../../../src/cli/compose.ts';
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
  return measurementFacts(['lab'], loadInventory(file));
}

describe('measurementFacts', () => {
  it('names the target, its guest, test file and fio settings, the SSH endpoint and the vCenter URL', () => {
    expect(factsOf(inventory(['      testFile: /bench/t.dat', '      ioengine: psync']))).toEqual({
      'targets.lab.provider': 'vsphere',
      'targets.lab.vcenter': 'vc',
      'targets.lab.host': 'esx1',
      'targets.lab.vm': 'bench-vm',
      'targets.lab.vmfsDevice': 'naa.600508b1001c3a4f',
      'targets.lab.guest.sshHost': 'guest',
      'targets.lab.guest.workdir': '/bench',
      'targets.lab.guest.testFile': '/bench/t.dat',
      'targets.lab.guest.fioPath': 'fio',
      'targets.lab.guest.ioengine': 'psync',
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
});

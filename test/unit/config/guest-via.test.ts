// A vSphere target's guest: `via: ssh|tools`, `os: linux|windows`, `credential`. What `run` would
// refuse (a Windows guest over SSH, guest operations without a credential or on a provider that has
// none, fio options for diskspd, a Linux filesystem in a Windows guest) `validate` refuses first, at
// file:line:col, naming what is allowed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../src/config/index.ts';
import { checkPlaybookAgainst } from '../../../src/plan/check.ts';
import { diagnosticsOf } from '../../helpers/config-errors.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-guest-via-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const ENV = { GUEST_PW: 'guest-secret-42' };

function write(name: string, text: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
}

const HEAD = `vcenters:
  vc:
    url: https://vc.example.com/sdk
    username: administrator@vsphere.local
sshHosts:
  g:
    host: 10.0.0.5
    user: root
    privateKeyFile: id_ed25519
    knownHostsFile: known_hosts
targets:
`;
const vcTarget = (name: string, guest: string) => `  ${name}:
    provider: vsphere
    vcenter: vc
    host: esx01
    vm: bench-vm
    datastore: datastore1
    guest:
${guest}`;

const problems = (inv: string): string[] => diagnosticsOf(() => loadInventory(inv, ENV), []);

describe('inventory: guest.via / guest.os / guest.credential', () => {
  it('accepts a Linux and a Windows guest through guest operations, and the SSH guest of today', () => {
    const inv = write(
      'ok.yaml',
      HEAD +
        vcTarget('lin', '      via: tools\n      os: linux\n      credential: { username: root, password: "${env:GUEST_PW}" }\n      workdir: /var/tmp/storsweep\n') +
        vcTarget('win', '      via: tools\n      os: windows\n      credential: { username: Administrator, password: "${env:GUEST_PW}" }\n      workdir: C:\\storsweep\n      diskspdPath: C:\\Tools\\diskspd.exe\n') +
        vcTarget('ssh', '      sshHost: g\n      workdir: /tmp/storsweep\n'),
    );
    const loaded = loadInventory(inv, ENV);
    const t = loaded.inventory.targets;
    expect(t.ssh).toMatchObject({ guest: { via: 'ssh', os: 'linux' } });
    expect(t.win).toMatchObject({ guest: { via: 'tools', os: 'windows', credential: { username: 'Administrator', password: '${env:GUEST_PW}' } } });
    // the password is a secret of the inventory (resolved, masked, never recorded)
    expect([...loaded.secrets.keys()]).toContain('${env:GUEST_PW}');
    expect(loaded.secrets.get('${env:GUEST_PW}')?.reveal()).toBe('guest-secret-42');
  });

  it('refuses, each at its line: tools without a credential, tools with an sshHost, Windows over SSH, a credential over SSH, a bad work directory per OS, a plaintext password', () => {
    const inv = write(
      'bad.yaml',
      HEAD +
        vcTarget('a', '      via: tools\n      workdir: /tmp/x\n') + // 18
        vcTarget('b', '      via: tools\n      credential: { username: root, password: "${env:GUEST_PW}" }\n      sshHost: g\n      workdir: /tmp/x\n') +
        vcTarget('c', '      os: windows\n      workdir: C:\\storsweep\n') +
        vcTarget('d', '      credential: { username: root, password: "${env:GUEST_PW}" }\n      workdir: /tmp/x\n') +
        vcTarget('e', '      via: tools\n      os: windows\n      credential: { username: a, password: "${env:GUEST_PW}" }\n      workdir: /tmp/x\n') +
        vcTarget('f', '      via: tools\n      credential: { username: a, password: "${env:GUEST_PW}" }\n      workdir: C:\\x\n      diskspdPath: diskspd.exe\n'),
    );
    const p = problems(inv);
    const text = p.join('\n');
    expect(p.find((x) => x.includes('targets.a.guest.via'))).toMatch(/^.*bad\.yaml:19:\d+: targets\.a\.guest\.via: via: tools logs in to the guest through VMware Tools: give guest\.credential/);
    expect(text).toMatch(/bad\.yaml:30:16: targets\.b\.guest\.sshHost: not used with via: tools/);
    expect(text).toMatch(/bad\.yaml:39:11: targets\.c\.guest\.os: a Windows guest is reached through VMware Tools guest operations only .*allowed: tools/);
    expect(text).toMatch(/bad\.yaml:48:19: targets\.d\.guest\.credential: guest\.credential is used only with via: tools/);
    expect(text).toMatch(/targets\.e\.guest\.workdir: a Windows guest's work directory must be a drive-rooted folder/);
    expect(text).toMatch(/targets\.f\.guest\.workdir: a Linux guest's work directory must be an absolute path/);
    expect(text).toMatch(/targets\.f\.guest\.diskspdPath: a Linux guest runs fio/);
    expect(p).toHaveLength(7);
  });

  it('refuses values outside the allowed sets, naming them, and a plaintext password', () => {
    const inv = write('enum.yaml', HEAD + vcTarget('g', '      via: carrier-pigeon\n      os: beos\n      credential: { username: a, password: hunter2hunter2 }\n      workdir: /tmp/x\n'));
    expect(problems(inv).map((x) => x.slice(x.indexOf('enum.yaml')))).toEqual([
      'enum.yaml:19:12: targets.g.guest.via: expected one of ssh, tools; got "carrier-pigeon"',
      'enum.yaml:20:11: targets.g.guest.os: expected one of linux, windows; got "beos"',
      'enum.yaml:21:44: targets.g.guest.credential.password: expected a secret reference like ${env:NAME} or ${file:path}; plaintext secrets are not accepted',
    ]);
  });

  it('refuses via: tools on a provider that has no guest operations, naming the one allowed value', () => {
    const inv = write(
      'esx.yaml',
      `sshHosts:
  esx:
    host: 127.0.0.1
    user: root
    privateKeyFile: id_ed25519
    knownHostsFile: known_hosts
targets:
  esx:
    provider: esxi-shell
    sshHost: esx
    vmid: 1
    datastore: datastore1
    guest:
      via: tools
      workdir: /tmp/storsweep
`,
    );
    expect(problems(inv)).toEqual([expect.stringMatching(/esx\.yaml:14:12: targets\.esx\.guest\.via: guest operations \(via: tools\) go through vCenter\/ESXi .*only a vsphere target's guest takes them; allowed here: ssh/)]);
  });
});

describe('playbook × inventory: the guest\'s tool and filesystems', () => {
  const inv = write(
    'pair.yaml',
    HEAD +
      vcTarget('win', '      via: tools\n      os: windows\n      credential: { username: Administrator, password: "${env:GUEST_PW}" }\n      workdir: C:\\storsweep\n') +
      vcTarget('lin', '      via: tools\n      credential: { username: root, password: "${env:GUEST_PW}" }\n      workdir: /var/tmp/storsweep\n'),
  );
  const refused = (pbText: string): string[] => {
    const pb = write(`pb-${Math.random().toString(36).slice(2)}.yaml`, pbText);
    return diagnosticsOf(() => checkPlaybookAgainst(loadPlaybook(pb), loadInventory(inv, ENV)), []);
  };
  const pb = (target: string, profiles: string, extra = '') => `name: t
target: ${target}
matrix:
  disk:
    format: [thin]
    sizeGb: [1]
${extra}  workload:
    profile: ${profiles}
workloads:
  myfio:
    fio: { rw: randread, bs: 4k, iodepth: 8 }
  myspd:
    diskspd: "-b4K -o8 -t1 -r -w0"
`;

  it('a Windows guest (diskspd) refuses a fio workload; a Linux guest (fio) refuses a diskspd workload; presets pass on both', () => {
    expect(refused(pb('win', '[cdm8-default, myfio]'))).toEqual([expect.stringMatching(/:8:\d+: matrix\.workload\.profile\[1\]: target "win" \(vsphere\) measures with diskspd \(a Windows guest\), but workload "myfio" gives fio options; allowed here: a preset, an IOMeter spec, or a workload with diskspd: parameters/)]);
    expect(refused(pb('lin', '[cdm8-default, myspd]'))).toEqual([expect.stringMatching(/:8:\d+: matrix\.workload\.profile\[1\]: target "lin" \(vsphere\) measures with fio, but workload "myspd" gives diskspd parameters; allowed here: a preset, an IOMeter spec, or a workload with fio: options/)]);
    expect(refused(pb('win', '[cdm8-default, myspd]'))).toEqual([]);
    expect(refused(pb('lin', '[cdm8-default, myfio]'))).toEqual([]);
  });

  it('a Windows guest refuses a Linux filesystem at the axis value, naming what it takes', () => {
    expect(refused(pb('win', '[cdm8-default]', '  guest:\n    filesystem: [raw, ext4]\n'))).toEqual([expect.stringMatching(/:8:\d+: matrix\.guest\.filesystem\[1\]: target "win" has a Windows guest \(guest\.os: windows\), where diskspd measures the raw disk or a test file on an NTFS or ReFS volume; supported: raw, ntfs-4k, ntfs-64k, refs; got "ext4"/)]);
    expect(refused(pb('win', '[cdm8-default]', '  guest:\n    filesystem: [ntfs-4k, xfs]\n'))).toEqual([expect.stringMatching(/:8:\d+: matrix\.guest\.filesystem\[1\]: .*supported: raw, ntfs-4k, ntfs-64k, refs; got "xfs"/)]);
  });

  it('a Windows guest takes ntfs-4k, ntfs-64k and refs (as a Hyper-V guest does); a Linux guest refuses them at the value, naming ext4 and xfs', () => {
    expect(refused(pb('win', '[cdm8-default]', '  guest:\n    filesystem: [raw, ntfs-4k, ntfs-64k, refs]\n'))).toEqual([]);
    expect(refused(pb('lin', '[cdm8-default]', '  guest:\n    filesystem: [ext4, ntfs-64k, refs]\n'))).toEqual([
      expect.stringMatching(/:8:\d+: matrix\.guest\.filesystem\[1\]: target "lin" has a Linux guest, where fio measures the raw disk or a test file on an ext4 or xfs filesystem; supported: raw, ext4, xfs; got "ntfs-64k"/),
      expect.stringMatching(/:8:\d+: matrix\.guest\.filesystem\[2\]: target "lin" has a Linux guest.*got "refs"/),
    ]);
  });
});

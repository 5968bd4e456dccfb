// The lab's inventory (src/lab/lab.ts labInventoryYaml, exactly what `npm run lab -- up` writes)
// for a lab that is not running: made-up ports, thumbprint and simulator LUN names, the secret
// files it references. Enough to validate and plan every shipped playbook on its lab target.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { labInventoryYaml, type LabState } from '../../src/lab/lab.ts';
import { DEFAULT_LAB_VERSION, isLabVersion, type LabVersion } from '../../src/lab/versions.ts';

export const FAKE_LUNS = ['naa.6000c29000000000000000000000000a', 'naa.6000c29000000000000000000000000b'];

/** The release a shipped playbook says it needs in its first lines (`npm run lab -- up --version 5.5`); else the lab's default. */
export function labVersionOf(playbookText: string): LabVersion {
  const head = playbookText.split('\n').filter((l) => l.startsWith('#')).join('\n');
  const v = /npm run lab -- up --version (\S+)/.exec(head)?.[1];
  return isLabVersion(v) ? v : DEFAULT_LAB_VERSION;
}

export async function writeLabInventory(version: LabVersion = DEFAULT_LAB_VERSION): Promise<{ dir: string; inventory: string; remove(): Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-labinv-'));
  const state: LabState = {
    ssh: { pid: 0, port: 2222, user: 'bench', keyPath: path.join(dir, 'id_ed25519'), knownHostsFile: path.join(dir, 'known_hosts') },
    vcsim: { pid: 0, url: 'https://127.0.0.1:8989/sdk', thumbprint: Array.from({ length: 32 }, () => 'AB').join(':'), certFile: path.join(dir, 'vcsim.pem'), username: 'administrator@vsphere.local', luns: FAKE_LUNS, nfsDir: path.join(dir, 'nfs') },
    scratch: path.join(dir, 'scratch'),
    standinState: path.join(dir, 'standin'),
    version,
  };
  const inventory = path.join(dir, 'inventory.yaml');
  await fs.writeFile(inventory, labInventoryYaml(state));
  await fs.writeFile(path.join(dir, 'vcsim-password'), 'lab-password-not-used\n', { mode: 0o600 });
  await fs.writeFile(path.join(dir, 'hyperv-guest-password'), 'lab-guest-password\n', { mode: 0o600 });
  await fs.writeFile(path.join(dir, 'vcenter-linux-guest-password'), 'lab-linux-guest-password\n', { mode: 0o600 });
  await fs.writeFile(path.join(dir, 'vcenter-windows-guest-password'), 'lab-windows-guest-password\n', { mode: 0o600 });
  return { dir, inventory, remove: () => fs.rm(dir, { recursive: true, force: true }) };
}

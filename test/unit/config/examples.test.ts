// The example inventories and every shipped playbook must stay valid as the schema evolves: users
// copy them first.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../src/config/index.ts';

const env = { VC_PASSWORD: 'x1x-secret', ESXI_ROOT_PASSWORD: 'x2x-secret', HV_PASSWORD: 'x3x-secret', HV_GUEST_PASSWORD: 'x4x-secret', BENCH_GUEST_PASSWORD: 'x5x-secret' };

describe('example inventories', () => {
  const files = fs.readdirSync('inventories').filter((f) => f.endsWith('.yaml'));
  it('exist for vCenter, the ESXi shell, Hyper-V and the lab', () => {
    // every one validates (below); a provider added in its own folder brings its own example
    expect(files).toEqual(expect.arrayContaining(['example-esxi-shell.yaml', 'example-hyperv.yaml', 'example-vcenter.yaml', 'lab.yaml']));
  });
  it.each(files)('%s validates and resolves its secrets by reference', (f) => {
    const inv = loadInventory(path.join('inventories', f), env);
    expect(Object.keys(inv.inventory.targets).length).toBeGreaterThan(0);
    for (const s of inv.secrets.values()) {
      expect(JSON.stringify(s)).toMatch(/^"\$\{env:/);
      expect(String(s)).not.toMatch(/^x\dx$/);
    }
  });
  it('the vCenter example allows exactly the devices it formats or maps', () => {
    const t = loadInventory('inventories/example-vcenter.yaml', env).inventory.targets['esx01-bench'];
    expect(t?.provider).toBe('vsphere');
    if (t?.provider !== 'vsphere') return;
    expect(t.allowedDevices).toContain(t.vmfsDevice);
    expect(t.allowedDevices).toContain(t.rdmDevice);
  });
});

describe('shipped playbooks', () => {
  const files = fs.readdirSync('playbooks').filter((f) => f.endsWith('.yaml'));
  it.each(files)('%s validates and names a target', (f) => {
    const pb = loadPlaybook(path.join('playbooks', f));
    for (const t of [pb.playbook.target].flat()) expect(t).toMatch(/^lab-/);
    expect(pb.playbook.matrix.workload.profile.length).toBeGreaterThan(0);
  });
});

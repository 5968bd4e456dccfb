// `storsweep preflight` of the shipped storage-policy.yaml on the vcsim harness: each policy the plan
// names is looked up on vCenter and matched against the existing datastore (PbmQueryMatchingHub).
// Proven on the host: the harness's call log (PBM asked, nothing created).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { vcenterYaml, vsphereTargetYaml } from '../../src/lab/vsphere-inventory.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';

const CREATES = ['ReconfigVM_Task', 'CreateVmfsDatastore', 'CreateNasDatastore', 'CreateVirtualDisk_Task'];
let sim: VcsimHandle;
let dir: string;
let inventory: string;
const password = `vc-Secret-${Math.random().toString(36).slice(2, 12)}`;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-policy-pf-'));
  sim = await startVcsim({ username: 'administrator@vsphere.local', password, guestDisks: path.join(dir, 'guest-disks') });
  await fs.mkdir(path.join(dir, 'scratch'));
  await fs.writeFile(path.join(dir, 'vc-password'), password + '\n', { mode: 0o600 });
  inventory = path.join(dir, 'inventory.yaml');
  await fs.writeFile(
    inventory,
    [
      'vcenters:',
      ...vcenterYaml({ name: 'lab-vc', url: sim.url, username: sim.username, passwordRef: '${file:vc-password}', thumbprint: sim.thumbprint }),
      'targets:',
      ...vsphereTargetYaml({ name: 'lab-vcenter', vcenter: 'lab-vc', host: 'DC0_H0', vm: 'DC0_H0_VM0', datastore: 'LocalDS_0', guest: { workdir: path.join(dir, 'scratch'), byIdDir: path.join(dir, 'guest-disks', 'by-id') } }),
      '',
    ].join('\n'),
  );
}, 120_000);

afterAll(async () => {
  await sim?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('preflight of disk.policy', () => {
  it('✗ names storsweep-platinum, which LocalDS_0 does not satisfy; ✓ for storsweep-gold; nothing created', async () => {
    await sim.control.reset();
    const r = await runCli(['preflight', path.join(REPO_ROOT, 'playbooks', 'storage-policy.yaml'), '-i', inventory, '--json', '--no-canary', '-o', path.join(dir, 'runs')], { timeoutMs: 120_000 });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { targets: Array<{ checks: Array<{ check: string; status: string; detail: string }> }> };
    const checks = report.targets.flatMap((t) => t.checks);
    const platinum = checks.find((c) => c.check === 'storage policy "storsweep-platinum"');
    expect(platinum?.status).toBe('fail');
    expect(platinum?.detail).toContain('datastore LocalDS_0 is incompatible');
    expect(checks.find((c) => c.check === 'storage policy "storsweep-gold"')?.status).toBe('ok');
    const methods = (await sim.control.log()).map((e) => e.method);
    expect(methods).toContain('PbmQueryMatchingHub');
    for (const m of CREATES) expect(methods).not.toContain(m);
  }, 180_000);
});

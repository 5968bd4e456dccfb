// `storsweep preflight` of the shipped storage-policy.yaml on the vcsim harness: each policy the plan
// names is looked up on vCenter and matched against the existing datastore (PbmQueryMatchingHub).
// Proven on the host: the harness's call log (PBM asked, nothing created).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { useVsphereLab } from '../helpers/vsphere-lab.ts';

const CREATES = ['ReconfigVM_Task', 'CreateVmfsDatastore', 'CreateNasDatastore', 'CreateVirtualDisk_Task'];
// the simulator's own default release (startVsphereLab's default, 5.5, is for the VMFS3 sweeps)
const lab = useVsphereLab({ version: '8.0' });

describe('preflight of disk.policy', () => {
  it('✗ names storsweep-platinum, which LocalDS_0 does not satisfy; ✓ for storsweep-gold; nothing created', async () => {
    await lab.sim.control.reset();
    const r = await runCli(['preflight', path.join(REPO_ROOT, 'playbooks', 'storage-policy.yaml'), '-i', lab.inventory, '--json', '--no-canary', '-o', path.join(lab.dir, 'runs')], { timeoutMs: 120_000 });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { targets: Array<{ checks: Array<{ check: string; status: string; detail: string }> }> };
    const checks = report.targets.flatMap((t) => t.checks);
    const platinum = checks.find((c) => c.check === 'storage policy "storsweep-platinum"');
    expect(platinum?.status).toBe('fail');
    expect(platinum?.detail).toContain('datastore LocalDS_0 is incompatible');
    expect(checks.find((c) => c.check === 'storage policy "storsweep-gold"')?.status).toBe('ok');
    const methods = (await lab.sim.control.log()).map((e) => e.method);
    expect(methods).toContain('PbmQueryMatchingHub');
    for (const m of CREATES) expect(methods).not.toContain(m);
  }, 180_000);
});

// disk.policy (vSphere SPBM) on the lab: the vcsim harness answers /pbm (src/lab/harness/vcsim/pbm.go)
// with the lab's policies; storsweep-platinum is one no lab datastore satisfies. Proven on the
// host: the harness's call log (nothing created after a refusal) and pyVmomi's own PBM client
// (test/harness/pyvmomi/pbm_disks.py), which reads the policy vCenter associates with the kept disk.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { useVsphereLab } from '../helpers/vsphere-lab.ts';

const PYVMOMI = fileURLToPath(new URL('../harness/pyvmomi/', import.meta.url));
const VM = 'DC0_H0_VM0';
const CREATES = ['ReconfigVM_Task', 'CreateVmfsDatastore', 'CreateNasDatastore', 'CreateVirtualDisk_Task'];
// the simulator's own default release (startVsphereLab's default, 5.5, is for the VMFS3 sweeps)
const lab = useVsphereLab({ version: '8.0' });

const shipped = path.join(REPO_ROOT, 'playbooks', 'storage-policy.yaml');

function pbmDisks(): Promise<{ disks: Array<{ key: number; fileName: string; profileIds: string[] }>; policies: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const p = execFile('/usr/bin/python3', [path.join(PYVMOMI, 'pbm_disks.py')], { timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`pbm_disks.py: ${stderr || err.message}`)) : resolve(JSON.parse(stdout))));
    p.stdin!.end(JSON.stringify({ url: lab.sim.url, username: lab.sim.username, password: lab.password, certFile: lab.sim.certFile, vm: VM }));
  });
}

describe('disk.policy', () => {
  it('the shipped playbook is refused at run start for storsweep-platinum, which LocalDS_0 does not satisfy: PBM asked, nothing created', async () => {
    await lab.sim.control.reset();
    const runs = path.join(lab.dir, 'runs-refused');
    await fs.mkdir(runs);
    const r = await runCli(['run', shipped, '-i', lab.inventory, '--out', runs]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('disk.policy "storsweep-platinum": datastore LocalDS_0 is incompatible');
    expect(r.stderr).toContain('tag storsweep-tier in platinum');
    const log = await lab.sim.control.log();
    const methods = log.map((e) => e.method);
    expect(methods).toContain('PbmQueryMatchingHub');
    for (const m of CREATES) expect(methods).not.toContain(m);
    expect(await fs.readdir(runs)).toEqual([]);
  }, 120_000);

  it('an unknown policy name is refused at run start with the names vCenter has', async () => {
    await lab.sim.control.reset();
    const pb = path.join(lab.dir, 'unknown.yaml');
    await fs.writeFile(pb, (await fs.readFile(shipped, 'utf8')).replace('storsweep-platinum]', 'no-such-policy]'));
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', lab.dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has no storage policy named "no-such-policy"');
    expect(r.stderr).toContain('"storsweep-silver-or-gold"');
    for (const m of CREATES) expect((await lab.sim.control.log()).map((e) => e.method)).not.toContain(m);
  }, 120_000);

  it('with two policies the datastore satisfies: each disk carries its policy (pyVmomi reads it back), records name it, the report compares them', async () => {
    await lab.sim.control.reset();
    const pb = path.join(lab.dir, 'two.yaml');
    await fs.writeFile(pb, (await fs.readFile(shipped, 'utf8')).replace('storsweep-platinum]', 'storsweep-silver-or-gold]'));
    const runs = path.join(lab.dir, 'runs-two');
    await fs.mkdir(runs);
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', runs, '--keep', '--json'], { timeoutMs: 240_000 });
    expect(r.code, r.stderr).toBe(0);
    const runDir = path.resolve(runs, (await fs.readdir(runs))[0]!);
    try {
      const { disks, policies } = await pbmDisks();
      const ids = Object.fromEntries(Object.entries(policies).map(([id, name]) => [name, id]));
      // --keep: the last permutation's disk is still attached, associated with its policy
      const kept = disks.filter((d) => /\] ss-.*-disk\.vmdk$/.test(d.fileName));
      expect(kept).toHaveLength(1);
      expect(kept[0]!.profileIds).toHaveLength(1);
      expect([ids['storsweep-gold'], ids['storsweep-silver-or-gold']]).toContain(kept[0]!.profileIds[0]);
      // the VM's own disks carry no policy
      for (const d of disks.filter((x) => x !== kept[0])) expect(d.profileIds).toEqual([]);
      const calls = (await lab.sim.control.log()).filter((e) => e.method === 'ReconfigVM_Task').length;
      expect(calls).toBeGreaterThanOrEqual(2);
      const records = (await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { axes: Record<string, string>; metadata: Record<string, unknown> });
      expect(new Set(records.map((x) => x.axes['disk.policy']))).toEqual(new Set(['storsweep-gold', 'storsweep-silver-or-gold']));
      for (const rec of records) {
        const name = rec.axes['disk.policy']!;
        expect(rec.metadata['disk.policyId']).toBe(ids[name]);
        expect(rec.metadata['disk.policyCompliance']).toBe('compliant');
        expect(rec.metadata['disk.policyRules']).toBe(name === 'storsweep-gold' ? 'tag storsweep-tier in gold' : 'tag storsweep-tier in silver|gold');
      }
      const report = await runCli(['report', runDir]);
      expect(report.code, report.stderr).toBe(0);
      expect(report.stdout).toContain('disk.policy');
      expect(report.stdout).toContain('storsweep-silver-or-gold');
    } finally {
      const clean = await runCli(['cleanup', runDir]);
      expect(clean.code, clean.stderr).toBe(0);
    }
    expect((await pbmDisks()).disks.filter((d) => /\] ss-/.test(d.fileName))).toEqual([]);
  }, 300_000);
});

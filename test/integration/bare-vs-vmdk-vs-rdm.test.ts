// The shipped bare-vs-VMDK-vs-RDM study (playbooks/bare-vs-vmdk-vs-rdm.yaml) on the lab as one run:
// an ssh target (the bare disk: provisions nothing) beside a vSphere VM's thin VMDK and physical
// RDM. The report compares the VMDK and the RDM with the bare disk on every test both ran, and its
// answer says which axes the bare side lacks. Run as a user runs it (`labUp`, the lab's own
// inventory), with two repetitions instead of three.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { stopVcsimPid } from '../../src/lab/vcsim.ts';
import { listVcsimLuns } from '../../src/lab/vsphere-inventory.ts';
import { REPO_ROOT, runCli, type CliResult } from '../helpers/cli.ts';

interface ReportJson {
  permutations: Array<{ permutationId: string; axes: Record<string, string | number> }>;
  tests: Array<{ test: { id: string }; primaryMetric: string; comparisons: Array<{ axis: string; baselineValue: string; rows: Array<{ permutationId: string; baselinePermutationId: string; metric: string }> }> }>;
}

let root: string;
let lab: LabState;
let run: CliResult;
let runDir: string;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-bare-'));
  lab = await labUp(root, { vcsim: true, listLuns: (info) => listVcsimLuns(info) });
  const rdmDevice = lab.vcsim!.luns[1]!;
  run = await runCli(['run', path.join(REPO_ROOT, 'playbooks', 'bare-vs-vmdk-vs-rdm.yaml'), '-i', labPaths(root).inventory, '--confirm-destroy', rdmDevice, '--set', 'repeat=2', '--json'], { cwd: root, timeoutMs: 300_000 });
  runDir = run.code === 0 ? path.resolve(root, (JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { runDir: string }).runDir) : '';
}, 400_000);

afterAll(async () => {
  if (lab?.vcsim) await stopVcsimPid(lab.vcsim.pid);
  if (lab) await stopPid(lab.ssh.pid);
  if (root) await fs.rm(root, { recursive: true, force: true });
});

describe('playbooks/bare-vs-vmdk-vs-rdm.yaml on the lab', { timeout: 300_000 }, () => {
  it('runs as one run: the bare target once, the VM per disk format', async () => {
    expect(run.code, run.stderr).toBe(0);
    const text = await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8');
    const perms = new Map<string, Record<string, string | number>>();
    for (const l of text.split('\n').filter(Boolean)) {
      const r = JSON.parse(l) as { permutationId: string; axes: Record<string, string | number> };
      perms.set(r.permutationId, r.axes);
    }
    const shapes = [...perms.values()].map((a) => `${String(a.target)}/${String(a['disk.format'] ?? '-')}`).sort();
    expect(shapes).toEqual(['lab-guest/-', 'lab-vcenter/rdm-physical', 'lab-vcenter/thin']);
  });

  it('the report compares the VMDK and the RDM with the bare disk on every shared test', async () => {
    const r = await runCli(['report', runDir, '--format', 'json'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as ReportJson;
    const byId = new Map(report.permutations.map((p) => [p.permutationId, p.axes]));
    // the two workloads' tests and the first write (pre-fill)
    expect(report.tests.length).toBe(3);
    for (const t of report.tests) {
      const along = t.comparisons.find((c) => c.axis === 'target')!;
      expect(along.baselineValue).toBe('lab-guest');
      const rows = along.rows.filter((x) => x.metric === t.primaryMetric);
      // each VM format against the bare row of the same workload
      expect([...new Set(rows.map((x) => byId.get(x.permutationId)!['disk.format']))].sort()).toEqual(['rdm-physical', 'thin']);
      for (const x of rows) {
        expect(byId.get(x.baselinePermutationId)).toMatchObject({ target: 'lab-guest' });
        expect(byId.get(x.baselinePermutationId)!['workload.profile']).toBe(byId.get(x.permutationId)!['workload.profile']);
      }
    }
    const md = await fs.readFile(path.join(runDir, 'report.md'), 'utf8');
    expect(md).toMatch(/target lab-vcenter vs lab-guest \(lab-guest has no datastore\.kind, disk\.format, disk\.sizeGb\): /);
    expect(md).not.toContain('nothing to compare');
  });
});

// One's own study on the lab without copying the lab's inventory: `-i <lab's> -i arrays.yaml`, where
// arrays.yaml names only its own target (on the lab's vCenter, by the lab's name for it), and
// `--set matrix.disk.sizeGb=[1]` for the study's 50 GB disk. A real run on the vCenter simulator;
// the run records both files and the set, and a resume with another set is refused.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { NOTHING_LEFT, readRun, runDirOf, startVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { vsphereTargetYaml } from '../../src/lab/vsphere-inventory.ts';

let lab: VsphereLab;
let studyDir: string;
let arrays: string;
let playbook: string;
let run: CliResult;
let runDir: string;

beforeAll(async () => {
  lab = await startVsphereLab({ version: '8.0' });
  // the study lives elsewhere: its own directory, its own file
  studyDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-study-'));
  arrays = path.join(studyDir, 'arrays.yaml');
  await fs.writeFile(
    arrays,
    ['targets:', ...vsphereTargetYaml({ name: 'array-01', vcenter: 'lab-vc', host: 'DC0_H0', vm: 'DC0_H0_VM0', datastore: 'LocalDS_0', version: '8.0', guest: { workdir: lab.workdir, byIdDir: lab.byIdDir } }), ''].join('\n'),
  );
  playbook = path.join(studyDir, 'study.yaml');
  await fs.writeFile(
    playbook,
    ['name: own-study', 'target: array-01', 'matrix:', '  datastore:', '    kind: [existing]', '  disk:', '    format: [thin]', '    sizeGb: [50]', '  workload:', '    profile: [q]', 'workloads:', '  q: { iometer: "4k 100% read 100% random" }', ...quickSettings({ direct: true }), ''].join('\n'),
  );
  const runs = await lab.newRunsDir('own');
  run = await runCli(['run', playbook, '-i', lab.inventory, '-i', arrays, '--set', 'matrix.disk.sizeGb=[1]', '--out', runs, '--no-report', '--json']);
  runDir = run.code === 0 ? runDirOf(run) : '';
}, 240_000);

afterAll(async () => {
  await lab?.stop();
  if (studyDir) await fs.rm(studyDir, { recursive: true, force: true });
});

describe('-i lab -i arrays.yaml --set matrix.disk.sizeGb=[1]', { timeout: 240_000 }, () => {
  it('arrays.yaml alone is refused at its line: the vCenter it uses is the lab\'s', async () => {
    const r = await runCli(['validate', playbook, '-i', arrays]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${arrays}:4:`);
    expect(r.stderr).toMatch(/vcenter.*lab-vc/);
  });

  it('runs on the lab: the disk of the set size, on the target only arrays.yaml names; nothing left behind', async () => {
    expect(run.code, run.stderr).toBe(0);
    const rows = readRun(runDir, (db) => db.prepare('SELECT record FROM results').all() as Array<{ record: string }>);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect((JSON.parse(r.record) as { axes: unknown }).axes).toMatchObject({ 'disk.sizeGb': 1 });
    const plan = JSON.parse(await fs.readFile(path.join(runDir, 'plan.json'), 'utf8')) as { target: string; overrides: string[] };
    expect(plan).toMatchObject({ target: 'array-01', overrides: ['matrix.disk.sizeGb=[1]'] });
    const meta = readRun(runDir, (db) => JSON.parse((db.prepare("SELECT value FROM meta WHERE key = 'meta'").get() as { value: string }).value) as { inventoryFiles?: string[] });
    expect(meta.inventoryFiles).toEqual([lab.inventory, arrays]);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });

  it('a resume uses both files by itself; another --set is refused naming both', async () => {
    const other = await runCli(['run', '--resume', runDir, '--no-report', '--set', 'matrix.disk.sizeGb=[2]']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--set matrix.disk.sizeGb=[2] differs from what this run started with (--set matrix.disk.sizeGb=[1])');
    const same = await runCli(['run', '--resume', runDir, '--no-report', '--json']);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toContain('1 already done');
  });
});

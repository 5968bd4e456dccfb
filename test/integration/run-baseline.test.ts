// The playbook's `baseline:` in the end-of-run report (issue 15): a real run over SSH with real fio,
// two workloads measuring the same test, the second named as the baseline. The report the run
// writes at its end compares against it without any --baseline.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { startLabGuest, type LabGuest } from '../helpers/lab-guest.ts';
import { quickSettings } from '../helpers/quick-settings.ts';

let guest: LabGuest;
let run: CliResult;
let runDir: string;

beforeAll(async () => {
  guest = await startLabGuest();
  const playbook = await guest.writePlaybook(
    'baseline.yaml',
    [
      'name: baseline-in-report',
      'target: lab-guest',
      'matrix:',
      '  workload:',
      '    profile: [first, second]',
      'workloads:',
      '  first: {iometer: "4k 100% read 100% random"}',
      '  second: {iometer: "4k 100% read 100% random", base: quick}',
      'baseline:',
      '  workload.profile: second',
      ...quickSettings({ fileSize: '8m' }),
      '',
    ].join('\n'),
  );
  run = await runCli(['run', playbook, '-i', guest.inventory, '--out', guest.runsDir, '--json']);
  runDir = (JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { runDir: string }).runDir;
}, 600_000);

afterAll(async () => {
  await guest?.stop();
});

describe("the playbook's baseline in the end-of-run report", () => {
  it('report.md compares the other workload against the baseline the playbook names', () => {
    expect(run.code, run.stderr).toBe(0);
    const md = fs.readFileSync(path.join(runDir, 'report.md'), 'utf8');
    expect(md).toContain('#### vs workload.profile = second');
    expect(md).not.toContain('#### vs workload.profile = first');
    expect(md).toMatch(/profile first vs second: /);
  });

  it('report <runDir> --format json says where the baseline came from', async () => {
    const r = await runCli(['report', runDir, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { baselines: unknown[] };
    expect(j.baselines).toEqual([{ axis: 'workload.profile', value: 'second', from: 'playbook' }]);
  });
});

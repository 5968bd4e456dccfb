// Repeat until stable on the lab (issue 27, item 3): `repeat: {min: 3, max: 8, until: {ciPct: 5},
// reprovision: true}` over two local targets that run the same fio job, paced at 200 IOPS
// (`rate_iops`: real fio holds that rate to within a few tenths of a percent). One target's fio is
// wrapped to add noise on purpose — test-only and honest: the wrapper runs the real fio with every
// argument it was given and, for a measured test (`--output-format=json+`), one more,
// `--rate_iops=` 100 and 400 by turns (a counter beside the wrapper), which fio applies over the job's own (the last of a
// repeated option wins); what fio measured under that cap is what storsweep records. The steady
// target stops at min (3 repetitions), the noisy one runs to max (8), and the report says which
// reached the interval and which did not.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { readRun, runDirOf } from '../helpers/vsphere-lab.ts';

let dir: string;
let inventory: string;
let playbook: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-until-'));
  const realFio = execFileSync('sh', ['-c', 'command -v fio'], { encoding: 'utf8' }).trim();
  // the wrapper must be named fio (the inventory's fioPath takes fio or a path ending in /fio)
  const noisy = path.join(dir, 'noisy-bin', 'fio');
  fs.mkdirSync(path.dirname(noisy));
  fs.writeFileSync(
    noisy,
    [
      '#!/bin/sh',
      '# test-only noise (test/integration/repeat-until-stable.test.ts): the real fio, and for a',
      '# measured test one more option, an IOPS cap that alternates 100, 400, 100, … per call (a',
      '# counter beside this file): never stable, whatever the draw (a random cap repeated itself',
      '# three times in a row often enough to stop the noisy target early)',
      'case " $* " in',
      `  *" --output-format=json+ "*) n=$(cat "$0.count" 2>/dev/null || echo 0); echo $((n + 1)) > "$0.count"; exec ${realFio} "$@" --rate_iops=$(( n % 2 * 300 + 100 )) ;;`,
      `  *) exec ${realFio} "$@" ;;`,
      'esac',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  for (const t of ['steady', 'noisy']) fs.mkdirSync(path.join(dir, `work-${t}`));
  inventory = path.join(dir, 'inventory.yaml');
  fs.writeFileSync(
    inventory,
    ['targets:', '  lab-steady:', '    provider: local', `    workdir: ${path.join(dir, 'work-steady')}`, '  lab-noisy:', '    provider: local', `    workdir: ${path.join(dir, 'work-noisy')}`, `    fioPath: ${noisy}`, ''].join('\n'),
  );
  playbook = path.join(dir, 'until.yaml');
  fs.writeFileSync(
    playbook,
    [
      'name: until-stable',
      'target: [lab-steady, lab-noisy]',
      'matrix:',
      '  workload:',
      '    profile: [paced]',
      'workloads:',
      '  paced:',
      '    fio: {rw: randread, bs: 4k, iodepth: 1, rate_iops: 200}',
      ...quickSettings({ direct: false }).filter((l) => !l.startsWith('repeat:')),
      'repeat: {min: 3, max: 8, until: {ciPct: 5}, reprovision: true}',
      '',
    ].join('\n'),
  );
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('repeat: {min: 3, max: 8, until: {ciPct: 5}}', () => {
  it('validate refuses a bad shape at its line', async () => {
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(bad, fs.readFileSync(playbook, 'utf8').replace(/^repeat: .*$/m, 'repeat:\n  min: 9\n  max: 8\n  until: {ciPct: 5}'));
    const r = await runCli(['validate', bad]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${bad}:17:8: repeat.min: min (9) is more than max (8)`);
  });

  it('plan estimates the worst case', async () => {
    const r = await runCli(['plan', playbook, '-i', inventory]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/repetitions: 3–8 repetitions each, until the main metric's 95 % interval is within ±5 % of its mean \(estimated at 8, the worst case; ~\d+m \d+s if all stop at 3\)/);
  });

  it('stops the steady permutation at min, runs the noisy one to max, and the report says so', async () => {
    const r = await runCli(['run', playbook, '-i', inventory, '--out', path.join(dir, 'runs'), '--no-report', '--json'], { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    const reps = readRun(runDir, (db) => db.prepare("SELECT json_extract(p.axes, '$.target') AS target, count(*) AS n, max(r.repetition) AS last FROM results r JOIN permutations p USING (permutation_id) GROUP BY p.permutation_id ORDER BY target").all());
    expect(reps).toEqual([
      { target: 'lab-noisy', n: 8, last: 8 },
      { target: 'lab-steady', n: 3, last: 3 },
    ]);
    const report = await runCli(['report', runDir]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toMatch(/Repeat until stable: until the main metric's 95 % interval is within ±5 % of its mean, 3–8 repetitions; reached by 1 of 2: target=lab-steady \(n = 3, ±\d\.\d %\); not reached: target=lab-noisy \(n = 8, ±\d+\.\d %\)/);
  }, 400_000);
});

// Issue 30 item 3: a mixed read/write job (fio randrw with rwmixread) run on the lab with real fio
// yields its read and write halves as records of their own, tagged as halves of that job, besides
// the job's total; the report shows the three side by side.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { startLabGuest, type LabGuest } from '../helpers/lab-guest.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import type { ResultRecord } from '../../src/results/record.ts';

let guest: LabGuest;
let run: CliResult;
let runDir: string;

beforeAll(async () => {
  guest = await startLabGuest();
  const playbook = await guest.writePlaybook(
    'mixed.yaml',
    ['name: mixed-halves', 'target: lab-guest', 'matrix:', '  workload:', '    profile: [mx]', 'workloads:', '  mx: { iometer: "4k 70% read 100% random q4" }', ...quickSettings({ repeat: 2 }), ''].join('\n'),
  );
  run = await runCli(['run', playbook, '-i', guest.inventory, '--out', guest.runsDir, '--no-report', '--json']);
  runDir = (JSON.parse(run.stdout.trim().split('\n').at(-1)! || '{}') as { runDir: string }).runDir;
}, 120_000);

afterAll(async () => {
  await guest?.stop();
});

describe('a mixed fio job on the lab', { timeout: 120_000 }, () => {
  it('yields read and write records, tagged as halves of the job, beside its total', () => {
    expect(run.code, run.stderr).toBe(0);
    const records = fs.readFileSync(path.join(runDir, 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ResultRecord);
    for (const rep of [1, 2]) {
      const mine = records.filter((r) => r.repetition === rep);
      expect(mine.map((r) => r.test.id)).toEqual(['rnd-4k-q4t1-mix70', 'rnd-4k-q4t1-mix70-read', 'rnd-4k-q4t1-mix70-write']);
      const [total, read, write] = mine as [ResultRecord, ResultRecord, ResultRecord];
      expect(read.test).toMatchObject({ half: 'read', pattern: 'randrw', readPercent: 70 });
      expect(write.test).toMatchObject({ half: 'write', pattern: 'randrw', readPercent: 70 });
      expect(read.metadata?.['halfOf']).toBe(total.test.id);
      expect(write.metadata?.['halfOf']).toBe(total.test.id);
      // fio's own read and write figures of that one job: they add up to its total
      expect(read.iops! + write.iops!).toBeCloseTo(total.iops!, 6);
      expect(read.bytesPerSecond! + write.bytesPerSecond!).toBeCloseTo(total.bytesPerSecond!, 3);
      expect(read.iops!).toBeGreaterThan(write.iops!);
      expect(read.latencyUs.mean).not.toBeNull();
      // no half's figures are left in the records' metadata
      expect(Object.keys(total.metadata ?? {}).some((k) => k.startsWith('half.'))).toBe(true);
      expect(Object.keys(read.metadata ?? {}).some((k) => k.startsWith('half.'))).toBe(false);
    }
  });

  it('the report shows the total and both halves', async () => {
    const r = await runCli(['report', runDir, '--format', 'md']);
    expect(r.code, r.stderr).toBe(0);
    // the overview: the job's total, then its reads and its writes, one row each, side by side
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('| RND4K'));
    expect(rows.map((l) => l.split('<br>')[0])).toEqual(['| RND4K Q4T1 mix 70% read', '| RND4K Q4T1 mix 70% read — its reads', '| RND4K Q4T1 mix 70% read — its writes']);
    expect(r.stdout).toContain('### rnd-4k-q4t1-mix70-read — RND4K Q4T1 mix 70% read — its reads');
    expect(r.stdout).toContain('the writes of a random mix 70% read');
  });
});

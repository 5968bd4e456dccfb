// The null sweep (issue 27, acceptance): one configuration under two labels, 8 tests, 5 repetitions,
// run ten times, shows no ▲/▼ in at least nine of the ten reports, and each report names the
// correction and the family size. Ten lab runs of 80 fio passes each would take half an hour, so:
//   - the noise is real: test/fixtures/null-sweep/local-fio-2x8x5.jsonl is one run of exactly that
//     sweep on the lab (real fio, 2 labels × 8 tests × 5 repetitions, each on a new test file);
//   - ten null sweeps are ten seeded random relabellings of its ten repetitions (five per label, each
//     repetition with its eight records and its fill), each through the report pipeline
//     (buildReport → renderMarkdown) as `storsweep report` runs it;
//   - one short real run of the same shape through the CLI shows the report of a run names the
//     correction, the family size and the replication unit.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport } from '../../src/report/model.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import type { ResultRecord } from '../../src/results/record.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'null-sweep');

/** mulberry32: a small seeded generator, so each relabelling is the same on every machine. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The recorded run's repetitions (permutation × repetition, 8 records each) shuffled by `seed`: the first half label-a, the rest label-b. */
function relabelled(records: readonly ResultRecord[], seed: number): ResultRecord[] {
  const units = new Map<string, ResultRecord[]>();
  for (const r of records) {
    const key = `${r.permutationId}/${r.repetition}`;
    units.set(key, [...(units.get(key) ?? []), r]);
  }
  const list = [...units.values()];
  const next = rng(seed);
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  const half = list.length / 2;
  return list.flatMap((unit, k) => {
    const label = k < half ? 'label-a' : 'label-b';
    return unit.map((r) => ({ ...r, permutationId: `p-${label}`, axes: { 'workload.profile': label }, repetition: (k % half) + 1 }));
  });
}

/** ▲/▼ anywhere in a markdown report but the legend's own "▲/▼". */
const marks = (md: string) => (md.replaceAll('▲/▼', '').match(/[▲▼]/g) ?? []).length;

describe('null sweep: one configuration under two labels', () => {
  it('ten seeded null sweeps of recorded lab noise: no ▲/▼ in at least nine of ten reports; each names Holm and its family size', async () => {
    const records = (await fs.readFile(path.join(FIXTURES, 'local-fio-2x8x5.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as ResultRecord);
    expect(records).toHaveLength(2 * 8 * 5);
    let clean = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const report = buildReport(relabelled(records, seed), { runId: records[0]!.runId, replication: 'between-provisionings' });
      const md = renderMarkdown(report);
      const { faster, slower } = report.summary.verdicts;
      expect(marks(md) === 0).toBe(faster + slower === 0);
      if (faster + slower === 0) clean++;
      expect(report.summary.family).toMatchObject({ correction: 'holm' });
      expect(report.summary.family.size).toBeGreaterThanOrEqual(8);
      expect(md).toContain(`p adjusted by Holm over the family of ${report.summary.family.size} comparisons`);
    }
    expect(clean).toBeGreaterThanOrEqual(9);
  });

  describe('a short real null sweep through the CLI', () => {
    let dir: string;
    beforeAll(async () => void (dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-null-'))));
    afterAll(async () => void (await fs.rm(dir, { recursive: true, force: true })));

    it('its report names the correction, the family size and and the replication unit', async () => {
      const text = (await fs.readFile(path.join(FIXTURES, 'null-sweep.yaml'), 'utf8'))
        .replace(/iometer: \[[^\]]*\]/g, 'iometer: ["4k 100% read 100% random q1", "4k 0% read 100% random q1"]')
        .replace(/count: 5/, 'count: 3');
      expect(text).toContain('count: 3');
      await fs.writeFile(path.join(dir, 'pb.yaml'), text);
      await fs.writeFile(path.join(dir, 'inv.yaml'), ['targets:', '  lab-local:', '    provider: local', `    workdir: ${path.join(dir, 'work')}`, ''].join('\n'));
      const r = await runCli(['run', path.join(dir, 'pb.yaml'), '-i', path.join(dir, 'inv.yaml'), '--out', path.join(dir, 'runs'), '--json'], { cwd: dir, timeoutMs: 240_000 });
      expect(r.code, r.stderr).toBe(0);
      const runDir = (JSON.parse(r.stdout.trim().split('\n').pop()!) as { runDir: string }).runDir;
      const md = await fs.readFile(path.join(runDir, 'report.md'), 'utf8');
      expect(md).toMatch(/p adjusted by Holm over the family of \d+ comparisons/);
      expect(Number(/family of (\d+) comparisons/.exec(md)![1])).toBeGreaterThanOrEqual(2);
      expect(md).toMatch(/between provisionings/);
      expect(md).toMatch(/Verdicts \(each test's main metric against the baseline\): 0 faster, 0 slower/);
    }, 240_000);
  });
});

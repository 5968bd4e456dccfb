// Hostile inputs through the CLI that the first round of issue 11 missed (items 10, 12, 14):
// - CSV read with `;` as the list separator (Python's csv stands in for a spreadsheet): no field of
//   any CSV we print or write starts with a formula character;
// - file inputs that are not regular files, or too big, reach no command unbounded.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planFor } from '../../src/cli/commands/config-commands.ts';
import { testIdentity, type ResultRecord } from '../../src/results/record.ts';
import { ResultStore } from '../../src/results/store.ts';
import { REPO_ROOT, runCli, stackTraceLines } from './helpers/cli.ts';

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-input-paths-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A run directory as `run` leaves it, with one record per permutation, without running anything. */
function makeRunDir(name: string, hostile = 'plain'): string {
  const runDir = path.join(dir, name);
  const plan = planFor('playbooks/quickstart.yaml', 'inventories/lab.yaml', 'rinp0000');
  const store = ResultStore.create(
    runDir,
    {
      runId: plan.runId,
      playbook: plan.playbook,
      playbookFile: path.resolve(REPO_ROOT, 'playbooks/quickstart.yaml'),
      inventoryFile: path.resolve(REPO_ROOT, 'inventories/lab.yaml'),
      target: plan.target,
      startedAt: new Date().toISOString(),
      fingerprint: {},
      insecureEndpoints: [],
    },
    plan,
  );
  for (const p of plan.permutations) {
    const record: ResultRecord = {
      runId: plan.runId,
      permutationId: p.permutationId,
      axes: { ...p.axes, workload: hostile },
      repetition: 1,
      test: { ...testIdentity({ pattern: 'randread', blockSizeBytes: 4096, queueDepth: 1, threads: 1, readPercent: 100 }), id: hostile },
      iops: 1000,
      bytesPerSecond: 4096000,
      latencyUs: { mean: -1, p50: 1, p95: 2, p99: 3, p999: 4 },
      cpuPercent: 1,
      tool: { name: 'fio', version: hostile },
      rawPath: 'raw/x.json',
    } as ResultRecord;
    store.addRepetition(p.permutationId, 1, [record]);
  }
  store.close();
  return runDir;
}

/** Every field Python's csv reads from `text` with this delimiter that starts with a formula character. */
function formulaFields(text: string): Record<string, string[]> {
  const script = [
    'import csv, io, json, re, sys',
    'text = sys.stdin.read()',
    'out = {}',
    'for d in [",", ";", "\\t"]:',
    '    bad = []',
    '    for row in csv.reader(io.StringIO(text, newline=""), delimiter=d, strict=False):',
    '        bad += [f for f in row if re.match(r"[=+\\-@\\t\\r\\n]", f) and not re.fullmatch(r"[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?", f)]',
    '    out[d] = bad',
    'print(json.dumps(out))',
  ].join('\n');
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script], { input: text, encoding: 'utf8' })) as Record<string, string[]>;
}

const NONE = { ',': [], ';': [], '\t': [] };

describe('CSV read with `;` (or `,`, or tab) as the list separator: no field is a formula', () => {
  it('import --csv of a file named a;=2*21;.json and a;@SUM(2*21);.json', async () => {
    for (const name of ['a;=2*21;.json', 'a;@SUM(2*21);.json', 'b, -2+3;.json']) {
      const file = path.join(dir, name);
      fs.copyFileSync(path.join(REPO_ROOT, 'test/fixtures/fio/randread-4k-q32.json'), file);
      const r = await runCli(['import', '--csv', file]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(name.slice(0, 2));
      expect({ name, bad: formulaFields(r.stdout) }).toEqual({ name, bad: NONE });
    }
  });

  it('results --csv, report -f csv and report -f csv -o of a run whose workload is named x;=2*21;', async () => {
    const runDir = makeRunDir('csv', 'x;=2*21;\r\n@SUM(1);"=1"');
    const out = path.join(dir, 'out.csv');
    const texts: Record<string, string> = {};
    for (const args of [['results', runDir, '--csv'], ['report', runDir, '-f', 'csv'], ['report', runDir, '-f', 'csv', '-o', out]]) {
      const r = await runCli(args);
      expect(r.code, r.stderr).toBe(0);
      texts[args.join(' ')] = args.includes('-o') ? fs.readFileSync(out, 'utf8') : r.stdout;
    }
    for (const [args, text] of Object.entries(texts)) {
      expect(text, args).toContain('x;');
      expect({ args, bad: formulaFields(text) }).toEqual({ args, bad: NONE });
    }
  });
});

export { stackTraceLines };

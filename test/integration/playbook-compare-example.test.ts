// The commands playbooks/vmfs-block-size.yaml tells a user to type, run as written: the published
// CrystalDiskMark 3 export compared with the run must line up with the run's permutation of its
// block size (an export tagged with nothing has no partner: `compare` matched 0 tests). The run
// side is the plan's permutations (`plan --json`: exactly the axes a real run records) carrying the
// published numbers, so the test needs no ESXi 5.5 lab.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { writeLabInventory } from '../helpers/lab-inventory-file.ts';

const PLAYBOOK = path.join(REPO_ROOT, 'playbooks', 'vmfs-block-size.yaml');
let dir: string;
let runLike: string;
let removeInventory: () => Promise<void>;

/** The playbook's `#   npx storsweep <command> …` lines, as argv after `storsweep`, with runs/<runDir> replaced. */
async function commandsOf(name: string): Promise<string[][]> {
  const text = await fs.readFile(PLAYBOOK, 'utf8');
  return [...text.matchAll(new RegExp(`^#.*?npx storsweep (${name} .*)$`, 'gm'))].map((m) => m[1]!.split(' > ')[0]!.trim().split(/\s+/).map((a) => (a === 'runs/<runDir>' ? runLike : a)));
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-pb-compare-'));
  const inv = await writeLabInventory('5.5');
  removeInventory = () => inv.remove();
  const plan = await runCli(['plan', PLAYBOOK, '-i', inv.inventory, '--json']);
  expect(plan.code, plan.stderr).toBe(0);
  const perms = (JSON.parse(plan.stdout) as { permutations: Array<{ permutationId: string; axes: Record<string, string | number> }> }).permutations;
  const lines: string[] = [];
  for (const p of perms) {
    const mb = p.axes['datastore.blockSizeMb'];
    const imp = await runCli(['import', path.join(REPO_ROOT, 'examples', 'vmfs3-esx41', `cdm3-vmfs3-${mb}mb.txt`), '--json']);
    expect(imp.code, imp.stderr).toBe(0);
    for (const l of imp.stdout.trim().split('\n')) {
      const r = JSON.parse(l) as Record<string, unknown>;
      lines.push(JSON.stringify({ ...r, runId: 'run-like', permutationId: p.permutationId, axes: p.axes, tool: { name: 'fio', version: 'fio-3.33' }, metadata: { profile: 'cdm3', passes: 1, aggregate: 'max' } }));
    }
  }
  runLike = path.join(dir, 'run.jsonl');
  await fs.writeFile(runLike, lines.join('\n') + '\n');
}, 60_000);
afterAll(async () => {
  await removeInventory();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('playbooks/vmfs-block-size.yaml: the compare example it prints', () => {
  it('import --set then compare lines up the 1 MB export with the run\'s 1 MB permutation, all 8 tests', async () => {
    const [imp] = await commandsOf('import');
    const [cmp] = await commandsOf('compare');
    expect(imp).toContain('--set');
    const published = path.join(dir, 'published-1mb.jsonl');
    const r = await runCli(imp!);
    expect(r.code, r.stderr).toBe(0);
    await fs.writeFile(published, r.stdout);
    const c = await runCli(cmp!.map((a) => (a === 'published-1mb.jsonl' ? published : a)));
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/matched by test id and datastore\.blockSizeMb: 8 matched/);
    expect(c.stdout).not.toMatch(/no partner in A for B/);
  });

  it('report with published.csv puts each block size beside the run\'s', async () => {
    const [rep] = await commandsOf('report');
    const r = await runCli(rep!);
    expect(r.code, r.stderr).toBe(0);
    for (const mb of [1, 2, 4, 8]) {
      expect(r.stdout).toContain(`blockSizeMb=${mb}, source=run-like`);
      expect(r.stdout).toContain(`blockSizeMb=${mb}, source=published.csv`);
    }
  });
});

// settings.writeData on the lab (Hyper-V stand-in, diskspd in the guest), end to end through the CLI:
// the default writes as CrystalDiskMark (-Z<block> for the tests, -Z1M for the fill); `unique` gives
// diskspd a random buffer as large as the test region for both. Proven by what the stand-in
// recorded: the argv each diskspd run got, and the data the kept VHDX's test file was written with.
// The report of both runs shows each one's write data and warns at their comparison.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diskspdRuns, readHypervState, readPsLog } from '../../src/lab/harness/windows/state.ts';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';

const MiB = 1024 * 1024;
let root: string;
let lab: LabState;
let playbook: string;

interface Side {
  runDir: string;
  /** -Z flags of the fill's diskspd runs (-w100 -s with -B or -c) and of the measured writes */
  fill: string[];
  writes: string[];
  /** what the stand-in recorded the kept VHDX's test file was written with */
  data: string[];
  records: Array<{ metadata: Record<string, unknown> }>;
}

/** Every `guestWritten[*].data` of the stand-in's VHDX files (a file on a volume lives in its partition). */
function writtenData(node: unknown): string[] {
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([k, v]) => (k === 'guestWritten' ? Object.values(v as Record<string, { data?: string[] }>).flatMap((w) => w.data ?? []) : writtenData(v)));
}

async function runSide(extra: string[]): Promise<Side> {
  const before = diskspdRuns(await readPsLog(lab.standinState)).length;
  const r = await runCli(['run', playbook, '-i', labPaths(root).inventory, '--keep', '--json', ...extra], { cwd: root, timeoutMs: 240_000 });
  expect(r.code, r.stderr).toBe(0);
  const runDir = path.resolve(root, (JSON.parse(r.stdout.trim().split('\n').pop()!) as { runDir: string }).runDir);
  const runs = diskspdRuns(await readPsLog(lab.standinState)).slice(before).map((x) => x.argv);
  const z = (argv: string[]) => argv.find((a) => a.startsWith('-Z'))!;
  // the fill: sequential 1 MiB writes with -s (prefill.ts); a measured write never has -s with one thread
  const fill = runs.filter((a) => a.includes('-b1M') && a.includes('-w100') && a.includes('-s')).map(z);
  const writes = runs.filter((a) => a.includes('-w100') && !a.includes('-s')).map(z);
  const state = await readHypervState(lab.standinState);
  const data = writtenData(state.files);
  const records = (await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Side['records'][number]);
  const clean = await runCli(['cleanup', runDir], { cwd: root });
  expect(clean.code, clean.stderr).toBe(0);
  return { runDir, fill, writes, data, records };
}

let cdm: Side;
let unique: Side;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-writedata-'));
  lab = await labUp(root, { vcsim: false });
  const text = (await fs.readFile(path.join(REPO_ROOT, 'playbooks', 'hyperv-allocation-unit.yaml'), 'utf8')).replace(/filesystem: \[ntfs-4k, ntfs-64k\]/, 'filesystem: [ntfs-4k]');
  playbook = path.join(root, 'write-data.yaml');
  await fs.writeFile(playbook, text);
  cdm = await runSide([]);
  unique = await runSide(['--set', 'settings.writeData=unique']);
}, 600_000);

afterAll(async () => {
  if (lab) await stopPid(lab.ssh.pid);
  if (root) await fs.rm(root, { recursive: true, force: true });
});

describe('settings.writeData on lab-hyperv', () => {
  it('default: every measured write -Z<block>, the fill -Z1M; the test file was written from 1 MiB and block-sized buffers', () => {
    expect(cdm.fill.length).toBeGreaterThan(0);
    expect(new Set(cdm.fill)).toEqual(new Set(['-Z1M']));
    expect(new Set(cdm.writes)).toEqual(new Set(['-Z128K', '-Z4K', '-Z1M']));
    expect(cdm.data).toContain(`random:${MiB}`);
    expect(cdm.data).toContain('random:4096');
    for (const r of cdm.records) expect(r.metadata).toMatchObject({ dataPattern: 'repeated', prefillData: 'repeated' });
  });

  it('unique: the tests and the fill draw from one 16 MiB random buffer (the test region); nothing was written from a block-sized one', () => {
    expect(new Set(unique.fill)).toEqual(new Set(['-Z16M']));
    expect(new Set(unique.writes)).toEqual(new Set(['-Z16M']));
    expect(unique.data).toEqual([`random:${16 * MiB}`]);
    for (const r of unique.records) expect(r.metadata).toMatchObject({ dataPattern: 'unique', prefillData: 'unique', 'set:settings.writeData': 'unique' });
  });

  it('the report of both runs names each run\'s write data and warns at their comparison', async () => {
    const r = await runCli(['report', cdm.runDir, unique.runDir], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\| write data \| tests: diskspd -Z128K: one random 128K buffer, the same data in every write;.*fill: diskspd -Z1M.* \| tests: diskspd -Z16M: each write from a random 16M buffer at a random offset \(near-unique\); fill: diskspd -Z16M/);
    expect(r.stdout).toMatch(/measured under different conditions — .*write data (one buffer repeated vs unique random|unique random vs one buffer repeated); fill data/);
  });
});

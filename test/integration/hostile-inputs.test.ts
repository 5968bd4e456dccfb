// Hostile inputs (issue 11, item 12): each is refused with exit 2 and a short message naming the
// file (and line where there is one), prints a bounded amount, and stays within the budget of
// `validate`: 400 MB peak RSS and 10 s of CPU. Before the limits these read 13 GB from /dev/zero,
// blocked on a FIFO, ran V8 out of heap, took 138 s and printed 22 MB, or overflowed the stack.
//
// Resources are measured from inside the CLI process (helpers/resource-probe.mjs). CPU time rather
// than wall time is the budget because a loaded 2-core CI box stretches wall time; a CLI still
// running after HANG_GUARD_MS is killed (and fails its exit-code check), which is not a time claim.
// Precise figures: bench/LIMITS.md. The cases are independent of each other and run at once.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, stackTraceLines, type CliResult } from '../helpers/cli.ts';

const PROBE = path.join(REPO_ROOT, 'test/helpers/resource-probe.mjs');
const MAX_RSS_KIB = 400 * 1024;
const MAX_CPU_US = 10_000_000;
const HANG_GUARD_MS = 60_000;
/** Enough for ~60 diagnostics of a few hundred characters: a flood is far above it. */
const MAX_OUTPUT = 32 * 1024;

let dir: string;
const at = (name: string) => path.join(dir, name);

interface Measured extends CliResult {
  rssKiB: number;
  cpuUs: number;
}

let probeSeq = 0;
async function measure(args: string[], env: Record<string, string | undefined> = {}): Promise<Measured> {
  const usageFile = at(`rusage-${++probeSeq}.json`);
  const r = await runCli(args, { nodeArgs: ['--import', PROBE], env: { ...env, STORSWEEP_TEST_RUSAGE_FILE: usageFile }, timeoutMs: HANG_GUARD_MS });
  const u = JSON.parse(fs.readFileSync(usageFile, 'utf8')) as { maxRssKiB: number; cpuUs: number };
  return { ...r, rssKiB: u.maxRssKiB, cpuUs: u.cpuUs };
}

function withinBudget(r: Measured): void {
  expect(stackTraceLines(r.stderr)).toEqual([]);
  expect(r.stdout.length + r.stderr.length).toBeLessThan(MAX_OUTPUT);
  expect(r.rssKiB).toBeLessThan(MAX_RSS_KIB);
  expect(r.cpuUs).toBeLessThan(MAX_CPU_US);
}

const HEAD = 'name: hostile\ntarget: lab-guest\n';
const list = (n: number, f: (i: number) => string | number) => `[${Array.from({ length: n }, (_, i) => f(i)).join(', ')}]`;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-hostile-'));
  execFileSync('mkfifo', [at('fifo.yaml')]);
  // 10,000,000 permutations in 60 KB
  fs.writeFileSync(at('1e7.yaml'), `${HEAD}matrix:\n  workload:\n    profile: [cdm8-default]\n  disk:\n    format: [thin]\n    sizeGb: ${list(1000, (i) => i + 1)}\n  volume:\n    sizeGb: ${list(10_000, (i) => i + 1)}\n`);
  // ~3.3e19 permutations in ~400 KB, every value valid: only the count is wrong
  const kinds = ['vmfs3', 'vmfs5', 'vmfs6', 'nfs', 'existing'];
  const profiles = list(60, (i) => `"${4 << i % 5}k ${i}% read ${i % 2 ? 100 : 0}% random"`);
  fs.writeFileSync(
    at('3e19.yaml'),
    `name: hostile\ntarget: ${list(30_000, (i) => `t${i}`)}\nmatrix:\n  workload:\n    profile: ${profiles}\n` +
      `  datastore:\n    kind: ${list(5, (i) => kinds[i]!)}\n    blockSizeMb: [1, 2, 4, 8]\n    blockSizeKb: [64, 1024]\n` +
      `  disk:\n    format: [thin, lazyzeroedthick, eagerzeroedthick, rdm-physical, rdm-virtual, vhdx-fixed, vhdx-dynamic, passthrough]\n` +
      `    sizeGb: ${list(20_000, (i) => i + 1)}\n    controller: [pvscsi, lsilogic, lsisas, buslogic]\n    blockSizeBytes: ${list(9, (i) => 1048576 * 2 ** i)}\n` +
      `    logicalSectorBytes: [512, 4096]\n    physicalSectorBytes: [512, 4096]\n  volume:\n    sizeGb: ${list(20_000, (i) => i + 1)}\n`,
  );
  // 50,000 unknown keys (100,000 values: under the value limit, so every key is diagnosed) and
  // 100,000 (200,000 values, over it) — the first took ~35 s, the second 138 s and printed 22 MB
  const keys = (n: number) => `${HEAD}matrix:\n  workload:\n    profile: [cdm8-default]\n` + Array.from({ length: n }, (_, i) => `k${i}: 1\n`).join('');
  fs.writeFileSync(at('keys.yaml'), keys(50_000));
  fs.writeFileSync(at('keys100k.yaml'), keys(100_000));
  // 500,000 one-character list items in 1 MiB (yaml and zod would take ~1 GB for them)
  fs.writeFileSync(at('items.yaml'), `${HEAD}matrix:\n  workload:\n    profile: [${Array(500_000).fill('0').join(',')}]\n`);
  // billion laughs: 9^7 list items from 300 bytes
  const levels = 'abcdefg';
  fs.writeFileSync(
    at('bomb.yaml'),
    `${HEAD}matrix:\n  workload:\n    profile: [cdm8-default]\nworkloads:\n  a: &a [x, x, x, x, x, x, x, x, x]\n` +
      [...levels.slice(1)].map((l, i) => `  ${l}: &${l} [${Array(9).fill(`*${levels[i]}`).join(', ')}]\n`).join(''),
  );
  fs.writeFileSync(at('deep.yaml'), `${HEAD}matrix: ${'['.repeat(300_000)}${']'.repeat(300_000)}\n`);
  fs.writeFileSync(at('big.yaml'), `${HEAD}description: "${'x'.repeat(2 * 1024 * 1024)}"\n`);
  // a 10 MB CrystalDiskMark text export: 138,000 result rows (a real one has at most 30)
  const row = '  SEQ    1MiB (Q=  8, T= 1):  3519.031 MB/s [   3356.0 IOPS] <  2381.32 us>\n';
  fs.writeFileSync(at('cdm.txt'), 'CrystalDiskMark 8.0.4 x64 (C) 2007-2021 hiyohiyo\n[Read]\n' + row.repeat(Math.ceil((10 * 1024 * 1024) / row.length)));
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.concurrent('validate refuses hostile input within its budget (exit 2, file:line, bounded output)', { timeout: 120_000 }, () => {
  it('/dev/zero and a FIFO: refused before reading, without blocking', async () => {
    const zero = await measure(['validate', '/dev/zero']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toBe('/dev/zero:1:1: it is a character device, not a regular file; storsweep reads playbooks and inventories only from regular files\n');
    withinBudget(zero);
    const fifo = await measure(['validate', at('fifo.yaml')]);
    expect(fifo.code).toBe(2);
    expect(fifo.stderr).toBe(`${at('fifo.yaml')}:1:1: it is a FIFO (named pipe), not a regular file; storsweep reads playbooks and inventories only from regular files\n`);
    withinBudget(fifo);
  });

  it('a file over the size limit is refused; --max-input-size raises it', async () => {
    const r = await measure(['validate', at('big.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `${at('big.yaml')}:1:1: the file is 2.0 MiB, over the 1 MiB limit for playbooks and inventories; if it is meant to be this big, raise the limit with --max-input-size <size> or STORSWEEP_MAX_INPUT_SIZE\n`,
    );
    withinBudget(r);
    // raised: the file is read, and its 2 MB value refused at its line (a value holds at most 64 KiB, issue 26)
    const raised = await measure(['validate', '--max-input-size', '3m', at('big.yaml')]);
    expect(raised.code).toBe(2);
    expect(raised.stderr).toBe(`${at('big.yaml')}:${HEAD.split('\n').length}:14: invalid YAML: a value of 2,097,154 characters; at most 65,536 (64 KiB) are read\n`);
    const env = await measure(['validate', at('big.yaml')], { STORSWEEP_MAX_INPUT_SIZE: '3m' });
    expect(env.stderr).toBe(raised.stderr);
  });

  it('10,000,000 permutations: refused at matrix: before expanding', async () => {
    const r = await measure(['validate', at('1e7.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `${at('1e7.yaml')}:3:1: matrix: the matrix expands to 10,000,000 permutations (disk.format 1 × disk.sizeGb 1000 × volume.sizeGb 10000 × workload.profile 1); at most 100,000 are allowed: drop axis values or split the playbook\n`,
    );
    withinBudget(r);
    // plan refuses the same way instead of running out of heap
    const plan = await measure(['plan', at('1e7.yaml'), '-i', 'test/fixtures/config/inv-ok.yaml']);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toBe(r.stderr);
    withinBudget(plan);
  });

  it('~3.3e19 permutations (more than 2^64): counted exactly, refused', async () => {
    const r = await measure(['validate', at('3e19.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^${at('3e19.yaml')}:3:1: matrix: the matrix expands to 33,177,600,000,000,000,000 permutations \\(target 30000 × datastore\\.kind 5 × .*\\); at most 100,000 are allowed`));
    withinBudget(r);
  });

  it('50,000 unknown keys: every one found, 50 printed, linear time', async () => {
    const r = await measure(['validate', at('keys.yaml')]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(51);
    expect(lines[0]).toBe(`${at('keys.yaml')}:6:1: k0: unknown key "k0" (expected one of $schema, name, description, target, matrix, lackingAxes, workloads, settings, include, exclude, repeat, order, baseline, environment, environmentOf, timeouts)`);
    expect(lines[50]).toBe('… and 49950 more problems (fix these first)');
    withinBudget(r);
  });

  it('100,000 unknown keys or 500,000 list items: more values than a configuration holds, refused at the first one over', async () => {
    const keys = await measure(['validate', at('keys100k.yaml')]);
    expect(keys.code).toBe(2);
    expect(keys.stderr).toBe(`${at('keys100k.yaml')}:60002:1: invalid YAML: more than 120,000 values; a playbook or inventory needs a few thousand at most\n`);
    withinBudget(keys);
    const items = await measure(['validate', at('items.yaml')]);
    expect(items.code).toBe(2);
    expect(items.stderr).toBe(`${at('items.yaml')}:5:240001: invalid YAML: more than 120,000 values; a playbook or inventory needs a few thousand at most\n`);
    withinBudget(items);
  });

  it('an alias bomb: file:line of the nesting alias, exit 2 (not a ReferenceError)', async () => {
    const r = await measure(['validate', at('bomb.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${at('bomb.yaml')}:9:10: aliases expand to more than yaml's limit of 100 nodes (an alias bomb?); write the values out instead of nesting aliases\n`);
    withinBudget(r);
  });

  it('300,000 nested brackets: refused at the 65th, before the parser recurses', async () => {
    const r = await measure(['validate', at('deep.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${at('deep.yaml')}:3:73: invalid YAML: nested more than 64 levels deep in [ ] / { }; a playbook or inventory needs a handful\n`);
    withinBudget(r);
  });
});

describe.concurrent('import refuses hostile input within the same budget', { timeout: 120_000 }, () => {
  it('a 10 MB CrystalDiskMark text: over the import size limit; raised, over the row limit', async () => {
    const r = await measure(['import', at('cdm.txt')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: ${at('cdm.txt')}: the file is 10.0 MiB, over the 8 MiB limit for imported result files; if it is meant to be this big, raise the limit with --max-input-size <size> or STORSWEEP_MAX_INPUT_SIZE\n`,
    );
    withinBudget(r);
    // with the size limit raised, the parser reads it without overflowing the stack and stops at
    // the row limit (it used to fail with "Maximum call stack size exceeded")
    const raised = await measure(['import', '--max-input-size', '16m', at('cdm.txt')]);
    expect(raised.code).toBe(2);
    expect(raised.stderr).toBe(
      `error: ${at('cdm.txt')}:10003: more than 10,000 CrystalDiskMark result rows in one file; a results export holds a few dozen, so this is not one (split it if it really is)\n`,
    );
    withinBudget(raised);
  });

  it('/dev/zero and a FIFO given to import: refused without reading or blocking', async () => {
    const r = await measure(['import', '/dev/zero', at('fifo.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      '/dev/zero: it is a character device, not a regular file; storsweep reads imported result files only from regular files\n'.replace(/^/, 'error: ') +
        `error: ${at('fifo.yaml')}: it is a FIFO (named pipe), not a regular file; storsweep reads imported result files only from regular files\n`,
    );
    withinBudget(r);
  });
});

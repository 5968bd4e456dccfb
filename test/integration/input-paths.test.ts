// Hostile inputs through the CLI that the first round of issue 11 missed (items 10, 12, 14):
// - CSV read with `;` as the list separator (Python's csv stands in for a spreadsheet): no field of
//   any CSV we print or write starts with a formula character;
// - file inputs that are not regular files, or too big, reach no command unbounded: results .jsonl
//   (a file or a run directory's mirror), run.sqlite, the playbook of run --resume;
// - a damaged run.sqlite is named with what to do (exit 2) even when SQLite finds the damage only
//   in a later page, and a read-only run directory reads.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planFor } from '../../src/app/config.ts';
import { testIdentity, type ResultRecord } from '../../src/results/record.ts';
import { ResultStore } from '../../src/results/store.ts';
import { REPO_ROOT, runCli, stackTraceLines } from '../helpers/cli.ts';

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-input-paths-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A run directory as `run` leaves it, with one record per permutation, without running anything. */
function makeRunDir(name: string, hostile = 'plain'): string {
  const runDir = path.join(dir, name);
  const plan = planFor('playbooks/quickstart.yaml', 'inventories/lab.yaml', 'rinp0000', [], process.env);
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
    };
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
    await Promise.all(
      ['a;=2*21;.json', 'a;@SUM(2*21);.json', 'b, -2+3;.json'].map(async (name) => {
        const file = path.join(dir, name);
        fs.copyFileSync(path.join(REPO_ROOT, 'test/fixtures/fio/randread-4k-q32.json'), file);
        const r = await runCli(['import', '--csv', file]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain(name.slice(0, 2));
        expect({ name, bad: formulaFields(r.stdout) }).toEqual({ name, bad: NONE });
      }),
    );
  });

  it('results --csv, report -f csv and report -f csv -o of a run whose workload is named x;=2*21;', async () => {
    const runDir = makeRunDir('csv', 'x;=2*21;\r\n@SUM(1);"=1"');
    const out = path.join(dir, 'out.csv');
    const texts: Record<string, string> = {};
    await Promise.all(
      [['results', runDir, '--csv'], ['report', runDir, '-f', 'csv'], ['report', runDir, '-f', 'csv', '-o', out]].map(async (args) => {
        const r = await runCli(args);
        expect(r.code, r.stderr).toBe(0);
        texts[args.join(' ')] = args.includes('-o') ? fs.readFileSync(out, 'utf8') : r.stdout;
      }),
    );
    for (const [args, text] of Object.entries(texts)) {
      expect(text, args).toContain('x;');
      expect({ args, bad: formulaFields(text) }).toEqual({ args, bad: NONE });
    }
  });
});

/**
 * Exit 2, one line naming `file` and `reason`, no stack trace. A command that read the file (a FIFO
 * no one writes, /dev/zero) would never end: runCli's hang guard kills it and its exit code is
 * then no 2 — the refusal itself is the proof that nothing was read, not the time it took.
 */
async function expectRefused(args: string[], file: string, reason: string): Promise<void> {
  const r = await runCli(args);
  expect({ args, code: r.code, first: r.stderr.split('\n')[0]!.startsWith(`${file}`), reason: r.stderr.includes(reason) }, r.stderr).toEqual({ args, code: 2, first: true, reason: true });
  expect(stackTraceLines(r.stderr)).toEqual([]);
}

describe('result files and run databases that are not regular files, or too big', () => {
  it('report and compare of a .jsonl that is /dev/zero or a FIFO, directly or as a run directory\'s results.jsonl', async () => {
    const zero = path.join(dir, 'zero.jsonl');
    fs.symlinkSync('/dev/zero', zero);
    const fifo = path.join(dir, 'fifo.jsonl');
    execFileSync('mkfifo', [fifo]);
    const dirZero = path.join(dir, 'dir-zero');
    const dirFifo = path.join(dir, 'dir-fifo');
    fs.mkdirSync(dirZero);
    fs.mkdirSync(dirFifo);
    fs.symlinkSync('/dev/zero', path.join(dirZero, 'results.jsonl'));
    execFileSync('mkfifo', [path.join(dirFifo, 'results.jsonl')]);
    const device = 'it is a character device, not a regular file';
    const pipe = 'it is a FIFO (named pipe), not a regular file';
    // independent commands, each its own process: at once
    await Promise.all([
      expectRefused(['report', zero], zero, device),
      expectRefused(['report', fifo], fifo, pipe),
      expectRefused(['compare', dirZero, dirFifo], path.join(dirZero, 'results.jsonl'), device),
      expectRefused(['report', dirFifo], path.join(dirFifo, 'results.jsonl'), pipe),
    ]);
  });

  it('a .jsonl over the limit, or with a line over 1 MiB, is refused before it is read whole', async () => {
    const runDir = makeRunDir('jsonl-src');
    const line = (await runCli(['results', runDir, '--json'])).stdout.split('\n')[0]!;
    const big = path.join(dir, 'big.jsonl');
    fs.writeFileSync(big, `${line}\n`.repeat(Math.ceil((2 * 1024 * 1024) / (line.length + 1))));
    const long = path.join(dir, 'long.jsonl');
    fs.writeFileSync(long, `${line}\n${JSON.stringify({ pad: 'x'.repeat(1024 * 1024) })}\n`);
    // over the limit; within it (it reads); a line over 1 MiB
    const [r, within, l] = await Promise.all([runCli(['report', big, '-f', 'json'], { env: { STORSWEEP_MAX_INPUT_SIZE: '1m' } }), runCli(['report', big, '-f', 'json']), runCli(['report', long])]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^${big}: the file is 2(\\.0)? MiB, over the 1 MiB limit for result files \\(\\.jsonl\\); if it is meant to be this big, raise the limit with --max-input-size`));
    expect(within.code).toBe(0);
    expect({ code: l.code, stderr: l.stderr }).toEqual({ code: 2, stderr: `${long}:2: line 2 is over 1 MiB; a result record is one JSON object of a few KB per line\n` });
  });

  it('run.sqlite that is a FIFO or a link to /dev/zero: every command that opens the run directory refuses it', async () => {
    const fifoDir = path.join(dir, 'db-fifo');
    const zeroDir = path.join(dir, 'db-zero');
    fs.mkdirSync(fifoDir);
    fs.mkdirSync(zeroDir);
    execFileSync('mkfifo', [path.join(fifoDir, 'run.sqlite')]);
    fs.symlinkSync('/dev/zero', path.join(zeroDir, 'run.sqlite'));
    const refusals = ([[fifoDir, 'a FIFO (named pipe)'], [zeroDir, 'a character device']] as const).flatMap(([runDir, what]) =>
      [['status', runDir], ['results', runDir], ['report', runDir], ['cleanup', runDir], ['run', '--resume', runDir]].map((args) => expectRefused(args, path.join(runDir, 'run.sqlite'), `it is ${what}, not the run's database file`)),
    );
    await Promise.all(refusals);
  });

  it('run --resume RUNDIR /dev/zero or a FIFO as the playbook', async () => {
    const runDir = makeRunDir('resume-zero');
    const fifo = path.join(dir, 'playbook-fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    await Promise.all([
      expectRefused(['run', '--resume', runDir, '/dev/zero'], '/dev/zero', 'it is a character device, not a regular file'),
      expectRefused(['run', '--resume', runDir, fifo], fifo, 'it is a FIFO (named pipe), not a regular file'),
    ]);
  });
});

describe('a run.sqlite damaged past its first page', () => {
  it('every command that opens the run directory names the file and what to do, exit 2', async () => {
    const runDir = makeRunDir('damaged-late');
    const file = path.join(runDir, 'run.sqlite');
    // every page but the first (the schema): the open succeeds, the first query meets the damage
    const pages = Math.floor(fs.statSync(file).size / 4096);
    const fd = fs.openSync(file, 'r+');
    for (let p = 1; p < pages; p++) fs.writeSync(fd, Buffer.alloc(64, 0xff), 0, 64, p * 4096);
    fs.closeSync(fd);
    const expected = `${file}: the run's database is damaged (SQLite: database disk image is malformed). Keep a copy, then try to salvage it with`;
    const commands = [['status', runDir], ['results', runDir], ['report', runDir], ['compare', runDir, runDir], ['cleanup', runDir], ['run', '--resume', runDir]];
    // the readers at once; the two that write (and lock) the run directory one after the other
    const readers = await Promise.all(commands.slice(0, 4).map((args) => runCli(args)));
    const writers = [await runCli(commands[4]!), await runCli(commands[5]!)];
    [...readers, ...writers].forEach((r, i) => {
      const args = commands[i]!;
      expect({ args, code: r.code, start: r.stderr.slice(0, expected.length) }).toEqual({ args, code: 2, start: expected });
      expect(stackTraceLines(r.stderr)).toEqual([]);
    });
  });
});

describe('a read-only run directory', () => {
  let mounted: string | null = null;
  afterAll(() => {
    if (mounted) execFileSync('umount', [mounted]);
  });

  it('status, results, report and compare read it (a read-only bind mount); cleanup says why it cannot', async () => {
    const src = makeRunDir('ro-src', 'ro');
    const runDir = path.join(dir, 'ro');
    fs.mkdirSync(runDir);
    execFileSync('mount', ['--bind', '-o', 'ro', src, runDir]);
    mounted = runDir;
    expect(() => fs.writeFileSync(path.join(runDir, 'x'), '')).toThrow(/EROFS/);
    const before = fs.readdirSync(src).sort();
    // every command at once: none can write here
    const reading = [['report', runDir, '-f', 'json'], ['compare', runDir, runDir], ['cleanup', runDir, '--dry-run']];
    const writing = [['cleanup', runDir], ['run', '--resume', runDir]];
    const [status, results, ...rest] = await Promise.all([['status', runDir], ['results', runDir, '--json'], ...reading, ...writing].map((args) => runCli(args)));
    expect({ code: status!.code, stderr: status!.stderr }).toEqual({ code: 0, stderr: '' });
    expect(status!.stdout).toMatch(/^run rinp0000 .*\ndone 0, failed 0, pending 1 of 1\n/);
    expect({ code: results!.code, stderr: results!.stderr }).toEqual({ code: 0, stderr: '' });
    expect(results!.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as ResultRecord).test.id)).toEqual(['ro']);
    reading.forEach((args, i) => {
      const r = rest[i]!;
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
    });
    // the commands that write say why they cannot
    writing.forEach((args, i) => {
      const r = rest[reading.length + i]!;
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({
        args,
        code: 2,
        stderr: `${path.join(runDir, 'run.sqlite')}: ${runDir} is not writable, and this command records what it does in the run's database; status, results and report read it as it is\n`,
      });
    });
    // nothing was written next to it (no -wal/-shm left behind in the source either)
    expect(fs.readdirSync(src).sort()).toEqual(before);
  });
});

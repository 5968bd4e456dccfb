// What the CLI prints and where `report -o` writes, as a user (or an attacker's input) meets it.
//  - Terminal escapes: a playbook target/workload name, a fio that fails with hostile stderr and an
//    imported CrystalDiskMark export carrying ESC[2J, an OSC 8 hyperlink, the one-byte C1 CSI
//    (U+009B), NUL and a bidi override: every command's stdout and stderr holds no raw control
//    byte (checked on the UTF-8 bytes) and shows `\x1b` instead.
//  - `report -o`: never onto a run's own files (run.sqlite survives, records still readable), never
//    onto an input, never over a user's file without --force; our previous report is rewritten.
//    A bad `-o`/`run --out` path is a sentence naming it, not an errno (and never a hang).
// One real run on the `local` provider with a fio wrapper keeps this lean (a few seconds).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, stackTraceLines, type CliResult } from '../helpers/cli.ts';
import { quickSettings } from '../helpers/quick-settings.ts';

/** ESC[2J (clear screen), an OSC 8 hyperlink, C1 CSI, NUL, RLO: as YAML double-quoted escapes. */
const EVIL_YAML = String.raw`\e[2J\e]8;;http://evil.example/\alink\e]8;;\a\x9b31m\0\u202Etxt.exe`;
const EVIL = 'x\x1b[2J\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07\u009b31m\0\u202etxt.exe';
/** The same, with no NUL: a file name cannot hold one. */
const EVIL_NAME = 'cdm-\x1b[2J\x1b]8;;http:\x07\u009b\u202e.txt';

/** Every byte a terminal would act on (C0 but newline/tab/CRLF, DEL, C1 in UTF-8, bidi controls). */
function rawControlBytes(text: string): string[] {
  const b = Buffer.from(text, 'utf8');
  const bad: string[] = [];
  for (let i = 0; i < b.length; i++) {
    const x = b[i]!;
    const next = b[i + 1] ?? -1;
    const third = b[i + 2] ?? -1;
    if ((x < 0x20 && x !== 0x0a && x !== 0x09 && !(x === 0x0d && next === 0x0a)) || x === 0x7f) bad.push(`0x${x.toString(16)}@${i}`);
    else if (x === 0xc2 && next >= 0x80 && next <= 0x9f) bad.push(`C1 0x${next.toString(16)}@${i}`);
    else if (x === 0xe2 && next === 0x80 && third >= 0xaa && third <= 0xae) bad.push(`bidi e280${third.toString(16)}@${i}`);
    else if (x === 0xe2 && next === 0x81 && third >= 0xa6 && third <= 0xa9) bad.push(`bidi e281${third.toString(16)}@${i}`);
  }
  return bad;
}

function expectTerminalSafe(label: string, r: CliResult, shows = true): void {
  expect(rawControlBytes(r.stdout), `${label}: stdout`).toEqual([]);
  expect(rawControlBytes(r.stderr), `${label}: stderr`).toEqual([]);
  expect(stackTraceLines(r.stderr), `${label}: stack trace`).toEqual([]);
  // JSON shows ESC as its own \u001b escape
  if (shows) expect(r.stdout + r.stderr, `${label}: shows the escape`).toMatch(/\\x1b|\\u001b/);
}

let dir: string;
let runDir: string;
let run: CliResult;
let playbook: string;
let inventory: string;
let cdm: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-output-'));
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.mkdirSync(path.join(dir, 'scratch'));
  // fio itself, except that an 8 KiB test fails the way a broken tool would: hostile text on stderr
  fs.writeFileSync(path.join(dir, 'evil.txt'), `fio: ${EVIL}\n`);
  fs.writeFileSync(path.join(dir, 'bin', 'fio'), `#!/bin/sh\ncase "$*" in *--bs=8192*) cat '${path.join(dir, 'evil.txt')}' >&2; exit 1;; esac\nexec /usr/bin/fio "$@"\n`, { mode: 0o755 });
  inventory = path.join(dir, 'inv.yaml');
  fs.writeFileSync(inventory, ['targets:', '  t:', '    provider: local', `    workdir: ${path.join(dir, 'scratch')}`, `    fioPath: ${path.join(dir, 'bin', 'fio')}`, ''].join('\n'));
  playbook = path.join(dir, 'pb.yaml');
  fs.writeFileSync(
    playbook,
    ['name: out', 'target: t', 'matrix:', '  workload:', '    profile: ["4k 100% read 100% random", "8k 100% read 100% random"]', ...quickSettings(), ''].join('\n'),
  );
  run = await runCli(['run', playbook, '-i', inventory, '--out', path.join(dir, 'runs'), '--json']);
  runDir = (JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { runDir: string }).runDir;
  // a CrystalDiskMark export with a hostile name, an unrecognised hostile line and a hostile OS line
  const seed = fs.readFileSync(path.join(REPO_ROOT, 'test/fixtures/cdm/cdm3-vmfs3-1mb.txt'), 'utf8');
  cdm = path.join(dir, EVIL_NAME);
  fs.writeFileSync(cdm, seed.replace('  Test : ', `${EVIL}\n  Test : `).replace(/OS : .*/, `OS : ${EVIL}`));
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('nothing from input reaches the terminal raw', () => {
  it('validate and plan: hostile target and workload names in diagnostics and the plan', async () => {
    const pb = path.join(dir, 'pb-evil.yaml');
    fs.writeFileSync(pb, ['name: evil', `target: "t${EVIL_YAML}"`, 'matrix:', '  workload:', `    profile: ["w${EVIL_YAML}"]`, ''].join('\n'));
    const validate = await runCli(['validate', pb, '-i', inventory]);
    expect(validate.code).toBe(2);
    expectTerminalSafe('validate', validate);
    const pb2 = path.join(dir, 'pb-evil-workload.yaml');
    fs.writeFileSync(pb2, ['name: evil', 'target: t', 'matrix:', '  workload:', `    profile: ["w${EVIL_YAML}"]`, 'workloads:', `  "w${EVIL_YAML}":`, '    iometer: "4k 100% read 100% random"', ''].join('\n'));
    // whether validate accepts such a name or refuses it, nothing prints raw
    expectTerminalSafe('validate workload', await runCli(['validate', pb2, '-i', inventory]), false);
    for (const args of [['plan', pb2, '-i', inventory], ['plan', pb2, '-i', inventory, '--json'], ['run', pb2, '-i', inventory, '--dry-run']]) {
      expectTerminalSafe(args.join(' '), await runCli(args));
    }
  });

  it('run progress (plain lines): the failure reason from the tool is shown, not executed', () => {
    expect(run.code).toBe(1);
    expectTerminalSafe('run', run);
    expect(run.stderr).toMatch(/FAILED \S+ profile=8k 100% read 100% random: .*fio: x\\x1b\[2J\\x1b\]8;;http:\/\/evil\.example\/\\x07link\\x1b\]8;;\\x07\\x9b31m\\x00\\u202etxt\.exe/);
  });

  it('results, status, cleanup of that run', async () => {
    for (const args of [['results', runDir], ['results', runDir, '--csv'], ['results', runDir, '--json'], ['status', runDir], ['cleanup', runDir, '--dry-run']]) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).toBe(0);
      expectTerminalSafe(args.join(' '), r, args[0] === 'status');
    }
  });

  it('import, report to stdout and compare of a hostile CrystalDiskMark export', async () => {
    for (const args of [
      ['import', cdm],
      ['import', cdm, '--json'],
      ['report', cdm],
      ['report', cdm, '-f', 'csv'],
      ['report', cdm, '-f', 'json'],
      ['compare', cdm, cdm],
    ]) {
      const r = await runCli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expectTerminalSafe(args.join(' '), r);
      // JSON stays valid JSON and keeps the exact text (written as \u escapes)
      if (args.includes('--json') || args.includes('json')) {
        // import --json prints JSON Lines (as results --json), the others one document
        const docs = args[0] === 'import' ? r.stdout.trimEnd().split('\n') : [r.stdout];
        const parsed = JSON.stringify(docs.map((d) => JSON.parse(d) as unknown));
        expect(parsed).toContain(JSON.stringify(EVIL_NAME).slice(1, -1));
      }
    }
  });

  it('error messages and commander errors', async () => {
    expectTerminalSafe('missing source', await runCli(['report', path.join(dir, `nope${EVIL}`.replace(/\0/g, ''))]));
    expectTerminalSafe('unknown option', await runCli(['report', cdm, `--x${EVIL.replace(/\0/g, '')}`]));
  });

  it('report -o FILE keeps the exact text', async () => {
    const out = path.join(dir, 'hostile.csv');
    const r = await runCli(['report', cdm, '-f', 'csv', '-o', out]);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toContain(EVIL_NAME);
  });
});

describe('report -o writes only where it may', () => {
  const records = () => {
    const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM results').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('refuses the run database, even with --force; run.sqlite and its records are intact', async () => {
    const before = fs.readFileSync(path.join(runDir, 'run.sqlite'));
    expect(records()).toBeGreaterThan(0);
    for (const extra of [[], ['--force']]) {
      const r = await runCli(['report', runDir, '-o', path.join(runDir, 'run.sqlite'), ...extra]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`refused: ${path.join(runDir, 'run.sqlite')} is inside the run directory ${runDir}; only report.md, report.html, report.csv, report-summary.csv, report.json may be written there (not even with --force)\n`);
    }
    expect(fs.readFileSync(path.join(runDir, 'run.sqlite')).equals(before)).toBe(true);
    expect(records()).toBeGreaterThan(0);
    expect((await runCli(['results', runDir, '--json'])).stdout.trim().split('\n').length).toBe(records());
    // nor a new file anywhere under the run directory
    const rawNew = path.join(runDir, 'raw', 'notes.md');
    expect((await runCli(['report', runDir, '-o', rawNew, '--force'])).code).toBe(2);
    expect(fs.existsSync(rawNew)).toBe(false);
  });

  it("refuses one of the report's inputs, even with --force", async () => {
    const copy = path.join(dir, 'input-copy.txt');
    fs.copyFileSync(cdm, copy);
    const before = fs.readFileSync(copy);
    const r = await runCli(['report', copy, '-o', copy, '--force']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`refused: ${copy} is one of the report's inputs (${copy}); not even --force overwrites it\n`);
    expect(fs.readFileSync(copy).equals(before)).toBe(true);
  });

  it("refuses a user's file without --force, replaces it with --force", async () => {
    const mine = path.join(dir, 'thesis.md');
    fs.writeFileSync(mine, '# my thesis\n');
    const r = await runCli(['report', runDir, '-o', mine]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`refused: ${mine} exists and is not a storsweep report; add --force to overwrite it\n`);
    expect(fs.readFileSync(mine, 'utf8')).toBe('# my thesis\n');
    const forced = await runCli(['report', runDir, '-o', mine, '--force']);
    expect(forced.code).toBe(0);
    expect(fs.readFileSync(mine, 'utf8')).toMatch(/^<!-- generated by storsweep report -->\n# storsweep report/);
  });

  it('never replaces a device node or a symlink to one, even with --force; a planted temporary-name link is not written through', async () => {
    const nodes = path.join(dir, 'nodes');
    fs.mkdirSync(nodes);
    const cases: Array<[string, string]> = [];
    try {
      execFileSync('mknod', [path.join(nodes, 'mynull'), 'c', '1', '3']); // as root, like the lab's CI
      cases.push(['mynull', 'a character device']);
    } catch {
      /* not root */
    }
    fs.symlinkSync('/proc/self/fd/1', path.join(nodes, 'mystdout'));
    cases.push(['mystdout', 'a symbolic link to ']);
    for (const [name, what] of cases) {
      const out = path.join(nodes, name);
      const before = fs.lstatSync(out);
      const r = await runCli(['report', runDir, '-o', out, '--force']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`refused: ${out} is ${what}`);
      expect(r.stderr).toContain('not a regular file; report -o replaces only regular files (not even with --force)');
      const after = fs.lstatSync(out);
      expect([after.ino, after.mode, after.rdev]).toEqual([before.ino, before.mode, before.rdev]);
    }
    // A link planted at every temporary name the old writer used (.<name>.<pid>.tmp for the next pids)
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'precious\n');
    const shared = path.join(dir, 'shared');
    fs.mkdirSync(shared);
    for (let pid = process.pid; pid < process.pid + 200; pid++) fs.symlinkSync(victim, path.join(shared, `.r2.md.${pid}.tmp`));
    const w = await runCli(['report', runDir, '-o', path.join(shared, 'r2.md')]);
    expect(w.code, w.stderr).toBe(0);
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(fs.readFileSync(path.join(shared, 'r2.md'), 'utf8')).toMatch(/^<!-- generated by storsweep report -->/);
  });

  it('rewrites a previous report of ours without --force, and the run\'s own report.md', async () => {
    // (every format's marker is covered by test/unit/cli/report-file.test.ts)
    for (const format of ['md', 'json']) {
      const out = path.join(dir, `ours.${format}`);
      expect((await runCli(['report', runDir, '-f', format, '-o', out])).code).toBe(0);
      fs.appendFileSync(out, format === 'json' ? ' ' : '\n');
      const again = await runCli(['report', runDir, '-f', format, '-o', out]);
      expect(again.code, `${format}: ${again.stderr}`).toBe(0);
      expect(again.stderr).toBe(`wrote ${out}\n`);
    }
    // the run wrote report.md itself; it can be regenerated in place
    const inRun = await runCli(['report', runDir, '-o', path.join(runDir, 'report.md')]);
    expect(inRun.code, inRun.stderr).toBe(0);
  });

  it('a bad path gets a sentence, not an errno', async () => {
    const missing = await runCli(['report', runDir, '-o', path.join(dir, 'no', 'such', 'r.md')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`--output ${path.join(dir, 'no', 'such', 'r.md')}: the directory ${path.join(dir, 'no', 'such')} does not exist\n`);
    const isDir = await runCli(['report', runDir, '-o', path.join(dir, 'scratch')]);
    expect(isDir.code).toBe(2);
    expect(isDir.stderr).toBe(`--output ${path.join(dir, 'scratch')}: is a directory; name a file in it, e.g. ${path.join(dir, 'scratch', 'report.md')}\n`);
    for (const r of [missing, isDir]) expect(r.stderr).not.toMatch(/ENOENT|EISDIR|errno/);
  });

  it('run --out: a file, a path under a file, or a directory the file system refuses: a sentence, exit 2, nothing run', async () => {
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, 'mine');
    for (const [out, message] of [
      [file, `--out ${file}: ${file} is not a directory`],
      [path.join(file, 'sub'), `--out ${path.join(file, 'sub')}: ${file} is not a directory`],
      // Node's recursive mkdir never returns here; one level at a time fails at once
      ['/proc/storsweep-nope/runs', '--out /proc/storsweep-nope/runs: cannot create the directory /proc/storsweep-nope: the file system refuses it (ENOENT)'],
    ] as const) {
      const r = await runCli(['run', playbook, '-i', inventory, '--out', out], { timeoutMs: 30_000 });
      expect(r.code, out).toBe(2);
      expect(r.stderr).toBe(`${message}\n`);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('mine');
  });
});

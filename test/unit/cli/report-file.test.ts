// Where `report -o` may write: our own reports are recognised in every format, a run directory
// takes only report.* names, inputs are never overwritten, and links are replaced, not followed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReportOutput, writeReportFile } from '../../../src/app/report-file.ts';
import { OutputRefused } from '../../../src/errors.ts';
import { renderCsv } from '../../../src/report/csv.ts';
import { renderHtml } from '../../../src/report/html.ts';
import { renderJson } from '../../../src/report/json.ts';
import { isOurReport } from '../../../src/report/marker.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { buildReport } from '../../../src/report/model.ts';
import { labRecords } from '../report/helpers.ts';

let dir: string;
let runDir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-report-file-'));
  runDir = path.join(dir, 'run1');
  fs.mkdirSync(path.join(runDir, 'raw'), { recursive: true });
  fs.writeFileSync(path.join(runDir, 'run.sqlite'), 'SQLite format 3\0');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reason = (fn: () => void): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof OutputRefused) return err.details.reason;
    throw err;
  }
};

describe('isOurReport', () => {
  const records = labRecords({ repetitions: 2 });
  const report = buildReport(records, { runId: 'r' });
  it('recognises each format we write', () => {
    for (const text of [renderMarkdown(report), renderHtml(report), renderJson(report), renderCsv(records)]) expect(isOurReport(text.slice(0, 65536))).toBe(true);
  });
  it('recognises a Markdown report written before the marker (old run directories)', () => {
    const legacy = renderMarkdown(report).split('\n').slice(1).join('\n');
    expect(legacy.startsWith('# storsweep report — r\n')).toBe(true);
    expect(isOurReport(legacy, { legacyMarkdown: true })).toBe(true);
    // only where the caller allows it (report.md directly inside a run directory)
    expect(isOurReport(legacy)).toBe(false);
  });
  it('does not recognise a user file, a database or a lookalike without the marker', () => {
    for (const text of ['# storsweep report — r\n', 'SQLite format 3\0', '<!doctype html><title>storsweep report</title>', '{"storsweep": 1}', 'runId,name\r\n', '']) expect(isOurReport(text)).toBe(false);
  });
});

describe('checkReportOutput', () => {
  it('a run directory takes only report.md/.html/.csv/.json directly inside it, --force or not', () => {
    for (const force of [false, true]) {
      expect(reason(() => checkReportOutput(path.join(runDir, 'run.sqlite'), [runDir], force))).toBe('run-directory');
      expect(reason(() => checkReportOutput(path.join(runDir, 'plan.json'), [], force))).toBe('run-directory');
      expect(reason(() => checkReportOutput(path.join(runDir, 'raw', 'report.md'), [], force))).toBe('run-directory');
    }
    for (const name of ['report.md', 'report.html', 'report.csv', 'report-summary.csv', 'report.json']) expect(reason(() => checkReportOutput(path.join(runDir, name), [runDir], false))).toBeNull();
  });

  it('a symlink into a run directory is judged by where it points', () => {
    const link = path.join(dir, 'link-to-run');
    fs.symlinkSync(runDir, link);
    expect(reason(() => checkReportOutput(path.join(link, 'run.sqlite'), [], true))).toBe('run-directory');
  });

  it('an input is never overwritten, under any name (hard link), even with --force', () => {
    const input = path.join(dir, 'in.txt');
    fs.writeFileSync(input, 'data');
    const hard = path.join(dir, 'hard.txt');
    fs.linkSync(input, hard);
    expect(reason(() => checkReportOutput(hard, [input], true))).toBe('input');
  });

  it('replaces a symlink at the output path instead of writing through it (with --force)', () => {
    const target = path.join(dir, 'precious.txt');
    fs.writeFileSync(target, 'precious');
    const link = path.join(dir, 'out.md');
    fs.symlinkSync(target, link);
    expect(reason(() => checkReportOutput(link, [], false))).toBe('not-a-report');
    writeReportFile(link, 'report\n', [], true);
    expect(fs.readFileSync(target, 'utf8')).toBe('precious');
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(link, 'utf8')).toBe('report\n');
  });

  it('refuses a device node, a FIFO, a socket, or a symlink to one, even with --force; the node is left as it was', async () => {
    const nodes = path.join(dir, 'nodes');
    fs.mkdirSync(nodes);
    const made: string[] = [];
    try {
      execFileSync('mknod', [path.join(nodes, 'mynull'), 'c', '1', '3']); // needs root, as the lab's CI has
      made.push('mynull');
    } catch {
      /* not root: the other kinds still show the rule */
    }
    execFileSync('mkfifo', [path.join(nodes, 'fifo')]);
    made.push('fifo');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(nodes, 'sock'), resolve));
    made.push('sock');
    fs.symlinkSync('/proc/self/fd/1', path.join(nodes, 'mystdout'));
    fs.symlinkSync('/dev/null', path.join(nodes, 'devnull-link'));
    made.push('mystdout', 'devnull-link');
    try {
      for (const name of made) {
        const p = path.join(nodes, name);
        const before = fs.lstatSync(p);
        for (const force of [false, true]) {
          expect(reason(() => checkReportOutput(p, [], force))).toBe('not-a-regular-file');
          expect(() => writeReportFile(p, 'report\n', [], force)).toThrow(new RegExp(`${name} is .*(device|FIFO|socket|link to).*not a regular file`));
        }
        const after = fs.lstatSync(p);
        expect([after.ino, after.mode, after.rdev]).toEqual([before.ino, before.mode, before.rdev]);
      }
      expect(reason(() => checkReportOutput('/dev/null', [], true))).toBe('not-a-regular-file');
    } finally {
      server.close();
    }
  });

  it('a Markdown file that only looks like an old report is not ours outside a run directory\'s report.md', () => {
    const legacy = renderMarkdown(buildReport(labRecords({ repetitions: 2 }), { runId: 'r' })).split('\n').slice(1).join('\n') + '\nMy notes: keep these.\n';
    const copy = path.join(dir, 'annotated.md');
    fs.writeFileSync(copy, legacy);
    expect(reason(() => checkReportOutput(copy, [], false))).toBe('not-a-report');
    const notRunDir = path.join(dir, 'plain-dir');
    fs.mkdirSync(notRunDir);
    fs.writeFileSync(path.join(notRunDir, 'report.md'), legacy);
    expect(reason(() => checkReportOutput(path.join(notRunDir, 'report.md'), [], false))).toBe('not-a-report');
    fs.writeFileSync(path.join(runDir, 'report.md'), legacy);
    expect(reason(() => checkReportOutput(path.join(runDir, 'report.md'), [runDir], false))).toBeNull();
  });

  it('bad paths are named: missing directory, a file as directory, a directory as file', () => {
    expect(reason(() => checkReportOutput(path.join(dir, 'nope', 'r.md'), [], false))).toBe('bad-path');
    fs.writeFileSync(path.join(dir, 'plain'), '');
    expect(() => checkReportOutput(path.join(dir, 'plain', 'r.md'), [], false)).toThrow(/plain/);
    expect(() => checkReportOutput(dir, [], true)).toThrow(/is a directory/);
  });
});

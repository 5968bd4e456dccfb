// With a raised --max-input-size, what one input may hold is still bounded, and every refusal names
// the file (issue 26: a 50 MB YAML string took 1.8 GB and minutes; a 664 MB fio JSON failed with
// V8's "Cannot create a string longer than …" and no file name; a 50 MB run of characters in an
// import overflowed the stack while its warning was printed).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runImport } from '../../../src/cli/commands/import.ts';
import { loadPlaybook } from '../../../src/config/index.ts';
import { MAX_SCALAR_CHARS } from '../../../src/config/load.ts';
import { ConfigError, formatDiagnostic, InputTooLarge, ParseError } from '../../../src/errors.ts';
import { importFile, MAX_IMPORT_LINE_CHARS } from '../../../src/importers/index.ts';
import { MAX_WHOLE_FILE_BYTES, setInputLimitOverride } from '../../../src/input/read-input.ts';
import { shortenLongRuns } from '../../../src/text/excerpt.ts';
import { MAX_JSON_STRING_CHARS } from '../../../src/workloads/fio.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-bounds-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => setInputLimitOverride(null));

const MiB = 1024 * 1024;
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as Error,
  );

describe('a playbook value longer than 64 KiB', () => {
  const PB = (value: string) => ['name: long', 'target: lab-guest', `description: ${value}`, 'matrix:', '  workload:', '    profile: [cdm8-default]', ''].join('\n');
  const diagnostics = (file: string) => {
    try {
      loadPlaybook(file);
    } catch (err) {
      if (err instanceof ConfigError) return err.diagnostics.map(formatDiagnostic);
      throw err;
    }
    return [];
  };

  it('double-quoted, plain or block: refused at its line and column before yaml folds it', () => {
    setInputLimitOverride(16 * MiB);
    const long = 'x'.repeat(MAX_SCALAR_CHARS + 1);
    const dq = write('dq.yaml', PB(`"${long}"`));
    expect(diagnostics(dq)).toEqual([`${dq}:3:14: invalid YAML: a value of 65,539 characters; at most 65,536 (64 KiB) are read`]);
    const plain = write('plain.yaml', PB(long));
    expect(diagnostics(plain)).toEqual([`${plain}:3:14: invalid YAML: a value of 65,537 characters; at most 65,536 (64 KiB) are read`]);
    const block = write('block.yaml', PB(`|\n  ${'y'.repeat(40_000)}\n  ${'y'.repeat(40_000)}`));
    expect(diagnostics(block)).toEqual([`${block}:4:1: invalid YAML: a value of 80,006 characters; at most 65,536 (64 KiB) are read`]);
  });

  it('a value of 64 KiB exactly is read', () => {
    const ok = write('ok.yaml', PB(`"${'x'.repeat(MAX_SCALAR_CHARS - 2)}"`));
    expect(diagnostics(ok)).toEqual([]);
  });
});

describe('a file larger than the longest string Node.js holds', () => {
  it('import of a 600 MiB file with --max-input-size 1g: refused by its size, naming the file, nothing read', async () => {
    setInputLimitOverride(1024 * MiB);
    const file = path.join(dir, 'huge.json');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, 600 * MiB); // sparse: no disk used
    const err = await rejection(importFile(file));
    expect(err).toBeInstanceOf(InputTooLarge);
    expect(err?.message).toBe(`${file}: the file is 600 MiB, over 512 MiB, the most storsweep reads in one piece (the longest text Node.js can hold)`);
    expect(MAX_WHOLE_FILE_BYTES).toBe(536_870_888);
  });
});

describe('imported files: one line, one fio string', () => {
  it('a diskspd XML with a 2 MB element: refused at its line, naming the file', async () => {
    const xml = fs.readFileSync('test/fixtures/diskspd/cdm8-seq-1m-q8t1-read.xml', 'utf8').replace('<ComputerName>WIN-BENCH01', `<ComputerName>${'W'.repeat(2 * MiB)}`);
    const file = write('long-line.xml', xml);
    const err = await rejection(importFile(file));
    expect(err).toBeInstanceOf(ParseError);
    const length = xml.split('\n')[2]!.length; // the element and its indent (and the CR of a CRLF line)
    expect(length).toBeGreaterThan(2 * MiB);
    expect(err?.message).toBe(`${file}:3: line 3 is ${length.toLocaleString('en-US')} characters long; a results file's lines are far shorter (at most ${MAX_IMPORT_LINE_CHARS.toLocaleString('en-US')} are read)`);
  });

  it('a fio JSON with a 100,000-character job name: refused at its line, naming the file', async () => {
    const text = fs.readFileSync('test/fixtures/fio/randread-4k-q32.json', 'utf8').replace('"jobname" : "rnd-4k-q32t1-read"', `"jobname" : "${'j'.repeat(100_000)}"`);
    expect(text.length).toBeGreaterThan(100_000);
    const file = write('long-jobname.json', text);
    const line = text.slice(0, text.indexOf('jjjj')).split('\n').length;
    const err = await rejection(importFile(file));
    expect(err).toBeInstanceOf(ParseError);
    expect(err?.message).toBe(`${file}:${line}: a JSON string longer than ${MAX_JSON_STRING_CHARS.toLocaleString('en-US')} characters: not fio's output`);
  });
});

describe('a results table', () => {
  it('a 400-digit number (Infinity once read) is no measurement: refused at its line', async () => {
    const file = write('huge-number.csv', `test,read MB/s\nseq-1m-q8t1-read,${'9'.repeat(400)}\n`);
    const err = await rejection(importFile(file));
    expect(err).toBeInstanceOf(ParseError);
    expect(err?.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: .*"9{80}… \\(320 more\\)" is too large to be a measurement`));
  });
});

describe('messages', () => {
  it('shortenLongRuns cuts a 50-million-character run (the regex it used overflowed the stack)', () => {
    expect(shortenLongRuns(`warning: ${'x'.repeat(50_000_000)} end`)).toBe(`warning: ${'x'.repeat(80)}… (49,999,920 more) end`);
  });

  it('import: an error that does not name its file is printed with it', async () => {
    const err: string[] = [];
    const code = await runImport(['results/a.json'], {}, { importFile: () => Promise.reject(new RangeError('Invalid string length')), stdout: () => undefined, stderr: (t) => err.push(t) });
    expect(code).toBe(1);
    expect(err).toEqual(['error: results/a.json: Invalid string length\n']);
  });
});

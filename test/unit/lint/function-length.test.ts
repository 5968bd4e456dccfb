// Functions fit on a screen (STYLE.md): every function in src/ — declarations, methods, arrows,
// function expressions, a closure counted with everything inside it — spans at most 80 lines, as the
// TypeScript compiler parses it. A data table (a template of literal lines) may be longer when it is
// listed here with why. A function that grows past 80 lines is split along its seams, not listed.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAX_LINES = 80;

/** Data tables: `file name` → why it is one. */
const DATA_TABLES: Record<string, string> = {
  'src/lab/lab.ts labInventoryYaml': "the lab's inventory.yaml, written out line by line",
};

/** Functions still over the limit, each waiting to be split along its seams; keep it empty: split, do not list. */
const NOT_SPLIT_YET = new Set<string>([]);

interface Long {
  where: string;
  key: string;
  lines: number;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

function nameOf(node: ts.SignatureDeclaration, sf: ts.SourceFile): string {
  if (node.name) return node.name.getText(sf);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(sf);
  return '<anonymous>';
}

/** Every function of `text` longer than MAX_LINES, with its line and name. */
function longFunctions(file: string, text: string): Long[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Long[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.end).line;
      const lines = last - first + 1;
      const name = nameOf(node, sf);
      if (lines > MAX_LINES) found.push({ where: `${file}:${first + 1}`, key: `${file} ${name}`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const measured = sourceFiles(path.join(ROOT, 'src')).map((f) => path.relative(ROOT, f).split(path.sep).join('/'));
const long = measured.flatMap((f) => longFunctions(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));

describe(`no function in src/ over ${MAX_LINES} lines`, () => {
  it('measures a function with everything inside it (a closure of 81 lines is found)', () => {
    const body = Array.from({ length: 79 }, (_, i) => `  const v${i} = () => ${i};`).join('\n');
    expect(longFunctions('x.ts', `export function make() {\n${body}\n}\n`)).toEqual([{ where: 'x.ts:1', key: 'x.ts make', lines: 81 }]);
    expect(longFunctions('x.ts', `export const make = () => {\n${body.split('\n').slice(1).join('\n')}\n};\n`)).toEqual([]);
  });

  it('measures every folder of src/, the providers too', () => {
    expect(measured.length).toBeGreaterThan(100);
    for (const dir of ['src/app/', 'src/providers/vsphere/', 'src/providers/hyperv/', 'src/providers/esxi-shell/']) expect(measured.some((f) => f.startsWith(dir)), dir).toBe(true);
  });

  it('every function is at most 80 lines, but the data tables listed', () => {
    const over = long.filter((l) => !(l.key in DATA_TABLES) && !NOT_SPLIT_YET.has(l.key)).map((l) => `${l.where} ${l.key.split(' ')[1]}: ${l.lines} lines`);
    expect(over).toEqual([]);
  });

  it('lists only what is still long (a function split, or a table gone, leaves the lists)', () => {
    const keys = new Set(long.map((l) => l.key));
    expect([...Object.keys(DATA_TABLES), ...NOT_SPLIT_YET].filter((k) => !keys.has(k))).toEqual([]);
  });
});

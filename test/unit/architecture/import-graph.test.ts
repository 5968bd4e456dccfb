// The import graph of src/ and bench/ against the layer table (test/architecture/layers.ts): every
// import, re-export, dynamic import and import type is one the table allows; every folder and
// top-level file of src/ has a row; no file imports itself round a cycle; the table has no cycle.
// The same functions are first shown to catch what they must, on a small fixture tree with its own
// table (test/fixtures/import-graph/).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fileEdges, findCycles, layerViolations, missingRows, nodeOf, parseImports, readGraph, staleRows, tableEdges, type Cycle, type LayerTable } from '../../architecture/import-graph.ts';
import { CHECKED, LAYERS } from '../../architecture/layers.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = path.join(ROOT, 'test/fixtures/import-graph');

const show = (v: { file: string; line: number; message: string }) => `${v.file}:${v.line}: ${v.message}`;
const showCycle = ({ cycle, knot }: Cycle) =>
  cycle.join(' → ') + (knot.length > cycle.length - 1 ? ` (the knot it is in holds ${knot.length} files: ${knot.join(', ')})` : '');

describe('the checker, on its fixture tree', () => {
  // The fixture's own table: a leaf, a middle layer above it, a top above both.
  const TABLE: LayerTable = {
    'src/leaf': { may: [], why: 'the leaf imports nothing' },
    'src/middle': { may: ['src/leaf'], why: 'the middle uses the leaf' },
    'src/top': { may: '*', why: 'the top uses everything' },
    'src/parts/*': { may: ['src/leaf'], why: 'each part uses the leaf, never another part' },
  };
  const graph = readGraph(FIXTURE, ['src']);

  it('parses every form of import: static, type, re-export, dynamic, import type', () => {
    const text = [
      "import a from './a.ts';",
      "import type { B } from './b.ts';",
      "import './side-effect.ts';",
      "export { c } from './c.ts';",
      "export * from './d.ts';",
      "const e = await import('./e.ts');",
      "type F = import('./f.ts').F;",
      'const g = await import(name);',
      "import fs from 'node:fs';",
    ].join('\n');
    expect(parseImports('x.ts', text).map((i) => [i.line, i.kind, i.specifier])).toEqual([
      [1, 'import', './a.ts'],
      [2, 'import type', './b.ts'],
      [3, 'import', './side-effect.ts'],
      [4, 'export from', './c.ts'],
      [5, 'export from', './d.ts'],
      [6, 'import()', './e.ts'],
      [7, "import('…') type", './f.ts'],
      [8, 'import()', '<computed: name>'],
      [9, 'import', 'node:fs'],
    ]);
  });

  it('puts a file in its most specific row; a `/*` row makes each folder inside its own node', () => {
    expect(nodeOf(TABLE, 'src/leaf/a.ts')).toEqual({ node: 'src/leaf', row: 'src/leaf' });
    expect(nodeOf(TABLE, 'src/parts/one/x.ts')).toEqual({ node: 'src/parts/one', row: 'src/parts/*' });
    expect(nodeOf(TABLE, 'src/parts/loose.ts')).toBeNull();
    expect(nodeOf({ ...TABLE, 'src/parts/one': { may: [], why: '' } }, 'src/parts/one/x.ts')).toEqual({ node: 'src/parts/one', row: 'src/parts/one' });
  });

  it('names each forbidden import with its file, line, specifier and rule', () => {
    const found = layerViolations(TABLE, graph).map(show);
    expect(found).toEqual([
      expect.stringMatching(/^src\/leaf\/upward\.ts:4: src\/leaf may not import src\/middle \(import '\.\.\/middle\/uses-leaf\.ts'\); row "src\/leaf" may import: nothing of ours — the leaf imports nothing$/),
      expect.stringMatching(/^src\/middle\/dynamic\.ts:3: src\/middle may not import src\/top \(import\(\) '\.\.\/top\/main\.ts'\); row "src\/middle" may import: src\/leaf — the middle uses the leaf$/),
      expect.stringMatching(/^src\/parts\/one\/index\.ts:3: src\/parts\/one may not import src\/parts\/two \(import type '\.\.\/two\/index\.ts'\)/),
    ]);
  });

  it('finds the cycle the upward import closes and prints it file by file', () => {
    expect(findCycles(fileEdges(graph)).map(showCycle)).toEqual(['src/leaf/upward.ts → src/middle/uses-leaf.ts → src/leaf/upward.ts']);
  });

  it('finds a cycle in a table (two rows that may import each other)', () => {
    const table: LayerTable = { ...TABLE, 'src/leaf': { may: ['src/middle'], why: '' } };
    expect(findCycles(tableEdges(table)).map(showCycle)).toEqual(['src/leaf → src/middle → src/leaf']);
    expect(findCycles(tableEdges(TABLE))).toEqual([]);
  });

  it('lists a folder of src/ without a row, and a row naming nothing', () => {
    const { 'src/middle': _dropped, ...withoutMiddle } = TABLE;
    expect(missingRows(withoutMiddle, FIXTURE, 'src')).toEqual(['src/middle']);
    expect(missingRows(TABLE, FIXTURE, 'src')).toEqual([]);
    expect(staleRows({ ...TABLE, 'src/gone': { may: [], why: '' }, 'src/soon': { may: [], why: '', planned: true } }, FIXTURE)).toEqual(['src/gone']);
  });
});

describe('the import graph of src/ and bench/ (test/architecture/layers.ts)', () => {
  const graph = readGraph(ROOT, CHECKED);

  it('reads the whole tree', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.has('src/cli/main.ts')).toBe(true);
  });

  it('has a row for every folder and top-level file of src/, and no row naming nothing', () => {
    expect(missingRows(LAYERS, ROOT, 'src')).toEqual([]);
    expect(staleRows(LAYERS, ROOT)).toEqual([]);
  });

  it('imports only what the table allows', () => {
    expect(layerViolations(LAYERS, graph).map(show)).toEqual([]);
  });

  it('has no file-level import cycle', () => {
    expect(findCycles(fileEdges(graph)).map(showCycle)).toEqual([]);
  });

  it('has no cycle in the table itself: no two layers may import each other', () => {
    expect(findCycles(tableEdges(LAYERS)).map(showCycle)).toEqual([]);
  });
});

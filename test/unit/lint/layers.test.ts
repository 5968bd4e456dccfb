// The layer rules, case by case: each fixture in test/fixtures/layers is checked as if it were the
// src/ file its first line names, and must be refused with the message its second line names (or
// pass, for `expect: nothing`). `expect: table …`: by the layer table (test/architecture/layers.ts,
// the rule the import-graph test applies to the whole tree); otherwise by the repository's
// eslint.config.js, which keeps only what the table cannot say (a `new URL` into test/). Type-aware
// rules are switched off for lint: the fixture is not on disk where it pretends to be.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { fileImports, layerViolations } from '../../architecture/import-graph.ts';
import { LAYERS } from '../../architecture/layers.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = path.join(ROOT, 'test/fixtures/layers');

const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }],
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports' || ruleId === 'no-restricted-syntax',
});

const fixtures = fs
  .readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.ts.txt'))
  .sort()
  .map((name) => {
    const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8');
    const as = /^\/\/ as: (\S+)$/m.exec(text)?.[1];
    const expected = /^\/\/ expect: (.+)$/m.exec(text)?.[1];
    if (!as || !expected) throw new Error(`${name}: needs "// as: <path>" and "// expect: …" lines`);
    return { name, text, as, expected };
  });

async function lintMessages(text: string, as: string) {
  const [result] = await eslint.lintText(text, { filePath: path.join(ROOT, as) });
  return result!.messages.map((m) => ({ ruleId: m.ruleId, message: m.message, line: m.line }));
}

describe('layer rules (test/architecture/layers.ts, eslint.config.js)', () => {
  it('has fixtures for every rule family', () => {
    expect(fixtures.filter((f) => f.expected.startsWith('table ')).length).toBeGreaterThanOrEqual(15);
    expect(fixtures.some((f) => f.expected.startsWith('no-restricted-syntax'))).toBe(true);
  });

  for (const f of fixtures) {
    it(`${f.name} as ${f.as}: ${f.expected}`, async () => {
      const refused = layerViolations(LAYERS, new Map([[f.as, fileImports(f.as, f.text)]])).map((v) => v.message);
      const linted = await lintMessages(f.text, f.as);
      if (f.expected.startsWith('nothing')) {
        expect({ refused, linted }).toEqual({ refused: [], linted: [] });
      } else if (f.expected.startsWith('table ')) {
        expect(refused).toEqual([expect.stringContaining(f.expected.slice('table '.length))]);
      } else {
        const [ruleId, ...words] = f.expected.split(' ');
        expect(linted).toHaveLength(1);
        expect(linted[0]).toMatchObject({ ruleId, message: expect.stringContaining(words.join(' ')) });
      }
    });
  }

  it('the repository config is what is linted: a file outside src/ may import anything', async () => {
    const text = "import { executeRun } from '../../src/run/executor.ts';\nexport const x = executeRun;\n";
    expect(await lintMessages(text, 'test/unit/fixture.ts')).toEqual([]);
  });
});

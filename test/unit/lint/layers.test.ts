// The layer rules exist: each fixture in test/fixtures/layers is linted with the repository's
// eslint.config.js as if it were the src/ file its first line names, and must fail with the rule and
// message its second line names (or pass, for `expect: nothing`). Type-aware rules are switched off
// here: the fixture is not on disk where it pretends to be, and the layer rules need no types.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

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
    const lintAs = /^\/\/ lint as: (\S+)$/m.exec(text)?.[1];
    const expected = /^\/\/ expect: (.+)$/m.exec(text)?.[1];
    if (!lintAs || !expected) throw new Error(`${name}: needs "// lint as: <path>" and "// expect: …" lines`);
    return { name, text, lintAs, expected };
  });

describe('layer rules (eslint.config.js)', () => {
  it('has fixtures for every rule family', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
  });

  for (const f of fixtures) {
    it(`${f.name} as ${f.lintAs}: ${f.expected}`, async () => {
      const [result] = await eslint.lintText(f.text, { filePath: path.join(ROOT, f.lintAs) });
      const messages = result!.messages.map((m) => ({ ruleId: m.ruleId, message: m.message, line: m.line }));
      if (f.expected.startsWith('nothing')) {
        expect(messages).toEqual([]);
        return;
      }
      const [ruleId, ...words] = f.expected.split(' ');
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatchObject({ ruleId, message: expect.stringContaining(words.join(' ')) });
    });
  }

  it('the repository config is what is linted: a file outside src/ may import anything', async () => {
    const text = "import { executeRun } from '../../src/run/executor.ts';\nexport const x = executeRun;\n";
    const [result] = await eslint.lintText(text, { filePath: path.join(ROOT, 'test/unit/fixture.ts') });
    expect(result!.messages).toEqual([]);
  });
});

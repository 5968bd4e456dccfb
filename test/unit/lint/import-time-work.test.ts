// No work at import time that a command may not need (issue 31: `storsweep validate` answers in a
// blink). A zod schema built at a module's top level is built by every command that imports the
// module, directly or not: outside the layers whose schemas `validate` parses with (config/, input/,
// providers/: the playbook, the inventory and the targets), a module-level schema is built on first
// use with src/lazy.ts (`const s = lazy(() => z.object(…))`, called as `s()`). fast-xml-parser is
// loaded on the first parse only (src/input/xml-parser.ts): a static import of it loads ~40 files.
// What the installed CLI actually loads is checked by test/integration/installed-package.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Folders whose module-level schemas `validate` parses with (a playbook, an inventory, its targets). */
const SCHEMA_LAYERS = ['src/config/', 'src/input/', 'src/providers/'];

/** Packages loaded on first use only, never by a static import (src/input/xml-parser.ts). */
const LOADED_ON_USE = ['fast-xml-parser'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** `file:line: text` of each zod call (`z.…(…)`) that runs when the module is imported: one not inside a function. */
function moduleLevelSchemas(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    // a function's body runs when it is called; a class's members when it is constructed
    if (ts.isFunctionLike(node) || ts.isClassLike(node)) return;
    if (ts.isCallExpression(node) && /^z\s*\./.test(node.expression.getText(sf))) {
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      found.push(`${file}:${line}: ${node.getText(sf).split('\n')[0]!.slice(0, 80)}`);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** `file:line: specifier` of each import that loads one of `packages` (an `import type` loads nothing). */
function staticImportsOf(file: string, text: string, packages: readonly string[]): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st) && !ts.isExportDeclaration(st)) continue;
    const spec = st.moduleSpecifier;
    if (!spec || !ts.isStringLiteral(spec) || !packages.includes(spec.text)) continue;
    if (ts.isImportDeclaration(st) ? st.importClause?.isTypeOnly : st.isTypeOnly) continue;
    found.push(`${file}:${sf.getLineAndCharacterOfPosition(st.getStart(sf)).line + 1}: ${spec.text}`);
  }
  return found;
}

describe('the checks, on small texts', () => {
  it('find a schema built at the top level, also inside an object or a chain, and none inside a function', () => {
    const text = [
      "import { z } from 'zod';",
      'const a = z.object({ x: z.string() });',
      'export const b = { inner: z.number().int() };',
      'const c = lazy(() => z.object({}));',
      'function d() { return z.string(); }',
      'class E { f = z.boolean(); }',
    ].join('\n');
    expect(moduleLevelSchemas('x.ts', text)).toEqual(['x.ts:2: z.object({ x: z.string() })', 'x.ts:3: z.number().int()']);
  });

  it('find a value import of a package loaded on use, and not an import type', () => {
    const text = ["import { XMLParser } from 'fast-xml-parser';", "import type * as Fxp from 'fast-xml-parser';", "export { XMLBuilder } from 'fast-xml-parser';", "import { z } from 'zod';"].join('\n');
    expect(staticImportsOf('x.ts', text, LOADED_ON_USE)).toEqual(['x.ts:1: fast-xml-parser', 'x.ts:3: fast-xml-parser']);
  });
});

describe('src/', () => {
  const files = sourceFiles(path.join(ROOT, 'src')).map((f) => ({ rel: path.relative(ROOT, f).split(path.sep).join('/'), text: fs.readFileSync(f, 'utf8') }));

  it('builds no zod schema at import time outside config/, input/ and providers/: lazy(() => …) instead', () => {
    const found = files.filter((f) => !SCHEMA_LAYERS.some((l) => f.rel.startsWith(l))).flatMap((f) => moduleLevelSchemas(f.rel, f.text));
    expect(found, 'build it on first use: const s = lazy(() => z.…) (src/lazy.ts), called as s()').toEqual([]);
  });

  it('imports fast-xml-parser nowhere but as a type: src/input/xml-parser.ts loads it on the first parse', () => {
    expect(files.flatMap((f) => staticImportsOf(f.rel, f.text, LOADED_ON_USE))).toEqual([]);
  });
});

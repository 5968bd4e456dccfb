// The environment is read once, by the CLI (decision 0088; the primer's rule 2): a use case, the
// config layer, a provider or a runner gets `env` as a value from the command that called it, so a
// test or a worker can hand it another one, and nothing reads a variable behind the caller's back.
// `process.env` (or `process['env']`, or `env` taken out of `process`) appears in src/ only under
// src/cli/, and in the files listed here with why. A file that stops reading it leaves the list.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Files outside src/cli that read the environment themselves: `file` → why. */
const MAY_READ: Record<string, string> = {
  'src/lab/vcsim.ts':
    "the embedded lab (its own world, not a use case): it builds the simulator into the user's cache (XDG_CACHE_HOME) and starts it with this process's environment plus its password",
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

const isProcess = (n: ts.Node): boolean => ts.isIdentifier(n) && n.text === 'process';

/** Every place `text` reads the process's environment, as `file:line`. */
export function envReads(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (n: ts.Node) => found.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`);
  const visit = (n: ts.Node): void => {
    if (ts.isPropertyAccessExpression(n) && isProcess(n.expression) && n.name.text === 'env') at(n);
    else if (ts.isElementAccessExpression(n) && isProcess(n.expression) && ts.isStringLiteralLike(n.argumentExpression) && n.argumentExpression.text === 'env') at(n);
    else if (ts.isVariableDeclaration(n) && n.initializer && isProcess(n.initializer) && ts.isObjectBindingPattern(n.name)) {
      if (n.name.elements.some((e) => (e.propertyName ?? e.name).getText(sf) === 'env')) at(n);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

const files = sourceFiles(path.join(ROOT, 'src')).map((f) => path.relative(ROOT, f).split(path.sep).join('/'));
const outsideCli = files.filter((f) => !f.startsWith('src/cli/'));
const reads = outsideCli.flatMap((f) => envReads(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));

describe('process.env is read only by the CLI', () => {
  it('finds every way of reading it (a default argument, an index, a destructuring)', () => {
    const text = [
      'export function a(env = process.env) { return env; }',
      "const b = process['env'].HOME;",
      'const { env } = process;',
      'const { env: e2 } = process;',
      '// process.env in a comment is no read',
      'const c = "process.env";',
    ].join('\n');
    expect(envReads('x.ts', text)).toEqual(['x.ts:1', 'x.ts:2', 'x.ts:3', 'x.ts:4']);
  });

  it('looks at every folder of src/ but src/cli', () => {
    expect(outsideCli.length).toBeGreaterThan(100);
    for (const dir of ['src/app/', 'src/config/', 'src/input/', 'src/ssh/', 'src/providers/', 'src/lab/']) expect(outsideCli.some((f) => f.startsWith(dir)), dir).toBe(true);
    // the CLI does read it: the scan is not blind
    expect(files.filter((f) => f.startsWith('src/cli/')).flatMap((f) => envReads(f, fs.readFileSync(path.join(ROOT, f), 'utf8'))).length).toBeGreaterThan(0);
  });

  it('no file outside src/cli reads it, but those listed with why', () => {
    expect(reads.filter((r) => !(r.split(':')[0]! in MAY_READ))).toEqual([]);
  });

  it('lists only files that still read it', () => {
    const reading = new Set(reads.map((r) => r.split(':')[0]));
    expect(Object.keys(MAY_READ).filter((f) => !reading.has(f))).toEqual([]);
  });
});

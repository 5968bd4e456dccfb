// bin/cli-bundle.mjs: the CLI's bundle of src/ is used only while every file it was built from is
// unchanged, and made again, before the command runs, as soon as one is not. Each case works on a
// copy of the script in a scratch repository of its own (its node_modules: this one's, for esbuild).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
let repo: string;

beforeEach(() => {
  repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-bundle-'));
  fs.mkdirSync(path.join(repo, 'bin'));
  fs.copyFileSync(path.join(ROOT, 'bin', 'cli-bundle.mjs'), path.join(repo, 'bin', 'cli-bundle.mjs'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(repo, 'node_modules'));
  fs.writeFileSync(path.join(repo, 'package.json'), JSON.stringify({ type: 'module', version: '9.9.9' }));
  fs.writeFileSync(path.join(repo, 'tsconfig.json'), '{}');
  fs.mkdirSync(path.join(repo, 'src'));
  // the entry imports a module that reads package.json from its own place (as src/version.ts does)
  fs.writeFileSync(path.join(repo, 'src', 'main.ts'), "import { word } from './word.ts';\nimport { version } from './version.ts';\nconst n: number = 1;\nconsole.log(`${word} ${n} ${version}`);\n");
  fs.writeFileSync(path.join(repo, 'src', 'word.ts'), "export const word: string = 'alpha';\n");
  fs.writeFileSync(path.join(repo, 'src', 'version.ts'), "import fs from 'node:fs';\nexport const version = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;\n");
});
const scratch: string[] = [];
afterEach(() => {
  fs.rmSync(repo, { recursive: true, force: true });
  for (const d of scratch.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** What the bin does: the bundle's URL (built first if needed) and what running it prints; null when no bundle. */
function start(env: Record<string, string> = {}): { bundle: string | null; out: string | null } {
  const script = `const { freshBundle } = await import(${JSON.stringify(path.join(repo, 'bin', 'cli-bundle.mjs'))}); const b = await freshBundle('src/main.ts'); console.log(JSON.stringify(b)); if (b) await import(b);`;
  const lines = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, ...env } }).trim().split('\n');
  const bundle = JSON.parse(lines[0]!) as string | null;
  return { bundle, out: bundle ? (lines[1] ?? '') : null };
}

/** Rewrites a file keeping its size and mtime: only its content (and so its ctime) tells. */
function sneakyEdit(file: string, from: string, to: string): void {
  expect(to.length).toBe(from.length);
  const st = fs.statSync(file);
  const ns = fs.statSync(file, { bigint: true }).mtimeNs;
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(from, to));
  // to the nanosecond (a Date would round it): touch -d @SECONDS.NANOSECONDS
  execFileSync('touch', ['-m', '-d', `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, '0')}`, file]);
  expect(fs.statSync(file).mtimeMs).toBe(st.mtimeMs);
  expect(fs.statSync(file).size).toBe(st.size);
}

describe('the CLI bundle', () => {
  it('is built on first start, runs the sources (import.meta.url of each module its own file), and is used again unchanged', () => {
    const first = start();
    expect(first.out).toBe('alpha 1 9.9.9');
    expect(first.bundle).toMatch(/\/\.build\/main-[0-9a-f]{16}\.mjs$/);
    const built = (): unknown => (JSON.parse(fs.readFileSync(path.join(repo, '.build', 'main.json'), 'utf8')) as { builtAt: string }).builtAt;
    const builtAt = built();
    expect(start()).toEqual(first);
    // nothing was built again (a start may record a newer stat of an input it hashed: the file was written just now)
    expect(built()).toBe(builtAt);
  });

  it('a source changed under the same size and mtime is built again before it runs', () => {
    expect(start().out).toBe('alpha 1 9.9.9');
    sneakyEdit(path.join(repo, 'src', 'word.ts'), 'alpha', 'omega');
    expect(start().out).toBe('omega 1 9.9.9');
    // and back: never the bundle of the other content
    sneakyEdit(path.join(repo, 'src', 'word.ts'), 'omega', 'alpha');
    expect(start().out).toBe('alpha 1 9.9.9');
  });

  it('a file rewritten with the same bytes (a checkout) costs a hash, not a build', () => {
    const first = start();
    const builtAt = (JSON.parse(fs.readFileSync(path.join(repo, '.build', 'main.json'), 'utf8')) as { builtAt: string }).builtAt;
    const file = path.join(repo, 'src', 'word.ts');
    const text = fs.readFileSync(file);
    fs.rmSync(file);
    fs.writeFileSync(file, text);
    expect(start()).toEqual(first);
    expect((JSON.parse(fs.readFileSync(path.join(repo, '.build', 'main.json'), 'utf8')) as { builtAt: string }).builtAt).toBe(builtAt);
  });

  it('a source that does not compile, or STORSWEEP_NO_BUNDLE=1: no bundle (the CLI runs the sources through tsx)', () => {
    expect(start({ STORSWEEP_NO_BUNDLE: '1' })).toEqual({ bundle: null, out: null });
    expect(start().out).toBe('alpha 1 9.9.9');
    fs.writeFileSync(path.join(repo, 'src', 'word.ts'), "export const word: string = 'alpha;\n");
    expect(start()).toEqual({ bundle: null, out: null });
  });

  it('a deleted input makes the bundle stale', () => {
    expect(start().out).toBe('alpha 1 9.9.9');
    fs.writeFileSync(path.join(repo, 'src', 'main.ts'), "console.log('no imports');\n");
    fs.rmSync(path.join(repo, 'src', 'word.ts'));
    expect(start().out).toBe('no imports');
  });

  it('a checkout moved elsewhere is built again: import.meta.url names the new place, not a checkout left at the old one', () => {
    expect(start().out).toBe('alpha 1 9.9.9');
    // mv keeps every file's size, inode, mtime and ctime; another checkout (of another version) now stands at the old place
    const old = repo;
    repo = `${old}-moved`;
    fs.renameSync(old, repo);
    scratch.push(old);
    fs.mkdirSync(old);
    fs.writeFileSync(path.join(old, 'package.json'), JSON.stringify({ type: 'module', version: '1.0.0' }));
    const moved = start();
    expect(moved.out).toBe('alpha 1 9.9.9');
    expect(moved.bundle).toContain(`${repo}/.build/`);
  });

  it('bin/storsweep.mjs: a command that ran from the bundle and failed is never run again through tsx, even when its bundle was removed meanwhile (review s23)', () => {
    // a long command (a night's sweep) outlives its bundle: another process's build removes bundles
    // older than an hour. Here the command itself removes it, then fails past main's own catch.
    fs.copyFileSync(path.join(ROOT, 'bin', 'storsweep.mjs'), path.join(repo, 'bin', 'storsweep.mjs'));
    fs.mkdirSync(path.join(repo, 'src', 'cli'));
    fs.writeFileSync(
      path.join(repo, 'src', 'cli', 'main.ts'),
      "import fs from 'node:fs';\nconst runs = process.env.RUNS_FILE as string;\nfs.appendFileSync(runs, 'ran\\n');\nconst m = JSON.parse(fs.readFileSync(new URL('../../.build/main.json', import.meta.url), 'utf8')) as { bundle: string };\nfs.rmSync(new URL(`../../.build/${m.bundle}`, import.meta.url), { force: true });\nthrow new Error('the command failed');\n",
    );
    const runs = path.join(repo, 'runs.txt');
    let failed = false;
    try {
      execFileSync(process.execPath, [path.join(repo, 'bin', 'storsweep.mjs')], { encoding: 'utf8', stdio: 'pipe', env: { ...process.env, RUNS_FILE: runs } });
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
    // it ran from the bundle (not the tsx fallback from the start), and once
    expect(fs.existsSync(path.join(repo, '.build', 'main.json'))).toBe(true);
    expect(fs.readFileSync(runs, 'utf8')).toBe('ran\n');
  });

  it('an edit in the tick in which the build read the file (same size, every field of the stat as recorded) is seen: a stat taken within 2 s of the file\'s last change vouches for nothing (review s23 B2)', () => {
    expect(start().out).toBe('alpha 1 9.9.9');
    const file = path.join(repo, 'src', 'word.ts');
    const manifestFile = path.join(repo, '.build', 'main.json');
    type Input = { path: string; size: number; ino: number; mtimeMs: number; ctimeMs: number };
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { builtAt: string; inputs: Input[] };
    // rewritten with the same size (same inode), its mtime the build's own moment
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('alpha', 'omega'));
    fs.utimesSync(file, new Date(manifest.builtAt), new Date(manifest.builtAt));
    // the record a build makes when it reads the old bytes in the very timestamp tick of this edit
    // (4 ms ticks here): the stat the file has now, the hash of what was bundled
    const st = fs.statSync(file);
    Object.assign(manifest.inputs.find((i) => i.path === 'src/word.ts')!, { size: st.size, ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs });
    fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 1) + '\n');
    expect(start().out).toBe('omega 1 9.9.9');
  });

  it('bin/storsweep.mjs: an error escaping src/ prints a stack naming src/\'s files and lines, not the bundle\'s (review s23 B3)', () => {
    fs.copyFileSync(path.join(ROOT, 'bin', 'storsweep.mjs'), path.join(repo, 'bin', 'storsweep.mjs'));
    fs.mkdirSync(path.join(repo, 'src', 'cli'));
    fs.writeFileSync(path.join(repo, 'src', 'cli', 'main.ts'), "import { fail } from './fail.ts';\n\nif (process.env.KIND === 'node') Buffer.alloc(-1 as number);\nfail('now');\n");
    fs.writeFileSync(path.join(repo, 'src', 'cli', 'fail.ts'), "// lines before\nconst what: string = 'boom';\nexport function fail(why: string): never {\n  throw new Error(`${what} ${why}`);\n}\n");
    const stderr = (env: Record<string, string>): string => {
      try {
        execFileSync(process.execPath, [path.join(repo, 'bin', 'storsweep.mjs')], { encoding: 'utf8', stdio: 'pipe', env: { ...process.env, ...env } });
      } catch (err) {
        return (err as { stderr: string }).stderr;
      }
      throw new Error('it did not fail');
    };
    const thrown = stderr({});
    expect(thrown).toContain('Error: boom now\n');
    expect(thrown).toContain(`    at fail (${repo}/src/cli/fail.ts:4:9)\n`);
    expect(thrown).toContain(`    at ${repo}/src/cli/main.ts:4:1\n`);
    // it ran from the bundle (no frame of it left unmapped)
    expect(fs.readdirSync(path.join(repo, '.build')).some((f) => f.endsWith('.mjs.map'))).toBe(true);
    expect(thrown.split('\n').filter((l) => l.startsWith('    at ') && l.includes('/.build/'))).toEqual([]);
    // Node's own errors keep their code in the head
    const node = stderr({ KIND: 'node' });
    expect(node).toContain('RangeError [ERR_OUT_OF_RANGE]: ');
    expect(node).toContain(`    at ${repo}/src/cli/main.ts:3:`);
  });

  it('a source map the stack hook cannot use (a source that is no file: URL) leaves the frame as it is: reading err.stack never throws, the error keeps its message (review s24 B1)', () => {
    // a module and, next to it, a map that parses but names a webpack:// source (fileURLToPath refuses it)
    const mod = path.join(repo, 'thrower.mjs');
    fs.writeFileSync(mod, "export function make() { return new Error('the original error'); }\n");
    fs.writeFileSync(`${mod}.map`, JSON.stringify({ version: 3, sources: ['webpack://x/y.ts'], names: [], mappings: 'AAAA' }));
    const script = [
      `const { mapStackTraces } = await import(${JSON.stringify(path.join(repo, 'bin', 'cli-bundle.mjs'))});`,
      `const url = ${JSON.stringify(`file://${mod}`)};`,
      'mapStackTraces(url);',
      'const { make } = await import(url);',
      'let stack; try { stack = make().stack; } catch (err) { stack = `THREW ${err.code ?? err.message}`; }',
      'console.log(stack);',
    ].join('\n');
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out).toContain('Error: the original error\n');
    expect(out).toContain(`    at make (file://${mod}:1:`);
    expect(out).not.toContain('THREW');
  });

  it('only the expression import.meta.url is the module\'s own file: the words in a string, a template\'s text or a comment stay as written (review s23 B4)', () => {
    fs.writeFileSync(
      path.join(repo, 'src', 'word.ts'),
      'export const word: string = [new URL(\'.\', import.meta.url).pathname === `${import.meta.dirname}/`, "a import.meta.url b", \'import.meta.filename\', `import.meta.url ${import.meta.filename.endsWith(\'/word.ts\')}`].join(\'|\'); // import.meta.url\n',
    );
    const { bundle, out } = start();
    expect(bundle).not.toBeNull();
    expect(out).toBe('true|a import.meta.url b|import.meta.filename|import.meta.url true 1 9.9.9');
  });
});

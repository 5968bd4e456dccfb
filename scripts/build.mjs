#!/usr/bin/env node
// `npm run build` (also run by `prepare` and `prepack`): src/ compiled once to plain JavaScript in
// dist/, which the installed package runs (package.json "bin"): no TypeScript loader, no bundler at
// run time (docs/decisions/new-license.md and docs/guide/install.md).
//   1. tsc -p tsconfig.build.json: one .js per .ts, relative imports rewritten from .ts to .js
//      (one file per module keeps the CLI's lazy per-command imports lazy);
//   2. every other file of src/ copied beside it (the lab's harness: Go sources, build.sh, the Python
//      and shell stand-ins), modes kept, so dist/lab finds its harness where src/lab does;
//   3. dist/build-info.json: the version and the commit it was built from (`storsweep --version`);
//   4. dist/cli/main.js gets its `#!/usr/bin/env node` line and the executable bit.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
/** Files of src/ that are not shipped: TypeScript (compiled instead), build leftovers. */
const NOT_COPIED = /\.(ts|tsx|mts|cts|log|pyc)$|(^|\/)(__pycache__|vcsim-harness(\.tmp\.\d+)?)$/;

function compile() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit', cwd: ROOT });
}

function copyAssets(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    const rel = path.relative(SRC, from);
    if (NOT_COPIED.test(rel)) continue;
    if (entry.isDirectory()) copyAssets(from);
    else if (entry.isFile()) {
      const to = path.join(DIST, rel);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
      fs.chmodSync(to, fs.statSync(from).mode & 0o777);
    }
  }
}

/** The commit HEAD names, with `-dirty` when tracked files differ from it; "unknown" outside git. */
function commit() {
  const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const head = git('rev-parse', 'HEAD');
    let dirty = false;
    try {
      git('diff', '--quiet', 'HEAD', '--', '.');
    } catch {
      dirty = true;
    }
    return dirty ? `${head}-dirty` : head;
  } catch {
    return 'unknown';
  }
}

function buildInfo() {
  const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const info = { version, commit: commit(), builtAt: new Date().toISOString() };
  fs.writeFileSync(path.join(DIST, 'build-info.json'), JSON.stringify(info, null, 1) + '\n');
  return info;
}

function markExecutable(file) {
  const text = fs.readFileSync(file, 'utf8');
  if (!text.startsWith('#!')) fs.writeFileSync(file, `#!/usr/bin/env node\n${text}`);
  fs.chmodSync(file, 0o755);
}

fs.rmSync(DIST, { recursive: true, force: true });
compile();
copyAssets(SRC);
const info = buildInfo();
markExecutable(path.join(DIST, 'cli', 'main.js'));
process.stderr.write(`dist/: storsweep ${info.version} (commit ${info.commit})\n`);

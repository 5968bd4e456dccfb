// The CLI's start-up without tsx's loader (docs/decisions.md, "The CLI runs from a bundle that is
// never stale"): src/ bundled into one ES module by esbuild (a declared dependency, the version tsx uses), npm
// packages left to Node as before. Through tsx every module of src/ passes the loader's hooks and
// is compiled at each start (about 2 s of CPU on the 2-core lab VM before the command does
// anything); the bundle starts in about a third of that.
//
// Never stale: the bundle is used only when every file it was built from is unchanged. Each input
// is recorded with its size, inode, mtime, ctime and a SHA-256 of the very bytes that were bundled
// (read by the build's own loader below, after their stat); at start, a file whose stat differs is
// hashed again (a checkout that rewrote it unchanged costs a hash, not a build). Any change to a
// file's content moves its ctime, which no user-space call can set back. A new file cannot change
// what an unchanged one imports (every import names its file, extension included). The recipe
// (this file's text, esbuild's version, the checkout's absolute place — the bundle holds each
// module's import.meta.url —, tsconfig.json and package.json among the inputs) is part of the record. Otherwise the bundle is built again, on demand, before the command runs; where
// it cannot be (esbuild missing, a read-only checkout, a source that does not compile), null: the
// caller runs src/ through tsx exactly as before, which also reports a compile error as before.
// STORSWEEP_NO_BUNDLE=1 always takes the tsx path.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, '.build');
/** Files that shape the output without being imported: the TypeScript settings esbuild reads, the package's module type. */
const CONFIG_INPUTS = ['tsconfig.json', 'package.json'];
/** Bundles older than this and not the current one are removed after a build (a running process has read its own whole file long before). */
const KEEP_OLD_MS = 60 * 60_000;

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

function signature(st) {
  return { size: st.size, ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

const sameSignature = (a, b) => a.size === b.size && a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** The installed esbuild's version ('' when none: the build then fails and the sources run through tsx). */
function esbuildVersion() {
  try {
    return String(readJson(createRequire(import.meta.url).resolve('esbuild/package.json'))?.version ?? '');
  } catch {
    return '';
  }
}

/** This file's text: a change to how bundles are made makes every earlier bundle stale. */
function recipeText() {
  return fs.readFileSync(fileURLToPath(import.meta.url));
}

/**
 * Whether every input of `manifest` still holds the bytes that were bundled. An input whose stat
 * changed but whose bytes did not gets its new stat recorded (stat before read: a change after the
 * read moves its ctime again), so the next start does not hash it again.
 */
function fresh(manifest, recipe, file) {
  if (!manifest || manifest.recipe !== recipe || !Array.isArray(manifest.inputs) || typeof manifest.bundle !== 'string') return false;
  if (!fs.existsSync(path.join(OUT, manifest.bundle))) return false;
  let restat = false;
  for (const input of manifest.inputs) {
    const source = path.join(ROOT, input.path);
    let st;
    let bytes;
    try {
      st = fs.statSync(source);
      if (sameSignature(signature(st), input)) continue;
      bytes = fs.readFileSync(source);
    } catch {
      return false;
    }
    if (sha256(bytes) !== input.sha256) return false;
    Object.assign(input, signature(st));
    restat = true;
  }
  if (restat) {
    try {
      writeAtomic(file, JSON.stringify(manifest, null, 1) + '\n');
    } catch {
      /* read-only, or another process did: the next start hashes again */
    }
  }
  return true;
}

function writeAtomic(file, content) {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

/**
 * import.meta.url, .dirname and .filename of a bundled module name its source file, as they did
 * under tsx (src/version.ts finds package.json from its own place), not the bundle.
 */
function withOwnImportMeta(text, file) {
  if (!text.includes('import.meta.')) return text;
  return text
    .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(file).href))
    .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(file)))
    .replaceAll('import.meta.filename', JSON.stringify(file));
}

const LOADERS = { ts: 'ts', mts: 'ts', cts: 'ts', tsx: 'tsx', json: 'json', js: 'js', mjs: 'js', cjs: 'js' };

async function build(entry, recipe) {
  const esbuild = await import('esbuild');
  const inputs = new Map();
  const record = (file) => {
    const st = fs.statSync(file);
    const bytes = fs.readFileSync(file);
    inputs.set(path.relative(ROOT, file), { path: path.relative(ROOT, file), ...signature(st), sha256: sha256(bytes) });
    return bytes;
  };
  for (const f of CONFIG_INPUTS) record(path.join(ROOT, f));
  const recorder = {
    name: 'storsweep-inputs',
    setup(b) {
      // every file of src/ the bundle holds is read here, stat first, so its record is of these very bytes
      b.onLoad({ filter: /.*/ }, (args) => {
        const text = record(args.path).toString('utf8');
        const ext = path.extname(args.path).slice(1);
        return { contents: withOwnImportMeta(text, args.path), loader: LOADERS[ext] ?? 'js' };
      });
    },
  };
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(ROOT, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // npm packages load from node_modules as they do under tsx
    packages: 'external',
    write: false,
    outfile: path.join(OUT, 'out.mjs'),
    plugins: [recorder],
    logLevel: 'silent',
    legalComments: 'none',
  });
  const code = result.outputFiles.find((f) => f.path.endsWith('.mjs'))?.contents;
  if (!code) throw new Error('esbuild produced no bundle');
  const name = `${path.basename(entry, path.extname(entry))}-${sha256(code).slice(0, 16)}.mjs`;
  fs.mkdirSync(OUT, { recursive: true });
  if (!fs.existsSync(path.join(OUT, name))) writeAtomic(path.join(OUT, name), code);
  const manifest = { recipe, esbuild: esbuild.version, entry, bundle: name, builtAt: new Date().toISOString(), inputs: [...inputs.values()] };
  writeAtomic(manifestFile(entry), JSON.stringify(manifest, null, 1) + '\n');
  removeOld(name);
  return path.join(OUT, name);
}

function removeOld(keep) {
  try {
    for (const f of fs.readdirSync(OUT)) {
      if (f === keep || !/\.mjs$|\.tmp$/.test(f)) continue;
      const p = path.join(OUT, f);
      if (Date.now() - fs.statSync(p).mtimeMs > KEEP_OLD_MS) fs.rmSync(p, { force: true });
    }
  } catch {
    /* another process tidied first */
  }
}

const manifestFile = (entry) => path.join(OUT, `${path.basename(entry, path.extname(entry))}.json`);

/**
 * The bundle of `entry` (relative to the repository root) as a file URL, built first when it is
 * missing or stale; null when none can be had (the caller runs the sources through tsx).
 */
export async function freshBundle(entry) {
  if (process.env.STORSWEEP_NO_BUNDLE === '1') return null;
  try {
    // the checkout's place too: import.meta.url and friends are written into the bundle as absolute
    // paths, and a moved checkout (mv keeps every file's stat) must not read the old place's files
    const recipe = sha256(Buffer.concat([recipeText(), Buffer.from(`\0${entry}\0${ROOT}\0${esbuildVersion()}`)]));
    const manifest = readJson(manifestFile(entry));
    if (fresh(manifest, recipe, manifestFile(entry))) return pathToFileURL(path.join(OUT, manifest.bundle)).href;
    // a checkout where nothing can be written (an installed package): tsx, without trying a build every time
    fs.accessSync(ROOT, fs.constants.W_OK);
    if (fs.existsSync(OUT)) fs.accessSync(OUT, fs.constants.W_OK);
    return pathToFileURL(await build(entry, recipe)).href;
  } catch {
    return null;
  }
}

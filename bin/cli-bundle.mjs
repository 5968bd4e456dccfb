// The CLI's start-up without tsx's loader (docs/decisions.md, "The CLI runs from a bundle that is
// never stale"): src/ bundled into one ES module by esbuild (a declared dependency, the version tsx uses), npm
// packages left to Node as before. Through tsx every module of src/ passes the loader's hooks and
// is compiled at each start (about 2 s of CPU on the 2-core lab VM before the command does
// anything); the bundle starts in about a third of that.
//
// Never stale: the bundle is used only when every file it was built from is unchanged. Each input
// is recorded with its size, inode, mtime, ctime, when that stat was taken, and a SHA-256 of the
// very bytes that were bundled (read by the build's own loader below, after their stat); at start, a
// file whose stat differs is hashed again (a checkout that rewrote it unchanged costs a hash, not a
// build), and so is one whose recorded stat was taken within RACY_MS of its last change (git's
// racily clean entries: a same-size rewrite in the very tick it was read keeps every field of the
// stat). Any change to a file's content moves its ctime, which no user-space call can set back. A
// new file cannot change what an unchanged one imports (every import names its file, extension
// included). The recipe (this file's text, esbuild's version, the checkout's absolute place — the
// bundle holds each module's import.meta.url —, tsconfig.json and package.json among the inputs)
// is part of the record. Otherwise the bundle is built again, on demand, before the command runs;
// where it cannot be (esbuild missing, a read-only checkout, a source that does not compile), null:
// the caller runs src/ through tsx exactly as before, which also reports a compile error as before.
// STORSWEEP_NO_BUNDLE=1 always takes the tsx path. Next to the bundle, its source map: a stack
// names src/'s files (mapStackTraces, below).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { SourceMap, createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, '.build');
/** Files that shape the output without being imported: the TypeScript settings esbuild reads, the package's module type. */
const CONFIG_INPUTS = ['tsconfig.json', 'package.json'];
/** Bundles older than this and not the current one are removed after a build (a running process has read its own whole file long before). */
const KEEP_OLD_MS = 60 * 60_000;

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/**
 * How much younger than the moment it was taken a recorded stat may be and still not be trusted
 * (git's "racily clean" entries): a file's times come in ticks (4 ms here; 1 s on ext3, 2 s for
 * FAT's mtime) and from a clock that lags the process's by up to one; a file rewritten with the same
 * size, in the tick in which the build or a start stat'ed and read it, keeps every field of the
 * stat — the recorded one would then vouch for bytes that are not the ones bundled.
 */
const RACY_MS = 2000;

/** The stat recorded for an input, and when it was taken (read before the stat: never later than it). */
function signature(st, seenMs) {
  return { size: st.size, ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, seenMs };
}

const sameSignature = (a, b) => a.size === b.size && a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

/** A recorded stat tells only when the file's last change (content: ctime; or mtime, if set later) came well before it was taken. */
const trusted = (input) => Number.isFinite(input.seenMs) && Math.max(input.mtimeMs, input.ctimeMs) < input.seenMs - RACY_MS;

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
 * Whether every input of `manifest` still holds the bytes that were bundled. An input is hashed
 * again when its stat differs from the recorded one, or when the recorded one cannot vouch for it
 * (taken within RACY_MS of the file's last change). One whose bytes did not change gets its new stat
 * recorded when that one can vouch (stat before read: a change after the read moves its ctime to a
 * later tick), so the next start does not hash it again.
 */
function fresh(manifest, recipe, file) {
  if (!manifest || manifest.recipe !== recipe || !Array.isArray(manifest.inputs) || typeof manifest.bundle !== 'string') return false;
  if (!fs.existsSync(path.join(OUT, manifest.bundle)) || !fs.existsSync(path.join(OUT, `${manifest.bundle}.map`))) return false;
  const seenMs = Date.now();
  let restat = false;
  for (const input of manifest.inputs) {
    const source = path.join(ROOT, input.path);
    let st;
    let bytes;
    try {
      st = fs.statSync(source);
      if (sameSignature(st, input) && trusted(input)) continue;
      bytes = fs.readFileSync(source);
    } catch {
      return false;
    }
    if (sha256(bytes) !== input.sha256) return false;
    const now = signature(st, seenMs);
    if (!trusted(now)) continue; // hashed again at the next start, until its last change is old enough
    Object.assign(input, now);
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
 * under tsx (src/version.ts finds package.json from its own place), not the bundle. esbuild's
 * `define` (below) turns each real `import.meta.url` expression — never the text in a string or a
 * comment — into an identifier that this per-module declaration binds (esbuild renames each
 * module's own; one a module does not use is dropped). Put on the file's first line, so every line
 * keeps its number for the source map. A bare `import.meta` (passed on whole) would still be the
 * bundle's: src/ has none.
 */
const META = { url: '__storsweepImportMetaUrl', dirname: '__storsweepImportMetaDirname', filename: '__storsweepImportMetaFilename' };
const META_DEFINE = Object.fromEntries(Object.entries(META).map(([k, id]) => [`import.meta.${k}`, id]));

function withOwnImportMeta(text, file) {
  if (!text.includes('import.meta')) return text;
  const values = { url: pathToFileURL(file).href, dirname: path.dirname(file), filename: file };
  const declarations = Object.entries(META).map(([k, id]) => `const ${id} = ${JSON.stringify(values[k])}; `).join('');
  // after a #! line, which must stay first (one with nothing after it uses nothing)
  const at = text.startsWith('#!') ? text.indexOf('\n') + 1 : 0;
  if (text.startsWith('#!') && at === 0) return text;
  return text.slice(0, at) + declarations + text.slice(at);
}

const LOADERS = { ts: 'ts', mts: 'ts', cts: 'ts', tsx: 'tsx', json: 'json', js: 'js', mjs: 'js', cjs: 'js' };

async function build(entry, recipe) {
  const esbuild = await import('esbuild');
  const inputs = new Map();
  // before the first stat: a file changed after it was read is seen by fresh() whatever its stat
  const seenMs = Date.now();
  const record = (file) => {
    const st = fs.statSync(file);
    const bytes = fs.readFileSync(file);
    inputs.set(path.relative(ROOT, file), { path: path.relative(ROOT, file), ...signature(st, seenMs), sha256: sha256(bytes) });
    return bytes;
  };
  for (const f of CONFIG_INPUTS) record(path.join(ROOT, f));
  const recorder = {
    name: 'storsweep-inputs',
    setup(b) {
      // every file of src/ the bundle holds is read here, stat first, so its record is of these very bytes
      b.onLoad({ filter: /.*/ }, (args) => {
        const text = record(args.path).toString('utf8');
        const loader = LOADERS[path.extname(args.path).slice(1)] ?? 'js';
        return { contents: loader === 'json' ? text : withOwnImportMeta(text, args.path), loader };
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
    define: META_DEFINE,
    plugins: [recorder],
    logLevel: 'silent',
    legalComments: 'none',
    // a stack names src/'s files and lines, not the bundle's (bin/storsweep.mjs reads the map only
    // when a stack is made). The map names the sources (../src/…), without their text.
    sourcemap: 'external',
    sourcesContent: false,
  });
  const code = result.outputFiles.find((f) => f.path.endsWith('.mjs'))?.contents;
  const map = result.outputFiles.find((f) => f.path.endsWith('.mjs.map'))?.contents;
  if (!code || !map) throw new Error('esbuild produced no bundle');
  const name = `${path.basename(entry, path.extname(entry))}-${sha256(Buffer.concat([code, map])).slice(0, 16)}.mjs`;
  fs.mkdirSync(OUT, { recursive: true });
  // the map first: a bundle found is never without its map
  if (!fs.existsSync(path.join(OUT, `${name}.map`))) writeAtomic(path.join(OUT, `${name}.map`), map);
  if (!fs.existsSync(path.join(OUT, name))) writeAtomic(path.join(OUT, name), Buffer.concat([code, Buffer.from(`//# sourceMappingURL=${name}.map\n`)]));
  const manifest = { recipe, esbuild: esbuild.version, entry, bundle: name, builtAt: new Date(seenMs).toISOString(), inputs: [...inputs.values()] };
  writeAtomic(manifestFile(entry), JSON.stringify(manifest, null, 1) + '\n');
  removeOld(name);
  return path.join(OUT, name);
}

function removeOld(keep) {
  try {
    for (const f of fs.readdirSync(OUT)) {
      if (f === keep || f === `${keep}.map` || !/\.mjs$|\.map$|\.tmp$/.test(f)) continue;
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

/**
 * Stacks name src/'s files and lines rather than the bundle's: a frame in the bundle is looked up
 * in its source map. The map is read only when a stack is first made with such a frame (an uncaught
 * error, an `err.stack` printed): Node's own --enable-source-maps / process.setSourceMapsEnabled
 * reads the map, and every package's, at each start. Node's formatter still writes the stack (Node
 * 20 sets a default Error.prepareStackTrace: the error's head, then `\n    at ` and each frame's
 * text) — only a mapped frame's text names the other place. Nothing changes when Node maps sources
 * itself (--enable-source-maps).
 */
export function mapStackTraces(bundleUrl) {
  if (process.sourceMapsEnabled) return;
  const mapUrl = `${bundleUrl}.map`;
  let map; // undefined: not read yet; null: unreadable (the frames stay as they are)
  const lookup = () => {
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(fs.readFileSync(fileURLToPath(mapUrl), 'utf8')));
      } catch {
        map = null;
      }
    }
    return map;
  };
  const mapped = (frame) => {
    if (frame.getFileName() !== bundleUrl) return frame;
    // Never throws: a throw here would make every `err.stack` of a bundle frame throw instead of
    // the error it describes (a map that parses but names a source no file: URL gives, a mapping
    // findEntry refuses): such a frame stays as it is (review s24 B1)
    try {
      const line = frame.getLineNumber();
      const column = frame.getColumnNumber();
      const entry = line && column ? lookup()?.findEntry(line - 1, column - 1) : undefined;
      if (!entry?.originalSource) return frame;
      const place = `${fileURLToPath(new URL(entry.originalSource, mapUrl))}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
      const text = String(frame).replace(`${bundleUrl}:${line}:${column}`, place);
      // the frame as it was (every CallSite method), but its text
      return new Proxy(frame, { get: (target, key) => (key === 'toString' ? () => text : typeof target[key] === 'function' ? target[key].bind(target) : target[key]) });
    } catch {
      return frame;
    }
  };
  const format = Error.prepareStackTrace;
  Error.prepareStackTrace = (error, frames) => {
    const moved = frames.map(mapped);
    if (typeof format === 'function') return format(error, moved);
    return moved.length === 0 ? String(error) : `${error}\n    at ${moved.join('\n    at ')}`;
  };
}

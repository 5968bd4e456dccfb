// `run --out DIR`: the directory that receives run directories. Created one level at a time, so a
// path the file system refuses (under /proc, where Node's recursive mkdir never returns) fails
// at once, and every failure is a sentence naming the path, not an errno.
import fs from 'node:fs';
import path from 'node:path';
import { OutputRefused } from '../errors.ts';

function why(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EROFS') return 'the file system is read-only';
  if (code === 'ENOSPC') return 'no space left on the device';
  return `the file system refuses it (${code ?? (err as Error).message})`;
}

/** Makes sure `dir` is a directory we can create things in; throws OutputRefused (exit 2) if not. */
export function ensureOutputDirectory(dir: string, flag: string): void {
  const abs = path.resolve(dir);
  const missing: string[] = [];
  for (let d = abs; ; d = path.dirname(d)) {
    let st: fs.Stats;
    try {
      st = fs.statSync(d);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && path.dirname(d) !== d) {
        missing.unshift(d);
        continue;
      }
      throw new OutputRefused(`${flag} ${dir}: cannot use ${d}: ${why(err)}`, { path: dir, reason: 'bad-path' }, { cause: err });
    }
    if (!st.isDirectory()) throw new OutputRefused(`${flag} ${dir}: ${d} is not a directory`, { path: dir, reason: 'bad-path' });
    break;
  }
  for (const d of missing) {
    try {
      fs.mkdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && fs.statSync(d).isDirectory()) continue;
      throw new OutputRefused(`${flag} ${dir}: cannot create the directory ${d}: ${why(err)}`, { path: dir, reason: 'bad-path' }, { cause: err });
    }
  }
  try {
    fs.accessSync(abs, fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    throw new OutputRefused(`${flag} ${dir}: cannot create run directories in it: ${why(err)}`, { path: dir, reason: 'bad-path' }, { cause: err });
  }
}

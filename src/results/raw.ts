// Raw tool output is kept next to the results: written to a temporary name, fsynced, renamed, and
// the directory fsynced, so a crash leaves either the whole file or none.
import fs from 'node:fs';
import path from 'node:path';

export function writeFileAtomic(file: string, content: string | Buffer): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  const fd = fs.openSync(tmp, 'w', 0o644);
  try {
    if (typeof content === 'string') fs.writeSync(fd, content);
    else fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  const dfd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dfd);
  } finally {
    fs.closeSync(dfd);
  }
}

/** Stores raw output under `<runDir>/raw/…` and returns the path relative to the run directory. */
export function storeRaw(runDir: string, rel: string, content: string): string {
  writeFileAtomic(path.join(runDir, rel), content);
  return rel;
}

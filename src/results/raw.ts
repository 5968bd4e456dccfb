// Raw tool output is kept next to the results: written to a temporary file beside the target,
// fsynced, renamed over it, and the directory fsynced, so a crash leaves either the whole file or
// none. The temporary name is random and created with O_CREAT|O_EXCL ('wx'): a name planted in
// advance (a symlink to someone's file, a FIFO, anything) makes the open fail instead of being
// written through, and the rename replaces a link at the target rather than following it. A write
// that fails (a full disk) removes its temporary file.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isDiskLost, storeLostOr } from './port.ts';

export function writeFileAtomic(file: string, content: string | Buffer): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(8).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, 'wx', 0o644);
  let renamed = false;
  try {
    try {
      if (typeof content === 'string') fs.writeSync(fd, content);
      else fs.writeSync(fd, content);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    renamed = true;
  } finally {
    if (!renamed) {
      try {
        fs.unlinkSync(tmp);
      } catch {
        /* already gone */
      }
    }
  }
  const dfd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dfd);
  } finally {
    fs.closeSync(dfd);
  }
}

/**
 * Stores raw output under `<runDir>/raw/…` and returns the path relative to the run directory. A
 * full or read-only disk, an I/O error: StoreLost (the run directory can take no more; the sweep stops).
 */
export function storeRaw(runDir: string, rel: string, content: string): string {
  try {
    writeFileAtomic(path.join(runDir, rel), content);
  } catch (err) {
    throw storeLostOr(err, runDir, isDiskLost);
  }
  return rel;
}

// A temp directory a test file works in, made and removed by vitest hooks: a fresh one per test
// (`per: 'test'`, beforeEach/afterEach) or one for the whole file (`per: 'file'`, beforeAll/afterAll).
//
//   const tmp = useTempDir('ss-ledger-');                    // at the top of the file
//   ResultStore.create(path.join(tmp(), 'run'), …);          // in a test
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

/** The current directory's getter; it throws when called outside the hooks' span. */
export function useTempDir(prefix: string, o: { per?: 'test' | 'file' } = {}): () => string {
  let dir: string | undefined;
  const [before, after] = o.per === 'file' ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return () => {
    if (!dir) throw new Error(`useTempDir(${prefix}): used outside its ${o.per ?? 'test'}`);
    return dir;
  };
}

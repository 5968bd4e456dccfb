// storsweep's version, from its one source: package.json (`--version`, the run's fingerprint), and
// the commit it was built from: dist/build-info.json, written by scripts/build.mjs; from the source
// checkout (bin/storsweep.mjs), the checkout's HEAD; "unknown" outside git.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export const VERSION: string = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The commit this code was built from (read on use, never at import). */
export function buildCommit(): string {
  try {
    const info = JSON.parse(fs.readFileSync(new URL('./build-info.json', import.meta.url), 'utf8')) as { commit?: unknown };
    if (typeof info.commit === 'string' && info.commit) return info.commit;
  } catch {
    // no build-info.json: running from src/
  }
  try {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const [top, head] = execFileSync('git', ['rev-parse', '--show-toplevel', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim().split('\n');
    // the checkout's own commit, not that of a repository it happens to sit in
    return top && head && fs.realpathSync(top) === fs.realpathSync(root) ? head : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** `storsweep --version`: "storsweep 0.1.0 (commit 0123abc…)". */
export function versionText(): string {
  return `storsweep ${VERSION} (commit ${buildCommit()})`;
}

// `storsweep run playbooks/quickstart.yaml` from any directory: a playbook named by a relative path
// under playbooks/ that this directory does not have is the one shipped with storsweep (the
// package's own playbooks/), said on stderr. A file of that name here always wins.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { visible } from '../text/visible.ts';

/** The package's root: two levels above this module, in dist/cli/ and in src/cli/ alike. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The commands whose first argument is a playbook. */
export const PLAYBOOK_COMMANDS = new Set(['validate', 'plan', 'run', 'submit']);

/** The path to read for `given`, and the note to print when it is the shipped playbook. */
export function shippedPlaybook(given: string, cwd = process.cwd()): { file: string; note?: string } {
  const rel = path.normalize(given);
  if (path.isAbsolute(given) || !rel.startsWith(`playbooks${path.sep}`) || fs.existsSync(path.resolve(cwd, given))) return { file: given };
  const shipped = path.join(PACKAGE_ROOT, rel);
  if (!shipped.startsWith(path.join(PACKAGE_ROOT, 'playbooks') + path.sep) || !fs.existsSync(shipped)) return { file: given };
  return { file: shipped, note: `${visible(given)}: not in this directory; using the one shipped with storsweep: ${visible(shipped)}\n` };
}

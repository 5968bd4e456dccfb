// A dedicated local account for password / keyboard-interactive SSH tests (PAM checks real system
// passwords). Created only when running as root; callers skip with the returned reason otherwise.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export function ensureSystemUser(name: string, password: string): { ok: true } | { ok: false; reason: string } {
  if (os.userInfo().uid !== 0) return { ok: false, reason: `not root: cannot create system user ${name} for password/keyboard-interactive SSH tests` };
  try {
    execFileSync('id', [name], { stdio: 'ignore' });
  } catch {
    try {
      execFileSync('useradd', ['-m', '-s', '/bin/sh', name], { stdio: 'pipe' });
    } catch (err) {
      // another test file may have created it in the meantime
      try {
        execFileSync('id', [name], { stdio: 'ignore' });
      } catch {
        return { ok: false, reason: `useradd ${name} failed: ${(err as Error).message}` };
      }
    }
  }
  execFileSync('chpasswd', { input: `${name}:${password}\n` });
  return { ok: true };
}

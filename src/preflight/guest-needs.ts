// What a guest must allow besides its tool (issue 29): passwordless `sudo -n` where the target says
// the guest login reaches root through it (guest.sudo), and room on the guest's filesystem for the
// test file a file test writes. Read-only: `sudo -n true`, `df -Pk`, `stat`.
import path from 'node:path';
import type { PreflightCheck } from '../contract/preflight.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { shQuote } from '../ssh/quote.ts';
import { sizeText } from '../text/size.ts';

type Runner = Pick<CommandRunner, 'run'>;

/** `sudo -n true` in the guest: a password prompt (or no sudo) is a ✗, as the run would fail at its first device command. */
export async function sudoCheck(runner: Runner): Promise<PreflightCheck> {
  const r = await runner.run('sudo -n true').catch((err: unknown) => ({ exitCode: -1, stdout: '', stderr: String(err) }));
  if (r.exitCode === 0) return { check: 'guest sudo', status: 'ok', detail: 'sudo -n true works: the disk commands and the tool may run as root without a password' };
  const said = r.stderr.trim().split('\n').pop() ?? '';
  const why = /password is required/i.test(said) ? 'sudo asks for a password ("sudo: a password is required")' : `sudo -n true failed (exit ${r.exitCode}${said ? `: ${said.slice(0, 200)}` : ''})`;
  return { check: 'guest sudo', status: 'fail', detail: `guest.sudo is set but ${why}`, remedy: 'give the guest login NOPASSWD sudo (a line in /etc/sudoers.d), or log in as root: storsweep never types a password' };
}

export { sizeText };

/** POSIX `df -Pk` output: the filesystem's free KiB and where it is mounted (the mount point may hold spaces). */
export function parseDfP(text: string): { availKiB: number; mountedOn: string } | null {
  const line = text.split('\n').slice(1).find((l) => l.trim() !== '');
  const m = line ? /^.*?\s+\d+\s+\d+\s+(\d+)\s+\d+%\s+(\/.*)$/.exec(line.trim()) : null;
  return m ? { availKiB: Number(m[1]), mountedOn: m[2]! } : null;
}

/**
 * Room for the test file: the free space of the filesystem that holds (or will hold) it, plus what
 * a test file already there takes (it is overwritten), against the largest file the plan's
 * profiles write there.
 */
export async function roomCheck(runner: Runner, testFile: string, needBytes: number): Promise<PreflightCheck> {
  const check = 'guest free space';
  // the nearest directory that exists: the work directory may not be made yet
  const script = `f=${shQuote(testFile, 'testFile')}; d=$(dirname -- "$f"); while [ ! -d "$d" ]; do d=$(dirname -- "$d"); done; df -Pk -- "$d" || exit 1; echo ---; stat -c '%F %b %B' -- "$f" 2>/dev/null; true`;
  const r = await runner.run(`sh -c ${shQuote(script)}`).catch((err: unknown) => ({ exitCode: -1, stdout: '', stderr: String(err) }));
  const [dfText = '', statText = ''] = r.stdout.split('\n---\n');
  const df = r.exitCode === 0 ? parseDfP(dfText) : null;
  if (!df) return { check, status: 'warn', detail: `could not read the free space for ${testFile} (df -Pk: ${(r.stderr || r.stdout).trim().split('\n').pop()?.slice(0, 200) ?? ''})`, remedy: `make sure ${path.posix.dirname(testFile)} has room for ${sizeText(needBytes)}` };
  const st = /^regular(?: empty)? file (\d+) (\d+)$/.exec(statText.trim());
  const existing = st ? Number(st[1]) * Number(st[2]) : 0;
  const have = df.availKiB * 1024 + existing;
  const kept = existing ? `, plus ${sizeText(existing)} of the test file already there` : '';
  const detail = `${testFile} needs ${sizeText(needBytes)} (settings.fileSize); the filesystem on ${df.mountedOn} has ${sizeText(df.availKiB * 1024)} free${kept} (df -Pk)`;
  if (have >= needBytes) return { check, status: 'ok', detail };
  return { check, status: 'fail', detail, remedy: `free ${sizeText(needBytes - have)} on ${df.mountedOn}, set a smaller settings.fileSize, or point the target's workdir (or testFile) at a larger filesystem` };
}

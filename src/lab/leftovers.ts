// What a lab left on this machine, found from the machine itself rather than from .lab/state.json:
// a `lab up` cut short (killed, or failed part-way) never wrote its state, and a lab whose state is
// gone or stale still has processes and loop devices. `lab down` stops and detaches them.
//
// A lab process is one of the programs the lab starts (sshd, the vcsim harness) whose command line
// names a path inside the lab's directory (sshd -f <lab>/sshd/sshd_config, the harness's -datadir
// <lab>/vcsim-data), and every process below it (sshd's sessions: stand-ins, fio). A lab loop device
// is one whose backing file lies inside the lab's directory (/sys/block/loopN/loop/backing_file).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The programs the lab starts, by the basename of argv[0] (src/lab/sshd.ts, src/lab/vcsim.ts). */
const LAB_PROGRAMS = new Set(['sshd', 'vcsim-harness']);

interface Proc {
  pid: number;
  ppid: number;
  argv: string[];
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      // sshd rewrites its title into one string ("sshd: /usr/sbin/sshd -D -f … [listener] …"): words
      const argv = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').filter(Boolean).flatMap((a) => a.split(' ')).filter(Boolean);
      out.push({ pid: Number(e), ppid: Number(fields[1]), argv });
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

const inside = (dir: string, p: string) => p === dir || p.startsWith(dir + path.sep);

/** The lab's processes under `labDir` (the .lab directory), roots first, then what runs below them. */
export function findLabProcesses(labDir: string): Array<{ pid: number; command: string }> {
  const dir = path.resolve(labDir);
  const all = processes();
  const roots = all.filter((p) => p.argv.length > 0 && LAB_PROGRAMS.has(path.basename(p.argv[0]!.replace(/:$/, ''))) && p.argv.slice(1).some((a) => path.isAbsolute(a) && inside(dir, path.normalize(a))));
  const found = new Map(roots.map((p) => [p.pid, p]));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.set(p.pid, p);
        grew = true;
      }
    }
  }
  return [...found.values()].map((p) => ({ pid: p.pid, command: p.argv.join(' ').slice(0, 200) }));
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Stops the lab's processes: TERM to all (the harness then ends its guests' programs and removes
 * their account), KILL to what still runs after `graceMs`. Returns what it found.
 */
export async function stopLabProcesses(labDir: string, graceMs = 3000): Promise<Array<{ pid: number; command: string }>> {
  const found = findLabProcesses(labDir);
  for (const p of found) {
    try {
      process.kill(p.pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
  const deadline = Date.now() + graceMs;
  while (found.some((p) => alive(p.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  for (const p of [...found, ...findLabProcesses(labDir)]) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  return found;
}

/** Loop devices whose backing file is inside `labDir`: their names (/dev/loopN) and files. */
export function findLabLoops(labDir: string): Array<{ device: string; file: string }> {
  const dir = path.resolve(labDir);
  let names: string[];
  try {
    names = fs.readdirSync('/sys/block').filter((n) => /^loop\d+$/.test(n));
  } catch {
    return [];
  }
  const out: Array<{ device: string; file: string }> = [];
  for (const n of names) {
    let file: string;
    try {
      file = fs.readFileSync(`/sys/block/${n}/loop/backing_file`, 'utf8').trim().replace(/ \(deleted\)$/, '');
    } catch {
      continue; // not attached
    }
    if (inside(dir, file)) out.push({ device: `/dev/${n}`, file });
  }
  return out;
}

/** Detaches the lab's loop devices (their partitions first); returns those it detached. */
export function releaseLabLoops(labDir: string): Array<{ device: string; file: string }> {
  const loops = findLabLoops(labDir);
  for (const l of loops) {
    spawnSync('partx', ['-d', l.device]);
    spawnSync('losetup', ['-d', l.device]);
  }
  const left = new Set(findLabLoops(labDir).map((l) => l.device));
  return loops.filter((l) => !left.has(l.device));
}

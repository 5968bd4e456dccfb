// Every program the lab starts, or storsweep runs in the lab's Linux guest (this machine), comes from
// a Debian package that scripts/system-packages.sh installs — the one list `npm run demo`, `npm test`
// and CI install from. A new machine has only what that list brings (plus Debian's essential set):
// `sudo`, asked for by the tests alone, once stopped the demo's lab on a new machine.
//
// Two checks: the programs found in the lab's and the guest code's sources are all in PROGRAMS
// (so a new `exec.Command("x")` cannot slip by), and each of PROGRAMS is owned (dpkg -S) by a
// package of the list, by one of their dependencies, or by an essential package.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** program → what needs it (the package is asked of dpkg, never written here) */
const PROGRAMS: Record<string, string> = {
  bash: 'the harness build script, the stand-ins\' shells',
  sh: 'the harness\'s guest programs (/bin/sh -c), the guest command lines',
  cat: 'the harness\'s guest file transfers',
  go: 'building the vcsim harness (build.sh)',
  python3: 'the ESXi and Windows stand-ins (#!/usr/bin/python3), the harness\'s guest operations',
  sshd: 'the lab\'s SSH guest and test host',
  'ssh-keygen': 'the lab\'s keys',
  losetup: 'a loop device per attached disk (vcsim harness, ESXi stand-in)',
  partx: 'the partitions of those loop devices',
  useradd: 'the VMware Tools guest\'s account',
  userdel: 'removing that account when the harness stops',
  visudo: 'checking the guest account\'s sudoers file',
  sudo: 'guest.sudo: the Tools guest\'s sudo -n',
  initdb: 'lab up --postgres, the store tests',
  pg_ctl: 'lab up --postgres, the store tests',
  fio: 'the workload',
  blkid: 'guest-disk checks',
  lsblk: 'guest-disk checks',
  wipefs: 'guest filesystem teardown',
  sfdisk: 'guest.filesystem: the partition table',
  'mkfs.ext4': 'guest.filesystem ext4',
  'mkfs.xfs': 'guest.filesystem xfs',
  mount: 'guest.filesystem',
  umount: 'guest.filesystem teardown',
  mkdir: 'guest.filesystem mount point',
  readlink: 'guest-disk links',
  test: 'guest-disk links',
  ls: 'guest-disk holders',
  kill: 'stopping leftover fio',
  ps: 'finding leftover fio',
  runuser: 'initdb and pg_ctl as the postgres user when root',
  chown: 'the PostgreSQL cluster directory',
  findmnt: 'guest.filesystem teardown: what is mounted',
  rmdir: 'guest.filesystem teardown: the mount point',
  uname: 'the guest\'s kernel, recorded',
  unshare: 'a vm.count clone\'s guest programs: a mount namespace of their own (harness clones.go)',
  setpriv: 'a clone\'s guest programs: dropping to its account after the bind mount',
  // not the lab's: the shells the completion scripts are run in (test/integration/completion-shells.test.ts)
  zsh: 'storsweep completion zsh, run in zsh',
  fish: 'storsweep completion fish, run in fish',
};

/** The lab's own stand-ins (ESXi shell tools, powershell.exe): files of the harness, no package. */
const STANDINS = new Set(['src/lab/harness/esxi', 'src/lab/harness/windows'].flatMap((d) => fs.readdirSync(path.join(ROOT, d))));

function filesUnder(dir: string, keep: (f: string) => boolean): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== '__pycache__' && e.name !== 'node_modules') out.push(...filesUnder(p, keep));
    } else if (keep(p)) out.push(p);
  }
  return out;
}

/** Program names the sources start literally: Go, Python, shell and TypeScript spellings. */
function programsInSources(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [
    /exec\.Command(?:Context)?\((?:ctx, )?"([^"]+)"/g,
    /exec\.LookPath\("([^"]+)"\)/g,
    /subprocess\.\w+\(\s*\[\s*['"]([^'"]+)['"]/g,
    /^#!\s*(\S+)/gm,
    /command -v ([\w.-]+)/g,
    /\b(?:spawn|spawnSync|execFile|execFileSync|run)\(\s*'([^']+)'/g,
    /\brunPg\(\s*bin,\s*'([^']+)'/g,
    /_BIN = '([^']+)'/g,
    // the guest's command lines: asRoot([...]), shJoin([...]), mkfs argv tables
    /\b(?:asRoot|shJoin)\(\s*\[\s*'([^']+)'/g,
    /\bargv: \[\s*'([^']+)'/g,
    /fioPath \?\? '([^']+)'/g,
  ];
  const lab = filesUnder(path.join(ROOT, 'src/lab'), (f) => !/\.(md|json)$/.test(f) && !f.endsWith('vcsim-harness'));
  const guest = ['src/providers/guest-disk.ts', 'src/providers/guest.ts', 'src/workloads'].flatMap((p) => {
    const abs = path.join(ROOT, p);
    return fs.statSync(abs).isDirectory() ? filesUnder(abs, (f) => f.endsWith('.ts')) : [abs];
  });
  for (const file of [...lab, ...guest]) {
    const text = fs.readFileSync(file, 'utf8');
    for (const re of patterns) {
      for (const m of text.matchAll(re)) {
        const name = path.basename(m[1]!.split(' ')[0]!);
        if (STANDINS.has(name) || name === 'env' || name.includes('$') || name.includes('{')) continue;
        if (!found.has(name)) found.set(name, path.relative(ROOT, file));
      }
    }
  }
  return found;
}

function dpkg(args: string[]): string | null {
  const r = spawnSync('dpkg-query', args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : null;
}

/** The Debian package owning each program in a system directory (merged /usr or not): one dpkg -S for all. */
function owners(programs: readonly string[]): Map<string, string> {
  const pg = fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin`) : [];
  const candidates = programs.flatMap((program) => (program === 'initdb' || program === 'pg_ctl' ? pg : ['/usr/bin', '/bin', '/usr/sbin', '/sbin']).map((d) => ({ program, path: `${d}/${program}` })));
  // dpkg -S with several paths prints "pkg[, pkg]: /path" for each it knows (exit 1 if any is unknown)
  const r = spawnSync('dpkg', ['-S', ...candidates.filter((c) => fs.existsSync(c.path)).map((c) => c.path)], { encoding: 'utf8' });
  const byPath = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    if (line.startsWith('diversion')) continue;
    const at = line.lastIndexOf(': ');
    if (at > 0) byPath.set(line.slice(at + 2), line.slice(0, at).split(', ')[0]!.split(':')[0]!);
  }
  const out = new Map<string, string>();
  for (const c of candidates) if (!out.has(c.program) && byPath.has(c.path)) out.set(c.program, byPath.get(c.path)!);
  return out;
}

interface Installed {
  deps: string;
  essential: boolean;
}

/** Every installed package with its dependencies, in one dpkg-query call. */
function installed(): Map<string, Installed> {
  const out = dpkg(['-W', '-f', '${Package}\\t${Status}\\t${Essential}\\t${Depends}, ${Pre-Depends}\\n']) ?? '';
  const m = new Map<string, Installed>();
  for (const line of out.split('\n')) {
    const [pkg, status, essential, deps] = line.split('\t');
    if (pkg && status?.endsWith(' ok installed')) m.set(pkg, { deps: deps ?? '', essential: essential === 'yes' });
  }
  return m;
}

/** The packages of the list and everything they depend on (the first installed alternative). */
function closure(list: string[], all: Map<string, Installed>): Set<string> {
  const seen = new Set<string>();
  const todo = [...list];
  while (todo.length) {
    const p = todo.pop()!;
    if (seen.has(p)) continue;
    seen.add(p);
    for (const group of (all.get(p)?.deps ?? '').split(',').map((g) => g.trim()).filter(Boolean)) {
      const alts = group.split('|').map((a) => a.trim().split(/[\s:(]/)[0]!);
      todo.push(alts.find((a) => all.has(a)) ?? alts[0]!);
    }
  }
  return seen;
}

describe('the programs the lab starts come from the one package list', () => {
  const list = spawnSync('bash', [path.join(ROOT, 'scripts/system-packages.sh'), '--list'], { encoding: 'utf8' }).stdout.trim().split('\n');

  it('every program the lab\'s and the guest code\'s sources start is in PROGRAMS', () => {
    const unknown = [...programsInSources()].filter(([name]) => !(name in PROGRAMS)).map(([name, file]) => `${name} (${file})`);
    expect(unknown).toEqual([]);
  });

  it('the scan sees the programs a new machine lacked or may lack (it is not blind)', () => {
    const seen = programsInSources();
    for (const p of ['sudo', 'losetup', 'useradd', 'go', 'python3', 'sshd', 'initdb', 'mkfs.xfs', 'sfdisk', 'fio']) expect([p, seen.has(p)]).toEqual([p, true]);
  });

  it.runIf(dpkg(['--version']) !== null)('each is owned by a package of the list, a dependency of one, or an essential package', () => {
    const all = installed();
    const covered = closure(list, all);
    const isEssential = (pkg: string) => all.get(pkg)?.essential === true;
    const owner$ = owners(Object.keys(PROGRAMS));
    const problems = Object.keys(PROGRAMS).flatMap((program) => {
      const owner = owner$.get(program);
      if (!owner) return [`${program}: not installed by any Debian package here (scripts/system-packages.sh runs before the tests)`];
      return covered.has(owner) || isEssential(owner) ? [] : [`${program}: package ${owner} is not in scripts/system-packages.sh (nor a dependency of it, nor essential)`];
    });
    expect(problems).toEqual([]);
  });
});

// scripts/system-packages.sh is the one list of Debian packages `npm run demo`, `npm test` and CI
// (.ci/run) need. Run here for real (bash), with dpkg-query, id and apt-get replaced on PATH by
// small recorders, so a missing package and a non-root user are simulated without uninstalling or
// installing anything.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts/system-packages.sh');
const BASH = '/bin/bash';
const TEST_SET = 'golang-go golang-github-vmware-govmomi-dev openssh-server openssh-client fio python3 util-linux mount sudo passwd procps fdisk xfsprogs e2fsprogs postgresql python3-pyvmomi ansible chromium ca-certificates git make g++ zsh fish';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

interface Fake {
  /** packages dpkg has never heard of */
  absent?: string[];
  /** packages removed but not purged (dpkg still lists them: "deinstall ok config-files") */
  removed?: string[];
  /** installed and held at their version (apt-mark hold: "hold ok installed") */
  held?: string[];
  /** unpacked but not configured (an interrupted install: "install ok half-configured") */
  halfConfigured?: string[];
  uid: number;
  /** leave dpkg-query off PATH (a machine without dpkg) */
  noDpkg?: boolean;
}

function run(set: string, fake: Fake) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-pkgs-'));
  dirs.push(dir);
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const write = (name: string, body: string) => fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  const absent = (fake.absent ?? []).join(' ');
  const removed = (fake.removed ?? []).join(' ');
  const held = (fake.held ?? []).join(' ');
  const half = (fake.halfConfigured ?? []).join(' ');
  if (!fake.noDpkg) {
    // as dpkg-query -W -f='${Status}' PKG answers: nothing and exit 1 for an unknown package
    write('dpkg-query', [
      'for a; do pkg=$a; done',
      `[ -e ${dir}/installed ] && { printf 'install ok installed'; exit 0; }`,
      `case " ${absent} " in *" $pkg "*) echo "dpkg-query: no packages found matching $pkg" >&2; exit 1 ;; esac`,
      `case " ${removed} " in *" $pkg "*) printf 'deinstall ok config-files'; exit 0 ;; esac`,
      `case " ${held} " in *" $pkg "*) printf 'hold ok installed'; exit 0 ;; esac`,
      `case " ${half} " in *" $pkg "*) printf 'install ok half-configured'; exit 0 ;; esac`,
      "printf 'install ok installed'",
    ].join('\n'));
  }
  write('id', `[ "$1" = -u ] && { echo ${fake.uid}; exit 0; }; exit 1`);
  write('apt-get', `echo "DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*" >> ${dir}/apt.log\ncase "$1" in install) : > ${dir}/installed ;; esac`);
  const r = spawnSync(BASH, [SCRIPT, set], { cwd: ROOT, encoding: 'utf8', env: { PATH: fake.noDpkg ? bin : `${bin}:/usr/bin:/bin`, HOME: dir } });
  const apt = fs.existsSync(path.join(dir, 'apt.log')) ? fs.readFileSync(path.join(dir, 'apt.log'), 'utf8') : null;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, apt };
}

describe('scripts/system-packages.sh', () => {
  it('not root, pyvmomi never installed and chromium removed: stops at once (exit 1) with the list and the install command, installs nothing', () => {
    const r = run('test', { uid: 1000, absent: ['python3-pyvmomi'], removed: ['chromium'] });
    expect(r).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'npm test: missing Debian packages: python3-pyvmomi chromium\n' +
        'install them as root, then run npm test again:\n' +
        '  sudo apt-get update && sudo apt-get install -y --no-install-recommends python3-pyvmomi chromium\n',
      apt: null,
    });
  });

  it('root: installs exactly the missing packages, non-interactively, and goes on (exit 0)', () => {
    const r = run('test', { uid: 0, absent: ['python3-pyvmomi', 'fio'] });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('npm test: installing missing Debian packages: fio python3-pyvmomi\n');
    expect(r.stderr).toBe('');
    expect(r.apt).toBe(
      'DEBIAN_FRONTEND=noninteractive update -qq\n' +
      'DEBIAN_FRONTEND=noninteractive install -y -qq --no-install-recommends fio python3-pyvmomi\n',
    );
  });

  it('everything installed: silent, exit 0, apt-get never called (root or not)', () => {
    for (const uid of [0, 1000]) expect(run('test', { uid })).toEqual({ status: 0, stdout: '', stderr: '', apt: null });
  });

  it('a held package (apt-mark hold: "hold ok installed") is installed; a half-configured one is not', () => {
    expect(run('test', { uid: 1000, held: ['fio', 'python3-pyvmomi'] })).toEqual({ status: 0, stdout: '', stderr: '', apt: null });
    const r = run('test', { uid: 1000, held: ['fio'], halfConfigured: ['ansible'] });
    expect(r.status).toBe(1);
    expect(r.stderr.split('\n')[0]).toBe('npm test: missing Debian packages: ansible');
  });

  it('demo, test and lab check the one list: sudo, which only the tests once asked for, stops the demo too', () => {
    for (const who of ['demo', 'test', 'lab']) {
      const r = run(who, { uid: 1000, absent: ['sudo', 'chromium'] });
      expect(r.status).toBe(1);
      expect(r.stderr.split('\n')[0]).toMatch(/: missing Debian packages: sudo chromium$/);
    }
    expect(run('demo', { uid: 1000, absent: ['fio'] })).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/^npm run demo: missing Debian packages: fio\n.*\n {2}sudo apt-get update && sudo apt-get install -y --no-install-recommends fio\n$/) as unknown,
    });
  });

  it('--list prints the one list, one package a line', () => {
    const r = spawnSync(BASH, [SCRIPT, '--list'], { encoding: 'utf8' });
    expect(r.stdout).toBe(TEST_SET.split(' ').join('\n') + '\n');
  });

  it('the test set: every package CI used to install by hand', () => {
    const r = run('test', { uid: 1000, absent: TEST_SET.split(' ') });
    expect(r.stderr.split('\n')[0]).toBe(`npm test: missing Debian packages: ${TEST_SET}`);
  });

  it('no dpkg-query (not a Debian-like machine): names the set and goes on', () => {
    const r = run('test', { uid: 1000, noDpkg: true });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`npm test: cannot check system packages here (no dpkg-query); it needs the Debian packages ${TEST_SET} or their equivalents\n`);
  });

  it('an unknown set is a usage error (exit 2)', () => {
    expect(run('tests', { uid: 0 })).toMatchObject({ status: 2, stderr: 'usage: bash scripts/system-packages.sh demo|test|lab|--list\n', apt: null });
  });
});

describe('one check for demo, npm test and CI', () => {
  const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');

  it('npm test runs the check before anything else; the demo before npm ci and the lab', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.test).toMatch(/^bash scripts\/system-packages\.sh test && npm run typecheck && /);
    const demo = read('scripts/demo.sh');
    expect(demo.indexOf('bash scripts/system-packages.sh demo\n')).toBeGreaterThan(0);
    expect(demo.indexOf('bash scripts/system-packages.sh demo\n')).toBeLessThan(demo.indexOf('npm ci'));
  });

  it('.ci/run: the check (installing, as root), npm ci, then exactly the command the README gives, and the ten slowest files at its end', () => {
    const commands = read('.ci/run').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
    expect(commands).toEqual(['set -euo pipefail', 'cd "$(dirname "$0")/.."', 'bash scripts/system-packages.sh test', 'npm ci', "trap 'node scripts/slowest-tests.mjs || true' EXIT", 'npm test']);
    expect(read('README.md')).toMatch(/^npm test {8}# /m);
  });

  it('no other shipped file installs Debian packages (one list)', () => {
    const docs = fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    expect(docs).toContain('docs/architecture.md');
    const installers = ['.ci/run', 'scripts/demo.sh', 'package.json', 'README.md', ...docs]
      .filter((f) => /apt-get (-\S+ )*install/.test(read(f).replace(/sudo apt-get update && sudo apt-get install/g, '')));
    expect(installers).toEqual([]);
  });
});

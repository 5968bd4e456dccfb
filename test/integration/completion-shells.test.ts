// `storsweep completion zsh` and `storsweep completion fish` run in the real shells (issue 31), as
// bash's does in installed-package.test.ts: each script is loaded the way docs/guide/install.md
// says, then asked to complete real words, target names of an `-i` inventory among them (through
// `storsweep __complete`, found on PATH as a user's shell finds it).
//   zsh: `zsh -f` sources the script (compinit and bashcompinit, as it loads them itself), then runs
//        what compdef registered for storsweep — the `_bash_complete` adapter of zsh's bashcompinit
//        around our function — with `words` and `CURRENT` set as the completion system sets them,
//        and a `compadd` function in place of the builtin (which works only inside a completion
//        widget) printing the candidates it is handed that match what is typed, as compadd adds them.
//   fish: `fish --no-config` sources the script, then `complete --do-complete 'storsweep va'`
//        prints the candidates fish itself would offer.
// A script that does not load (a syntax error) fails: its stderr is asserted empty and it must
// register a completion for storsweep. The shells come from Debian packages zsh and fish
// (scripts/system-packages.sh); a machine without one skips its tests, saying so in their names.
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.ts';

const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0'], { stdio: 'ignore' }).status === 0;
const missing = (shell: string) => (has(shell) ? '' : ` — SKIPPED: ${shell} is not installed (bash scripts/system-packages.sh test installs it)`);

let dir: string;
let cwd: string;
/** PATH with a `storsweep` command (the checkout's CLI) first, as an installed one would be */
let PATH: string;
const scripts: Record<string, string> = {};

/** A word single-quoted for sh, zsh and fish alike (a ' as '\'' in all three). */
const zshWord = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

function shell(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { cwd, env: { ...process.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'data'), XDG_CACHE_HOME: path.join(dir, 'cache'), PATH, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} failed: ${err.message}\n${stderr}`)) : resolve({ stdout, stderr }),
    );
    child.stdin?.end();
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-completion-'));
  cwd = path.join(dir, 'work');
  fs.mkdirSync(cwd);
  fs.mkdirSync(path.join(dir, 'bin'));
  const bin = path.join(dir, 'bin', 'storsweep');
  fs.writeFileSync(bin, `#!/bin/sh\nexec ${zshWord(process.execPath)} ${zshWord(CLI)} "$@"\n`, { mode: 0o755 });
  PATH = `${path.dirname(bin)}:${process.env.PATH ?? ''}`;
  fs.writeFileSync(path.join(cwd, 'inv.yaml'), 'targets:\n  alpha-esx:\n    provider: local\n    workdir: /tmp\n  beta-esx:\n    provider: local\n    workdir: /tmp\n  gamma:\n    provider: local\n    workdir: /tmp\n');
  fs.writeFileSync(path.join(cwd, 'sweep.yaml'), 'name: x\n');
  fs.writeFileSync(path.join(cwd, 'notes.txt'), '');
  for (const s of ['zsh', 'fish']) {
    const r = await runCli(['completion', s]);
    expect(r.code, r.stderr).toBe(0);
    scripts[s] = path.join(dir, `storsweep.${s}`);
    fs.writeFileSync(scripts[s], r.stdout);
  }
}, 180_000);

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe(`storsweep completion zsh, in zsh${missing('zsh')}`, () => {
  /** The candidates zsh's completion system gets for `line` (the last word being completed), sorted. */
  async function complete(line: string[], env: NodeJS.ProcessEnv = {}): Promise<string[]> {
    const driver = [
      `source ${zshWord(scripts.zsh!)}`,
      // The builtins work only inside a completion widget: these stand in for them. compadd adds
      // the words (or, with -a, the arrays' elements) that match what is typed, $PREFIX (zshcompwid(1)).
      'compadd() {',
      '  local -a add; local arrays=0',
      '  while (( $# )); do',
      '    case $1 in',
      '      -[PSpsiIWdJVXxrRMFOAD]) shift 2 ;;',
      '      -a) arrays=1; shift ;;',
      '      -) shift; break ;;',
      '      -*) shift ;;',
      '      *) break ;;',
      '    esac',
      '  done',
      '  if (( arrays )); then for n; do add+=("${(@P)n}"); done; else add=("$@"); fi',
      '  print -rl -- ${(M)add:#${(b)PREFIX}*}',
      '}',
      'compset() { return 1 }',
      '[[ -n ${_comps[storsweep]} ]] || { print -u2 "no completion registered for storsweep"; exit 3 }',
      `words=(${line.map(zshWord).join(' ')})`,
      `CURRENT=${line.length}`,
      'PREFIX=${words[CURRENT]}',
      'eval "${_comps[storsweep]}"',
    ].join('\n');
    const { stdout, stderr } = await shell('zsh', ['-f', '-c', driver], env);
    expect(stderr).toBe('');
    return stdout.split('\n').filter(Boolean).sort();
  }

  it.skipIf(!has('zsh'))('completes commands, flags, subcommand words and playbook/inventory files', async () => {
    expect(await complete(['storsweep', 'va'])).toEqual(['validate']);
    expect(await complete(['storsweep', 'validate', '--inv'])).toEqual(['--inventory']);
    expect(await complete(['storsweep', 'lab', ''])).toEqual(['down', 'status', 'up']);
    expect(await complete(['storsweep', 'completion', ''])).toEqual(['bash', 'fish', 'zsh']);
    expect(await complete(['storsweep', 'run', '-i', ''])).toEqual(['inv.yaml', 'sweep.yaml']);
    expect(await complete(['storsweep', 'validate', 's'])).toEqual(['sweep.yaml']);
  });

  it.skipIf(!has('zsh'))('completes target names from the -i inventory: --set target=…, worker --targets a,b…', async () => {
    // zsh keeps `target=` in the word (bash splits it at "=")
    expect(await complete(['storsweep', 'run', 'sweep.yaml', '-i', 'inv.yaml', '--set', 'target='])).toEqual(['target=alpha-esx', 'target=beta-esx', 'target=gamma']);
    expect(await complete(['storsweep', 'validate', 'sweep.yaml', '--inventory', 'inv.yaml', '--set', 'target=b'])).toEqual(['target=beta-esx']);
    expect(await complete(['storsweep', 'worker', '-i', 'inv.yaml', '--targets', 'alpha-esx,g'])).toEqual(['alpha-esx,gamma']);
    expect(await complete(['storsweep', 'run', 'sweep.yaml', '--set', 'target=g'], { STORSWEEP_INVENTORY: 'inv.yaml' })).toEqual(['target=gamma']);
  });
});

describe(`storsweep completion fish, in fish${missing('fish')}`, () => {
  /** What `complete --do-complete` prints for `line` (candidates without their descriptions), sorted. */
  async function complete(line: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
    const driver = [`source ${zshWord(scripts.fish!)}`, `complete --do-complete ${zshWord(line)}`].join('\n');
    const { stdout, stderr } = await shell('fish', ['--no-config', '-c', driver], env);
    expect(stderr).toBe('');
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0]!)
      .sort();
  }

  it.skipIf(!has('fish'))('completes commands, flags, subcommand words and playbook/inventory files', async () => {
    expect(await complete('storsweep va')).toEqual(['validate']);
    expect(await complete('storsweep validate --inv')).toEqual(['--inventory']);
    expect(await complete('storsweep lab ')).toEqual(['down', 'status', 'up']);
    expect(await complete('storsweep completion ')).toEqual(['bash', 'fish', 'zsh']);
    expect(await complete('storsweep run -i ')).toEqual(['inv.yaml', 'sweep.yaml']);
    expect(await complete('storsweep validate s')).toEqual(['sweep.yaml']);
  });

  it.skipIf(!has('fish'))('completes target names from the -i inventory: --set target=…, worker --targets', async () => {
    expect(await complete('storsweep run sweep.yaml -i inv.yaml --set ')).toEqual(['target=alpha-esx', 'target=beta-esx', 'target=gamma']);
    expect(await complete('storsweep worker -i inv.yaml --targets ')).toEqual(['alpha-esx', 'beta-esx', 'gamma']);
    expect(await complete('storsweep run sweep.yaml --set ', { STORSWEEP_INVENTORY: 'inv.yaml' })).toEqual(['target=alpha-esx', 'target=beta-esx', 'target=gamma']);
  });
});

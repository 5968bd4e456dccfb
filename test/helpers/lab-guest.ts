// A throwaway "Linux guest": a real OpenSSH server on 127.0.0.1 (src/lab/sshd.ts) in a temp dir, a
// client key, a known_hosts file and an inventory that points targets `lab-guest` (ssh) and
// `lab-local` (local) at a scratch workdir. Same shape as `.lab/inventory.yaml`, nothing shared.
//
//   const guest = await startLabGuest();            // in beforeAll
//   await runCli(['run', pb, '-i', guest.inventory, '--out', guest.runsDir]);
//   await guest.stop();                              // in afterAll (removes the temp dir)
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { currentUser, ensureKeyPair, startSshd, stopPid, type SshdHandle } from '../../src/lab/sshd.ts';

const run = promisify(execFile);

export interface LabGuestOptions {
  /** encrypt the client key with this passphrase; the inventory refers to it as `${env:<passphraseEnv>}` */
  passphrase?: string;
  /** name of the env variable the inventory's passphrase reference uses (default STORSWEEP_TEST_KEYPASS) */
  passphraseEnv?: string;
  /** write this known_hosts content instead of the server's real host key line */
  knownHosts?: (sshd: SshdHandle) => string | Promise<string>;
  /** extra lines appended under `sshHosts.guest:` (indented by the caller, 4 spaces) */
  extraSshHostLines?: string[];
  /** extra top-level YAML appended to the inventory (e.g. a `vcenters:` section) */
  extraInventory?: string;
}

export interface LabGuest {
  dir: string;
  sshd: SshdHandle;
  user: string;
  keyPath: string;
  knownHostsFile: string;
  /** scratch directory where fio's test file goes */
  workdir: string;
  /** a fresh, empty directory to pass as `run --out` */
  runsDir: string;
  /** the inventory file (targets `lab-guest` and `lab-local`) */
  inventory: string;
  /** writes a playbook file into the temp dir and returns its path */
  writePlaybook(name: string, yaml: string): Promise<string>;
  /** SIGKILL sshd and every session process under it (a host that drops off the network) */
  kill(): Promise<void>;
  /** stop everything and remove the temp dir */
  stop(): Promise<void>;
}

/** Every descendant pid of `pid` (from /proc), deepest last. */
export function descendantPids(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces, so split after the last ')'
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      /* exited meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}


export async function startLabGuest(opts: LabGuestOptions = {}): Promise<LabGuest> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-guest-'));
  const keyPath = path.join(dir, 'id_ed25519');
  if (opts.passphrase !== undefined) {
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', opts.passphrase, '-C', 'storsweep-test', '-f', keyPath]);
  }
  const key = await ensureKeyPair(keyPath);
  const sshd = await startSshd({ dir: path.join(dir, 'sshd'), authorizedKeys: [key.publicKey] });
  const knownHostsFile = path.join(dir, 'known_hosts');
  await fs.writeFile(knownHostsFile, opts.knownHosts ? await opts.knownHosts(sshd) : sshd.knownHostsLine + '\n');
  const workdir = path.join(dir, 'scratch');
  const runsDir = path.join(dir, 'runs');
  await fs.mkdir(workdir);
  await fs.mkdir(runsDir);
  const user = currentUser();
  const inventory = path.join(dir, 'inventory.yaml');
  const lines = [
    'sshHosts:',
    '  guest:',
    '    host: 127.0.0.1',
    `    port: ${sshd.port}`,
    `    user: ${user}`,
    `    privateKeyFile: ${keyPath}`,
    `    knownHostsFile: ${knownHostsFile}`,
    ...(opts.passphrase !== undefined ? [`    passphrase: \${env:${opts.passphraseEnv ?? 'STORSWEEP_TEST_KEYPASS'}}`] : []),
    ...(opts.extraSshHostLines ?? []),
    'targets:',
    '  lab-guest:',
    '    provider: ssh',
    '    sshHost: guest',
    `    workdir: ${workdir}`,
    '  lab-local:',
    '    provider: local',
    `    workdir: ${workdir}`,
  ];
  await fs.writeFile(inventory, lines.join('\n') + '\n' + (opts.extraInventory ?? ''));
  const kill = async () => {
    for (const pid of [sshd.pid, ...descendantPids(sshd.pid)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    await stopPid(sshd.pid);
  };
  return {
    dir,
    sshd,
    user,
    keyPath,
    knownHostsFile,
    workdir,
    runsDir,
    inventory,
    writePlaybook: async (name, yaml) => {
      const file = path.join(dir, name);
      await fs.writeFile(file, yaml);
      return file;
    },
    kill,
    stop: async () => {
      await kill();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** A playbook against `lab-guest` with smoke-test timing (8 MiB file, one 1 s pass per test). */
export function tinyPlaybook(opts: { name?: string; profiles?: string[]; repeat?: number; target?: string } = {}): string {
  return [
    `name: ${opts.name ?? 'tiny'}`,
    `target: ${opts.target ?? 'lab-guest'}`,
    'matrix:',
    '  workload:',
    `    profile: [${(opts.profiles ?? ['cdm8-default']).join(', ')}]`,
    'settings:',
    '  fileSize: 8m',
    '  runtimeSec: 1',
    '  passes: 1',
    '  warmupPass: false',
    '  intervalSec: 0',
    `repeat: ${opts.repeat ?? 1}`,
    '',
  ].join('\n');
}

// A real OpenSSH server on 127.0.0.1, configured from scratch in a directory of ours: the embedded
// lab's "Linux guest" and the test host for the ESXi-shell and Hyper-V providers. Nothing here is a
// stand-in; the stand-ins for ESXi/Windows tools are put on the sessions' PATH via `pathPrefix`.
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const run = promisify(execFile);

export const SSHD_BIN = '/usr/sbin/sshd';

export interface KeyPair {
  privateKeyPath: string;
  publicKey: string;
}

/** ssh-keygen into `file` (and `file.pub`) unless it exists already. */
export async function ensureKeyPair(file: string, type: 'ed25519' | 'rsa' = 'ed25519'): Promise<KeyPair> {
  if (!existsSync(file)) {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await run('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', 'storsweep-lab', '-f', file]);
  }
  return { privateKeyPath: file, publicKey: (await fs.readFile(`${file}.pub`, 'utf8')).trim() };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface SshdOptions {
  /** directory for config, host key, authorized_keys, pid and log (created) */
  dir: string;
  /** 0 or absent: a free port */
  port?: number;
  /** public key lines allowed for every user */
  authorizedKeys: string[];
  /** allow password authentication (real system users' passwords; needs PAM) */
  passwordAuth?: boolean;
  /** allow keyboard-interactive authentication (via PAM, like ESXi) */
  keyboardInteractive?: boolean;
  /** directories put first on PATH of every session (stand-ins for ESXi / Windows tools) */
  pathPrefix?: string[];
  /** environment variables set for every session */
  env?: Record<string, string>;
  /** extra sshd_config lines */
  extraConfig?: string[];
  /** keep running after this process exits (the lab); stop it with stopSshd(pidFile) */
  detached?: boolean;
}

export interface SshdHandle {
  host: string;
  port: number;
  pid: number;
  dir: string;
  /** `[127.0.0.1]:port ssh-ed25519 AAAA…` — the line a known_hosts file needs */
  knownHostsLine: string;
  hostPublicKey: string;
  stop(): Promise<void>;
}

function assertSshd(): void {
  if (!existsSync(SSHD_BIN)) {
    throw new Error(`${SSHD_BIN} not found: install the Debian package openssh-server (apt-get install -y openssh-server)`);
  }
}

export async function startSshd(opts: SshdOptions): Promise<SshdHandle> {
  assertSshd();
  const dir = path.resolve(opts.dir);
  await fs.mkdir(dir, { recursive: true });
  // Privilege separation directory; Debian creates it only when its own sshd service starts.
  await fs.mkdir('/run/sshd', { recursive: true, mode: 0o755 }).catch(() => undefined);
  const hostKey = await ensureKeyPair(path.join(dir, 'ssh_host_ed25519_key'));
  const authorizedKeys = path.join(dir, 'authorized_keys');
  await fs.writeFile(authorizedKeys, opts.authorizedKeys.join('\n') + '\n', { mode: 0o644 });
  const port = opts.port || (await freePort());
  // bash sources ~/.bashrc for a command run by sshd only at shell level 1: starting sessions at
  // SHLVL=1 keeps the lab's sessions clean of the login user's rc files (a developer's pyenv
  // rehash lock once hung every command), like a freshly provisioned guest.
  const envEntries: Record<string, string> = { SHLVL: '1', ...(opts.env ?? {}) };
  if (opts.pathPrefix?.length) {
    envEntries.PATH = [...opts.pathPrefix.map((p) => path.resolve(p)), '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'].join(':');
  }
  const pam = Boolean(opts.passwordAuth || opts.keyboardInteractive);
  const config = [
    `ListenAddress 127.0.0.1`,
    `Port ${port}`,
    `HostKey ${hostKey.privateKeyPath}`,
    `PidFile ${path.join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${authorizedKeys}`,
    `StrictModes no`,
    `PermitRootLogin yes`,
    `PubkeyAuthentication yes`,
    `PasswordAuthentication ${opts.passwordAuth ? 'yes' : 'no'}`,
    `KbdInteractiveAuthentication ${opts.keyboardInteractive ? 'yes' : 'no'}`,
    `UsePAM ${pam ? 'yes' : 'no'}`,
    `PrintMotd no`,
    `PrintLastLog no`,
    `Subsystem sftp internal-sftp`,
    `MaxStartups 100`,
    `MaxSessions 50`,
    `LogLevel VERBOSE`,
    // sshd keeps only the first SetEnv line, so every variable goes on one line
    ...(Object.keys(envEntries).length ? [`SetEnv ${Object.entries(envEntries).map(([k, v]) => (/\s/.test(v) ? `"${k}=${v}"` : `${k}=${v}`)).join(' ')}`] : []),
    ...(opts.extraConfig ?? []),
  ];
  const configFile = path.join(dir, 'sshd_config');
  await fs.writeFile(configFile, config.join('\n') + '\n');
  await run(SSHD_BIN, ['-t', '-f', configFile]).catch((err: Error & { stderr?: string }) => {
    throw new Error(`sshd rejected its configuration ${configFile}: ${err.stderr ?? err.message}`);
  });
  const logFile = path.join(dir, 'sshd.log');
  const log = await fs.open(logFile, 'a');
  const child = spawn(SSHD_BIN, ['-D', '-f', configFile, '-E', logFile], {
    detached: Boolean(opts.detached),
    stdio: ['ignore', log.fd, log.fd],
  });
  await log.close();
  if (opts.detached) child.unref();
  const pid = child.pid ?? 0;
  let exited: string | null = null;
  child.on('exit', (code, signal) => {
    exited = `exit code ${code ?? signal}`;
  });
  await waitForBanner(port, 10_000, () => exited, logFile);
  const hostPublicKey = hostKey.publicKey.split(' ').slice(0, 2).join(' ');
  return {
    host: '127.0.0.1',
    port,
    pid,
    dir,
    hostPublicKey,
    knownHostsLine: `[127.0.0.1]:${port} ${hostPublicKey}`,
    stop: () => stopPid(pid),
  };
}

async function waitForBanner(port: number, timeoutMs: number, exited: () => string | null, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const why = exited();
    if (why) {
      const tail = await fs.readFile(logFile, 'utf8').catch(() => '');
      throw new Error(`sshd on port ${port} stopped (${why}): ${tail.trim().split('\n').slice(-5).join(' | ')}`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('data', (d) => {
        sock.destroy();
        resolve(d.toString().startsWith('SSH-2.0'));
      });
      sock.once('error', () => resolve(false));
      sock.setTimeout(1000, () => {
        sock.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`sshd on 127.0.0.1:${port} did not answer within ${timeoutMs} ms (log: ${logFile})`);
}

/** SIGTERM, then wait until the process is gone (SIGKILL after 3 s). */
export async function stopPid(pid: number): Promise<void> {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

export function currentUser(): string {
  return os.userInfo().username;
}

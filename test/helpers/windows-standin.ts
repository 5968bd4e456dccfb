// A real OpenSSH server whose PATH holds the strict Windows stand-ins (src/lab/harness/windows:
// powershell.exe and friends), for this user with a fresh key pair, the stand-in's host model in a
// temp directory of its own (`stateDir`, seeded by seedHypervState). Removed by stop().
//
//   const hv = await startWindowsStandin('ss-hv-');   // beforeAll
//   const runner = await hv.connect();
//   await hv.stop();                                   // afterAll
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WINDOWS_HARNESS_DIR } from '../../src/lab/harness/windows/state.ts';
import { ensureKeyPair, startSshd, type SshdHandle } from '../../src/lab/sshd.ts';
import type { CommandRunner } from '../../src/ssh/command-runner.ts';
import { connectSsh, type SshOptions } from '../../src/ssh/ssh-runner.ts';

export interface WindowsStandin {
  dir: string;
  /** the stand-in's host model (STORSWEEP_STANDIN_STATE) */
  stateDir: string;
  sshd: SshdHandle;
  /** how to log in: this user, the key, a known_hosts with the server's key */
  ssh: SshOptions;
  connect(): Promise<CommandRunner>;
  stop(): Promise<void>;
}

export async function startWindowsStandin(prefix: string): Promise<WindowsStandin> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  const stateDir = path.join(dir, 'state');
  let sshd: SshdHandle | undefined;
  try {
    const key = await ensureKeyPair(path.join(dir, 'client_key'));
    sshd = await startSshd({ dir: path.join(dir, 'sshd'), authorizedKeys: [key.publicKey], pathPrefix: [WINDOWS_HARNESS_DIR], env: { STORSWEEP_STANDIN_STATE: stateDir } });
    const knownHosts = path.join(dir, 'known_hosts');
    await fs.writeFile(knownHosts, sshd.knownHostsLine + '\n');
    const ssh: SshOptions = { host: sshd.host, port: sshd.port, username: os.userInfo().username, privateKeyPath: key.privateKeyPath, knownHostsFile: knownHosts };
    const server = sshd;
    return {
      dir,
      stateDir,
      sshd: server,
      ssh,
      connect: () => connectSsh(ssh),
      stop: async () => {
        await server.stop();
        await fs.rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await sshd?.stop();
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}

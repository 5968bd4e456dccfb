// A private lab sshd for the benchmarks (real OpenSSH on 127.0.0.1 with a fresh key), plus the
// equivalent `ssh` CLI arguments, so a bare `ssh host fio …` and storsweep's ssh2 runner reach the
// same server with the same key.
import fs from 'node:fs/promises';
import path from 'node:path';
import { currentUser, ensureKeyPair, startSshd } from '../../src/lab/sshd.ts';
import type { SshOptions } from '../../src/ssh/ssh-runner.ts';

export interface BenchSsh {
  options: SshOptions;
  /** argv for /usr/bin/ssh up to (not including) the remote command */
  cliArgs: string[];
  stop(): Promise<void>;
}

export async function startBenchSsh(dir: string): Promise<BenchSsh> {
  const key = await ensureKeyPair(path.join(dir, 'id_ed25519'));
  const sshd = await startSshd({ dir: path.join(dir, 'sshd'), authorizedKeys: [key.publicKey] });
  const knownHostsFile = path.join(dir, 'known_hosts');
  await fs.writeFile(knownHostsFile, sshd.knownHostsLine + '\n');
  const user = currentUser();
  return {
    options: { host: sshd.host, port: sshd.port, username: user, privateKeyPath: key.privateKeyPath, knownHostsFile },
    cliArgs: [
      '-q',
      '-i', key.privateKeyPath,
      '-p', String(sshd.port),
      '-o', `UserKnownHostsFile=${knownHostsFile}`,
      '-o', 'StrictHostKeyChecking=yes',
      '-o', 'BatchMode=yes',
      '-o', 'IdentitiesOnly=yes',
      `${user}@${sshd.host}`,
    ],
    stop: () => sshd.stop(),
  };
}

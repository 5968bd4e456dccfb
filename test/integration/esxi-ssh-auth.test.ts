// ESXi's sshd offers only keyboard-interactive for passwords (the `password` method is rejected):
// an esxi-shell target's password host defaults to it. Proven against a real OpenSSH configured the
// same way (KbdInteractiveAuthentication yes, PasswordAuthentication no, PAM checking a real
// account's password): the esxi-shell composition logs in; the same host used as a plain ssh
// target (no default) cannot; `keyboardInteractive: false` on an ESXi password host is refused at
// its line.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compose } from '../../src/app/compose.ts';
import { loadInventory } from '../../src/config/index.ts';
import { sshKeyboardInteractive } from '../../src/config/inventory.ts';
import { ConfigError, RemoteCommandFailed } from '../../src/errors.ts';
import { startSshd, type SshdHandle } from '../../src/lab/sshd.ts';
import { ensureSystemUser } from '../helpers/system-user.ts';
import { waitFor } from '../helpers/wait.ts';

const USER = 'ss-esxkbd';
const PASSWORD = 'Esx-kbd-only-1';
const env = { ...process.env, SS_ESX_PASSWORD: PASSWORD };
const account = ensureSystemUser(USER, PASSWORD);

let dir: string;
let sshd: SshdHandle;
let knownHosts: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-esxkbd-'));
  await fs.chmod(dir, 0o755);
  sshd = await startSshd({ dir: path.join(dir, 'sshd'), authorizedKeys: [], keyboardInteractive: true, passwordAuth: false });
  knownHosts = path.join(dir, 'known_hosts');
  await fs.writeFile(knownHosts, sshd.knownHostsLine + '\n');
});

afterAll(async () => {
  await sshd?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function inventory(keyboardLine: string, esxiTarget = true): Promise<string> {
  const file = path.join(dir, `inv-${Math.random().toString(36).slice(2)}.yaml`);
  await fs.writeFile(
    file,
    [
      'sshHosts:',
      '  esx:',
      `    host: ${sshd.host}`,
      `    port: ${sshd.port}`,
      `    user: ${USER}`,
      '    password: ${env:SS_ESX_PASSWORD}',
      ...(keyboardLine ? [`    ${keyboardLine}`] : []),
      `    knownHostsFile: ${knownHosts}`,
      'targets:',
      ...(esxiTarget ? ['  esx-shell:', '    provider: esxi-shell', '    sshHost: esx', '    vmid: 1', '    datastore: datastore1', '    guest:', `      workdir: ${dir}/guest`] : []),
      '  esx-plain:',
      '    provider: ssh',
      '    sshHost: esx',
      `    workdir: ${dir}/plain`,
      '',
    ].join('\n'),
  );
  return file;
}

const sshdLog = () => fs.readFile(path.join(dir, 'sshd', 'sshd.log'), 'utf8');

describe('ESXi SSH: keyboard-interactive by default', () => {
  it('an esxi-shell host with a password logs in through keyboard-interactive; the password method is refused', async (t) => {
    if (!account.ok) t.skip(account.reason);
    const inv = loadInventory(await inventory(''), env);
    expect(sshKeyboardInteractive(inv.inventory, 'esx')).toBe(true);

    const esx = compose(inv.inventory.targets['esx-shell']!, inv);
    const provider = await esx.connectProvider();
    expect(provider).not.toBeNull();
    await provider!.close();
    // sshd's monitor writes the line after the client is in: on a loaded machine, a moment later
    const accepted = new RegExp(`Accepted keyboard-interactive/pam for ${USER} `);
    expect(await waitFor(async () => accepted.test(await sshdLog()) || null, { what: 'sshd to log the keyboard-interactive login' })).toBe(true);

    // The same host and password driven by no esxi-shell target: no keyboard-interactive unless
    // asked, and this sshd, like ESXi's, takes no password method.
    const plainInv = loadInventory(await inventory('', false), env);
    expect(sshKeyboardInteractive(plainInv.inventory, 'esx')).toBe(false);
    const plain = compose(plainInv.inventory.targets['esx-plain']!, plainInv);
    const err = await plain.workload.connect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteCommandFailed);
    expect((err as Error).message).toMatch(/authentication methods failed/i);
  });

  it('keyboardInteractive: false on a password-only host an esxi-shell target drives is refused at its line', async () => {
    const file = await inventory('keyboardInteractive: false');
    // the plain target alone would be fine; the esxi-shell one makes it a refusal
    const err = (() => {
      try {
        loadInventory(file, env);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(new RegExp(`${path.basename(file)}:7:\\d+: sshHosts\\.esx\\.keyboardInteractive: .*offers only keyboard-interactive`));
  });

  it('a key-only host keeps keyboard-interactive off (nothing to answer a prompt with)', () => {
    const inv = {
      sshHosts: { k: { host: 'h', port: 22, user: 'root', privateKeyFile: '/k', shell: 'posix' as const } },
      targets: { e: { provider: 'esxi-shell', sshHost: 'k' } },
    } as unknown as Parameters<typeof sshKeyboardInteractive>[0];
    expect(sshKeyboardInteractive(inv, 'k')).toBe(false);
  });
});

// keyboard-interactive (ESXi's login): the password goes only to a hidden prompt that asks for a
// password. Against a real SSH server (ssh2's Server, over TCP) that asks other questions, the
// login fails naming the prompt, and the server never receives the password.
import { afterEach, describe, expect, it } from 'vitest';
import ssh2 from 'ssh2';
import type { AddressInfo } from 'node:net';
import { UnsafeOperation } from '../../../src/errors.ts';
import { answerPrompts, connectSsh } from '../../../src/ssh/ssh-runner.ts';

const PASSWORD = 'kbd-secret-1';

describe('answerPrompts', () => {
  it('answers hidden password prompts only', () => {
    expect(answerPrompts([{ prompt: 'Password: ', echo: false }], PASSWORD, 't')).toEqual([PASSWORD]);
    expect(answerPrompts([], PASSWORD, 't')).toEqual([]);
    for (const p of [{ prompt: 'Password: ', echo: true }, { prompt: 'Verification code: ', echo: false }, { prompt: 'Enter OTP: ', echo: true }]) {
      const r = answerPrompts([p], PASSWORD, 't');
      expect(r).toBeInstanceOf(UnsafeOperation);
      expect((r as Error).message).toContain(`"${p.prompt}"`);
      expect((r as Error).message).not.toContain(PASSWORD);
    }
  });

  it('a prompt is shown visible-safe', () => {
    const r = answerPrompts([{ prompt: 'Code\x1b]8;;http://x\x07: ', echo: false }], PASSWORD, 't') as Error;
    expect([...r.message].some((ch) => ch.charCodeAt(0) === 27 || ch.charCodeAt(0) === 7)).toBe(false);
    expect(r.message).toContain('\\x1b');
  });
});

describe('connectSsh against a server that asks', () => {
  let server: ssh2.Server | undefined;
  afterEach(() => server?.close());

  /** A server asking `prompts` by keyboard-interactive; resolves its port and what it was answered. */
  async function serve(prompts: Array<{ prompt: string; echo: boolean }>): Promise<{ port: number; answers: string[][] }> {
    const answers: string[][] = [];
    const hostKey = ssh2.utils.generateKeyPairSync('ed25519').private;
    server = new ssh2.Server({ hostKeys: [hostKey] }, (client) => {
      client.on('authentication', (ctx) => {
        if (ctx.method !== 'keyboard-interactive') return ctx.reject(['keyboard-interactive']);
        ctx.prompt(prompts, (a) => {
          answers.push(a);
          if (a.length === 1 && a[0] === PASSWORD) ctx.accept();
          else ctx.reject(['keyboard-interactive']);
        });
      });
      client.on('error', () => undefined);
      client.on('ready', () => client.end());
    });
    await new Promise<void>((res) => server!.listen(0, '127.0.0.1', res));
    return { port: (server.address() as AddressInfo).port, answers };
  }

  const opts = (port: number) => ({ host: '127.0.0.1', port, username: 'root', password: PASSWORD, keyboardInteractive: true, insecure: true, readyTimeoutMs: 10_000 });

  it('a hidden "Password:" prompt gets the password and the login succeeds', async () => {
    const { port, answers } = await serve([{ prompt: 'Password: ', echo: false }]);
    const runner = await connectSsh(opts(port));
    await runner.close();
    expect(answers).toEqual([[PASSWORD]]);
  });

  it('an echoed one-time-code prompt: the login fails naming it, and the password was never sent', async () => {
    const { port, answers } = await serve([{ prompt: 'Verification code: ', echo: true }]);
    const err = await connectSsh(opts(port)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeOperation);
    expect((err as Error).message).toMatch(/keyboard-interactive prompt "Verification code: " \(shown as typed\) does not ask for a password/);
    expect(answers.flat()).not.toContain(PASSWORD);
  });
});

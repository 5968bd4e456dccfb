// CommandRunner over SSH (ssh2). One connection per runner, reused for every command; the host key
// is checked against a known_hosts file before authentication (ssh2 would otherwise accept any key).
import type { Client, ConnectConfig } from 'ssh2';
import { HostVerificationFailed, RemoteCommandFailed, UnsafeOperation } from '../errors.ts';
import { visible } from '../text/visible.ts';
import { checkTimerMs } from '../limits.ts';
import type { CommandResult, CommandRunner, RunOptions, SshOptions } from '../contract/command-runner.ts';
import { fingerprintSha256, hostKeyName, parseKnownHosts, verifyHostKey } from './known-hosts.ts';
import { readInputFile } from '../input/read-input.ts';

export type { SshOptions } from '../contract/command-runner.ts';

export function sshTarget(o: Pick<SshOptions, 'host' | 'port' | 'username'>): string {
  return `ssh://${o.username}@${o.host}:${o.port ?? 22}`;
}

/**
 * Answers for one keyboard-interactive round: the password goes only to prompts that hide what is
 * typed (`echo` false) and ask for a password (ESXi's PAM asks "Password: "). Anything else — a
 * one-time code, a question shown as typed — is not ours to answer: an error naming the prompt
 * (made visible: it comes from the server). A round with no prompts gets no answers.
 */
export function answerPrompts(prompts: ReadonlyArray<{ prompt: string; echo?: boolean }>, password: string, target: string): string[] | UnsafeOperation {
  for (const p of prompts) {
    if (p.echo === true || !/password/i.test(p.prompt)) {
      return new UnsafeOperation(
        `${target}: keyboard-interactive prompt "${visible(p.prompt)}" (${p.echo === true ? 'shown as typed' : 'hidden'}) does not ask for a password; storsweep answers only password prompts and sent nothing to it`,
        { operation: 'keyboard-interactive login', target },
      );
    }
  }
  return prompts.map(() => password);
}

export async function connectSsh(opts: SshOptions): Promise<CommandRunner> {
  const port = opts.port ?? 22;
  const target = sshTarget(opts);
  let hostKeyProblem: HostVerificationFailed | null = null;
  const config: ConnectConfig = {
    host: opts.host,
    port,
    username: opts.username,
    readyTimeout: opts.readyTimeoutMs ?? 20_000,
    keepaliveInterval: opts.keepaliveIntervalMs ?? 15_000,
    keepaliveCountMax: 4,
    tryKeyboard: Boolean(opts.keyboardInteractive),
  };
  if (opts.privateKeyPath) {
    try {
      config.privateKey = readInputFile(opts.privateKeyPath, 'secret');
    } catch (err) {
      throw new HostVerificationFailed(`${target}: cannot read private key ${opts.privateKeyPath}: ${(err as Error).message}`, opts.host, { cause: err });
    }
    if (opts.passphrase) config.passphrase = opts.passphrase;
  }
  if (opts.password !== undefined) config.password = opts.password;
  if (!opts.insecure) {
    if (!opts.knownHostsFile) {
      throw new HostVerificationFailed(`${target}: no knownHostsFile to verify the host key against (set one, or insecure: true to skip verification)`, opts.host);
    }
    let text: string;
    try {
      text = readInputFile(opts.knownHostsFile, 'config').toString('utf8');
    } catch (err) {
      // Fail closed: an unreadable known_hosts must not turn into "accept anything".
      throw new HostVerificationFailed(`${target}: cannot read known_hosts ${opts.knownHostsFile}: ${(err as Error).message}`, opts.host, { cause: err });
    }
    const entries = parseKnownHosts(text);
    config.hostVerifier = (key: Buffer) => {
      const verdict = verifyHostKey(entries, opts.host, port, key);
      if (verdict.ok) return true;
      const name = hostKeyName(opts.host, port);
      const fp = fingerprintSha256(key);
      hostKeyProblem = new HostVerificationFailed(
        verdict.reason === 'unknown-host'
          ? `${target}: host ${name} is not in ${opts.knownHostsFile} (presented key ${fp})`
          : verdict.reason === 'revoked'
            ? `${target}: host key ${fp} is marked @revoked in ${opts.knownHostsFile}`
            : `${target}: HOST KEY MISMATCH for ${name}: presented ${fp}, ${opts.knownHostsFile} expects ${verdict.expected?.join(', ')}`,
        opts.host,
      );
      return false;
    };
  }
  // loaded on first use: a process that reaches no SSH host (a worker of local targets) does not load it
  const ssh2 = await import('ssh2');
  const client = new ssh2.Client();
  // a keyboard-interactive prompt we would not answer with the password (see answerPrompts)
  let promptProblem: UnsafeOperation | null = null;
  if (opts.keyboardInteractive) {
    client.on('keyboard-interactive', (_name, _instr, _lang, prompts, finish) => {
      const answers = answerPrompts(prompts, opts.password ?? '', target);
      if (answers instanceof UnsafeOperation) {
        promptProblem ??= answers;
        // no answers at all: the server fails this method; nothing was sent to the prompt
        finish([]);
        client.end();
      } else finish(answers);
    });
  }
  await new Promise<void>((resolve, reject) => {
    let settled = false;
    client.once('ready', () => {
      settled = true;
      resolve();
    });
    // ssh2 may emit 'error' more than once for one failed connection (e.g. refused, then closed);
    // a listener must stay attached or the second one becomes an uncaught exception.
    client.on('error', (err) => {
      if (settled) return;
      settled = true;
      client.end();
      if (hostKeyProblem) reject(hostKeyProblem);
      else if (promptProblem) reject(promptProblem);
      else reject(new RemoteCommandFailed({ host: target, what: 'SSH connection', command: '', exitCode: null, stderr: '', reason: 'connection', detail: `failed: ${err.message}` }, { cause: err }));
    });
    // ended by us (a prompt we do not answer) without an 'error' from ssh2
    client.once('close', () => {
      if (settled) return;
      settled = true;
      reject(promptProblem ?? new RemoteCommandFailed({ host: target, what: 'SSH connection', command: '', exitCode: null, stderr: '', reason: 'connection', detail: 'closed before login' }));
    });
    client.connect(config);
  });
  return new SshRunner(client, target);
}

class SshRunner implements CommandRunner {
  private closed = false;
  private lost: Error | null = null;

  constructor(
    private readonly client: Client,
    readonly target: string,
  ) {
    client.on('error', (err) => {
      this.lost = err;
    });
    client.on('close', () => {
      this.lost ??= new Error('connection closed');
    });
  }

  run(command: string, options: RunOptions = {}): Promise<CommandResult> {
    // A delay Node cannot hold would fire at once and kill the command: refuse it before starting.
    if (options.timeoutMs) checkTimerMs(options.timeoutMs, `${this.target}: command timeout`);
    const started = Date.now();
    const fail = (reason: 'timeout' | 'connection', message: string, stderr = '', cause?: unknown) =>
      new RemoteCommandFailed({ host: this.target, command, exitCode: null, stderr, reason, detail: message }, { cause });
    if (this.lost || this.closed) return Promise.reject(fail('connection', `could not be sent: the SSH connection was lost (${this.lost?.message ?? 'closed'})`));
    return new Promise((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let channel: { close(): void } | null = null;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.client.removeListener('close', onClose);
        fn();
      };
      const onClose = () => settle(() => reject(fail('connection', 'lost its SSH connection while it ran', stderr)));
      // Closing the channel does not stop the command (no pty, so no SIGHUP): a caller whose
      // command must not outlive the abort runs it in a process group it can stop
      // (process-group.ts). The channel is closed so that it is not left open.
      const onAbort = () =>
        settle(() => {
          channel?.close();
          reject(fail('timeout', 'was aborted', stderr, options.signal?.reason));
        });
      this.client.once('close', onClose);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.client.exec(command, (err, stream) => {
        if (err) {
          settle(() => reject(fail('connection', `could not be started (${err.message})`, '', err)));
          return;
        }
        channel = stream;
        if (settled) {
          // aborted while the channel was being opened
          stream.close();
          return;
        }
        if (options.timeoutMs) {
          timer = setTimeout(() => {
            stream.signal?.('KILL');
            stream.close();
            settle(() => reject(fail('timeout', `timed out after ${options.timeoutMs} ms`, stderr)));
          }, options.timeoutMs);
        }
        stream.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
        stream.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
        stream.on('exit', (code: number | null, signal?: string) => {
          stream.once('close', () =>
            settle(() => {
              if (code === null || code === undefined) {
                reject(fail('connection', `was ended by signal ${signal ?? 'unknown'}`, stderr));
              } else {
                resolve({ command, stdout, stderr, exitCode: code, durationMs: Date.now() - started });
              }
            }),
          );
        });
        stream.on('close', () => {
          // 'close' without 'exit': the channel went away under us.
          setImmediate(() => settle(() => reject(fail('connection', 'ended without an exit status (the SSH channel closed)', stderr))));
        });
        if (options.stdin !== undefined) stream.end(options.stdin);
        else stream.end();
      });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.client.end();
  }
}

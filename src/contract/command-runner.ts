// One interface for "run a command line somewhere": this machine, a Linux guest over SSH, an ESXi
// shell, a Windows OpenSSH host. Providers build command lines (quoting for the target shell with
// src/ssh/quote.ts or PowerShell -EncodedCommand) and never touch ssh2 or child_process directly.
// The runners themselves live in src/ssh/ (which re-exports these shapes from ssh/command-runner.ts).

export interface RunOptions {
  /** kill the command and fail with reason 'timeout' after this many ms (default: no limit) */
  timeoutMs?: number;
  stdin?: string | Buffer;
  signal?: AbortSignal;
}

export interface CommandResult {
  command: string;
  stdout: string;
  stderr: string;
  exitCode: number;
  durationMs: number;
}

export interface CommandRunner {
  /** label used in messages and logs, e.g. `ssh://bench@10.0.0.5:22` or `local` */
  readonly target: string;
  /**
   * Runs a complete command line in the target's shell. Resolves with the exit code, whatever it
   * is; rejects with RemoteCommandFailed (reason 'timeout' | 'connection' | 'spawn') only when no
   * exit code could be had.
   */
  run(command: string, options?: RunOptions): Promise<CommandResult>;
  /**
   * Removes a file if it is there (`rm -f -- path`: a link is removed, not followed), without a
   * shell where the runner can (this machine); absent: callers run `rm -f` through run().
   */
  removeFile?(path: string): Promise<void>;
  /** `mkdir -p -- path` without a shell where the runner can (this machine); rejects as that would fail. Absent: run(). */
  makeDirectory?(path: string): Promise<void>;
  /**
   * `test -b path || test -c path` (a block or character device, through links) without a shell
   * where the runner can (this machine). Absent: run().
   */
  isDevice?(path: string): Promise<boolean>;
  /**
   * Starts `argv` directly, without a shell, as the leader of a new session (setsid), with `env`
   * added to its environment; resolves like run(). Where a runner can start a process itself (this
   * machine), process-group.ts starts its wrapper so, instead of through `sh -c 'setsid env … sh
   * -c …'`: three processes fewer per command. On an abort or timeout it rejects (reason
   * 'timeout') WITHOUT signalling anything, like an SSH channel closed: the caller stops the session
   * (runInGroup: TERM, then KILL, every process of it checked gone). Absent: callers use run().
   */
  runInSession?(argv: readonly string[], env: Readonly<Record<string, string>>, options?: RunOptions): Promise<CommandResult>;
  close(): Promise<void>;
}

/** How to reach an SSH target (src/ssh/ssh-runner.ts connectSsh). */
export interface SshOptions {
  host: string;
  port?: number;
  username: string;
  privateKeyPath?: string;
  passphrase?: string;
  password?: string;
  /** answer keyboard-interactive prompts with `password` (ESXi's default) */
  keyboardInteractive?: boolean;
  knownHostsFile?: string;
  /** accept any host key; must be written in the inventory, never a default */
  insecure?: boolean;
  readyTimeoutMs?: number;
  keepaliveIntervalMs?: number;
}

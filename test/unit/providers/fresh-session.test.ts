// withFreshSession: the preflights' one way to ask a host something on a session of its own (a real
// local runner underneath; its close counted).
import { describe, expect, it } from 'vitest';
import type { CommandRunner } from '../../../src/contract/command-runner.ts';
import { withFreshSession } from '../../../src/providers/fresh-session.ts';
import { createLocalRunner } from '../../../src/ssh/local-runner.ts';

function counted(): { connect: () => Promise<CommandRunner>; opened: () => number; closed: () => number } {
  let opened = 0;
  let closed = 0;
  return {
    connect: async () => {
      opened++;
      const inner = createLocalRunner(process.env);
      return { target: inner.target, run: (c, o) => inner.run(c, o), close: async () => void closed++ };
    },
    opened: () => opened,
    closed: () => closed,
  };
}

describe('withFreshSession', () => {
  it('opens a session for the work, returns what the work returned, and closes it', async () => {
    const s = counted();
    const out = await withFreshSession(s.connect, async (r) => (await r.run('echo hi')).stdout.trim());
    expect(out).toBe('hi');
    expect([s.opened(), s.closed()]).toEqual([1, 1]);
  });

  it('closes the session when the work fails, and passes the failure on', async () => {
    const s = counted();
    await expect(withFreshSession(s.connect, async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect([s.opened(), s.closed()]).toEqual([1, 1]);
  });

  it('a session whose close fails still gives the work\'s answer', async () => {
    const connect = async (): Promise<CommandRunner> => ({ target: 'x', run: async (command) => ({ command, stdout: '', stderr: '', exitCode: 0, durationMs: 0 }), close: async () => Promise.reject(new Error('gone')) });
    await expect(withFreshSession(connect, async () => 42)).resolves.toBe(42);
  });
});

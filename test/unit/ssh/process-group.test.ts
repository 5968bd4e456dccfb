// Commands that must not outlive an abort (src/ssh/process-group.ts), run through the local runner
// with real processes: the group is stopped with TERM, or KILL when TERM is ignored, and checked gone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { InvalidArgument, RemoteCommandFailed } from '../../../src/errors.ts';
import { createLocalRunner } from '../../../src/ssh/local-runner.ts';
import type { CommandRunner } from '../../../src/ssh/command-runner.ts';
import { groupCommand, newGroupFiles, parseStop, runInGroup, stopCommand, stopGroup, stopRunCommand, stopRunGroups, strandedGroupOf, toolOwner, type GroupStop } from '../../../src/ssh/process-group.ts';
import { shJoin } from '../../../src/ssh/quote.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-pgroup-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Live (not zombie) processes whose command line holds `marker`. */
function live(marker: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z' && fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Live processes in the group named by the one pidfile in `controlDir` (0 before it exists). */
function groupSize(controlDir: string): number {
  const file = fs.readdirSync(controlDir).find((f) => f.endsWith('.pgid'));
  const pgid = file ? fs.readFileSync(path.join(controlDir, file), 'utf8').trim() : '';
  if (!pgid) return 0;
  let n = 0;
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z' && pgrp === pgid) n++;
    } catch {
      /* exited meanwhile */
    }
  }
  return n;
}

/** The local runner without runInSession: the wrapper goes through `sh -c 'setsid env … sh -c …'`, as over SSH. */
function shellOnly(): CommandRunner {
  const local = createLocalRunner(process.env);
  return { target: local.target, run: (c, o) => local.run(c, o), close: () => local.close() };
}

async function abortedRun(script: string, marker: string, graceSec = 0.5, runner: CommandRunner = createLocalRunner(process.env)): Promise<{ stop: GroupStop | null; err: unknown }> {
  const ac = new AbortController();
  let stop: GroupStop | null = null;
  const running = runInGroup(runner, ['sh', '-c', script, marker], { controlDir: dir, signal: ac.signal, graceSec, onStopped: (s) => (stop = s) });
  // started: the wrapper wrote its pidfile and the command's processes run in that group
  await expect.poll(() => groupSize(dir), { timeout: 5000 }).toBeGreaterThanOrEqual(3);
  ac.abort(new Error('interrupted'));
  const err = await running.catch((e: unknown) => e);
  return { stop, err };
}

describe('runInGroup', () => {
  it('returns what the command printed and its exit code, and leaves no pidfile', async () => {
    const r = await runInGroup(createLocalRunner(process.env), ['sh', '-c', 'echo "$1"; exit 3', 'x', 'hello world'], { controlDir: dir });
    expect(r).toMatchObject({ stdout: 'hello world\n', exitCode: 3 });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('on abort stops the whole group (a background child too) with TERM before it rejects', async () => {
    const marker = `ss-marker-${process.pid}-term`;
    const { stop, err } = await abortedRun('sleep 60 & sleep 61; wait', marker);
    expect(err).toBeInstanceOf(RemoteCommandFailed);
    expect(stop).toMatchObject({ outcome: 'stopped', signal: 'TERM' });
    expect(stop!.pgid).toBeGreaterThan(1);
    // already gone when the promise settled: no wait in the test
    expect(live(marker)).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('through the runner\'s shell (`setsid env … sh`, the SSH runner\'s way): the same abort stops the whole group with TERM', async () => {
    const marker = `ss-marker-${process.pid}-shell`;
    const { stop, err } = await abortedRun('sleep 60 & sleep 61; wait', marker, 0.5, shellOnly());
    expect(err).toBeInstanceOf(RemoteCommandFailed);
    expect(stop).toMatchObject({ outcome: 'stopped', signal: 'TERM' });
    expect(live(marker)).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('on this machine the wrapper is started directly: a child of this process, leader of its own session, the token in its environment (no sh, setsid, env before it)', async () => {
    // the command reads its parent (the wrapper): parent pid and session id (/proc/PID/stat fields 4 and 6) and the token
    const r = await runInGroup(createLocalRunner(process.env), ['sh', '-c', 'cut -d" " -f4,6 /proc/$PPID/stat; tr "\\0" "\\n" </proc/$PPID/environ | grep ^STORSWEEP_GROUP=; echo $PPID'], { controlDir: dir, owner: 'r1' });
    const [stat, token, wrapper] = r.stdout.trim().split('\n');
    expect(stat).toBe(`${process.pid} ${wrapper}`);
    expect(token).toMatch(/^STORSWEEP_GROUP=r1-[0-9a-f]{16}$/);
    // through the shell, the wrapper is a grandchild (sh forks setsid, which execs env, then sh)
    const viaShell = await runInGroup(shellOnly(), ['sh', '-c', 'cut -d" " -f4 /proc/$PPID/stat'], { controlDir: dir, owner: 'r1' });
    expect(viaShell.stdout.trim()).not.toBe(String(process.pid));
  });

  it('escalates to KILL when the command ignores TERM, and checks it is gone', async () => {
    const marker = `ss-marker-${process.pid}-kill`;
    const { stop } = await abortedRun("trap '' TERM; sleep 60 & sleep 61; wait", marker);
    expect(stop).toMatchObject({ outcome: 'stopped', signal: 'KILL' });
    expect(live(marker)).toEqual([]);
  });

  it('a timeout stops the group the same way before it rejects', async () => {
    const marker = `ss-marker-${process.pid}-timeout`;
    let stop: GroupStop | null = null;
    const err = await runInGroup(createLocalRunner(process.env), ['sh', '-c', 'sleep 60 & sleep 61; wait', marker], { controlDir: dir, timeoutMs: 1500, graceSec: 0.5, onStopped: (s) => (stop = s) }).catch((e: unknown) => e);
    expect((err as RemoteCommandFailed).details.reason).toBe('timeout');
    expect(stop).toMatchObject({ outcome: 'stopped', signal: 'TERM' });
    expect(live(marker)).toEqual([]);
  });

  it('a stop that comes before the command started keeps it from starting', async () => {
    const runner = createLocalRunner(process.env);
    const files = newGroupFiles(dir, 'r1');
    expect(await stopGroup(runner, files, 0.5)).toEqual({ pgid: null, outcome: 'not-started' });
    const marker = `ss-marker-${process.pid}-late`;
    // the wrapper as runInGroup starts it, with the same files: it sees the cancel marker and exits
    const r = await runner.run(groupCommand(['sh', '-c', 'echo started', marker], files));
    expect(r).toMatchObject({ exitCode: 130, stdout: '' });
    // neither the pidfile nor the cancel marker stays: the marker has kept the command from starting
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

/** A runner whose command ends over there, but whose caller hears of it only as `reason` (an abort, a lost connection) — the race, made certain. */
function endsThenFails(reason: 'timeout' | 'connection'): CommandRunner {
  const local = createLocalRunner(process.env);
  return {
    target: local.target,
    close: () => local.close(),
    run: async (command, opts) => {
      if (!command.includes('storsweep-group')) return local.run(command, opts);
      const r = await local.run(command, opts);
      throw new RemoteCommandFailed({ host: local.target, what: 'test', command, exitCode: r.exitCode, stderr: '', reason });
    },
  };
}

// Issue 14 (stop 11 note): a command that ended just as it was stopped was reported "not-started"
// and left its `.cancel` marker behind for a wrapper that would never come.
describe('a command that ends just as it is stopped', () => {
  it('the stop finds the pidfile the ended command left: not-running (with its pid), and removes pidfile and marker', async () => {
    const runner = createLocalRunner(process.env);
    const files = newGroupFiles(dir, 'r1');
    // the command ran to its end; its caller has not seen the result (the abort came first)
    const r = await runner.run(groupCommand(['sh', '-c', 'echo done'], files));
    expect(r).toMatchObject({ exitCode: 0, stdout: 'done\n' });
    const wrapper = Number(fs.readFileSync(files.pidFile, 'utf8'));
    expect(await stopGroup(runner, files, 0.5)).toEqual({ pgid: wrapper, outcome: 'not-running' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('runInGroup: an abort heard only after the command ended reports not-running and leaves no file', async () => {
    let stop: GroupStop | null = null;
    const err = await runInGroup(endsThenFails('timeout'), ['sh', '-c', 'exit 0'], { controlDir: dir, owner: 'r1', graceSec: 0.5, onStopped: (s) => (stop = s) }).catch((e: unknown) => e);
    expect((err as RemoteCommandFailed).details.reason).toBe('timeout');
    expect(stop).toMatchObject({ outcome: 'not-running' });
    expect(stop!.pgid).toBeGreaterThan(1);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a connection lost as the command ended: the stop through the next connection reports not-running and leaves no file', async () => {
    const err = await runInGroup(endsThenFails('connection'), ['sh', '-c', 'exit 0'], { controlDir: dir, owner: 'r1' }).catch((e: unknown) => e);
    const files = strandedGroupOf(err);
    expect(files).toBeDefined();
    expect(fs.readdirSync(dir)).toEqual([path.basename(files!.pidFile)]);
    expect(await stopGroup(createLocalRunner(process.env), files!, 0.5)).toMatchObject({ outcome: 'not-running' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

/** Live (not zombie) processes whose command line is exactly `argv`. */
function liveArgv(...argv: string[]): number[] {
  const want = argv.join('\0') + '\0';
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z' && fs.readFileSync(`/proc/${e}/cmdline`, 'utf8') === want;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Starts `setsid sleep <sec>` outside of anything of ours (a stranger's process); returns its pid. */
async function strangerSleep(sec: number): Promise<number> {
  const child = spawn('setsid', ['sleep', String(sec)], { stdio: 'ignore', detached: true });
  child.unref();
  await expect.poll(() => liveArgv('sleep', String(sec)).length, { timeout: 5000 }).toBe(1);
  return liveArgv('sleep', String(sec))[0]!;
}

// Issue 11 item 7, review findings F1 and F4: fio's job processes call setsid() (fio 3.33
// backend.c, thread_main), so they leave the wrapper's process group and session; and a pidfile
// names a process but proves nothing about it.
describe('the processes a stop finds', () => {
  const sleeps: number[] = [];
  afterEach(() => {
    for (const pid of sleeps.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  });

  it('a process that left the group and the session (setsid, like each fio job) is stopped too, before the abort settles', async () => {
    const sec = String(6000 + (process.pid % 900));
    const ac = new AbortController();
    let stop: GroupStop | null = null;
    const running = runInGroup(createLocalRunner(process.env), ['sh', '-c', 'setsid sleep "$1" & wait', 'x', sec], { controlDir: dir, owner: 'r1', signal: ac.signal, graceSec: 0.5, onStopped: (s) => (stop = s) });
    await expect.poll(() => liveArgv('sleep', sec).length, { timeout: 5000 }).toBe(1);
    const [job] = liveArgv('sleep', sec);
    // the escaped process: not in the wrapper's process group (the pidfile names the wrapper)
    const wrapper = fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.pgid'))!), 'utf8').trim();
    const stat = fs.readFileSync(`/proc/${job}/stat`, 'utf8');
    expect(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]).not.toBe(wrapper);
    ac.abort(new Error('interrupted'));
    await running.catch(() => undefined);
    expect(liveArgv('sleep', sec)).toEqual([]);
    expect(stop).toMatchObject({ outcome: 'stopped', signal: 'TERM' });
    expect(stop!.pids).toContain(job);
  });

  it('real fio: its job process (own session) is gone when the abort settles', async () => {
    const file = path.join(dir, `fio-${process.pid}.dat`);
    const ac = new AbortController();
    let stop: GroupStop | null = null;
    const argv = ['fio', '--name=abort', `--filename=${file}`, '--size=4m', '--rw=randwrite', '--bs=4k', '--time_based', '--runtime=30', '--output-format=json'];
    const running = runInGroup(createLocalRunner(process.env), argv, { controlDir: dir, owner: 'r1', signal: ac.signal, graceSec: 2, onStopped: (s) => (stop = s) });
    // the job is the fio whose parent is fio; it runs in a session of its own
    const jobs = () => liveArgv(...argv).filter((p) => liveArgv(...argv).includes(Number(fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])));
    await expect.poll(() => jobs().length, { timeout: 10_000 }).toBe(1);
    const [job] = jobs();
    // past its start: the job is writing (its own /proc/PID/io counter moved)
    const written = () => Number(/^wchar: (\d+)$/m.exec(fs.readFileSync(`/proc/${job}/io`, 'utf8'))?.[1] ?? 0);
    await expect.poll(written, { timeout: 10_000 }).toBeGreaterThan(0);
    ac.abort(new Error('interrupted'));
    await running.catch(() => undefined);
    expect(liveArgv(...argv)).toEqual([]);
    expect(stop).toMatchObject({ outcome: 'stopped' });
    expect(stop!.pids).toContain(job);
  });

  it('a pidfile naming a stranger (a setsid sleep) gets the stranger nothing; the command is stopped all the same', async () => {
    const sec = String(6900 + (process.pid % 90));
    const stranger = await strangerSleep(Number(sec) + 1);
    sleeps.push(stranger);
    const ac = new AbortController();
    let stop: GroupStop | null = null;
    const running = runInGroup(createLocalRunner(process.env), ['sh', '-c', 'sleep "$1" & wait', 'x', sec], { controlDir: dir, owner: 'r1', signal: ac.signal, graceSec: 0.5, onStopped: (s) => (stop = s) });
    await expect.poll(() => liveArgv('sleep', sec).length, { timeout: 5000 }).toBe(1);
    const pidFile = path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.pgid'))!);
    fs.writeFileSync(pidFile, `${stranger}\n`);
    ac.abort(new Error('interrupted'));
    await running.catch(() => undefined);
    expect(liveArgv('sleep', String(Number(sec) + 1))).toEqual([stranger]);
    expect(liveArgv('sleep', sec)).toEqual([]);
    expect(stop).toMatchObject({ outcome: 'stopped' });
    expect(stop!.pids).not.toContain(stranger);
  });

  it('a pidfile that is a link is not read', async () => {
    const files = newGroupFiles(dir, 'r1');
    fs.writeFileSync(path.join(dir, 'elsewhere'), '4242\n');
    fs.symlinkSync(path.join(dir, 'elsewhere'), files.pidFile);
    expect(await stopGroup(createLocalRunner(process.env), files, 0.5)).toEqual({ pgid: null, outcome: 'not-started' });
  });

  // In a PID namespace of its own: were `1` ever taken for a group, `kill -- -1` would reach only
  // the namespace's processes, not this machine's.
  it.skipIf(!hasPidNamespaces())('a pidfile holding 1 signals nothing (never kill -- -1)', async () => {
    const files = newGroupFiles(dir, 'r1');
    const script = `sleep 600 & s=$!; echo 1 >${shJoin([files.pidFile])}; ${stopCommand(files, 0.3)}; if kill -0 $s 2>/dev/null; then echo bystander-alive; fi; kill $s`;
    const r = await createLocalRunner(process.env).run(shJoin(['unshare', '--pid', '--fork', '--mount-proc', 'setsid', 'sh', '-c', script]), { timeoutMs: 20_000 });
    expect(r.stdout).toContain('bystander-alive');
    expect(parseStop(r.stdout.split('\n').filter((l) => !l.includes('bystander')).join('\n'))).toEqual({ pgid: 1, outcome: 'not-running' });
  });

  it('stopRunGroups stops every process of one run (jobs that left the session too), none of another run, and removes the pidfiles of that run only', async () => {
    const runner = createLocalRunner(process.env);
    const base = 6100 + (process.pid % 800);
    const [a1, a2, b1] = [base, base + 1, base + 2].map(String) as [string, string, string];
    // started as a killed storsweep would have left them: nobody waits for them here
    const started = [
      runner.run(groupCommand(['sh', '-c', 'setsid sleep "$1" & wait', 'x', a1], newGroupFiles(dir, 'runa'))),
      runner.run(groupCommand(['sleep', a2], newGroupFiles(dir, 'runa'))),
      runner.run(groupCommand(['sleep', b1], newGroupFiles(dir, 'runb'))),
    ];
    await expect.poll(() => [a1, a2, b1].map((s) => liveArgv('sleep', s).length), { timeout: 5000 }).toEqual([1, 1, 1]);
    // the wrappers of run A die as with kill -9 of storsweep's connection: A's processes run on, orphaned
    const stop = await stopRunGroups(runner, dir, 'runa', 0.5);
    expect(stop).toMatchObject({ outcome: 'stopped', signal: 'TERM' });
    expect(liveArgv('sleep', a1)).toEqual([]);
    expect(liveArgv('sleep', a2)).toEqual([]);
    expect(liveArgv('sleep', b1)).toHaveLength(1);
    const left = fs.readdirSync(dir);
    expect(left.filter((f) => f.startsWith('.storsweep-runa-'))).toEqual([]);
    expect(left.filter((f) => f.startsWith('.storsweep-runb-'))).toHaveLength(1);
    expect(await stopRunGroups(runner, dir, 'runa', 0.5)).toEqual({ pgid: null, outcome: 'not-running' });
    await stopRunGroups(runner, dir, 'runb', 0.5);
    expect(liveArgv('sleep', b1)).toEqual([]);
    await Promise.allSettled(started);
  });

  it('two targets of one run on one machine: stopping target a\'s leftovers leaves target b\'s tool running (review 17, finding 2); a legacy run-wide token is stopped with a', async () => {
    const runner = createLocalRunner(process.env);
    const base = 6900 + (process.pid % 800);
    const [a1, b1, old] = [base, base + 1, base + 2].map(String) as [string, string, string];
    const [ownerA, ownerB] = [toolOwner('rrun1', 'a'), toolOwner('rrun1', 'b')];
    expect(ownerA).toMatch(/^rrun1t[0-9a-f]{8}$/);
    expect(ownerA).not.toBe(ownerB);
    const started = [
      runner.run(groupCommand(['sleep', a1], newGroupFiles(dir, ownerA))),
      runner.run(groupCommand(['sleep', b1], newGroupFiles(dir, ownerB))),
      // what storsweep before target-scoped owners started: the bare run id
      runner.run(groupCommand(['sleep', old], newGroupFiles(dir, 'rrun1'))),
    ];
    await expect.poll(() => [a1, b1, old].map((s) => liveArgv('sleep', s).length), { timeout: 5000 }).toEqual([1, 1, 1]);
    const stop = await stopRunGroups(runner, dir, ownerA, 0.5, false, 'rrun1');
    expect(stop).toMatchObject({ outcome: 'stopped' });
    expect(liveArgv('sleep', a1)).toEqual([]);
    expect(liveArgv('sleep', old)).toEqual([]);
    expect(liveArgv('sleep', b1)).toHaveLength(1);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith(`.storsweep-${ownerB}-`))).toHaveLength(1);
    await stopRunGroups(runner, dir, ownerB, 0.5);
    expect(liveArgv('sleep', b1)).toEqual([]);
    await Promise.allSettled(started);
  });

  it('refuses an owner or a token it did not make (they go into a pattern and a file name)', () => {
    expect(() => newGroupFiles(dir, 'r1/../x')).toThrow(InvalidArgument);
    expect(() => newGroupFiles(dir, '')).toThrow(InvalidArgument);
    expect(() => stopCommand({ pidFile: '/tmp/x', cancelFile: '/tmp/y', token: '.*' }, 1)).toThrow(InvalidArgument);
    expect(() => stopRunCommand(dir, 'a.*', 1)).toThrow(InvalidArgument);
  });

  it('says it cannot tell, and signals nothing, where a process environment cannot be read', () => {
    expect(parseStop('unknown - cannot read process environments here (/proc/PID/environ, grep -z): nothing signalled\n')).toEqual({ pgid: null, outcome: 'unknown', detail: 'cannot read process environments here (/proc/PID/environ, grep -z): nothing signalled' });
    expect(parseStop('stopped 12 KILL 13 14')).toEqual({ pgid: 12, outcome: 'stopped', signal: 'KILL', pids: [13, 14] });
    expect(parseStop('still-running - 13')).toEqual({ pgid: null, outcome: 'still-running', pids: [13] });
  });
});

function hasPidNamespaces(): boolean {
  try {
    return execFileSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore', timeout: 5000 }) !== undefined;
  } catch {
    return false;
  }
}

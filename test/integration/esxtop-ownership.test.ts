// esxtop on the ESXi host is stopped only while the host shows it ours, and what a dead storsweep
// left is found again (docs/decisions.md, "esxtop is stopped only while the host shows it ours").
// On a lab of our own (`labUp`: real OpenSSH on 127.0.0.1 whose sessions find the strict ESXi
// stand-ins first on PATH — esxtop, and a `ps` that offers only ESXi's `ps -c`). Every check reads
// the lab host itself: its /proc (which process runs, with what command line) and its /tmp.
// - pid reuse: the host gives the pid of an ended esxtop capture to a `sleep` (written to
//   /proc/sys/kernel/ns_last_pid, as root); neither the test's own stop nor a leftover stop signals it;
// - kill -9 of `storsweep run` during a measured pass, then `cleanup`: no esxtop of the run runs and
//   its output file is gone.
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { BLANK_DEV, RDM_DEV, releaseEsxiGuestDisks } from '../../src/lab/harness/esxi/state.ts';
import type { CreatedObject, ProviderContext } from '../../src/contract/provider.ts';
import type { EsxiShellTargetConfig } from '../../src/providers/esxi-shell/config.ts';
import { createEsxiShellProvider } from '../../src/providers/esxi-shell/provider.ts';
import { connectSsh } from '../../src/ssh/ssh-runner.ts';
import { toolOwner } from '../../src/ssh/process-group.ts';
import { REPO_ROOT, runCli, type CliResult } from '../helpers/cli.ts';
import { waitFor } from '../helpers/wait.ts';

const target: EsxiShellTargetConfig = { host: 'lab', vmid: '1', vmfsDevice: BLANK_DEV, rdmDevice: RDM_DEV, allowedDevices: [BLANK_DEV, RDM_DEV] };
const DATASTORE: CreatedObject[] = [{ kind: 'datastore', name: 'ss-x-p1-ds', provider: 'esxi-shell', id: 'ss-x-p1-ds', data: { device: BLANK_DEV } }];

let root: string;
let lab: LabState;
const sleepers: number[] = [];
// run ids of this test run (a run id is [a-z0-9]): nothing left by an earlier, interrupted run of the file is taken for ours
const RUN = `o${Date.now().toString(36)}`;
/** run ids of the CLI runs started here */
const cliRuns: string[] = [];

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-esxtop-own-'));
  lab = await labUp(root, { vcsim: false, version: '5.5' }); // the shell VMFS3 study: ESXi 5.x
}, 120_000);

afterAll(async () => {
  for (const p of sleepers) kill(p, 'SIGKILL');
  // whatever a failed assertion left of this file's captures (their wrappers; esxtop goes with them)
  for (const id of [RUN, ...cliRuns]) {
    for (const p of await processes((c) => c.includes(`storsweep-esxtop ${id}`)).catch(() => [])) kill(p.pid, 'SIGTERM');
    for (const f of await tmpFiles(`storsweep-esxtop-${id}`).catch(() => [])) await fs.rm(path.join('/tmp', f), { force: true });
  }
  if (lab) await releaseEsxiGuestDisks(lab.standinState).catch(() => undefined);
  if (lab) await stopPid(lab.ssh.pid);
  if (root) await fs.rm(root, { recursive: true, force: true });
});

function kill(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

/** The lab host's processes whose command line (argv joined by spaces) `keep` accepts: read from /proc. */
async function processes(keep: (cmd: string) => boolean): Promise<Array<{ pid: number; ppid: number; cmd: string }>> {
  const out: Array<{ pid: number; ppid: number; cmd: string }> = [];
  for (const e of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const cmd = (await fs.readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ').trim();
    const stat = await fs.readFile(`/proc/${e}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (cmd && keep(cmd)) out.push({ pid: Number(e), ppid, cmd });
  }
  return out;
}

/** Whether `pid` runs (and is not a zombie waiting to be reaped). */
async function running(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat !== null && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

function until<T>(what: string, get: () => Promise<T | null | undefined | false>, ms = 60_000): Promise<T> {
  return waitFor(get, { what, timeoutMs: ms, intervalMs: 100 }) as Promise<T>;
}

/**
 * A `sleep 600` that the host gives exactly `pid` (as root: ns_last_pid is set to pid − 1 right
 * before a fork; retried while other processes of the machine take it first).
 */
async function sleepWithPid(pid: number): Promise<number> {
  await until(`pid ${pid} to be free`, async () => !(await fs.stat(`/proc/${pid}`).then(() => true, () => false)));
  const script = [
    'import os, sys',
    'p = int(sys.argv[1])',
    'for _ in range(200):',
    "    open('/proc/sys/kernel/ns_last_pid', 'w').write(str(p - 1))",
    // os.pipe() is close-on-exec: its read end sees EOF once the child has exec'd sleep (or died)
    '    r, w = os.pipe()',
    '    c = os.fork()',
    '    if c == 0:',
    // its own session, no descriptor of ours (spawnSync would wait for the pipe to close)
    "        os.setsid(); n = os.open('/dev/null', os.O_RDWR); [os.dup2(n, f) for f in (0, 1, 2)]; os.execvp('sleep', ['sleep', '600'])",
    '    os.close(w)',
    '    if c == p:',
    '        os.read(r, 1); print(c); sys.exit(0)',
    '    os.close(r)',
    '    os.kill(c, 9); os.waitpid(c, 0)',
    'sys.exit(1)',
  ].join('\n');
  const r = spawnSync('/usr/bin/python3', ['-c', script, String(pid)], { encoding: 'utf8' });
  expect(r.status, `could not give pid ${pid} to a sleep: ${r.stderr}`).toBe(0);
  sleepers.push(pid);
  expect((await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ').trim()).toBe('sleep 600');
  return pid;
}

const runner = () => connectSsh({ host: '127.0.0.1', port: lab.ssh.port, username: os.userInfo().username, privateKeyPath: labPaths(root).key, knownHostsFile: labPaths(root).knownHosts });
const tmpFiles = async (prefix: string) => (await fs.readdir('/tmp')).filter((f) => f.startsWith(prefix)).sort();

/** The capture a provider started for `owner`: its wrapper (pid from its pidfile) and esxtop under it. */
async function capture(owner: string): Promise<{ pidFile: string; wrapper: number; esxtop: number }> {
  const [pidFile] = await until(`esxtop's pidfile for ${owner}`, async () => {
    const f = (await tmpFiles(`storsweep-esxtop-${owner}-`)).filter((n) => n.endsWith('.pid'));
    return f.length === 1 && (await fs.readFile(path.join('/tmp', f[0]!), 'utf8')).trim() ? f : null;
  });
  const wrapper = Number((await fs.readFile(path.join('/tmp', pidFile!), 'utf8')).split(' ')[0]);
  const [child] = await until('esxtop under its wrapper', async () => {
    const c = await processes((cmd) => / -b -d 2 -n 3600$/.test(cmd) && cmd.includes('esxtop'));
    const mine = c.filter((p) => p.ppid === wrapper);
    return mine.length ? mine : null;
  });
  return { pidFile: pidFile!, wrapper, esxtop: child!.pid };
}

describe('an esxtop pid the host has given to another process is not signalled', () => {
  it("the test's own stop: esxtop ended (crashed) during the test and its wrapper's pid now runs a sleep — the sleep runs on, the record says so, the files go", async () => {
    const owner = toolOwner(`${RUN}a`, 'lab-esxi');
    const ctx: ProviderContext = { runId: `${RUN}a`, permutationId: 'p1', axes: {}, owner, signal: new AbortController().signal, log: () => undefined, sent: () => undefined };
    const p = createEsxiShellProvider(target, await runner());
    try {
      const obs = await p.observeHost!(DATASTORE, ctx)!.start(ctx.signal);
      const c = await capture(owner);
      // esxtop dies; its wrapper then ends by itself; the host hands the wrapper's pid to a sleep
      kill(c.esxtop, 'SIGKILL');
      await until('the wrapper to end', async () => !(await running(c.wrapper)));
      const sleep = await sleepWithPid(c.wrapper);
      const host = await obs.stop(ctx.signal);
      expect(await running(sleep)).toBe(true);
      expect(await tmpFiles(`storsweep-esxtop-${owner}-`)).toEqual([]);
      expect(host.notes).toContain(`esxtop had ended before the test did; its pid ${c.wrapper} now runs another program, left alone`);
    } finally {
      await p.close();
    }
  }, 120_000);

  it('the leftover stop (resume, takeover, cleanup): a pidfile naming a pid that now runs a sleep leaves it running; a live capture of the same owner is stopped, another target’s is not', async () => {
    const runId = `${RUN}b`;
    const owner = toolOwner(runId, 'lab-esxi');
    const other = toolOwner(runId, 'lab-esxi-2');
    const ctxOf = (o: string): ProviderContext => ({ runId, permutationId: 'p1', axes: {}, owner: o, signal: new AbortController().signal, log: () => undefined, sent: () => undefined });
    const p = createEsxiShellProvider(target, await runner());
    try {
      // a capture whose esxtop ended and whose wrapper's pid went to a sleep (its pidfile stays, as a killed storsweep leaves it)
      await p.observeHost!(DATASTORE, ctxOf(owner))!.start(ctxOf(owner).signal);
      const dead = await capture(owner);
      kill(dead.esxtop, 'SIGKILL');
      await until('the wrapper to end', async () => !(await running(dead.wrapper)));
      const sleep = await sleepWithPid(dead.wrapper);
      // and two live captures: one more of this owner, one of another target of the run
      await p.observeHost!(DATASTORE, ctxOf(owner))!.start(ctxOf(owner).signal);
      const [live] = (await until('the second capture', async () => {
        const pids = (await tmpFiles(`storsweep-esxtop-${owner}-`)).filter((f) => f.endsWith('.pid') && f !== dead.pidFile);
        return pids.length === 1 ? pids : null;
      }));
      const liveWrapper = Number((await fs.readFile(path.join('/tmp', live!), 'utf8')).split(' ')[0]);
      await p.observeHost!(DATASTORE, ctxOf(other))!.start(ctxOf(other).signal);
      const theirs = await capture(other);

      const stop = await p.stopLeftovers!(runId, 'lab-esxi');
      expect(stop.outcome).toBe('stopped');
      expect(stop.processes.map((x) => [x.pid, x.outcome]).sort()).toEqual([[dead.wrapper, 'left-alone'], [liveWrapper, 'stopped']].sort());
      // the sleep runs on; the live capture and its esxtop are gone; no file of the owner is left
      expect(await running(sleep)).toBe(true);
      expect(await running(liveWrapper)).toBe(false);
      expect(await processes((cmd) => cmd.includes(`storsweep-esxtop ${owner}-`))).toEqual([]);
      expect(await tmpFiles(`storsweep-esxtop-${owner}-`)).toEqual([]);
      // the other target's capture was not touched
      expect(await running(theirs.wrapper)).toBe(true);
      expect(await running(theirs.esxtop)).toBe(true);
      expect((await tmpFiles(`storsweep-esxtop-${other}-`)).length).toBe(2);
      const again = await p.stopLeftovers!(runId, 'lab-esxi-2');
      expect(again.processes.map((x) => [x.pid, x.outcome])).toEqual([[theirs.wrapper, 'stopped']]);
      expect(await running(theirs.esxtop)).toBe(false);
      // nothing of either is left; a stop with nothing to do says so
      expect(await p.stopLeftovers!(runId, 'lab-esxi')).toMatchObject({ outcome: 'not-running', processes: [] });
    } finally {
      await p.close();
    }
  }, 180_000);

  it('the stand-in ps offers what ESXi offers: `ps -c` (WID CID name command); anything else is refused', async () => {
    const r = await runner();
    try {
      const listed = await r.run('ps -c');
      expect(listed.exitCode).toBe(0);
      expect(listed.stdout.split('\n')[0]).toMatch(/^WID\s+CID\s+World Name\s+Command$/);
      for (const cmd of ['ps', 'ps -ef', 'ps -eo pid,args', 'ps -Tcjstv']) {
        const res = await r.run(cmd);
        expect(res.exitCode, cmd).toBe(1);
        expect(res.stderr, cmd).toMatch(/not modelled/);
      }
    } finally {
      await r.close();
    }
  });
});

describe('kill -9 of `storsweep run` during a measured pass on lab-esxi', () => {
  /**
   * Runs one permutation of the lab's shell study (one test of `runtimeSec`, no pre-fill) and kills
   * storsweep (-9) once its esxtop has started writing; the dead run's capture is still running.
   */
  async function killedRun(out: string, runtimeSec: number): Promise<{ runId: string; runDir: string; wrapper: number; esxtop: number }> {
    const text = await fs.readFile(path.join(REPO_ROOT, 'playbooks', 'vmfs-block-size-shell.yaml'), 'utf8');
    const one = text.replace('blockSizeMb: [1, 2, 4, 8]', 'blockSizeMb: [1]').replace(/^repeat: 3$/m, 'repeat: 1').replace('profile: [cdm3]', 'profile: ["4k 100% read 100% random"]');
    expect(one).not.toBe(text);
    await fs.writeFile(path.join(root, 'one.yaml'), one);
    let cliPid = 0;
    let seen: { runId: string; dir: string; wrapper: number; esxtop: number } | null = null;
    let ended = false;
    const watch = waitFor(async () => {
      if (ended) return true;
      // the run directory `<time>-<playbook>-<run id>`
      const [dir] = await fs.readdir(out).catch(() => []);
      const runId = dir?.split('-').pop();
      const wrapper = runId ? (await processes((c) => c.includes(`storsweep-esxtop ${runId}t`)))[0] : undefined;
      const esxtop = wrapper ? (await processes((c) => c.includes('esxtop') && c.endsWith(' -b -d 2 -n 3600'))).find((x) => x.ppid === wrapper.pid) : undefined;
      if (dir && runId && wrapper && esxtop && cliPid) {
        seen = { runId, dir, wrapper: wrapper.pid, esxtop: esxtop.pid };
        cliRuns.push(runId);
        // into the measured pass, then storsweep dies
        await until('a line of esxtop output', async () => (await tmpFiles(`storsweep-esxtop-${runId}t`)).some((f) => f.endsWith('.csv')));
        process.kill(cliPid, 'SIGKILL');
        return true;
      }
      return false;
    }, { what: "the run's esxtop under its wrapper", timeoutMs: 300_000, intervalMs: 200 });
    const cli: CliResult = await runCli(['run', path.join(root, 'one.yaml'), '-i', labPaths(root).inventory, '--json', '--out', out, '--confirm-destroy', BLANK_DEV, '--set', `settings.runtimeSec=${runtimeSec}`, '--set', 'settings.prefill=false'], {
      cwd: root,
      timeoutMs: 300_000,
      onSpawn: (p) => (cliPid = p),
    }).finally(() => (ended = true));
    await watch;
    expect(seen, `no esxtop capture of the run was seen; run exit ${cli.code}: ${cli.stderr.slice(-2000)}`).not.toBeNull();
    expect(cli.code).toBeNull();
    const { runId, dir, wrapper, esxtop } = seen!;
    // nothing stopped it: the dead run's esxtop still runs on the host and writes its file
    expect(await running(wrapper)).toBe(true);
    expect(await running(esxtop)).toBe(true);
    expect((await tmpFiles(`storsweep-esxtop-${runId}t`)).map((f) => path.extname(f))).toEqual(['.csv', '.pid']);
    return { runId, runDir: path.join(out, dir), wrapper, esxtop };
  }

  /** The run's journal entries of the host leftover stop. */
  function hostLeftoverEntries(runDir: string): Array<{ event: string; detail: Record<string, unknown> }> {
    const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
    try {
      const rows = db.prepare("SELECT event, detail FROM journal WHERE step = 'host leftovers'").all() as Array<{ event: string; detail: string }>;
      return rows.map((r) => ({ event: r.event, detail: JSON.parse(r.detail) as Record<string, unknown> }));
    } finally {
      db.close();
    }
  }

  /** The host: no esxtop of the run, no wrapper, no file. */
  async function expectNothingLeft(c: { runId: string; wrapper: number; esxtop: number }) {
    expect(await running(c.esxtop)).toBe(false);
    expect(await running(c.wrapper)).toBe(false);
    expect(await processes((cmd) => cmd.includes(`storsweep-esxtop ${c.runId}t`))).toEqual([]);
    expect(await tmpFiles(`storsweep-esxtop-${c.runId}t`)).toEqual([]);
  }

  it('then `cleanup`: no esxtop of the run is left running on the host and its output file is gone', async () => {
    const c = await killedRun(path.join(root, 'runs-cleanup'), 60);
    const cl = await runCli(['cleanup', c.runDir], { cwd: root, timeoutMs: 180_000 });
    expect(cl.code, cl.stderr + cl.stdout).toBe(0);
    expect(cl.stdout).toMatch(new RegExp(`^stopped esxtop left running on lab-esxi \\(pid ${c.wrapper}, started \\S+, SIGTERM\\); its output removed$`, 'm'));
    await expectNothingLeft(c);
    // and the run's journal says what was stopped
    const entries = hostLeftoverEntries(c.runDir);
    expect(entries.map((e) => e.event)).toEqual(['stopped']);
    expect(entries[0]!.detail).toMatchObject({ outcome: 'stopped', what: 'esxtop', processes: [{ pid: c.wrapper, outcome: 'stopped' }] });
  }, 420_000);

  it('then `run --resume`: the dead run\'s esxtop is stopped before the permutation is redone; afterwards none of the run runs and no file is left', async () => {
    const c = await killedRun(path.join(root, 'runs-resume'), 15);
    const r = await runCli(['run', '--resume', c.runDir, '--json', '--confirm-destroy', BLANK_DEV], { cwd: root, timeoutMs: 300_000 });
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toContain(`stopped esxtop left running on lab-esxi (pid ${c.wrapper}`);
    await expectNothingLeft(c);
    const entries = hostLeftoverEntries(c.runDir);
    expect(entries.map((e) => e.event)).toEqual(['stopped']);
    expect(entries[0]!.detail).toMatchObject({ outcome: 'stopped', processes: [{ pid: c.wrapper, outcome: 'stopped' }] });
    const status = JSON.parse((await runCli(['status', c.runDir, '--json'], { cwd: root })).stdout) as { permutations: Array<{ status: string }>; leftovers: unknown[] };
    expect(status.permutations.map((p) => p.status)).toEqual(['done']);
    expect(status.leftovers).toEqual([]);
  }, 420_000);
});

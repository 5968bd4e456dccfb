// scale.workers: one submitted sweep of 400 permutations on 40 simulated hosts, worked through by 1,
// 2 and 4 `storsweep worker` processes sharing a real PostgreSQL (issue 17). Each host is a `local`
// target with its own work directory whose fio is a synthetic stand-in (sleeps, then prints a
// captured fio JSON): the workload is short and fixed, so what the figures show is how the queue and
// the workers scale, not the disk. Wall time runs from the first worker's spawn to the last one's
// exit (Node start-up included: the CLI from its bundle, bin/cli-bundle.mjs); the queue overhead is what each worker measured in its
// passes (looking for a permutation, taking its lease, fetching, claiming, completing, releasing; passes that found nothing included).
// Where each worker's life went beside it: the executor, the waits between passes that found nothing
// (the pause and the look at whether anything is left), and the rest (start-up before its loop, exit after).
// Load-independent figures beside them (the machine is shared): CPU time per permutation, summed
// over the workers with everything they started and the PostgreSQL server's processes, and the
// statements (round trips) the server ran per permutation (pg_stat_statements).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchContext, BenchOutcome, Benchmark } from './lib/bench.ts';
import { bounded, figure, type Figure } from './lib/figure.ts';
import pg from 'pg';
import { startPostgres, type PostgresHandle } from '../src/lab/postgres.ts';
import { quickSettings } from '../test/helpers/quick-settings.ts';

const SYNTHETIC_SLEEP_SEC = 0.2;

interface WorkerOut {
  done: number;
  failed: number;
  queueMs: number;
  executeMs: number;
  waitMs: number;
  /** spawn to exit of the process, as the bench saw it */
  lifeMs: number;
}

/** Clock ticks per second of /proc/<pid>/stat times. */
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** A process's CPU (its own, and that of its children it has waited for), in ms, and its parent; null when gone. */
function procCpu(pid: number | 'self'): { selfMs: number; childrenMs: number; ppid: number } | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // after the command name (which may hold spaces and parentheses): state ppid … utime(14) stime(15) cutime(16) cstime(17)
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ms = (i: number) => (Number(f[i]) * 1000) / CLK_TCK;
  return { selfMs: ms(11) + ms(12), childrenMs: ms(13) + ms(14), ppid: Number(f[1]) };
}

/** CPU of the PostgreSQL server so far (ms): the postmaster, its live children, and those it has reaped (ended backends). */
function serverCpuMs(pgDir: string): number {
  const postmaster = Number(fs.readFileSync(path.join(pgDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const pm = procCpu(postmaster);
  if (!pm) throw new Error(`PostgreSQL's postmaster (pid ${postmaster}) is not running`);
  let ms = pm.selfMs + pm.childrenMs;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const p = procCpu(Number(d));
    if (p?.ppid === postmaster) ms += p.selfMs;
  }
  return ms;
}

/** CPU (ms) of the children this process has waited for: the CLI processes it spawned, with everything they ran. */
const reapedChildrenCpuMs = () => procCpu('self')!.childrenMs;

/** What the server ran for one database so far: statements (every round trip but the login) and sessions. */
async function serverCounts(pgh: PostgresHandle, db: string): Promise<{ statements: number; sessions: number }> {
  const c = new pg.Client(pgh.connection('postgres'));
  await c.connect();
  try {
    const { rows } = await c.query<{ n: string; s: string }>(
      `SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1)::text AS n,
              (SELECT coalesce(sessions, 0) FROM pg_stat_database WHERE datname = $1)::text AS s`,
      [db],
    );
    return { statements: Number(rows[0]!.n), sessions: Number(rows[0]!.s) };
  } finally {
    await c.end();
  }
}

interface Round {
  wallSec: number;
  outs: WorkerOut[];
  load: number;
  db: string;
  /** CPU of the worker processes and all they started (ms) */
  workersCpuMs: number;
  /** CPU of the PostgreSQL server's processes during the round (ms) */
  serverCpuMs: number;
  statements: number;
  sessions: number;
  /** calls of the fio stand-in during the round: tests run, `--version` asked */
  fioRuns: number;
  fioVersions: number;
}

function cli(ctx: BenchContext, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const spawned = performance.now();
    const child = spawn(process.execPath, [path.join(ctx.root, 'bin', 'storsweep.mjs'), ...args], { cwd: ctx.workDir, env: { ...process.env, CI: '1', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - spawned }));
  });
}

interface Lab {
  inventory: string;
  playbook: string;
  /** one line per call of the fio stand-in: `run` or `version` */
  calls: string;
}

/** The fio stand-in's calls so far: runs (a test) and `--version` asks. */
function standInCalls(lab: Lab): { runs: number; versions: number } {
  let lines: string[] = [];
  try {
    lines = fs.readFileSync(lab.calls, 'utf8').split('\n');
  } catch {
    /* none yet */
  }
  return { runs: lines.filter((l) => l === 'run').length, versions: lines.filter((l) => l === 'version').length };
}

function writeLab(ctx: BenchContext, hosts: number, perHost: number): Lab {
  const fio = path.join(ctx.workDir, 'fio');
  const fixture = path.join(ctx.root, 'test', 'fixtures', 'fio', 'randread-4k-q32.json');
  // each call leaves a line in calls.log (a shell builtin: no process): how often fio runs per permutation
  const calls = path.join(ctx.workDir, 'calls.log');
  fs.writeFileSync(fio, `#!/bin/sh\n# synthetic fio (bench scale.workers): no I/O, a fixed wait, a captured fio JSON\ncase "$*" in *--version*) echo version >>'${calls}'; echo fio-3.33; exit 0;; esac\necho run >>'${calls}'\nsleep ${SYNTHETIC_SLEEP_SEC}\ncat '${fixture}'\n`, { mode: 0o755 });
  const names = Array.from({ length: hosts }, (_, i) => `host-${String(i + 1).padStart(2, '0')}`);
  const inv = ['targets:'];
  for (const n of names) {
    const wd = path.join(ctx.workDir, 'hosts', n);
    fs.mkdirSync(wd, { recursive: true });
    inv.push(`  ${n}:`, '    provider: local', `    workdir: ${wd}`, `    fioPath: ${fio}`);
  }
  const inventory = path.join(ctx.workDir, 'inventory.yaml');
  fs.writeFileSync(inventory, inv.join('\n') + '\n');
  const sizes = ['4k', '8k', '16k', '32k', '64k', '128k', '256k', '512k', '1m', '2m'].slice(0, perHost);
  const playbook = path.join(ctx.workDir, 'playbook.yaml');
  fs.writeFileSync(
    playbook,
    [
      'name: scale-workers',
      `target: [${names.join(', ')}]`,
      'matrix:',
      '  workload:',
      `    profile: [${sizes.map((s) => `b${s}`).join(', ')}]`,
      'workloads:',
      ...sizes.flatMap((s) => [`  b${s}:`, `    iometer: "${s} 100% read 100% random"`]),
      ...quickSettings({ prefill: false }),
      '',
    ].join('\n'),
  );
  return { inventory, playbook, calls };
}

const workerArgs = (ctx: BenchContext, lab: { inventory: string }, url: string) => ['worker', '-i', lab.inventory, '--store', url, '--until-idle', '--poll-ms', '100', '--out', path.join(ctx.workDir, 'out'), '--json'];

async function oneRound(ctx: BenchContext, pgh: PostgresHandle, pgDir: string, lab: Lab, workers: number, expected: number): Promise<Round> {
  const db = `w${workers}_${Date.now().toString(36)}`;
  await pgh.createDatabase(db);
  const url = pgh.urlFor(db);
  const s = await cli(ctx, ['submit', lab.playbook, '-i', lab.inventory, '--store', url, '--json']);
  if (s.code !== 0) throw new Error(`submit failed: ${s.stderr.slice(-2000)}`);
  const before = { counts: await serverCounts(pgh, db), server: serverCpuMs(pgDir), workers: reapedChildrenCpuMs(), fio: standInCalls(lab) };
  const started = performance.now();
  const rs = await Promise.all(Array.from({ length: workers }, () => cli(ctx, workerArgs(ctx, lab, url))));
  const wallSec = (performance.now() - started) / 1000;
  const after = { counts: await serverCounts(pgh, db), server: serverCpuMs(pgDir), workers: reapedChildrenCpuMs(), fio: standInCalls(lab) };
  const outs: WorkerOut[] = [];
  for (const r of rs) {
    if (r.code !== 0) throw new Error(`a worker failed (${r.code}): ${r.stderr.slice(-2000)}`);
    outs.push({ ...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Omit<WorkerOut, 'lifeMs'>), lifeMs: r.ms });
  }
  const done = outs.reduce((n, o) => n + o.done, 0);
  if (done !== expected) throw new Error(`${workers} worker(s) did ${done} permutations, expected ${expected}`);
  // the machine's 1-minute load average as the round ended: what else competed for its cores
  return {
    wallSec,
    outs,
    load: os.loadavg()[0]!,
    db,
    workersCpuMs: after.workers - before.workers,
    serverCpuMs: after.server - before.server,
    statements: after.counts.statements - before.counts.statements,
    sessions: after.counts.sessions - before.counts.sessions,
    fioRuns: after.fio.runs - before.fio.runs,
    fioVersions: after.fio.versions - before.fio.versions,
  };
}

/** A worker that finds nothing to do (the database of a finished round): its start-up and exit, in CPU ms and statements. */
async function idleWorker(ctx: BenchContext, pgh: PostgresHandle, pgDir: string, lab: { inventory: string }, db: string): Promise<{ cpuMs: number; serverCpuMs: number; statements: number }> {
  const before = { counts: await serverCounts(pgh, db), server: serverCpuMs(pgDir), workers: reapedChildrenCpuMs() };
  const r = await cli(ctx, workerArgs(ctx, lab, pgh.urlFor(db)));
  if (r.code !== 0) throw new Error(`the idle worker failed (${r.code}): ${r.stderr.slice(-2000)}`);
  const after = { counts: await serverCounts(pgh, db), server: serverCpuMs(pgDir), workers: reapedChildrenCpuMs() };
  return { cpuMs: after.workers - before.workers, serverCpuMs: after.server - before.server, statements: after.counts.statements - before.counts.statements };
}

export const workers: Benchmark = {
  name: 'workers',
  title: 'scale.workers: one queued sweep worked by 1, 2 and 4 workers on PostgreSQL',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const hosts = ctx.quick ? 10 : 40;
    const perHost = 10;
    const total = hosts * perHost;
    const lab = writeLab(ctx, hosts, perHost);
    // its own temp directory: the server runs as user postgres, which cannot enter the bench's 0700 workDir
    const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-bench-pg-'));
    // pg_stat_statements counts the statements each database ran: the round trips per permutation
    const pgh = await startPostgres({ dir: pgDir, settings: { shared_preload_libraries: 'pg_stat_statements' } });
    const rounds: Record<number, Round> = {};
    let idle: Awaited<ReturnType<typeof idleWorker>>;
    try {
      {
        const c = new pg.Client(pgh.connection('postgres'));
        await c.connect();
        await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').finally(() => c.end());
      }
      for (const n of [1, 2, 4]) {
        ctx.log(`${n} worker(s), ${total} permutations`);
        rounds[n] = await oneRound(ctx, pgh, pgDir, lab, n, total);
        const r = rounds[n];
        ctx.log(`${n} worker(s): ${r.wallSec.toFixed(1)} s; CPU ${(r.workersCpuMs / 1000).toFixed(1)} s workers + ${(r.serverCpuMs / 1000).toFixed(1)} s PostgreSQL; ${r.statements} statements, ${r.sessions} sessions`);
      }
      idle = await idleWorker(ctx, pgh, pgDir, lab, rounds[1]!.db);
      ctx.log(`a worker that finds nothing: ${idle.cpuMs.toFixed(0)} ms CPU, ${idle.statements} statements`);
    } finally {
      await pgh.stop();
      fs.rmSync(pgDir, { recursive: true, force: true });
    }
    const wall = (n: number) => rounds[n]!.wallSec;
    const queueMsPerPerm = (n: number) => rounds[n]!.outs.reduce((a, o) => a + o.queueMs, 0) / total;
    const execMsPerPerm = (n: number) => rounds[n]!.outs.reduce((a, o) => a + o.executeMs, 0) / total;
    const waitMsPerPerm = (n: number) => rounds[n]!.outs.reduce((a, o) => a + o.waitMs, 0) / total;
    // one worker's life on average (s): executor, queue, waits, and the rest (start-up and exit)
    const life = (n: number) => {
      const avg = (f: (o: WorkerOut) => number) => rounds[n]!.outs.reduce((a, o) => a + f(o), 0) / n / 1000;
      const exec = avg((o) => o.executeMs);
      const queue = avg((o) => o.queueMs);
      const wait = avg((o) => o.waitMs);
      return `${n} worker(s): ${avg((o) => o.lifeMs).toFixed(1)} s = executor ${exec.toFixed(1)} + queue ${queue.toFixed(1)} + waits ${wait.toFixed(1)} + start-up and exit ${(avg((o) => o.lifeMs) - exec - queue - wait).toFixed(1)}`;
    };
    // per permutation, without the workers' start-up and exit (what a worker that finds nothing costs, once per worker)
    const cpuPerPerm = (n: number) => (rounds[n]!.workersCpuMs - n * idle.cpuMs + rounds[n]!.serverCpuMs - n * idle.serverCpuMs) / total;
    const stmtsPerPerm = (n: number) => (rounds[n]!.statements - n * idle.statements) / total;
    const figures: Figure[] = [
      figure('scale.workers.wall_1', wall(1), 's', 'none', null),
      figure('scale.workers.wall_2', wall(2), 's', 'none', null),
      figure('scale.workers.wall_4', wall(4), 's', 'none', null),
      bounded('scale.workers.speedup_2', wall(1) / wall(2), '×', {}),
      bounded('scale.workers.speedup_4', wall(1) / wall(4), '×', { atLeast: 3.2 }),
      bounded('scale.workers.queue_overhead_per_permutation', Math.max(...[1, 2, 4].map(queueMsPerPerm)), 'ms', { below: 20 }),
      figure('scale.workers.wait_per_permutation', Math.max(...[1, 2, 4].map(waitMsPerPerm)), 'ms', 'none', null),
      figure('scale.workers.cpu_per_permutation', Math.max(...[1, 2, 4].map(cpuPerPerm)), 'ms', 'none', null),
      figure('scale.workers.statements_per_permutation', Math.max(...[1, 2, 4].map(stmtsPerPerm)), '', 'none', null),
    ];
    const notes = [
      `${total} permutations (${hosts} local targets "host-01"… each with its own work directory, × ${perHost} workload profiles of one 4k…2m random-read test, one repetition), submitted once per round into a fresh database of one PostgreSQL (Debian's, started in the bench's temp dir); then 1, 2 or 4 \`storsweep worker --until-idle --poll-ms 100\` processes (concurrency 1 each) spawned at once.`,
      `Synthetic workload: the targets' fioPath is a shell stand-in that sleeps ${SYNTHETIC_SLEEP_SEC} s and prints a captured fio JSON (test/fixtures/fio/randread-4k-q32.json): no I/O, so the figures are about the queue, the lease and the executor, not the disk.`,
      `Wall time: first worker spawned → last worker exited, Node start-up included (the CLI from its esbuild bundle of src/, bin/cli-bundle.mjs, built by the submit before the round if stale; about 1 s of CPU per process, the idle worker's figure below). 1 worker ${wall(1).toFixed(1)} s, 2 workers ${wall(2).toFixed(1)} s, 4 workers ${wall(4).toFixed(1)} s.`,
      `Queue overhead per permutation (each worker times every pass minus the executor in it — passes that found nothing count too, since 2026-12-02 03:30; before, only passes that ran a permutation —, summed over the workers, divided by the permutations): 1 worker ${queueMsPerPerm(1).toFixed(1)} ms, 2 workers ${queueMsPerPerm(2).toFixed(1)} ms, 4 workers ${queueMsPerPerm(4).toFixed(1)} ms; the figure is the largest. Not in it, shown as wait_per_permutation: the time between passes that found nothing (--poll-ms 100 and, with --until-idle, the look at whether anything is left; a worker waits when every group with work is held by another, and at the end): ${[1, 2, 4].map((n) => `${n} worker(s) ${waitMsPerPerm(n).toFixed(1)} ms`).join(', ')}. The executor's own time per permutation (provision nothing, the stand-in once: the test — prefill: false makes the prepare step a no-op —, the store writes): ${execMsPerPerm(1).toFixed(0)} / ${execMsPerPerm(2).toFixed(0)} / ${execMsPerPerm(4).toFixed(0)} ms.`,
      `Where a worker's life went (spawn to exit, the mean over the round's workers): ${[1, 2, 4].map(life).join('; ')}. Start-up and exit: Node and the CLI bundle loaded, the store, queue and lease connections before the first pass; closing them after the last. The worker that sees the run end deletes its queues (one transaction for all) in its last look at whether anything is left: in its waits.`,
      `CPU per permutation (load-independent): user + system time of the worker processes with everything they started (shells, the fio stand-in; the bench's reaped-children time) and of every PostgreSQL server process, less what one worker that finds nothing costs (start-up and exit: ${idle.cpuMs.toFixed(0)} ms, ${idle.serverCpuMs.toFixed(0)} ms in the server) per worker: ${[1, 2, 4].map((n) => `${n} worker(s) ${cpuPerPerm(n).toFixed(1)} ms (workers ${((rounds[n]!.workersCpuMs - n * idle.cpuMs) / total).toFixed(1)}, PostgreSQL ${((rounds[n]!.serverCpuMs - n * idle.serverCpuMs) / total).toFixed(1)})`).join(', ')}; the figure is the largest.`,
      `Calls of the fio stand-in per permutation (each call writes a line to a log): ${[1, 2, 4].map((n) => `${n} worker(s) ${(rounds[n]!.fioRuns / total).toFixed(2)} runs + ${(rounds[n]!.fioVersions / total).toFixed(2)} --version`).join(', ')}.`,
      `Statements per permutation (pg_stat_statements calls in the round's database, BEGIN/COMMIT included: each is a round trip; less an idle worker's ${idle.statements} per worker): ${[1, 2, 4].map((n) => `${n} worker(s) ${stmtsPerPerm(n).toFixed(1)}`).join(', ')}; sessions opened: ${[1, 2, 4].map((n) => rounds[n]!.sessions).join(' / ')}.`,
      `Load average (1 min) as each round ended, on ${os.cpus().length} cores: ${[1, 2, 4].map((n) => `${n} worker(s) ${rounds[n]!.load.toFixed(1)}`).join(', ')}.`,
      'This machine has 2 cores shared with other engineers working at the same time: the 4-worker round competes with them for CPU (4 Node processes, PostgreSQL, a shell per fio call), which bounds its speed-up more than the queue does.',
    ];
    return { figures, notes };
  },
};

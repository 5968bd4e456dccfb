// scale.workers: one submitted sweep of 400 permutations on 40 simulated hosts, worked through by 1,
// 2 and 4 `storsweep worker` processes sharing a real PostgreSQL (issue 17). Each host is a `local`
// target with its own work directory whose fio is a synthetic stand-in (sleeps, then prints a
// captured fio JSON): the workload is short and fixed, so what the figures show is how the queue and
// the workers scale, not the disk. Wall time runs from the first worker's spawn to the last one's
// exit (Node + tsx start-up included); the queue overhead is what each worker measured around its
// permutations (looking for one, taking its lease, fetching, claiming, completing, releasing).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchContext, BenchOutcome, Benchmark } from './lib/bench.ts';
import { bounded, figure, type Figure } from './lib/figure.ts';
import { startPostgres, type PostgresHandle } from '../src/lab/postgres.ts';

const SYNTHETIC_SLEEP_SEC = 0.2;

interface WorkerOut {
  done: number;
  failed: number;
  queueMs: number;
  executeMs: number;
}

function cli(ctx: BenchContext, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ctx.root, 'bin', 'storsweep.mjs'), ...args], { cwd: ctx.workDir, env: { ...process.env, CI: '1', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function writeLab(ctx: BenchContext, hosts: number, perHost: number): { inventory: string; playbook: string } {
  const fio = path.join(ctx.workDir, 'fio');
  const fixture = path.join(ctx.root, 'test', 'fixtures', 'fio', 'randread-4k-q32.json');
  fs.writeFileSync(fio, `#!/bin/sh\n# synthetic fio (bench scale.workers): no I/O, a fixed wait, a captured fio JSON\ncase "$*" in *--version*) echo fio-3.33; exit 0;; esac\nsleep ${SYNTHETIC_SLEEP_SEC}\ncat '${fixture}'\n`, { mode: 0o755 });
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
      'settings:',
      '  fileSize: 4m',
      '  runtimeSec: 1',
      '  passes: 1',
      '  warmupPass: false',
      '  intervalSec: 0',
      '  prefill: false',
      'repeat: 1',
      '',
    ].join('\n'),
  );
  return { inventory, playbook };
}

async function oneRound(ctx: BenchContext, pg: PostgresHandle, lab: { inventory: string; playbook: string }, workers: number, expected: number): Promise<{ wallSec: number; outs: WorkerOut[]; load: number }> {
  const db = `w${workers}_${Date.now().toString(36)}`;
  await pg.createDatabase(db);
  const url = pg.urlFor(db);
  const s = await cli(ctx, ['submit', lab.playbook, '-i', lab.inventory, '--store', url, '--json']);
  if (s.code !== 0) throw new Error(`submit failed: ${s.stderr.slice(-2000)}`);
  const started = performance.now();
  const rs = await Promise.all(Array.from({ length: workers }, () => cli(ctx, ['worker', '-i', lab.inventory, '--store', url, '--until-idle', '--poll-ms', '100', '--out', path.join(ctx.workDir, 'out'), '--json'])));
  const wallSec = (performance.now() - started) / 1000;
  const outs: WorkerOut[] = [];
  for (const r of rs) {
    if (r.code !== 0) throw new Error(`a worker failed (${r.code}): ${r.stderr.slice(-2000)}`);
    outs.push(JSON.parse(r.stdout.trim().split('\n').pop()!) as WorkerOut);
  }
  const done = outs.reduce((n, o) => n + o.done, 0);
  if (done !== expected) throw new Error(`${workers} worker(s) did ${done} permutations, expected ${expected}`);
  // the machine's 1-minute load average as the round ended: what else competed for its cores
  return { wallSec, outs, load: os.loadavg()[0]! };
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
    const pg = await startPostgres({ dir: pgDir });
    const rounds: Record<number, { wallSec: number; outs: WorkerOut[]; load: number }> = {};
    try {
      for (const n of [1, 2, 4]) {
        ctx.log(`${n} worker(s), ${total} permutations`);
        rounds[n] = await oneRound(ctx, pg, lab, n, total);
        ctx.log(`${n} worker(s): ${rounds[n].wallSec.toFixed(1)} s`);
      }
    } finally {
      await pg.stop();
      fs.rmSync(pgDir, { recursive: true, force: true });
    }
    const wall = (n: number) => rounds[n]!.wallSec;
    const queueMsPerPerm = (n: number) => rounds[n]!.outs.reduce((a, o) => a + o.queueMs, 0) / total;
    const execMsPerPerm = (n: number) => rounds[n]!.outs.reduce((a, o) => a + o.executeMs, 0) / total;
    const figures: Figure[] = [
      figure('scale.workers.wall_1', wall(1), 's', 'none', null),
      figure('scale.workers.wall_2', wall(2), 's', 'none', null),
      figure('scale.workers.wall_4', wall(4), 's', 'none', null),
      bounded('scale.workers.speedup_2', wall(1) / wall(2), '×', {}),
      bounded('scale.workers.speedup_4', wall(1) / wall(4), '×', { atLeast: 3.2 }),
      bounded('scale.workers.queue_overhead_per_permutation', Math.max(...[1, 2, 4].map(queueMsPerPerm)), 'ms', { below: 20 }),
    ];
    const notes = [
      `${total} permutations (${hosts} local targets "host-01"… each with its own work directory, × ${perHost} workload profiles of one 4k…2m random-read test, one repetition), submitted once per round into a fresh database of one PostgreSQL (Debian's, started in the bench's temp dir); then 1, 2 or 4 \`storsweep worker --until-idle --poll-ms 100\` processes (concurrency 1 each) spawned at once.`,
      `Synthetic workload: the targets' fioPath is a shell stand-in that sleeps ${SYNTHETIC_SLEEP_SEC} s and prints a captured fio JSON (test/fixtures/fio/randread-4k-q32.json): no I/O, so the figures are about the queue, the lease and the executor, not the disk.`,
      `Wall time: first worker spawned → last worker exited, Node + tsx start-up (~1–2 s per process, CPU-bound) included. 1 worker ${wall(1).toFixed(1)} s, 2 workers ${wall(2).toFixed(1)} s, 4 workers ${wall(4).toFixed(1)} s.`,
      `Queue overhead per permutation (each worker times its passes minus the executor): 1 worker ${queueMsPerPerm(1).toFixed(1)} ms, 2 workers ${queueMsPerPerm(2).toFixed(1)} ms, 4 workers ${queueMsPerPerm(4).toFixed(1)} ms; the figure is the largest. The executor's own time per permutation (provision nothing, the stand-in twice: prepare and the test, the store writes): ${execMsPerPerm(1).toFixed(0)} / ${execMsPerPerm(2).toFixed(0)} / ${execMsPerPerm(4).toFixed(0)} ms.`,
      `Load average (1 min) as each round ended, on ${os.cpus().length} cores: ${[1, 2, 4].map((n) => `${n} worker(s) ${rounds[n]!.load.toFixed(1)}`).join(', ')}.`,
      'This machine has 2 cores shared with other engineers working at the same time: the 4-worker round competes with them for CPU (4 Node processes, PostgreSQL, a shell per fio call), which bounds its speed-up more than the queue does.',
    ];
    return { figures, notes };
  },
};

// Fidelity: does storsweep change what fio measures? The same fio job (the argument vector
// storsweep itself builds) runs bare — fio spawned directly, or through the `ssh` CLI — and through
// storsweep's runners (runFioTest over the local runner, and over ssh2 to the lab sshd), interleaved
// round by round with a rotating order so drift in the device hits every mode alike.
//
// The device is a loop device on a file in /dev/shm (tmpfs): reads come from memory, so what is
// left between the modes is the transport (spawn, shell, SSH) and fio itself, not a shared virtio
// disk whose noise (60–285% spreads, 2026-12-01) swamped a 2% question. Without root or loop
// devices it falls back to a file in the scratch directory, and says so.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { connectSsh } from '../src/ssh/ssh-runner.ts';
import { createLocalRunner } from '../src/ssh/local-runner.ts';
import type { CommandRunner } from '../src/ssh/command-runner.ts';
import { shJoin } from '../src/ssh/quote.ts';
import { fioArgs, parseFioJson } from '../src/workloads/fio.ts';
import { makeTest } from '../src/workloads/profiles.ts';
import { runFioPrefill, runFioTest } from '../src/workloads/run-fio.ts';
import type { WorkloadProfile, WorkloadTest } from '../src/workloads/spec.ts';
import type { BenchContext, BenchOutcome, Benchmark } from './lib/bench.ts';
import { bounded, figure, type Figure } from './lib/figure.ts';
import { startBenchSsh } from './lib/lab-ssh.ts';
import { median, spreadPct } from './lib/stats.ts';

const MiB = 1024 * 1024;
const TESTS: Array<{ key: string; test: WorkloadTest; metric: 'iops' | 'bytesPerSecond'; unit: string }> = [
  { key: 'rnd4k_q32t1_read_iops', test: makeTest('randread', 4096, 32, 1), metric: 'iops', unit: 'IOPS' },
  { key: 'seq1m_q8t1_read_bps', test: makeTest('read', MiB, 8, 1), metric: 'bytesPerSecond', unit: 'B/s' },
];
// bare-local-again is the control: the very same bare spawn a second time in the round. Its ratio to
// bare-local is what this machine's noise alone does to a paired ratio (the noise floor): a
// storsweep ratio inside that band says nothing about storsweep, and a 2% question needs a floor
// narrower than 2%.
type Mode = 'bare-local' | 'storsweep-local' | 'bare-ssh' | 'storsweep-ssh' | 'bare-local-again';
const MODES: Mode[] = ['bare-local', 'storsweep-local', 'bare-ssh', 'storsweep-ssh', 'bare-local-again'];

function exec(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, (err, stdout, stderr) => (err ? reject(new Error(`${file} ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout)));
  });
}

/** A loop device over a file in /dev/shm of `bytes`, or null (not root, no loop devices). */
async function tmpfsLoop(bytes: number, tag: string): Promise<{ device: string; close(): Promise<void> } | null> {
  if (process.getuid?.() !== 0) return null;
  const file = `/dev/shm/storsweep-fidelity-${tag}.img`;
  try {
    await fs.writeFile(file, '');
    await fs.truncate(file, bytes);
    const device = (await exec('losetup', ['--find', '--show', file])).trim();
    return {
      device,
      close: async () => {
        await exec('losetup', ['-d', device]).catch(() => undefined);
        await fs.rm(file, { force: true });
      },
    };
  } catch {
    await fs.rm(file, { force: true });
    return null;
  }
}

function execFio(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.slice(-1)[0]} failed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

export const fidelity: Benchmark = {
  name: 'fidelity',
  title: 'Measurement fidelity: bare fio vs fio through storsweep',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const rounds = ctx.quick ? 3 : 9;
    const profile: WorkloadProfile = {
      name: 'fidelity',
      description: 'one 2 s pass on a 64 MiB file, O_DIRECT',
      tests: TESTS.map((t) => t.test),
      fileSizeBytes: 64 * MiB,
      runtimeSec: ctx.quick ? 1 : 2,
      rampSec: 0,
      passes: 1,
      warmupPass: false,
      intervalSec: 0,
      direct: true,
      aggregate: 'max',
    };
    const loop = await tmpfsLoop(profile.fileSizeBytes, String(process.pid));
    const filename = loop?.device ?? path.join(ctx.workDir, 'fidelity-test.dat');
    const ssh = await startBenchSsh(path.join(ctx.workDir, 'lab'));
    const local = createLocalRunner(process.env);
    let remote: CommandRunner | undefined;
    const samples = new Map<string, number[]>();
    const wallMs = new Map<Mode, number[]>();
    let prefillNote = '';
    try {
      remote = await connectSsh(ssh.options);
      const once = async (mode: Mode, t: (typeof TESTS)[number]): Promise<number> => {
        const args = fioArgs(t.test, profile, { filename });
        const started = performance.now();
        let value: number;
        if (mode === 'bare-local' || mode === 'bare-local-again' || mode === 'bare-ssh') {
          const out = mode !== 'bare-ssh' ? await execFio('fio', args) : await execFio('ssh', [...ssh.cliArgs, shJoin(['fio', ...args])]);
          const job = parseFioJson(out, `${mode} ${t.test.id}`).jobs[0]!;
          value = job[t.metric];
        } else {
          const o = await runFioTest(mode === 'storsweep-local' ? local : remote!, t.test, profile, { filename });
          const v = o[t.metric];
          if (v === null) throw new Error(`${mode} ${t.test.id}: no ${t.metric}`);
          value = v;
        }
        const wall = wallMs.get(mode) ?? [];
        wall.push(performance.now() - started - profile.runtimeSec * 1000);
        wallMs.set(mode, wall);
        return value;
      };
      // Pre-fill the file as every run does (workloads/prefill.ts: written once with random data), so
      // every mode reads written blocks, then warm the path once, unmeasured.
      const fill = await runFioPrefill(local, profile, { filename, controlDir: ctx.workDir });
      prefillNote = `Pre-filled once before the rounds (storsweep's pre-fill, ${fill.method}): ${fill.bytes} bytes in ${fill.seconds.toFixed(2)} s.`;
      for (const t of TESTS) await once('bare-local', t);
      wallMs.clear();
      for (let r = 0; r < rounds; r++) {
        ctx.log(`fidelity round ${r + 1}/${rounds}`);
        for (const t of TESTS) {
          for (let i = 0; i < MODES.length; i++) {
            const mode = MODES[(i + r) % MODES.length]!;
            const key = `${t.key}/${mode}`;
            const list = samples.get(key) ?? [];
            list.push(await once(mode, t));
            samples.set(key, list);
          }
        }
      }
    } finally {
      await remote?.close();
      await ssh.stop();
      await loop?.close();
    }

    const figures: Figure[] = [];
    const notes: string[] = [
      `Job: storsweep's own fio argument vector (\`fioArgs\`), ioengine=libaio, **direct=1** (O_DIRECT), ${profile.runtimeSec} s time-based, one pass, on ${loop ? `a 64 MiB loop device (${loop.device}) over a file in /dev/shm (tmpfs): the device is memory, so the modes differ only in how fio is started and its output carried` : 'a 64 MiB file on the scratch file system (no loop device: not root)'}; ${rounds} interleaved rounds, the order of the five modes rotating each round. Figure: the median over rounds of the paired ratio storsweep/bare within a round (drift between rounds cancels); below, each mode's median and min–max spread, and the ratio of medians. The machine is shared (2 cores, other engineers' tests running): the load average is given below.`,
      'Modes: bare-local = `fio` spawned directly (execFile, no shell); bare-ssh = `ssh … fio …` (OpenSSH client); storsweep-local = runFioTest over the local runner (`sh -c`); storsweep-ssh = runFioTest over the ssh2 runner to the same lab sshd on 127.0.0.1; bare-local-again = bare-local once more in the same round, the control (its ratio to bare-local is the noise floor: what the machine alone does to a paired ratio).',
      prefillNote,
    ];
    const med = (k: string) => median(samples.get(k) ?? []);
    for (const t of TESTS) {
      for (const via of ['local', 'ssh'] as const) {
        const ourList = samples.get(`${t.key}/storsweep-${via}`) ?? [];
        const bareList = samples.get(`${t.key}/bare-${via}`) ?? [];
        const paired = ourList.map((v, i) => v / bareList[i]!);
        const ours = median(ourList);
        const bare = median(bareList);
        figures.push(
          bounded(
            `fidelity.${t.key}.ratio_${via}`,
            median(paired),
            '',
            { atLeast: 0.98 },
            `median of ${paired.length} per-round ratios (min ${Math.min(...paired).toFixed(3)}, max ${Math.max(...paired).toFixed(3)}); ratio of medians ${(ours / bare).toFixed(3)}: storsweep ${Math.round(ours)} vs bare ${Math.round(bare)} ${t.unit}`,
          ),
        );
      }
      const again = samples.get(`${t.key}/bare-local-again`) ?? [];
      const bareLocal = samples.get(`${t.key}/bare-local`) ?? [];
      const floor = again.map((v, i) => v / bareLocal[i]!);
      figures.push(
        figure(
          `fidelity.${t.key}.noise_floor`,
          median(floor),
          '',
          'none',
          null,
          `bare-local-again / bare-local, the same spawn twice: median of ${floor.length} per-round ratios (min ${Math.min(...floor).toFixed(3)}, max ${Math.max(...floor).toFixed(3)}); a storsweep ratio is only meaningful against this band`,
        ),
      );
      const line = MODES.map((m) => `${m} ${Math.round(med(`${t.key}/${m}`))} (spread ${spreadPct(samples.get(`${t.key}/${m}`) ?? []).toFixed(1)}%)`).join('; ');
      notes.push(`${t.test.id} medians, ${t.unit}: ${line}.`);
    }
    notes.push(`Load average (1 min) at the end: ${(await fs.readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ')[0]} on ${(await exec('nproc', []).catch(() => '?')).trim()} cores.`);
    notes.push(`Wall time per fio invocation beyond its ${profile.runtimeSec} s runtime (start-up, layout check, exec transport), median ms: ${MODES.map((m) => `${m} ${median(wallMs.get(m) ?? []).toFixed(0)}`).join(', ')}.`);
    return { figures, notes };
  },
};
